package server_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy/internal/billing"
)

// TestMCPEventStreamOutlivesServerLimits serves the API from an http.Server with short read
// and write limits: a message the server sends down a client's event stream after they have
// passed (here, that the tool list changed) still reaches the client.
func TestMCPEventStreamOutlivesServerLimits(t *testing.T) {
	t.Parallel()
	api, _, err := billing.New()
	if err != nil {
		t.Fatal(err)
	}
	const limit = 200 * time.Millisecond
	srv := &http.Server{Handler: api, ReadTimeout: limit, WriteTimeout: limit}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	streaming := make(chan struct{}, 1) // the client's event stream is open
	hc := &http.Client{Transport: streamWatch{streaming}}
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp",
		HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	select {
	case <-streaming:
	case <-time.After(10 * time.Second):
		t.Fatal("the MCP client opened no event stream")
	}
	time.Sleep(3 * limit) // the limits pass while the stream is open
	api.MCPServer().AddTool(&mcp.Tool{Name: "late", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("the tool list change never reached the client: the server's write limit cut its event stream")
	}
}

// streamWatch signals on open when a GET (the client's event stream) is answered 200.
type streamWatch struct{ open chan struct{} }

func (w streamWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
		select {
		case w.open <- struct{}{}:
		default:
		}
	}
	return resp, err
}
