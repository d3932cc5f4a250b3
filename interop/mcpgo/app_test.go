package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// app is an mcp-go server written the way mcp-go's documentation writes one, whose tools fail
// the ways mcp-go apps fail:
//
//   - create_invoice: an accurate schema, enforced by the server's input schema validation
//     (server.WithInputSchemaValidation, strict by server.WithStrictInputSchemaDefault), whose
//     refusal is a tool error listing each violation;
//   - legacy_charge: a loose schema and a typed handler (mcp.NewTypedToolHandler), whose
//     binding failure is a tool error with encoding/json's text;
//   - send_invoice: a loose schema and the argument accessors (RequireString), whose error the
//     handler returns as a tool error (mcp.NewToolResultError(err.Error()));
//   - lookup_customer: a tool error in the app's own words (mcp.NewToolResultError);
//   - close_books: a handler that returns a Go error, which mcp-go answers as a JSON-RPC
//     internal error;
//   - exchange_rate (readOnlyHint, idempotentHint): a transient failure, once per base
//     currency — a tool error whose structuredContent is an envelope saying retryable — then
//     success;
//   - quote (idempotentHint) and transfer (no hints): plain successes, whose answers the HTTP
//     tests lose on the way (see losing);
//   - runs: how many times each tool's handler ran, so that a test over stdio, where the app
//     is another process, sees it too.
type app struct {
	mu   sync.Mutex
	runs map[string]int
	seen map[string]bool // exchange_rate's bases that failed once
}

func (a *app) ran(tool string) {
	a.mu.Lock()
	a.runs[tool]++
	a.mu.Unlock()
}

// Runs is how many times tool's handler ran.
func (a *app) Runs(tool string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.runs[tool]
}

// chargeArgs is legacy_charge's typed input.
type chargeArgs struct {
	CustomerID string `json:"customer_id"`
	Amount     int    `json:"amount"`
	Currency   string `json:"currency"`
}

// looseSchema accepts any arguments: the schema of a tool whose handler checks them itself.
var looseSchema = json.RawMessage(`{"type":"object"}`)

// newApp returns the mcp-go server and its state.
func newApp() (*server.MCPServer, *app) {
	a := &app{runs: map[string]int{}, seen: map[string]bool{}}
	s := server.NewMCPServer("mcp-go-billing", "1.0.0",
		server.WithToolCapabilities(false),
		server.WithInputSchemaValidation(),
		server.WithStrictInputSchemaDefault(),
	)

	s.AddTool(mcp.NewTool("create_invoice",
		mcp.WithDescription("Create a draft invoice for a customer"),
		mcp.WithString("customer_id", mcp.Required(), mcp.Pattern("^cus_[a-z0-9]+$")),
		mcp.WithString("currency", mcp.Required(), mcp.Enum("usd", "eur", "gbp")),
		mcp.WithInteger("amount", mcp.Required(), mcp.Min(1), mcp.Max(1000000)),
		mcp.WithString("memo", mcp.MaxLength(20)),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a.ran("create_invoice")
		customer, err := req.RequireString("customer_id")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		amount, err := req.RequireInt("amount")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		inv := map[string]any{"id": "in_1", "customer_id": customer, "currency": req.GetString("currency", ""),
			"amount": amount, "status": "draft"}
		return structured(inv), nil
	})

	s.AddTool(mcp.NewToolWithRawSchema("legacy_charge", "Charge a customer", looseSchema),
		mcp.NewTypedToolHandler(func(ctx context.Context, req mcp.CallToolRequest, in chargeArgs) (*mcp.CallToolResult, error) {
			a.ran("legacy_charge")
			return structured(map[string]any{"id": "ch_1", "customer_id": in.CustomerID, "amount": in.Amount}), nil
		}))

	s.AddTool(mcp.NewToolWithRawSchema("send_invoice", "Email an invoice", looseSchema),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a.ran("send_invoice")
			id, err := req.RequireString("invoice_id")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText("sent " + id), nil
		})

	s.AddTool(mcp.NewTool("lookup_customer",
		mcp.WithDescription("Find a customer"),
		mcp.WithString("id", mcp.Required()),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a.ran("lookup_customer")
		id := req.GetString("id", "")
		if id != "cus_ada" {
			return mcp.NewToolResultError("customer " + id + " not found"), nil
		}
		return structured(map[string]any{"id": id, "name": "Ada Lovelace"}), nil
	})

	s.AddTool(mcp.NewTool("close_books", mcp.WithDescription("Close the month's books")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a.ran("close_books")
			return nil, errors.New("the ledger is locked by another close")
		})

	s.AddTool(mcp.NewTool("exchange_rate",
		mcp.WithDescription("The exchange rate from a currency to usd"),
		mcp.WithString("base", mcp.Required(), mcp.Enum("usd", "eur", "gbp")),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithIdempotentHintAnnotation(true),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a.ran("exchange_rate")
		base := req.GetString("base", "")
		a.mu.Lock()
		first := !a.seen[base]
		a.seen[base] = true
		a.mu.Unlock()
		if first {
			res := mcp.NewToolResultStructured(map[string]any{"error": map[string]any{
				"code": "unavailable", "message": "the rates are being refreshed", "retryable": true, "retry_after_ms": 1,
			}}, "the rates are being refreshed")
			res.IsError = true
			return res, nil
		}
		return structured(map[string]any{"base": base, "rate": 1.25}), nil
	})

	s.AddTool(mcp.NewTool("quote",
		mcp.WithDescription("Price an order"),
		mcp.WithInteger("quantity", mcp.Required(), mcp.Min(1)),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a.ran("quote")
		return structured(map[string]any{"total": 250 * req.GetInt("quantity", 0)}), nil
	})

	s.AddTool(mcp.NewTool("transfer",
		mcp.WithDescription("Move money between accounts"),
		mcp.WithInteger("amount", mcp.Required(), mcp.Min(1)),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a.ran("transfer")
		return structured(map[string]any{"moved": req.GetInt("amount", 0)}), nil
	})

	s.AddTool(mcp.NewTool("runs",
		mcp.WithDescription("How many times each tool ran"),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithIdempotentHintAnnotation(true),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a.mu.Lock()
		runs := make(map[string]any, len(a.runs))
		for k, v := range a.runs {
			runs[k] = v
		}
		a.mu.Unlock()
		return structured(runs), nil
	})
	return s, a
}

// structured is a success as mcp-go apps return one: the value as structuredContent, and its
// JSON as the text.
func structured(v any) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprint(err))
	}
	return mcp.NewToolResultStructured(v, string(b))
}
