package agentback_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/interop"
	"github.com/remedy-go/remedy/mcp"
)

// connect opens an MCP session with the app's /mcp endpoint (AgentBack's mcp-http: streamable
// HTTP, a session per client) with the go-sdk's client, over remedy/mcp's HTTPClient, so that
// the loop reads mcp-http's 429 whole: its Retry-After and its JSON-RPC error.
func connect(t *testing.T, a *app) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "remedy-agentback-interop", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: a.url + "/mcp", HTTPClient: mcp.HTTPClient(nil), DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestClientMCP runs remedy's MCP client (the loop over the go-sdk's client session) against
// the same app's tools: AgentBack's MCP surface, through @agentback/mcp and mcp-http.
func TestClientMCP(t *testing.T) {
	requireNode(t)
	t.Parallel()
	a := startApp(t, 1)
	c := interop.Record(t, row(t, "@agentback/mcp", "server", transportMCP,
		"tools and their arguments", "validation repair", "lossy repair refused", "confirmation",
		"no idempotency keys", "429 (mcp-http) waits its Retry-After", "unknown tool", "503 (isError) retried"))
	cs := connect(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cl := func(t *testing.T, opts ...client.Option) *mcp.Client {
		t.Helper()
		cl, err := mcp.NewClient(ctx, cs, opts...)
		require.NoError(t, err)
		return cl
	}

	c.Run(t, "tools and their arguments", func(t *testing.T) {
		var names []string
		for tool, err := range cs.Tools(ctx, nil) {
			require.NoError(t, err)
			names = append(names, tool.Name)
			b, err := json.Marshal(tool.InputSchema)
			require.NoError(t, err)
			var schema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			require.NoError(t, json.Unmarshal(b, &schema))
			_, token := schema.Properties[remedy.ArgConfirmationToken]
			assert.Equal(t, tool.Name == "close_account", token, "%s: confirmationToken advertised where confirmation applies", tool.Name)
			_, key := schema.Properties[remedy.ArgIdempotencyKey]
			assert.False(t, key, "%s: AgentBack's tools take no idempotency key", tool.Name)
		}
		assert.ElementsMatch(t, []string{"create_order", "close_account", "charge", "get_quote", "daily_report"}, names)
	})

	c.Run(t, "validation repair", func(t *testing.T) {
		before := a.counts(t)
		// The check before sending off: AgentBack's refusal is what is repaired (with it on, the
		// tool's input schema repairs the call before it is sent: TestCLIMCP shows it).
		resp, err := cl(t, client.WithSchemaCheck(client.CheckOff)).Call(ctx, "create_order", json.RawMessage(`{"customer_id":"cus_ada","currency":"EUR","amount":"1200"}`))
		require.NoError(t, err)
		var order map[string]any
		require.NoError(t, json.Unmarshal(resp.Body, &order), "the structuredContent: %s", resp.Body)
		assert.Equal(t, "eur", order["currency"])
		assert.Equal(t, 1200.0, order["amount"])
		require.Len(t, resp.Attempts, 2)
		first := resp.Attempts[0]
		require.NotNil(t, first.Envelope)
		assert.Equal(t, "invalid_input", first.Envelope.Code, "invalid_input over MCP, invalid_body over REST")
		assert.Zero(t, first.Envelope.Status, "AgentBack drops statusCode from its MCP envelope")
		assert.False(t, first.Envelope.Retryable, "retryable: true with issues is read as \"with corrected input\"")
		assert.Equal(t, client.ActRewrite, first.Decision.Action)
		rules := map[string]string{}
		for _, ch := range first.Changes {
			rules[ch.Path] = ch.Rule + " " + string(ch.Old) + " -> " + string(ch.New)
		}
		assert.Equal(t, map[string]string{"/currency": `enum_match "EUR" -> "eur"`, "/amount": `coerce "1200" -> 1200`}, rules)
		assert.Equal(t, map[string]int{"create_order": 1}, delta(before, a.counts(t)))
	})

	c.Run(t, "lossy repair refused", func(t *testing.T) {
		before := a.counts(t)
		_, err := cl(t).Call(ctx, "create_order", json.RawMessage(`{"customer_id":"cus_ada","currency":"eur","amount":99999999}`))
		require.ErrorIs(t, err, client.ErrRewriteRefused)
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		require.NotNil(t, ce.Proposal)
		assert.JSONEq(t, `{"customer_id":"cus_ada","currency":"eur","amount":1000000}`, string(ce.Proposal.New))
		assert.Len(t, ce.Attempts, 1)
		assert.Empty(t, delta(before, a.counts(t)))
	})

	c.Run(t, "confirmation", func(t *testing.T) {
		args := json.RawMessage(`{"account_id":"acct_9","reason":"requested"}`)
		before := a.counts(t)
		_, err := cl(t).Call(ctx, "close_account", args)
		require.ErrorIs(t, err, client.ErrConfirmationRequired)
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		require.NotNil(t, ce.Challenge)
		assert.NotEmpty(t, ce.Challenge.Token)
		assert.Empty(t, delta(before, a.counts(t)))

		policy := &approveAll{}
		resp, err := cl(t, client.WithConfirmPolicy(policy)).Call(ctx, "close_account", args)
		require.NoError(t, err)
		require.Len(t, resp.Attempts, 2)
		assert.True(t, resp.Attempts[1].Confirmed)
		assert.JSONEq(t, `{"account_id":"acct_9","reason":"requested","closed":true}`, string(resp.Body))
		assert.Len(t, policy.challenges(), 1)
		assert.Equal(t, map[string]int{"close_account": 1}, delta(before, a.counts(t)))
	})

	c.Run(t, "no idempotency keys", func(t *testing.T) {
		// AgentBack's tools have no idempotency: the loop sends no key and does not count on
		// one (a lost answer would stop with ErrOutcomeUnknown, not be retried).
		before := a.counts(t)
		resp, err := cl(t).Call(ctx, "charge", json.RawMessage(`{"customer_id":"cus_ada","amount":4200,"currency":"usd"}`))
		require.NoError(t, err)
		require.Len(t, resp.Attempts, 1)
		assert.Empty(t, resp.Attempts[0].IdempotencyKey)
		assert.Equal(t, map[string]int{"charge": 1}, delta(before, a.counts(t)))
	})

	c.Run(t, "429 (mcp-http) waits its Retry-After", func(t *testing.T) {
		// mcp-http answers a call over its rate with HTTP 429, Retry-After and a JSON-RPC error
		// (-32029). Over HTTPClient the loop reads all three, and waits what the server asked
		// (the rest of the one-second window, in whole seconds) before it calls again.
		cl := cl(t)
		for range 5 {
			_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_quote", Arguments: map[string]any{"currency": "eur"}})
			_ = err // fills the window, or was itself limited: either way the window is full
			resp, err := cl.Call(ctx, "get_quote", map[string]any{"currency": "gbp"})
			require.NoError(t, err)
			first := resp.Attempts[0]
			if first.Status != http.StatusTooManyRequests {
				continue // a new window began between the two calls
			}
			require.NotNil(t, first.Envelope)
			assert.Equal(t, remedy.DialectJSONRPC, first.Envelope.Dialect)
			assert.Equal(t, "-32029", first.Envelope.Code)
			assert.Equal(t, "Rate limit exceeded for tool 'get_quote'", first.Envelope.Message)
			assert.True(t, first.Envelope.Retryable)
			assert.Equal(t, time.Second, first.Envelope.RetryAfter, "Retry-After: 1, the window's rest rounded up")
			assert.Equal(t, client.ActRetry, first.Decision.Action)
			assert.Equal(t, time.Second, first.Decision.Wait, "the server's wait, not the loop's backoff")
			assert.Len(t, resp.Attempts, 2, "after the wait, the window is over")
			assert.JSONEq(t, `{"currency":"gbp","rate":0.79}`, string(resp.Body))
			return
		}
		t.Fatal("no call was rate limited in 5 rounds")
	})

	c.Run(t, "unknown tool", func(t *testing.T) {
		// AgentBack answers with an isError result whose envelope has the JSON-RPC code as a
		// number and a 500's message: read as that code, a failure that says it is not retryable.
		_, err := cl(t).Call(ctx, "no_such_tool", map[string]any{})
		require.ErrorIs(t, err, client.ErrNotRetryable)
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		assert.Len(t, ce.Attempts, 1)
		require.NotNil(t, ce.Envelope)
		assert.Equal(t, "-32602", ce.Envelope.Code, "its JSON-RPC code, as text")
		assert.Equal(t, "Internal Server Error", ce.Envelope.Message)
		assert.False(t, ce.Envelope.Retryable)
	})

	c.Run(t, "503 (isError) retried", func(t *testing.T) {
		a.busy(t, 1)
		before := a.counts(t)
		resp, err := cl(t).Call(ctx, "daily_report", nil)
		require.NoError(t, err)
		require.Len(t, resp.Attempts, 2)
		first := resp.Attempts[0]
		require.NotNil(t, first.Envelope)
		assert.Equal(t, "unavailable", first.Envelope.Code)
		assert.True(t, first.Envelope.Retryable)
		assert.Zero(t, first.Envelope.RetryAfter, "AgentBack's envelope cannot say a wait")
		assert.Equal(t, client.ActRetry, first.Decision.Action)
		assert.Equal(t, map[string]int{"report": 1}, delta(before, a.counts(t)))
	})
}
