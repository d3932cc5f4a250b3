package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
)

type Refund struct {
	ChargeID string `path:"id" json:"-" schema:"pattern=^ch_"`
	Amount   int    `json:"amount" schema:"minimum=1"`
}

type Refunded struct {
	ID string `json:"id"`
}

func refundAPI() *server.API {
	api, err := server.New(server.WithInfo(server.Info{Title: "payments", Version: "1.0.0"}))
	if err != nil {
		panic(err)
	}
	err = server.Post(api, "/v1/charges/{id}/refund", func(ctx context.Context, in Refund) (Refunded, error) {
		return Refunded{ID: "re_1"}, nil
	}, server.OperationID("refund"), server.Summary("Refund a charge"), server.Confirm(), server.Idempotent())
	if err != nil {
		panic(err)
	}
	return api
}

// The OpenAPI document lists, for every operation, the codes it may answer with and what it
// asks of a call: here a confirmation and an idempotency key.
func ExampleAPI_OpenAPI() {
	doc, err := refundAPI().OpenAPI()
	if err != nil {
		fmt.Println(err)
		return
	}
	var d struct {
		Paths map[string]map[string]struct {
			OperationID string   `json:"operationId"`
			Codes       []string `json:"x-agent-error-codes"`
			Confirm     bool     `json:"x-confirmation-required"`
			KeyMode     string   `json:"x-idempotency-key"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		fmt.Println(err)
		return
	}
	op := d.Paths["/v1/charges/{id}/refund"]["post"]
	fmt.Println(op.OperationID, op.Confirm, op.KeyMode)
	fmt.Println(strings.Join(op.Codes, " "))
	// Output:
	// refund true optional
	// idempotency_key_invalid invalid_json invalid_parameter confirmation_declined confirmation_invalid confirmation_required idempotency_in_flight payload_too_large unsupported_media_type idempotency_key_reused invalid_body internal_error unavailable
}

// The same operations are MCP tools (served at /mcp over streamable HTTP, or on any transport
// through MCPServer); a failed call is an isError result carrying the envelope.
func ExampleAPI_MCPServer() {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := refundAPI().MCPServer().Connect(ctx, st, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	tools, _ := cs.ListTools(ctx, nil)
	props := tools.Tools[0].InputSchema.(map[string]any)["properties"].(map[string]any)
	_, token := props["confirmationToken"]
	_, key := props["idempotencyKey"]
	fmt.Println(tools.Tools[0].Name, token, key, *tools.Tools[0].Annotations.DestructiveHint)

	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "refund", Arguments: map[string]any{"amount": 500}})
	env, _ := remedy.Parse(0, nil, []byte(res.Content[0].(*mcp.TextContent).Text))
	fmt.Println(res.IsError, env.Code, env.Issues[0].Path, env.Issues[0].Code)

	args := map[string]any{"id": "ch_1", "amount": 500}
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "refund", Arguments: args})
	env, _ = remedy.Parse(0, nil, []byte(res.Content[0].(*mcp.TextContent).Text))
	fmt.Println(res.IsError, env.Code)

	args["confirmationToken"] = env.ConfirmationToken // the user approved
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "refund", Arguments: args})
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// refund true true true
	// true invalid_parameter /id required
	// true confirmation_required
	// false {"id":"re_1"}
}
