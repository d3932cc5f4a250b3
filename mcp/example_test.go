package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/mcp"
)

// An agent's tool calls over MCP go through the loop: the bad currency is repaired from the
// tool's input schema (as tools/list gave it) before the call is sent, and the call succeeds
// on its first attempt. (A server's refusal is repaired the same way, after the failure.)
func ExampleNewClient() {
	ctx := context.Background()
	api, _, err := billing.New() // the reference server with a small billing API
	if err != nil {
		fmt.Println(err)
		return
	}
	st, ct := sdk.NewInMemoryTransports() // or StreamableClientTransport{Endpoint: url + "/mcp"}
	ss, err := api.MCPServer().Connect(ctx, st, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ss.Close()
	session, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close()

	c, err := mcp.NewClient(ctx, session)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := c.Call(ctx, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "EUR", "amount": 1200})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range resp.Attempts {
		code := "ok"
		if a.Envelope != nil {
			code = a.Envelope.Code
		}
		for _, ch := range a.Checked {
			fmt.Printf("checked %s: %s → %s (%s)\n", ch.Path, ch.Old, ch.New, ch.Rule)
		}
		fmt.Println(a.Number, a.Target, code, a.Decision.Action)
	}
	fmt.Println(string(resp.Body))
	// Output:
	// checked /currency: "EUR" → "eur" (enum_match)
	// 1 create_invoice ok return
	// {"id":"in_1","customer_id":"cus_ada","currency":"eur","amount":1200,"status":"draft"}
}

// A server refuses a tool call the way AgentBack's mcp-http does when a tool is over its rate:
// HTTP 429, Retry-After, and a JSON-RPC error. The go-sdk alone keeps only the status; over
// HTTPClient the loop reads the answer whole, and waits the second the server asked for
// before it calls again.
func ExampleHTTPClient() {
	ctx := context.Background()
	s := sdk.NewServer(&sdk.Implementation{Name: "quotes", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "get_quote"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct {
		Currency string `json:"currency"`
	}) (*sdk.CallToolResult, map[string]any, error) {
		return nil, map[string]any{"currency": in.Currency, "rate": 0.92}, nil
	})
	tools := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	var limited atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" && !limited.Swap(true) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","error":{"code":-32029,"message":"Rate limit exceeded for tool 'get_quote'"},"id":%s}`, msg.ID)
			return
		}
		tools.ServeHTTP(w, r)
	}))
	defer srv.Close()

	session, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: mcp.HTTPClient(nil)}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close()
	c, err := mcp.NewClient(ctx, session)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := c.Call(ctx, "get_quote", map[string]any{"currency": "eur"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range resp.Attempts {
		code := "ok"
		if a.Envelope != nil {
			code = a.Envelope.Code
		}
		fmt.Println(a.Number, a.Status, code, a.Decision.Action, a.Decision.Wait)
	}
	fmt.Println(string(resp.Body))
	// Output:
	// 1 429 -32029 retry 1s
	// 2 200 ok return 0s
	// {"currency":"eur","rate":0.92}
}
