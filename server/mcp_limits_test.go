package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/internal/testkit/margin"
)

// TestMCPEventStreamOutlivesServerLimits serves the API from an http.Server with short read
// and write limits: a message the server sends down a client's event stream after they have
// passed (here, that the tool list changed) still reaches the client.
//
// The limits apply to the requests that open the session too, and a slow machine may not
// answer those within them: then the session does not open, and the test tries again with
// limits twice as long, so that it is as quick as the machine allows and never fails on a
// slow one. Once the stream is open, nothing depends on the machine's speed.
func TestMCPEventStreamOutlivesServerLimits(t *testing.T) {
	t.Parallel()
	margin.Grow(t, 100*time.Millisecond, 6400*time.Millisecond, func(limit time.Duration) bool {
		if err := streamOutlivesLimits(t, limit); err != nil {
			t.Logf("with limits of %v: %v", limit, err)
			return false
		}
		return true
	})
}

// streamOutlivesLimits opens a session with an API served under read and write limits of
// limit, lets the limits pass while its event stream is open and sends a message down it. It
// returns an error when the session or its stream did not open, and fails t when the message
// does not arrive.
func streamOutlivesLimits(t *testing.T, limit time.Duration) error {
	api, _, err := billing.New()
	if err != nil {
		t.Fatal(err)
	}
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
	// A connection per request: an idle connection would be closed by the server once the
	// read limit passed (its idle limit), maybe as the client sent the next request on it.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	defer tr.CloseIdleConnections()
	stream := make(chan error, 1) // how the client's event stream (its GET) was answered
	hc := &http.Client{Transport: streamWatch{tr, stream}}
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp",
		HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	select {
	case err := <-stream:
		if err != nil {
			return err
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the MCP client opened no event stream")
	}
	// The limits were set when the server read the stream's request, before it answered it;
	// past them with room to spare, a write limit left in place would cut the stream at the
	// next message, and a read limit left in place would have ended its request.
	time.Sleep(2 * limit)
	api.MCPServer().AddTool(&mcp.Tool{Name: "late", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool list change never reached the client: the server's limits cut its event stream")
	}
	return nil
}

// streamWatch reports on answered how the first GET (the client's event stream) went: nil
// when it was answered 200.
type streamWatch struct {
	base     http.RoundTripper
	answered chan error
}

func (w streamWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(r)
	if r.Method != http.MethodGet {
		return resp, err
	}
	report := err
	if err == nil && resp.StatusCode != http.StatusOK {
		report = fmt.Errorf("the event stream was answered %s", resp.Status)
	} else if err != nil {
		report = fmt.Errorf("the event stream: %w", err)
	}
	select {
	case w.answered <- report:
	default:
	}
	return resp, err
}
