package mcp_test

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/billing"
	"github.com/remedy-go/remedy/mcp"
)

// An agent's tool calls over MCP go through the loop: the bad currency is repaired from the
// envelope, and the call succeeds on its second attempt.
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

	c, err := mcp.NewClient(ctx, session, remedy.Loop{Rewriter: remedy.DefaultRewriter})
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
		fmt.Println(a.Number, a.Target, code, a.Decision.Action)
	}
	fmt.Println(string(resp.Body))
	// Output:
	// 1 create_invoice invalid_body rewrite
	// 2 create_invoice ok return
	// {"id":"in_1","customer_id":"cus_ada","currency":"eur","amount":1200,"status":"draft"}
}
