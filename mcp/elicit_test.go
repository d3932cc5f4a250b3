package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/mcp"
	"github.com/remedy-go/remedy/server"
)

// askedPolicy is a ConfirmPolicy that records the challenges it sees and answers with decide.
type askedPolicy struct {
	mu     sync.Mutex
	seen   []client.Challenge
	decide func(*client.Challenge) (bool, error)
}

func (p *askedPolicy) Approve(_ context.Context, ch *client.Challenge) (bool, error) {
	p.mu.Lock()
	p.seen = append(p.seen, *ch)
	p.mu.Unlock()
	return p.decide(ch)
}

// elicitingClient connects remedy's MCP client, answering elicitations through policy, to the
// billing API served over streamable HTTP on loopback (a stateful session).
func elicitingClient(t *testing.T, policy client.ConfirmPolicy) (*mcp.Client, *billing.Store) {
	t.Helper()
	api, store, err := billing.New()
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"},
		&sdk.ClientOptions{ElicitationHandler: mcp.ElicitationHandler(policy)}).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	c, err := mcp.NewClient(ctx, cs, client.WithConfirmPolicy(policy))
	require.NoError(t, err)
	return c, store
}

// TestElicitationHandler: the policy answers the server's question with what it needs — the
// operation, the exact arguments, the message, and that it comes from elicitation — and its
// answer decides: approved runs the call in one attempt, refused is confirmation_declined, an
// error is a cancel (no answer: confirmation_required without a token). No token is ever sent.
func TestElicitationHandler(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		decide func(*client.Challenge) (bool, error)
		code   string
		cause  error
	}{
		{name: "approved", decide: func(*client.Challenge) (bool, error) { return true, nil }},
		{name: "refused", decide: func(*client.Challenge) (bool, error) { return false, nil },
			code: "confirmation_declined", cause: client.ErrNotRetryable},
		{name: "policy error", decide: func(*client.Challenge) (bool, error) { return false, errors.New("no person at hand") },
			code: "confirmation_required", cause: client.ErrConfirmationRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &askedPolicy{decide: tc.decide}
			c, store := elicitingClient(t, p)
			resp, err := c.Call(context.Background(), "delete_customer", map[string]any{"id": "cus_ada"})
			require.Len(t, p.seen, 1, "asked once")
			ch := p.seen[0]
			assert.True(t, ch.Elicited)
			assert.Equal(t, "delete_customer", ch.Operation)
			assert.JSONEq(t, `{"id":"cus_ada"}`, string(ch.Args))
			assert.Contains(t, ch.Message, "delete_customer — Delete a customer and all their invoices")
			assert.Empty(t, ch.Token)
			if tc.code == "" {
				require.NoError(t, err)
				assert.JSONEq(t, `{"id":"cus_ada","deleted":true}`, string(resp.Body))
				assert.Len(t, resp.Attempts, 1, "confirmed within the call")
				assert.Equal(t, 1, store.Effects("delete_customer"))
				return
			}
			var ce *client.CallError
			require.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, tc.cause)
			require.NotNil(t, ce.Envelope)
			assert.Equal(t, tc.code, ce.Envelope.Code)
			assert.Empty(t, ce.Envelope.ConfirmationToken)
			assert.Len(t, ce.Attempts, 1, "not sent again")
			assert.Zero(t, store.Effects("delete_customer"))
		})
	}
}

// TestElicitationHandlerOtherQuestions: a question that is not a remedy confirmation is
// cancelled without asking the policy, which could not know what it answers.
func TestElicitationHandlerOtherQuestions(t *testing.T) {
	t.Parallel()
	asked := false
	h := mcp.ElicitationHandler(client.ConfirmFunc(func(context.Context, *client.Challenge) (bool, error) {
		asked = true
		return true, nil
	}))
	for _, params := range []*sdk.ElicitParams{
		{Message: "Your e-mail?", RequestedSchema: map[string]any{"type": "object",
			"properties": map[string]any{"email": map[string]any{"type": "string"}}}},
		{Message: "Subscribe?", RequestedSchema: map[string]any{"type": "object",
			"properties": map[string]any{"approve": map[string]any{"type": "boolean"}}}},
		{Mode: "url", URL: "https://example.com", Meta: sdk.Meta{remedy.MetaConfirmation: map[string]any{"operation": "x"}}},
		{Meta: sdk.Meta{remedy.MetaConfirmation: map[string]any{"operation": "x"}}, RequestedSchema: map[string]any{"type": "object",
			"properties": map[string]any{"approve": map[string]any{"type": "boolean"}, "amount": map[string]any{"type": "number"}}}},
	} {
		res, err := h(context.Background(), &sdk.ElicitRequest{Params: params})
		require.NoError(t, err)
		assert.Equal(t, "cancel", res.Action, "%+v", params)
	}
	assert.False(t, asked)
}

// accountsAPI is remedy's reference server with purge_account, which only a person may
// confirm (RequirePerson), and close_account (Confirm), both taking an idempotency key,
// served on loopback; ran is what each call ran with.
func accountsAPI(t *testing.T, opts ...server.Option) (url string, ran func() []purge) {
	t.Helper()
	api, err := server.New(opts...)
	require.NoError(t, err)
	var mu sync.Mutex
	var runs []purge
	h := func(_ context.Context, in purge) (purge, error) {
		mu.Lock()
		runs = append(runs, in)
		mu.Unlock()
		return in, nil
	}
	require.NoError(t, server.Post(api, "/v1/accounts/{id}/purge", h, server.OperationID("purge_account"),
		server.Summary("Purge the account's backups"), server.RequirePerson(), server.Idempotent()))
	require.NoError(t, server.Post(api, "/v1/accounts/{id}/close", h, server.OperationID("close_account"),
		server.Summary("Close the account"), server.Confirm(), server.Idempotent()))
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return srv.URL, func() []purge {
		mu.Lock()
		defer mu.Unlock()
		return append([]purge(nil), runs...)
	}
}

type purge struct {
	ID   string `path:"id" json:"id"`
	Note string `json:"note"`
}

// TestElicitationHandlerOwnCall: with remedy's own server, the question about a call is
// answered with the client's record of it, however it comes (in the tool's result, or as
// elicitation/create on the session): the policy sees the tool name and the arguments as the
// client sends them — without the idempotency key the transport adds, and whole even where
// the server cut them from its question — and the call runs once, within the call that asked,
// with those arguments.
func TestElicitationHandlerOwnCall(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"purge_account", "close_account"} {
		for size, note := range map[string]string{"short": "asked by the owner", "too long to show": strings.Repeat("n", 5000)} {
			for way, stateless := range map[string]bool{"in the result": true, "elicitation/create": false} {
				t.Run(op+"/"+way+"/"+size, func(t *testing.T) {
					t.Parallel()
					url, ran := accountsAPI(t, server.WithMCP(server.MCPOptions{Stateless: stateless}))
					p := approveAll()
					var opts *sdk.ClientSessionOptions
					if !stateless {
						opts = &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
					}
					ctx := context.Background()
					cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"},
						&sdk.ClientOptions{ElicitationHandler: mcp.ElicitationHandler(p)}).Connect(ctx,
						&sdk.StreamableClientTransport{Endpoint: url + "/mcp", DisableStandaloneSSE: true}, opts)
					require.NoError(t, err)
					t.Cleanup(func() { cs.Close() })
					c, err := mcp.NewClient(ctx, cs, client.WithConfirmPolicy(p))
					require.NoError(t, err)

					args := json.RawMessage(`{"note":"` + note + `","id":"acct_1"}`)
					resp, err := c.Call(ctx, op, args, client.WithIdempotencyKey("k1"))
					require.NoError(t, err)
					assert.Len(t, resp.Attempts, 1, "confirmed within the call")
					assert.Equal(t, "k1", resp.Attempts[0].IdempotencyKey, "a key went with the call")
					require.Len(t, p.seen, 1)
					ch := p.seen[0]
					assert.Equal(t, op, ch.Operation)
					assert.Equal(t, string(args), string(ch.Args), "the arguments as the client sends them, whole")
					assert.True(t, ch.Elicited)
					assert.False(t, ch.Unverified)
					assert.Equal(t, []purge{{ID: "acct_1", Note: note}}, ran())
				})
			}
		}
	}
}
