package server_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy/server"
)

// An API with MCP clients connected is shut down before its http.Server: the API ends the
// MCP sessions and their event streams, which would otherwise keep the server's shutdown
// waiting until its deadline.
func ExampleAPI_Shutdown() {
	api := refundAPI()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := &http.Server{Handler: api}
	go srv.Serve(ln)

	// An agent connects, and keeps its session's event stream open.
	endpoint := "http://" + ln.Addr().String() + server.DefaultMCPPath
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	// Told to stop (a signal, say): the API first, then the server, within one deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = api.Shutdown(ctx)
	err = errors.Join(err, srv.Shutdown(ctx))
	fmt.Println("shut down:", err)
	// Output:
	// shut down: <nil>
}
