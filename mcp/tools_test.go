package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/mcp"
	"github.com/remedy-go/remedy/tools"
)

// billingOverMCP is remedy's MCP client, with loop, on a go-sdk session to the billing demo
// API's MCP server (in memory), and the API's store.
func billingOverMCP(t *testing.T, opts ...client.Option) (*mcp.Client, *billing.Store) {
	t.Helper()
	ctx := context.Background()
	api, store, err := billing.New()
	require.NoError(t, err)
	st, ct := sdk.NewInMemoryTransports()
	ss, err := api.MCPServer().Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	session, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { session.Close() })
	c, err := mcp.NewClient(ctx, session, opts...)
	require.NoError(t, err)
	return c, store
}

// The tools a server lists over MCP are offered to a model without the arguments the loop
// sends itself, and the model's calls run through the loop.
func TestToolsetOverMCP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, store := billingOverMCP(t)

	ts := c.Toolset(tools.Options{})
	defs := ts.Definitions()
	require.Len(t, defs, 7)
	for _, d := range defs {
		assert.NotContains(t, string(d.Parameters), remedy.ArgIdempotencyKey, d.Name)
		assert.NotContains(t, string(d.Parameters), remedy.ArgConfirmationToken, d.Name)
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(d.Parameters)))
		require.NoError(t, err)
		comp := jsonschema.NewCompiler()
		require.NoError(t, comp.AddResource("tool.json", doc))
		_, err = comp.Compile("tool.json")
		require.NoError(t, err, "%s: %s", d.Name, d.Parameters)
		assert.Contains(t, d.Description, "## Errors", "the server's catalogue stays in the description")
	}
	var charge tools.Definition
	for _, d := range defs {
		if d.Name == "charge" {
			charge = d
		}
	}
	var schema struct {
		Required []string `json:"required"`
	}
	require.NoError(t, json.Unmarshal(charge.Parameters, &schema))
	assert.ElementsMatch(t, []string{"customer_id", "amount", "currency"}, schema.Required, "the required key is the loop's, not the model's")

	out, err := ts.Dispatch(ctx, "charge", `{"customer_id":"cus_ada","amount":"4200","currency":"USD"}`)
	require.NoError(t, err)
	assert.Contains(t, out, `"amount":4200`)
	assert.Equal(t, 1, store.Effects("charge"), "repaired, keyed by the loop, run once")

	out, err = ts.Dispatch(ctx, "delete_customer", `{"id":"cus_ada"}`)
	require.NoError(t, err)
	assert.Contains(t, out, "needs the user's confirmation")
	assert.Zero(t, store.Effects("delete_customer"))
}

// A model cannot confirm on its own over MCP (issue 34, row 2): with one attempt allowed and
// the default policy, the challenge's token never reaches the model, and a token the model
// writes into its arguments — the one the server issued, learnt any other way — is refused
// before anything is sent. The same holds for a program that passes the model's arguments to
// Call directly.
func TestModelCannotConfirmOverMCP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, store := billingOverMCP(t, client.WithLimits(client.Limits{MaxAttempts: 1}))
	ts := c.Toolset(tools.Options{})

	r, err := ts.Invoke(ctx, "delete_customer", `{"id":"cus_ada"}`)
	require.NoError(t, err)
	require.True(t, r.Failed)
	var ce *client.CallError
	require.ErrorAs(t, r.Err, &ce)
	require.NotNil(t, ce.Envelope, "the server challenged")
	assert.ErrorIs(t, r.Err, client.ErrAttemptsExhausted, "one attempt: the policy is not even asked")
	token := ce.Envelope.ConfirmationToken
	require.NotEmpty(t, token)
	assert.NotContains(t, r.Output, token, "the token never reaches the model")

	// The model sends the token back anyway, as the tool's argument.
	for _, args := range []string{
		`{"id":"cus_ada","confirmationToken":"` + token + `"}`,
		`{"id":"cus_ada","confirmation\u0054oken":"` + token + `"}`, // the same member, escaped
		`{"id":"cus_ada","idempotencyKey":"k_1"}`,
	} {
		r, err = ts.Invoke(ctx, "delete_customer", args)
		require.NoError(t, err)
		assert.True(t, r.Failed, args)
		assert.ErrorIs(t, r.Err, client.ErrInvalidArguments, args)
		assert.Contains(t, r.Output, "[reserved]", args)
		assert.NotContains(t, r.Output, token, args)

		_, err = c.Call(ctx, "delete_customer", json.RawMessage(args))
		assert.ErrorIs(t, err, client.ErrInvalidArguments, "a program passing the model's arguments on: %s", args)
	}
	assert.Zero(t, store.Effects("delete_customer"), "the model confirmed nothing")
}
