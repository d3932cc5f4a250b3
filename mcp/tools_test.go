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
	"github.com/remedy-go/remedy/internal/demo/billing"
	"github.com/remedy-go/remedy/mcp"
)

// The tools a server lists over MCP are offered to a model without the arguments the loop
// sends itself, and the model's calls run through the loop.
func TestToolsetOverMCP(t *testing.T) {
	t.Parallel()
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
	c, err := mcp.NewClient(ctx, session, remedy.Loop{Rewriter: remedy.DefaultRewriter})
	require.NoError(t, err)

	ts := c.Toolset(remedy.ToolOptions{})
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
	var charge remedy.ToolDefinition
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
