package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/mcp"
	"github.com/remedy-go/remedy/rewrite"
)

// agentBackCharge is the input schema of the charge tool below, as AgentBack inlines it in its
// failures: the enum is in the schema only, never on the issue.
const agentBackCharge = `{"type":"object","properties":{"amount":{"type":"integer","minimum":50,"maximum":1000000},"currency":{"type":"string","enum":["eur","usd"]}},"required":["amount","currency"]}`

// agentBackServer serves a charge tool over streamable HTTP on loopback that fails the way an
// AgentBack app does over MCP: its envelope as the text of an isError result, without
// statusCode (AgentBack strips it on MCP), code invalid_input, retryable true ("can succeed
// with corrected input"), zod issues without allowed values, and the violated schema.
// It records every call's arguments.
func agentBackServer(t *testing.T) (*sdk.ClientSession, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	s := sdk.NewServer(&sdk.Implementation{Name: "agentback-like", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "charge", InputSchema: json.RawMessage(agentBackCharge)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			mu.Lock()
			seen = append(seen, string(req.Params.Arguments))
			mu.Unlock()
			var in struct {
				Amount   int    `json:"amount"`
				Currency string `json:"currency"`
			}
			json.Unmarshal(req.Params.Arguments, &in)
			var issues []string
			if in.Currency != "eur" && in.Currency != "usd" {
				issues = append(issues, `{"path":["currency"],"code":"invalid_value","message":"Invalid option: expected one of \"eur\"|\"usd\""}`)
			}
			if in.Amount < 50 || in.Amount > 1000000 {
				issues = append(issues, `{"path":["amount"],"code":"too_big","message":"Too big: expected number to be <=1000000"}`)
			}
			if len(issues) > 0 {
				text := `{"error":{"code":"invalid_input","message":"Invalid input for tool charge","issues":[` + strings.Join(issues, ",") +
					`],"schema":` + agentBackCharge + `,"retryable":true,"hint":"Fix the listed issues (each has a path and expected type) and retry; the violated section's JSON Schema is included as 'schema'."}}`
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"id":"ch_1","currency":"` + in.Currency + `"}`}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// The failure names a field: it is repaired (the enum read from the inline schema, the case
// fixed), never sent again unchanged because it says retryable. Before, the loop took
// retryable for transient and sent the same invalid arguments five times.
func TestAgentBackInvalidInputIsRepaired(t *testing.T) {
	t.Parallel()
	cs, seen := agentBackServer(t)
	ctx := context.Background()
	// The check before sending would repair it from the tool's schema (TestSchemaCheckOverMCP):
	// off, so that the server's failure is what is repaired.
	c, err := mcp.NewClient(ctx, cs, client.WithSchemaCheck(client.CheckOff))
	require.NoError(t, err)
	resp, err := c.Call(ctx, "charge", json.RawMessage(`{"amount":1200,"currency":"EUR"}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"ch_1","currency":"eur"}`, string(resp.Body))
	calls := seen()
	require.Len(t, calls, 2)
	assert.JSONEq(t, `{"amount":1200,"currency":"eur"}`, calls[1])
	assert.Equal(t, client.ActRewrite, resp.Attempts[0].Decision.Action)
	require.Len(t, resp.Attempts[0].Changes, 1)
	assert.Equal(t, rewrite.Change{Path: "/currency", Old: json.RawMessage(`"EUR"`), New: json.RawMessage(`"eur"`),
		Rule: "enum_match", Why: resp.Attempts[0].Changes[0].Why}, resp.Attempts[0].Changes[0])
}

// A repair that would change what the call means (the amount clamped to the maximum) is a
// proposal the default policy refuses: the call stops after one attempt, with the proposal,
// and the charge is never made with another amount.
func TestAgentBackLossyRepairIsAProposal(t *testing.T) {
	t.Parallel()
	cs, seen := agentBackServer(t)
	ctx := context.Background()
	c, err := mcp.NewClient(ctx, cs)
	require.NoError(t, err)
	_, err = c.Call(ctx, "charge", json.RawMessage(`{"amount":99999999,"currency":"eur"}`))
	require.ErrorIs(t, err, client.ErrRewriteRefused)
	var ce *client.CallError
	require.ErrorAs(t, err, &ce)
	require.NotNil(t, ce.Proposal)
	assert.JSONEq(t, `{"amount":1000000,"currency":"eur"}`, string(ce.Proposal.New))
	require.Len(t, ce.Proposal.Changes, 1)
	assert.Equal(t, "clamp", ce.Proposal.Changes[0].Rule)
	assert.True(t, ce.Proposal.Changes[0].Lossy)
	assert.Len(t, seen(), 1, "nothing sent but the caller's own arguments")

	// Approved by the caller's policy, the proposal is sent.
	c, err = mcp.NewClient(ctx, cs, client.WithRewritePolicy(rewrite.All))
	require.NoError(t, err)
	_, err = c.Call(ctx, "charge", json.RawMessage(`{"amount":99999999,"currency":"eur"}`))
	require.NoError(t, err)
	calls := seen()
	assert.JSONEq(t, `{"amount":1000000,"currency":"eur"}`, calls[len(calls)-1])
}
