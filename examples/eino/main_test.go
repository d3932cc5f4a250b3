package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The agent's first call is refused, the model reads the repair text from the tool message and
// calls again with what it says, and the invoice is created once.
func TestRun(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, run(&out))
	text := out.String()
	t.Log(text)

	parts := strings.Split(text, "\n[")
	require.Len(t, parts, 3, "the set-up and two tool calls")
	assert.Contains(t, parts[0], "model is offered 7 tools (charge, create_invoice, delete_customer,")
	assert.Contains(t, parts[0], "create_invoice requires customer_id, currency, amount", "read from the converted schema")

	first := parts[1]
	assert.Contains(t, first, `1] model calls create_invoice {"customer_id":"cus_ada","currency":"Euro","amount":"1200"}`)
	assert.Contains(t, first, "422 invalid_body")
	assert.Contains(t, first, "-> stop: the failure names a fix and no rewriter is configured", "the loop leaves the repair to the model")
	assert.Contains(t, first, `| - /currency [enum]: currency must be one of usd, eur, gbp (allowed "usd", "eur", "gbp"; received "Euro")`,
		"the tool message is the repair text")
	assert.Contains(t, first, `| - /amount [type]: amount must be an integer, not a string (expected "integer"; received "1200"; suggested 1200)`)
	assert.NotContains(t, first, "remedy:", "no Go error reaches the model")

	second := parts[2]
	assert.Contains(t, second, `2] model calls create_invoice {"amount":1200,"currency":"eur","customer_id":"cus_ada"}`)
	assert.Contains(t, second, "-> return: success")
	assert.Contains(t, second, `| {"id":"in_1","customer_id":"cus_ada","currency":"eur","amount":1200,"status":"draft"}`)
	assert.Contains(t, second, "\nagent answers: Invoice in_1 to cus_ada for 12.00 EUR is created; it is a draft.\n")
	assert.Contains(t, second, "create_invoice executed 1 time(s)")

	assert.Equal(t, 2, strings.Count(text, "create_invoice POST /v1/invoices"), "one HTTP attempt per tool call")
}

// The stand-in derives its second call from the repair text, whatever the text says.
func TestRepair(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, sent, text, want string
	}{
		{
			name: "a suggested value is taken as it is",
			sent: `{"currency":"pounds","amount":5}`,
			text: `- /currency [enum]: currency must be one of usd, eur, gbp (allowed "usd", "eur", "gbp"; received "pounds"; suggested "gbp")`,
			want: `{"amount":5,"currency":"gbp"}`,
		},
		{
			name: "else the allowed value the one sent was meant as",
			sent: `{"currency":"EUROS"}`,
			text: "Fix these fields:\n- /currency [enum]: no (allowed \"usd\", \"eur\"; received \"EUROS\")\nHint: x\n",
			want: `{"currency":"eur"}`,
		},
		{
			name: "a nested field",
			sent: `{"line":{"qty":"2"}}`,
			text: `- /line/qty [type]: qty must be an integer (expected "integer"; received "2"; suggested 2)`,
			want: `{"line":{"qty":2}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := repair(tt.sent, tt.text)
			require.True(t, ok)
			assert.JSONEq(t, tt.want, got)
		})
	}

	for _, text := range []string{
		"The call failed with not_found (HTTP 404): no customer cus_bob.",
		`- /currency [enum]: no (allowed "usd", "eur"; received "yen")`,
		`- /missing [type]: no (expected "integer"; received "2"; suggested 2)`,
	} {
		_, ok := repair(`{"currency":"yen"}`, text)
		assert.False(t, ok, "nothing to fix in %q: the model gives up", text)
	}
}
