package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/tools"
)

func TestRun(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, run(&out))
	text := out.String()
	t.Log(text)

	assert.Contains(t, text, "offered its operations as tools: charge, create_invoice,")
	assert.Contains(t, text, `assistant: calls create_invoice {"amount":"12.00","currency":"Euro","customer_id":"CUS-ADA","memo":"May consulting"} (call_1)`)
	assert.Contains(t, text, "-> stop: the failure names a fix and no rewriter is configured")
	assert.Contains(t, text, "tool (call_1):\n    | The call failed with invalid_body (HTTP 422)")
	assert.Contains(t, text, `assistant: calls create_invoice {"amount":1200,"currency":"eur","customer_id":"cus_ada","memo":"May consulting"} (call_2)`)
	assert.Contains(t, text, `tool (call_2): {"id":"in_1"`)
	assert.Contains(t, text, "assistant: Done: invoice in_1 bills 12.00 EUR to cus_ada; it is a draft.")
	assert.Contains(t, text, "create_invoice executed 1 time(s) on the server")
}

// recorder is an endpoint that keeps every request it was sent.
type recorder struct {
	mu       sync.Mutex
	next     endpoint
	requests [][]byte
}

func (r *recorder) complete(ctx context.Context, request []byte) ([]byte, error) {
	r.mu.Lock()
	r.requests = append(r.requests, request)
	r.mu.Unlock()
	return r.next(ctx, request)
}

// The model's second call is its repair of the first, made from the tool message; the server
// executes only that one.
func TestConversation(t *testing.T) {
	t.Parallel()
	model := &recorder{next: standIn}
	messages, store, err := converse(context.Background(), io.Discard, model.complete)
	require.NoError(t, err)

	roles := make([]string, len(messages))
	for i, m := range messages {
		roles[i] = m.Role
	}
	require.Equal(t, []string{"system", "user", "assistant", "tool", "assistant", "tool", "assistant"}, roles)

	first, second := messages[2].ToolCalls, messages[4].ToolCalls
	require.Len(t, first, 1)
	require.Len(t, second, 1)
	assert.Equal(t, "function", first[0].Type)
	assert.Equal(t, "create_invoice", first[0].Function.Name)
	assert.Equal(t, "create_invoice", second[0].Function.Name)
	assert.NotEqual(t, first[0].ID, second[0].ID)
	assert.JSONEq(t, `{"customer_id":"CUS-ADA","currency":"Euro","amount":"12.00","memo":"May consulting"}`, first[0].Function.Arguments)
	assert.JSONEq(t, `{"customer_id":"cus_ada","currency":"eur","amount":1200,"memo":"May consulting"}`, second[0].Function.Arguments)

	repair := messages[3]
	assert.Equal(t, first[0].ID, repair.ToolCallID)
	assert.True(t, strings.HasPrefix(repair.Content, "The call failed with invalid_body (HTTP 422)"), repair.Content)
	for _, line := range []string{
		`- /amount [type]: amount must be an integer, not a string (expected "integer"; received "12.00"`,
		`- /currency [enum]: currency must be one of usd, eur, gbp (allowed "usd", "eur", "gbp"; received "Euro")`,
		`- /customer_id [pattern]: customer_id must match the pattern ^cus_[a-z0-9]+$ (expected {"pattern":"^cus_[a-z0-9]+$"}; received "CUS-ADA")`,
	} {
		assert.Contains(t, repair.Content, line)
	}
	assert.NotContains(t, repair.Content, "remedy:", "the model reads the failure, not a Go error")

	result := messages[5]
	assert.Equal(t, second[0].ID, result.ToolCallID)
	assert.JSONEq(t, `{"id":"in_1","customer_id":"cus_ada","currency":"eur","amount":1200,"status":"draft"}`, result.Content)
	assert.Equal(t, 1, store.Effects("create_invoice"), "the refused call executed nothing")

	answer := messages[6]
	assert.Empty(t, answer.ToolCalls)
	assert.Equal(t, "Done: invoice in_1 bills 12.00 EUR to cus_ada; it is a draft.", answer.Content)

	// What the model received: the whole conversation each turn, and the same tools, whose
	// parameters are JSON Schemas that refuse the first call and accept the second.
	require.Len(t, model.requests, 3)
	var tools []offeredTool
	for i, body := range model.requests {
		var req struct {
			Model    string          `json:"model"`
			Messages []message       `json:"messages"`
			Tools    json.RawMessage `json:"tools"`
		}
		require.NoError(t, json.Unmarshal(body, &req))
		assert.Equal(t, modelName, req.Model)
		assert.Equal(t, messages[:2+2*i], req.Messages, "turn %d", i)
		if i == 0 {
			require.NoError(t, json.Unmarshal(req.Tools, &tools))
			continue
		}
		var again []offeredTool
		require.NoError(t, json.Unmarshal(req.Tools, &again))
		assert.Equal(t, tools, again, "turn %d", i)
	}
	require.Len(t, tools, 7)
	schemas := map[string]*jsonschema.Schema{}
	for _, tool := range tools {
		assert.Equal(t, "function", tool.Type)
		schemas[tool.Function.Name] = compile(t, tool.Function.Name, tool.Function.Parameters)
	}
	invoice := schemas["create_invoice"]
	require.NotNil(t, invoice)
	assert.Error(t, invoice.Validate(decode(t, first[0].Function.Arguments)))
	assert.NoError(t, invoice.Validate(decode(t, second[0].Function.Arguments)))
}

// The loop runs unchanged against an endpoint over HTTP: the function the package comment shows,
// pointed at the stand-in served as /v1/chat/completions.
func TestOverHTTP(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" ||
			r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, `{"error":{"message":"bad request line or headers"}}`, http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err == nil {
			body, err = standIn(r.Context(), body)
		}
		if err != nil {
			http.Error(w, fmt.Sprintf(`{"error":{"message":%q}}`, err), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)

	chat := func(ctx context.Context, request []byte) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost,
			srv.URL+"/v1/chat/completions", bytes.NewReader(request))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+"sk-test")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s", resp.Status, body)
		}
		return body, err
	}
	messages, store, err := converse(context.Background(), io.Discard, chat)
	require.NoError(t, err)
	assert.Equal(t, "Done: invoice in_1 bills 12.00 EUR to cus_ada; it is a draft.", messages[len(messages)-1].Content)
	assert.Equal(t, 1, store.Effects("create_invoice"))
}

// The stand-in's next move follows what the tool message says, not what this program sent:
// other failures give other calls, or an answer to the user.
func TestStandInReadsTheToolMessage(t *testing.T) {
	t.Parallel()
	invoice := client.Operation{
		Name:        "create_invoice",
		Description: "Create a draft invoice.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"customer_id":{"type":"string"},` +
			`"currency":{"type":"string"},"amount":{"type":"integer","description":"In cents."}}}`),
		Errors: []client.ErrorCode{
			{Code: "invalid_body", Status: 422, Hint: "Fix the fields named in issues."}, // not retryable: fixed
			{Code: "not_found", Status: 404, Hint: "Look the identifier up."},
		},
	}
	firstTry := `{"customer_id":"CUS-ADA","currency":"Euro","amount":"12.00"}`
	invalid := func(issues ...remedy.Issue) string {
		env := &remedy.Envelope{Status: 422, Code: "invalid_body", Message: "invalid", Issues: issues}
		return env.Prompt()
	}
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }

	tests := []struct {
		name     string
		op       client.Operation
		toolSays string
		call     string // the arguments of the next call; "" when the stand-in answers the user
		answer   string // what the answer contains
	}{
		{"a suggestion is taken", invoice, invalid(remedy.Issue{Path: "/currency", Code: "enum",
			Received: raw(`"Euro"`), AllowedValues: []json.RawMessage{raw(`"usd"`), raw(`"eur"`)}, SuggestedValue: raw(`"usd"`)}),
			`{"customer_id":"CUS-ADA","currency":"usd","amount":"12.00"}`, ""},
		{"another pattern", invoice, invalid(remedy.Issue{Path: "/customer_id", Code: "pattern",
			Expected: raw(`{"pattern":"^acct[.][a-z]+$"}`), Received: raw(`"CUS-ADA"`)}),
			"", "What should customer_id be?"},
		{"a pattern it can meet", invoice, invalid(remedy.Issue{Path: "/customer_id", Code: "pattern",
			Expected: raw(`{"pattern":"^cus-[a-z]+$"}`), Received: raw(`"CUS-ADA"`)}),
			`{"customer_id":"cus-ada","currency":"Euro","amount":"12.00"}`, ""},
		{"cents, over the converted text the server suggests", invoice, invalid(remedy.Issue{Path: "/amount", Code: "type",
			Expected: raw(`"integer"`), Received: raw(`"12.00"`), SuggestedValue: raw(`12.00`)}),
			`{"customer_id":"CUS-ADA","currency":"Euro","amount":1200}`, ""},
		{"a failure the catalogue calls final", invoice,
			(&remedy.Envelope{Status: 404, Code: "not_found", Message: "no customer CUS-ADA"}).Prompt(),
			"", "I could not do it. The call failed with not_found (HTTP 404): no customer CUS-ADA."},
		{"a code the catalogue does not list", invoice,
			(&remedy.Envelope{Status: 409, Code: "conflict", Message: "busy", Retryable: true}).Prompt(),
			"", "I could not do it."},
		{"a success", invoice, `{"id":"in_7","customer_id":"cus_bob","currency":"gbp","amount":250,"status":"draft"}`,
			"", "Done: invoice in_7 bills 2.50 GBP to cus_bob; it is a draft."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reply := ask(t, tt.op, []message{
				{Role: "user", Content: userRequest},
				{Role: "assistant", ToolCalls: []toolCall{{ID: "call_1", Type: "function",
					Function: functionCall{Name: "create_invoice", Arguments: firstTry}}}},
				{Role: "tool", ToolCallID: "call_1", Content: tt.toolSays},
			})
			if tt.call == "" {
				assert.Empty(t, reply.ToolCalls)
				assert.Contains(t, reply.Content, tt.answer)
				return
			}
			require.Len(t, reply.ToolCalls, 1, reply.Content)
			assert.Equal(t, "call_2", reply.ToolCalls[0].ID)
			assert.JSONEq(t, tt.call, reply.ToolCalls[0].Function.Arguments)
		})
	}
}

// The stand-in gives up after maxCalls calls of a tool, and refuses a request whose tools it
// cannot work with.
func TestStandInLimits(t *testing.T) {
	t.Parallel()
	op := client.Operation{Name: "create_invoice", Description: "Create a draft invoice.",
		Errors: []client.ErrorCode{{Code: "invalid_body", Status: 422}}}
	refused := (&remedy.Envelope{Status: 422, Code: "invalid_body", Message: "invalid", Issues: []remedy.Issue{{
		Path: "/currency", Code: "enum", Received: json.RawMessage(`"x"`), SuggestedValue: json.RawMessage(`"eur"`)}}}).Prompt()
	var messages []message
	for i := 1; i <= maxCalls; i++ {
		id := fmt.Sprintf("call_%d", i)
		messages = append(messages,
			message{Role: "assistant", ToolCalls: []toolCall{{ID: id, Type: "function",
				Function: functionCall{Name: "create_invoice", Arguments: `{"currency":"x"}`}}}},
			message{Role: "tool", ToolCallID: id, Content: refused})
	}
	reply := ask(t, op, messages)
	assert.Empty(t, reply.ToolCalls)
	assert.Contains(t, reply.Content, "I tried create_invoice 3 times")

	for name, tools := range map[string]tools.Definitions{
		"no create_invoice":   {{Name: "charge"}},
		"no error catalogue":  {{Name: "create_invoice", Description: "Create a draft invoice."}},
		"a catalogue earlier": {{Name: "create_invoice", Description: "Errors (x):\n- a (400, retryable)\n\nThen more."}},
	} {
		defs, err := tools.OpenAI()
		require.NoError(t, err)
		body, err := json.Marshal(chatRequest{Model: modelName, Messages: []message{{Role: "user", Content: "hi"}}, Tools: defs})
		require.NoError(t, err)
		_, err = standIn(context.Background(), body)
		assert.Error(t, err, name)
	}
}

// ask sends the stand-in the conversation with op as the only tool, and returns its message.
func ask(t *testing.T, op client.Operation, messages []message) message {
	t.Helper()
	defs, err := tools.Definitions{tools.DefinitionOf(op)}.OpenAI()
	require.NoError(t, err)
	reply, err := complete(context.Background(), standIn, chatRequest{Model: modelName, Messages: messages, Tools: defs})
	require.NoError(t, err)
	return reply
}

func compile(t *testing.T, name string, schema json.RawMessage) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource(name+".json", decode(t, string(schema))), name)
	s, err := c.Compile(name + ".json")
	require.NoError(t, err, "%s: %s", name, schema)
	return s
}

func decode(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	require.NoError(t, err, s)
	return v
}
