package mcp_test

import (
	"flag"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/corpus"
)

var captureSSE = flag.Bool("capture", false, "rewrite the TypeScript SDK event streams recorded in ../testdata/envelopes")

// eventIDs are the id fields of a stream's events, which the TypeScript SDK's event store
// numbers per session: a recording keeps the field and masks its value.
var eventIDs = regexp.MustCompile(`(?m)^id: .*$`)

// TestEverythingEventStreamCapture calls server-everything (the TypeScript SDK's server) on
// its streamable HTTP transport, as a client that takes event streams, with a call the SDK's
// own input validation refuses and one naming no tool, and checks that the corpus records
// each answer — a text/event-stream body — and that remedy reads the failure inside it. With
// -capture it rewrites the recordings (then: go test -run Golden -update at the root).
func TestEverythingEventStreamCapture(t *testing.T) {
	requireEverything(t)
	base := startEverythingHTTP(t)
	post := func(session, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	init := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"remedy-capture","version":"1"}}}`)
	io.Copy(io.Discard, init.Body)
	init.Body.Close()
	session := init.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("no session: %d %v", init.StatusCode, init.Header)
	}
	resp := post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	// The SDK answers both with a tool error (isError), the unknown tool included, after an
	// event with no data that primes the stream for resumption.
	for _, c := range []struct{ dialect, name, body string }{
		{"mcp", "ts-sdk-everything-sse-input-validation",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":"two","b":3}}}`},
		{"mcp", "ts-sdk-everything-sse-unknown-tool",
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"void_invoice","arguments":{}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := post(session, c.body)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("server-everything answered %s, not an event stream: %s", ct, body)
			}
			body = eventIDs.ReplaceAll(body, []byte("id: <event id>"))
			e, ok := remedy.Parse(resp.StatusCode, resp.Header, body)
			if !ok || string(e.Dialect) != c.dialect {
				t.Fatalf("read as %v %+v, want a failure of dialect %s: %s", ok, e, c.dialect, body)
			}
			got := corpus.FormatHTTP(resp.StatusCode, http.Header{"Content-Type": {resp.Header.Get("Content-Type")}}, body)
			corpus.Recording{Path: filepath.Join("..", "testdata", "envelopes", c.dialect, c.name+".http"),
				Rerun: "go test ./mcp -run EverythingEventStreamCapture -capture"}.Check(t, got, *captureSSE)
		})
	}
}
