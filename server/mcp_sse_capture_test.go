package server_test

import (
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/internal/testkit/corpus"
	"github.com/remedy-go/remedy/server"
)

var captureSSE = flag.Bool("capture", false, "rewrite the go-sdk event streams recorded in ../testdata/envelopes")

// sseCaptures are failing tool calls whose answers, event streams written by the go-sdk's
// streamable HTTP handler, the envelope corpus records: a tool error carrying the reference
// server's envelope (dialect mcp) and a JSON-RPC error (dialect jsonrpc).
var sseCaptures = []struct {
	dialect, name, body, code string
}{
	{"mcp", "go-sdk-sse-tool-error-envelope",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_invoice","arguments":{"customer_id":"cus_ada","currency":"EUR","amount":"x"}}}`,
		"invalid_body"},
	{"jsonrpc", "go-sdk-sse-unknown-tool-32602",
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"void_invoice","arguments":{}}}`,
		"-32602"},
}

// TestGoSDKEventStreamCapture calls the billing API's MCP endpoint (the go-sdk's handler,
// stateless, protocol 2025-11-25) over loopback as a client that takes event streams, and
// checks that the corpus records each answer byte for byte — a text/event-stream body — and
// that remedy reads the failure inside it. With -capture it rewrites the recordings (then
// regenerate the root module's goldens: go test -run Golden -update). A fixed traceparent makes
// the envelope's trace_id the same on every run.
func TestGoSDKEventStreamCapture(t *testing.T) {
	t.Parallel()
	api, _, err := billing.New(server.WithMCP(server.MCPOptions{Stateless: true}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	for _, c := range sseCaptures {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("the go-sdk answered %s, not an event stream", ct)
			}
			e, ok := remedy.Parse(resp.StatusCode, resp.Header, body)
			if !ok || e.Code != c.code || string(e.Dialect) != c.dialect {
				t.Fatalf("read as %v %+v, want %s %s", ok, e, c.dialect, c.code)
			}
			got := corpus.FormatHTTP(resp.StatusCode, http.Header{"Content-Type": {resp.Header.Get("Content-Type")}}, body)
			corpus.Recording{Path: filepath.Join("..", "testdata", "envelopes", c.dialect, c.name+".http"),
				Rerun: "go test ./server -run GoSDKEventStreamCapture -capture"}.Check(t, got, *captureSSE)
		})
	}
}
