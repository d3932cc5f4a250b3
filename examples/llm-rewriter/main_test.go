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

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/rewrite"
)

func TestRun(t *testing.T) {
	api, store, err := billing.New()
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, run(&out, api, store))
	text := out.String()
	t.Log(text)

	assert.Equal(t, 2, store.Effects("create_invoice"), "one invoice per create_invoice call")
	assert.Equal(t, 1, store.Effects("charge"), "the repaired charge executed once")

	calls := strings.Split(text, "\n[")
	require.Len(t, calls, 4, "a preamble and three calls")

	alone := calls[1]
	assert.Contains(t, alone, "#1 create_invoice POST /v1/invoices")
	assert.Contains(t, alone, "-> rewrite: the failure names a fix")
	assert.Contains(t, alone, `| - /currency [enum]`, "the model receives the issue")
	assert.Contains(t, alone, "| Operation: create_invoice")
	assert.Contains(t, alone, `| {"customer_id":"cus_ada","currency":"euro","amount":1200}`, "and the arguments as sent")
	assert.Contains(t, alone, `model replies: {"amount":1200,"currency":"eur","customer_id":"cus_ada"}`)
	assert.Contains(t, alone, `=> 201 {"id":"in_1","customer_id":"cus_ada","currency":"eur"`)

	deterministic := calls[2]
	assert.Contains(t, deterministic, `deterministic rewriter: {"customer_id":"cus_ada","currency":"eur","amount":1200}`)
	assert.NotContains(t, deterministic, "model receives", "what the envelope states needs no model")
	assert.Contains(t, deterministic, "=> 201")

	guessed := calls[3]
	assert.Contains(t, guessed, "deterministic rewriter: gives up, next in the chain")
	assert.Contains(t, guessed, `expected {"pattern":"^cus_[a-z0-9]+$"}; received "CUS-ADA"`)
	assert.Contains(t, guessed, `model replies: {"amount":4200,"currency":"usd","customer_id":"cus_ada"}`)
	assert.Contains(t, guessed, "#2 charge POST /v1/charges")
	assert.NotContains(t, guessed, "#3 ", "one repair is enough")
	assert.Contains(t, guessed, `=> 201 {"id":"ch_3","customer_id":"cus_ada","amount":4200`)

	assert.Contains(t, text, "the model was asked 2 times")
}

// The stand-in reads what a prompt says, not what this program sends: it repairs failures it
// was not written for, and gives up (null) on one it cannot read a fix from, which ends the
// call's repair.
func TestStandInReadsThePrompt(t *testing.T) {
	tests := []struct {
		name  string
		issue remedy.Issue
		args  string
		want  string // "" means the rewriter gives up
	}{
		{"a pattern, with dots", remedy.Issue{Path: "/customer", Code: "pattern",
			Expected: json.RawMessage(`{"pattern":"^cus_[a-z]+$"}`), Received: json.RawMessage(`"Cus.Bob"`)},
			`{"customer":"Cus.Bob","n":1}`, `{"customer":"cus_bob","n":1}`},
		{"an enum, by its prefix", remedy.Issue{Path: "/plan/tier", Code: "enum",
			AllowedValues: []json.RawMessage{json.RawMessage(`"basic"`), json.RawMessage(`"pro"`)}, Received: json.RawMessage(`"Professional"`)},
			`{"plan":{"tier":"Professional"}}`, `{"plan":{"tier":"pro"}}`},
		{"a number sent as text", remedy.Issue{Path: "/qty", Code: "type",
			Expected: json.RawMessage(`"integer"`), Received: json.RawMessage(`"3"`)},
			`{"qty":"3"}`, `{"qty":3}`},
		{"a suggestion", remedy.Issue{Path: "/unit", Code: "enum", Received: json.RawMessage(`"boxes"`),
			SuggestedValue: json.RawMessage(`"box"`)},
			`{"unit":"boxes"}`, `{"unit":"box"}`},
		{"nothing to go on", remedy.Issue{Path: "/customer", Code: "pattern",
			Expected: json.RawMessage(`{"pattern":"^cus_[a-z]+$"}`), Received: json.RawMessage(`"???"`)},
			`{"customer":"???"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			model := &standIn{out: io.Discard}
			env := &remedy.Envelope{Status: 422, Code: "invalid_body", Message: "invalid", Issues: []remedy.Issue{tt.issue}}
			got, err := rewrite.LLM(model.complete).Rewrite(context.Background(),
				&rewrite.Request{Operation: "op", Args: json.RawMessage(tt.args), Envelope: env, Attempt: 1})
			require.NoError(t, err)
			assert.Equal(t, 1, model.calls)
			if tt.want == "" {
				assert.Nil(t, got)
				return
			}
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}
