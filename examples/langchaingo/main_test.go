package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/remedy-go/remedy/client"
	remedytools "github.com/remedy-go/remedy/tools"
)

func TestRun(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, run(&out))
	text := out.String()
	t.Log(text)

	assert.Contains(t, text, `| Action Input: {"amount":"12.00","currency":"Euro","customer_id":"cus_ada"}`)
	assert.Contains(t, text, "422 invalid_body")
	assert.Contains(t, text, "-> stop: the failure names a fix and no rewriter is configured", "remedy does not repair it")
	assert.Contains(t, text, "| Observation: The call failed with invalid_body (HTTP 422)")
	assert.Contains(t, text, `| - /currency [enum]: currency must be one of usd, eur, gbp (allowed "usd", "eur", "gbp"; received "Euro")`)
	assert.Contains(t, text, `| Action Input: {"amount":1200,"currency":"eur","customer_id":"cus_ada"}`, "the model does")
	assert.Contains(t, text, "final answer: Invoice in_1 for cus_ada is created: 12.00 EUR, status draft.")
	assert.Contains(t, text, "create_invoice executed 1 time(s) on the server")
	assert.Contains(t, text, "the first observation was remedy's repair text")
}

// The model's second call comes from what the observation says, not from a script: other
// questions fail in other ways and are repaired (or not) from their own repair texts.
func TestAgentRepairsFromTheObservation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		question string
		second   string // the model's second Action Input
		answer   string
		invoices int
	}{
		{"an enum and an amount in euros", question,
			`{"amount":1200,"currency":"eur","customer_id":"cus_ada"}`,
			"Invoice in_1 for cus_ada is created: 12.00 EUR, status draft.", 1},
		{"pounds, and a single decimal", "Bill cus_ada 7.5 GBP, please.",
			`{"amount":750,"currency":"gbp","customer_id":"cus_ada"}`,
			"Invoice in_1 for cus_ada is created: 7.50 GBP, status draft.", 1},
		{"a customer that does not exist: the model stops, it does not guess", "Invoice cus_bob for 3.00 usd.",
			`{"amount":300,"currency":"usd","customer_id":"cus_bob"}`,
			"I could not do it: The call failed with not_found (HTTP 404): no customer cus_bob.", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := ask(context.Background(), io.Discard, tt.question, remedytools.Options{SchemaInDescription: true})
			require.NoError(t, err)
			require.Len(t, res.Steps, 2, "one refused call, one repaired")
			require.NotEmpty(t, res.Refusals)

			first := res.Steps[0]
			assert.Equal(t, "create_invoice", first.Action.Tool)
			assert.True(t, strings.HasPrefix(first.Observation, whatFailed(res.Refusals[0])), "the model reads the envelope's repair text:\n%s", first.Observation)
			assert.True(t, strings.HasSuffix(first.Observation, "create_invoice did not run. Change the fields above, then call it again; the same call will fail the same way.\n"),
				"and the next step the loop decided:\n%s", first.Observation)
			assert.Contains(t, first.Observation, "Fix these fields:\n- /amount [type]")
			assert.NotContains(t, first.Observation, "remedy:", "never a Go error")

			assert.JSONEq(t, tt.second, res.Steps[1].Action.ToolInput)
			assert.Equal(t, tt.answer, res.Answer)
			assert.Equal(t, tt.invoices, res.Invoices)
		})
	}
}

// With FailureAsError, a refused call is the tool's error, and langchaingo's executor ends the
// run on it: the model never reads the failure. That is why the example leaves it off.
func TestFailureAsErrorEndsTheRun(t *testing.T) {
	t.Parallel()
	res, err := ask(context.Background(), io.Discard, question, remedytools.Options{SchemaInDescription: true, FailureAsError: true})
	require.ErrorIs(t, err, remedytools.ErrFailed)
	assert.Contains(t, err.Error(), "Fix these fields:", "the text the model should have read")
	assert.Equal(t, 0, res.Invoices)
}

// promptModel answers at once and keeps the prompt it was sent.
type promptModel struct{ prompt string }

func (m *promptModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.prompt = msgs[0].Parts[0].(llms.TextContent).Text
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "Final Answer: ok"}}}, nil
}

func (m *promptModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// With SchemaInDescription, langchaingo's own prompt gives each tool's schema, and text from
// the API reaches the model as written, even where it looks like a Go template. Without it,
// the model is told nothing of the arguments.
func TestPromptGivesEachToolsSchema(t *testing.T) {
	t.Parallel()
	ops := []client.Operation{{
		Name: "tag", Description: "Tags a {{thing}}.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"tags":{"type":"object","additionalProperties":{"type":"string"},"description":"{{.input}}"}}}`),
	}, {Name: "ping"}}
	prompt := func(opts remedytools.Options) string {
		ts := remedytools.New(ops, nil, opts)
		var agentTools []tools.Tool
		for _, tool := range ts.Tools() {
			agentTools = append(agentTools, tool)
		}
		model := &promptModel{}
		answer, err := chains.Run(context.Background(), agents.NewExecutor(agents.NewOneShotAgent(model, agentTools)), "hello")
		require.NoError(t, err)
		assert.Equal(t, "ok", answer)
		return model.prompt
	}

	with := prompt(remedytools.Options{SchemaInDescription: true})
	assert.Contains(t, with, "\n- tag: Tags a {{thing}}.\n\n"+schemaLead+
		`{"type":"object","properties":{"tags":{"type":"object","additionalProperties":{"type":"string"},"description":"{{.input}}"}}}`+"\n")
	assert.Contains(t, with, "\n- ping: "+schemaLead+`{"type":"object"}`+"\n", "no schema: any object")
	assert.Contains(t, with, "one of [ ping, tag ]")
	assert.True(t, strings.HasSuffix(with, "Question: hello\n"), "%q", with[len(with)-40:])
	assert.Equal(t, "{{.input}}", fieldSchema(with, "tag", "tags").Description, "the stand-in finds the schema where a model would")

	without := prompt(remedytools.Options{})
	assert.Contains(t, without, "\n- tag: Tags a {{thing}}.\n")
	assert.NotContains(t, without, schemaLead)
}
