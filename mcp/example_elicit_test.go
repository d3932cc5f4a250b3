package mcp_test

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/mcp"
)

// A destructive tool asks the client's user before it runs (MCP elicitation). The agent's
// ConfirmPolicy is where the question reaches the person — here a function standing in for a
// dialog, which sees the operation, the exact arguments and the server's message — and the
// call runs within the call that asked, once approved.
func ExampleElicitationHandler() {
	ctx := context.Background()
	api, _, err := billing.New()
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

	person := client.ConfirmFunc(func(ctx context.Context, ch *client.Challenge) (bool, error) {
		fmt.Printf("asked the person (elicited: %v): %s %s\n", ch.Elicited, ch.Operation, ch.Args)
		return ch.Operation == "delete_customer" && string(ch.Args) == `{"id":"cus_ada"}`, nil
	})
	cl := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"},
		&sdk.ClientOptions{ElicitationHandler: mcp.ElicitationHandler(person)})
	session, err := cl.Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close()

	c, err := mcp.NewClient(ctx, session, client.WithConfirmPolicy(person))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := c.Call(ctx, "delete_customer", map[string]any{"id": "cus_ada"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(resp.Attempts), "attempt:", string(resp.Body))
	// Output:
	// asked the person (elicited: true): delete_customer {"id":"cus_ada"}
	// 1 attempt: {"id":"cus_ada","deleted":true}
}
