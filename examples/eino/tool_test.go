package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/tools"
)

func billingToolset(t *testing.T, opts tools.Options) (*tools.Toolset, *billing.Store) {
	t.Helper()
	api, store, err := billing.New()
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL))
	require.NoError(t, err)
	_, err = c.LoadOpenAPI(context.Background(), "/openapi.json")
	require.NoError(t, err)
	return tools.ForClient(c, opts), store
}

// Info gives eino each tool's name, description and parameters, the JSON Schema unchanged.
func TestInfo(t *testing.T) {
	t.Parallel()
	ts, _ := billingToolset(t, tools.Options{})
	tools := Tools(ts)
	require.Len(t, tools, 7)
	for i, bt := range tools {
		def := ts.Tools()[i].Definition()
		info, err := bt.Info(context.Background())
		require.NoError(t, err)
		assert.Equal(t, def.Name, info.Name)
		assert.Equal(t, def.Description, info.Desc)
		params, err := info.ToJSONSchema()
		require.NoError(t, err)
		got, err := json.Marshal(params)
		require.NoError(t, err)
		assert.JSONEq(t, string(def.Parameters), string(got), "%s: what eino sends the model", def.Name)
	}

	create, ok := ts.Tool("create_invoice")
	require.True(t, ok)
	info, err := InvokableTool{create}.Info(context.Background())
	require.NoError(t, err)
	params, err := info.ToJSONSchema()
	require.NoError(t, err)
	assert.Equal(t, "object", params.Type)
	assert.Equal(t, []string{"customer_id", "currency", "amount"}, params.Required)
	var names []string
	for p := params.Properties.Oldest(); p != nil; p = p.Next() {
		names = append(names, p.Key)
	}
	assert.ElementsMatch(t, []string{"customer_id", "currency", "amount", "memo"}, names)
	currency, ok := params.Properties.Get("currency")
	require.True(t, ok)
	assert.Equal(t, []any{"usd", "eur", "gbp"}, currency.Enum)
	amount, ok := params.Properties.Get("amount")
	require.True(t, ok)
	assert.Equal(t, "integer", amount.Type)
	assert.Equal(t, json.Number("1"), amount.Minimum)
	require.NotNil(t, params.AdditionalProperties)
	extra, err := json.Marshal(params.AdditionalProperties)
	require.NoError(t, err)
	assert.Equal(t, "false", string(extra), "no other members")
}

// An operation without parameters takes any object, not nothing (eino's nil ParamsOneOf).
func TestInfoWithoutParameters(t *testing.T) {
	t.Parallel()
	ts := tools.New([]client.Operation{{Name: "ping"}}, nil, tools.Options{})
	info, err := Tools(ts)[0].Info(context.Background())
	require.NoError(t, err)
	require.NotNil(t, info.ParamsOneOf)
	params, err := info.ToJSONSchema()
	require.NoError(t, err)
	got, err := json.Marshal(params)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"object"}`, string(got))
}

// InvokableRun answers a failure with the repair text and a nil error, so that an eino
// ToolsNode hands it to the model instead of ending the run.
func TestInvokableRun(t *testing.T) {
	t.Parallel()
	ts, store := billingToolset(t, tools.Options{})
	create, ok := ts.Tool("create_invoice")
	require.True(t, ok)
	var it tool.InvokableTool = InvokableTool{create}
	ctx := context.Background()

	out, err := it.InvokableRun(ctx, `{"customer_id":"cus_ada","currency":"Euro","amount":1200}`)
	require.NoError(t, err)
	assert.Contains(t, out, `- /currency [enum]: currency must be one of usd, eur, gbp (allowed "usd", "eur", "gbp"; received "Euro")`)
	assert.Equal(t, 0, store.Effects("create_invoice"))

	out, err = it.InvokableRun(ctx, `{"customer_id":"cus_ada","currency":"eur","amount":1200}`)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"in_1","customer_id":"cus_ada","currency":"eur","amount":1200,"status":"draft"}`, out)
	assert.Equal(t, 1, store.Effects("create_invoice"))

	strict, _ := billingToolset(t, tools.Options{FailureAsError: true})
	get, ok := strict.Tool("get_invoice")
	require.True(t, ok)
	_, err = InvokableTool{get}.InvokableRun(ctx, `{"id":"in_9"}`)
	require.ErrorIs(t, err, tools.ErrFailed, "FailureAsError is passed through")
}

// In an eino ToolsNode, a call runs through the tool, and a call of a tool that does not exist
// through Toolset.Dispatch, which tells the model the tools there are instead of ending the run.
func TestToolsNode(t *testing.T) {
	t.Parallel()
	ts, store := billingToolset(t, tools.Options{})
	ctx := context.Background()
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: Tools(ts), UnknownToolsHandler: ts.Dispatch})
	require.NoError(t, err)
	msgs, err := node.Invoke(ctx, schema.AssistantMessage("", []schema.ToolCall{
		{ID: "1", Type: "function", Function: schema.FunctionCall{Name: "create_bill", Arguments: `{}`}},
		{ID: "2", Type: "function", Function: schema.FunctionCall{Name: "create_invoice", Arguments: `{"customer_id":"cus_ada","currency":"gbp","amount":300}`}},
	}))
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	assert.Equal(t, "1", msgs[0].ToolCallID)
	assert.Contains(t, msgs[0].Content, `There is no tool named "create_bill". The tools are: charge, create_invoice,`)
	assert.Equal(t, "2", msgs[1].ToolCallID)
	assert.Contains(t, msgs[1].Content, `"currency":"gbp","amount":300`)
	assert.Equal(t, 1, store.Effects("create_invoice"))
}
