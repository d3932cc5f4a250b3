package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/tools"
)

// langchainTool is langchaingo's tools.Tool, restated so that the method set is checked here
// without the dependency (examples/langchaingo checks against the real interface).
type langchainTool interface {
	Name() string
	Description() string
	Call(ctx context.Context, input string) (string, error)
}

var _ langchainTool = (*tools.Tool)(nil)

func billingOperations(t *testing.T) []client.Operation {
	t.Helper()
	api, _, err := billing.New()
	require.NoError(t, err)
	doc, err := api.OpenAPI()
	require.NoError(t, err)
	ops, err := client.OperationsFromOpenAPI(doc)
	require.NoError(t, err)
	return ops
}

func compileSchema(t *testing.T, raw json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("tool.json", doc))
	s, err := c.Compile("tool.json")
	require.NoError(t, err, "%s", raw)
	return s
}

func validates(s *jsonschema.Schema, instance string) bool {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(instance))
	if err != nil {
		return false
	}
	return s.Validate(v) == nil
}

// The reference server's OpenAPI document gives each operation a tool definition whose
// parameters are a valid JSON Schema that accepts what the server accepts and refuses what it
// refuses, and whose description ends with the errors it may answer with.
func TestToolDefinitionsFromOpenAPI(t *testing.T) {
	t.Parallel()
	ops := billingOperations(t)
	defs := map[string]tools.Definition{}
	for _, op := range ops {
		d := tools.DefinitionOf(op)
		defs[d.Name] = d
		compileSchema(t, d.Parameters)
		assert.Contains(t, d.Description, "Errors (", d.Name)
		assert.Contains(t, d.Description, "- internal_error (500, not retryable)", d.Name)
	}
	require.Len(t, defs, 7)

	create := compileSchema(t, defs["create_invoice"].Parameters)
	assert.True(t, validates(create, `{"customer_id":"cus_ada","currency":"eur","amount":1200}`))
	assert.False(t, validates(create, `{"customer_id":"cus_ada","currency":"EUR","amount":1200}`), "the enum")
	assert.False(t, validates(create, `{"customer_id":"cus_ada","currency":"eur"}`), "amount is required")
	assert.False(t, validates(create, `{"customer_id":"cus_ada","currency":"eur","amount":1,"x":1}`), "no other member")
	assert.True(t, strings.HasPrefix(defs["create_invoice"].Description, "Create a draft invoice for a customer"))
	assert.Contains(t, defs["create_invoice"].Description, "- invalid_body (422, not retryable): ")

	send := compileSchema(t, defs["send_invoice"].Parameters)
	assert.True(t, validates(send, `{"id":"in_1"}`), "the path parameter is an argument")
	assert.False(t, validates(send, `{}`), "and it is required")
	assert.Contains(t, defs["send_invoice"].Description, "- precondition_failed (409")

	report := compileSchema(t, defs["revenue_report"].Parameters)
	assert.True(t, validates(report, `{"currency":"usd"}`), "the query parameter is an argument")
	assert.False(t, validates(report, `{"currency":"yen"}`))
}

func TestToolDefinitionsInVendorShapes(t *testing.T) {
	t.Parallel()
	defs := tools.Definitions{
		{Name: "get_invoice", Description: "Read an invoice.", Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)},
		tools.DefinitionOf(client.Operation{Name: "ping"}), // no parameters: any object
	}
	openai, err := defs.OpenAI()
	require.NoError(t, err)
	assert.JSONEq(t, `[{"type":"function","function":{"name":"get_invoice","description":"Read an invoice.",
		"parameters":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}},
		{"type":"function","function":{"name":"ping","parameters":{"type":"object"}}}]`, string(openai))
	anthropic, err := defs.Anthropic()
	require.NoError(t, err)
	assert.JSONEq(t, `[{"name":"get_invoice","description":"Read an invoice.",
		"input_schema":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}},
		{"name":"ping","input_schema":{"type":"object"}}]`, string(anthropic))
	gemini, err := defs.Gemini()
	require.NoError(t, err)
	assert.JSONEq(t, `[{"functionDeclarations":[{"name":"get_invoice","description":"Read an invoice.",
		"parametersJsonSchema":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}},
		{"name":"ping","parametersJsonSchema":{"type":"object"}}]}]`, string(gemini))
}

func TestToolDescriptionCatalogue(t *testing.T) {
	t.Parallel()
	op := client.Operation{Name: "x", Description: "Does x.", Errors: []client.ErrorCode{
		{Code: "rate_limited", Status: 429, Retryable: true, Hint: "Wait retry_after_ms."},
		{Code: "gone", Retryable: false},
	}}
	assert.Equal(t, "Does x.\n\nErrors (the failure names the code; fix what it says, then call again):\n"+
		"- rate_limited (429, retryable): Wait retry_after_ms.\n- gone (not retryable)", tools.DefinitionOf(op).Description)
	assert.Equal(t, "Does x.", tools.DefinitionOf(client.Operation{Name: "x", Description: " Does x. "}).Description)

	many := client.Operation{Name: "y"}
	for i := range 15 {
		many.Errors = append(many.Errors, client.ErrorCode{Code: "c" + string(rune('a'+i))})
	}
	d := tools.DefinitionOf(many).Description
	assert.Contains(t, d, "- and 3 more")
	assert.NotContains(t, d, "- cm ")
}

// With SchemaInDescription, a tool's description gives its schema on one line between what
// it does and its errors (for text agents, which show only the description); its definition,
// which function-calling APIs take, is the same either way.
func TestToolSchemaInDescription(t *testing.T) {
	t.Parallel()
	ops := []client.Operation{{
		Name: "tag", Description: "Tags a thing.",
		Parameters: json.RawMessage("{\n  \"type\": \"object\",\n  \"properties\": {\"tags\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}}\n}"),
		Errors:     []client.ErrorCode{{Code: "gone", Status: 410}},
	}, {Name: "ping"}, {Name: "broken", Parameters: json.RawMessage("{\"type\":\n \"object\"")}}
	plain := tools.New(ops, nil, tools.Options{})
	with := tools.New(ops, nil, tools.Options{SchemaInDescription: true})

	tag, _ := with.Tool("tag")
	assert.Equal(t, "Tags a thing.\n\n"+
		`Input: one JSON object of this JSON Schema: {"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}}}`+
		"\n\nErrors (the failure names the code; fix what it says, then call again):\n- gone (410, not retryable)", tag.Description())
	ping, _ := with.Tool("ping")
	assert.Equal(t, `Input: one JSON object of this JSON Schema: {"type":"object"}`, ping.Description(), "no schema: any object")
	broken, _ := with.Tool("broken")
	assert.Equal(t, `Input: one JSON object of this JSON Schema: {"type": "object"`, broken.Description(),
		"text that is not JSON is given as it is, on one line")

	assert.Equal(t, plain.Definitions(), with.Definitions(), "the definitions do not change")
	for _, tool := range plain.Tools() {
		assert.Equal(t, tool.Definition().Description, tool.Description())
		assert.NotContains(t, tool.Description(), "Input:")
	}
	assert.Equal(t, tools.DefinitionOf(ops[0]).Description, tag.Definition().Description)
}

// A model's tool calls run through the loop: repaired when the server names the fix, and
// otherwise answered with the repair text, never an internal error.
func TestToolsetRunsTheLoop(t *testing.T) {
	t.Parallel()
	api, store, err := billing.New()
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL))
	require.NoError(t, err)
	ctx := context.Background()
	_, err = c.LoadOpenAPI(ctx, "/openapi.json")
	require.NoError(t, err)
	ts := tools.ForClient(c, tools.Options{})
	require.Len(t, ts.Definitions(), 7)
	assert.Equal(t, "charge", ts.Definitions()[0].Name, "sorted by name")

	out, err := ts.Dispatch(ctx, "create_invoice", `{"customer_id":"cus_ada","currency":"EUR","amount":"1200"}`)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"in_1","customer_id":"cus_ada","currency":"eur","amount":1200,"status":"draft"}`, out, "repaired by the loop")
	assert.Equal(t, 1, store.Effects("create_invoice"))

	out, err = ts.Dispatch(ctx, "create_invoice", `{"customer_id":"cus_nobody","currency":"usd","amount":5}`)
	require.NoError(t, err, "a failure is the model's to read, not the program's")
	assert.Contains(t, out, "not_found")
	assert.Contains(t, out, "no customer cus_nobody")
	assert.NotContains(t, out, "remedy:")

	out, err = ts.Dispatch(ctx, "delete_customer", `{"id":"cus_ada"}`)
	require.NoError(t, err)
	assert.Contains(t, out, "needs the user's confirmation")
	assert.NotContains(t, out, "confirmation token", "the model is not handed the token: approving is the caller's")
	assert.Equal(t, 0, store.Effects("delete_customer"), "nothing is confirmed on the model's behalf")

	out, err = ts.Dispatch(ctx, "create_bill", `{}`)
	require.NoError(t, err)
	assert.Contains(t, out, `There is no tool named "create_bill". The tools are: charge, create_invoice,`)

	for _, bad := range []string{`[1]`, `{"amount":`, `"x"`} {
		out, err = ts.Dispatch(ctx, "create_invoice", bad)
		require.NoError(t, err)
		assert.Contains(t, out, "must be one JSON object", bad)
	}

	tool, ok := ts.Tool("revenue_report")
	require.True(t, ok)
	assert.Equal(t, "revenue_report", tool.Name())
	assert.Contains(t, tool.Description(), "Revenue invoiced and charged")
	out, err = tool.Call(ctx, "")
	require.NoError(t, err)
	assert.Contains(t, out, "/currency [required]", "no arguments: an empty object, refused with what to fix")
	out, err = tool.Call(ctx, `{"currency":"eur"}`)
	require.NoError(t, err)
	assert.JSONEq(t, `{"currency":"eur","invoiced":1200,"charged":0}`, out)

	strict := tools.ForClient(c, tools.Options{FailureAsError: true})
	out, err = strict.Dispatch(ctx, "get_invoice", `{"id":"in_999"}`)
	assert.Empty(t, out)
	require.ErrorIs(t, err, tools.ErrFailed)
	assert.Contains(t, err.Error(), "not_found")
	_, err = strict.Dispatch(ctx, "nope", `{}`)
	require.ErrorIs(t, err, tools.ErrFailed)

	res, err := ts.Invoke(ctx, "get_invoice", `{"id":"in_999"}`)
	require.NoError(t, err)
	assert.True(t, res.Failed, "the program can tell a failure from a result")
	assert.Contains(t, res.Output, "not_found")
	var ce *client.CallError
	require.ErrorAs(t, res.Err, &ce)
	assert.Equal(t, "not_found", ce.Envelope.Code)
	res, err = ts.Invoke(ctx, "get_invoice", `{"id":"in_1"}`)
	require.NoError(t, err)
	assert.False(t, res.Failed)
	require.NotNil(t, res.Response)
	assert.Len(t, res.Response.Attempts, 1)
	res, err = strict.Invoke(ctx, "nope", `{}`)
	require.NoError(t, err, "Invoke reports failures in its result, whatever FailureAsError says")
	assert.True(t, res.Failed)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = ts.Dispatch(canceled, "get_invoice", `{"id":"in_1"}`)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}

// A proxy's HTML error page reaches the model as what it means, not as HTML.
func TestToolsetNeverHandsTheModelHTML(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, `<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1>`+
			`<script>alert(1)</script><center>nginx</center></body></html>`)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL),
		client.WithLimits(client.Limits{MaxAttempts: 2, MaxWait: time.Millisecond}),
		client.WithOperations(client.Operation{Name: "get_report", Method: "GET", Path: "/report"}))
	require.NoError(t, err)
	out, err := tools.ForClient(c, tools.Options{}).Dispatch(context.Background(), "get_report", `{}`)
	require.NoError(t, err)
	assert.Contains(t, out, "bad_gateway")
	assert.NotContains(t, out, "<")
	assert.NotContains(t, out, "nginx")
}
