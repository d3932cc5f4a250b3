package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy/examples/billing"
)

// BenchmarkMCPToolCall measures a validated tool call (create_invoice) through the go-sdk's
// client and server over in-memory transports, beside the same call as a REST request to the
// same API over loopback HTTP: what the MCP surface adds or saves per call, with the transport
// costs of each.
func BenchmarkMCPToolCall(b *testing.B) {
	api, _, err := billing.New()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("MCP/in-memory", func(b *testing.B) {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := api.MCPServer().Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ss.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		args := map[string]any{"customer_id": "cus_ada", "currency": "usd", "amount": 1200}
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_invoice", Arguments: args})
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
	b.Run("REST/loopback", func(b *testing.B) {
		srv := httptest.NewServer(api)
		defer srv.Close()
		body := `{"customer_id":"cus_ada","currency":"usd","amount":1200}`
		b.ReportAllocs()
		for b.Loop() {
			resp, err := http.Post(srv.URL+"/v1/invoices", "application/json", strings.NewReader(body))
			if err != nil || resp.StatusCode != 201 {
				b.Fatal(err, resp)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}
