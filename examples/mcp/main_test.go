package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/examples/billing"
)

func TestRun(t *testing.T) {
	api, store, err := billing.New()
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, run(&out, api, store))
	text := out.String()
	t.Log(text)

	for _, op := range []string{"create_invoice", "finalize_invoice", "send_invoice", "delete_customer"} {
		assert.Equal(t, 1, store.Effects(op), "%s executed once", op)
	}

	parts := strings.Split(text, "\n[")
	require.Len(t, parts, 4, "the tool list and three calls")

	tools := parts[0]
	for _, name := range []string{"charge", "create_invoice", "delete_customer", "finalize_invoice", "get_invoice", "revenue_report", "send_invoice"} {
		assert.Contains(t, tools, "\n  "+name, "tool %s listed", name)
	}
	assert.Contains(t, tools, "delete_customer   destructive, idempotent, takes confirmationToken")
	assert.Contains(t, tools, "charge            idempotent, takes idempotencyKey")
	assert.Contains(t, tools, "## Errors")
	assert.Contains(t, tools, "- `not_found` (404, not retryable)")

	enum := parts[1]
	assert.Contains(t, enum, "#1 create_invoice tools/call create_invoice")
	// Repaired from the tool's input schema before the call is sent: one tools/call.
	assert.Contains(t, enum, `checked: change /currency "EUR" → "eur" by enum_match`)
	assert.NotContains(t, enum, "#2 ")
	assert.Contains(t, enum, `=> {"id":"in_1","customer_id":"cus_ada","currency":"eur","amount":1200,"status":"draft"}`)

	draft := parts[2]
	assert.Contains(t, draft, `next_operation finalize_invoice {"id":"in_1"}`)
	assert.Contains(t, draft, "      #1 finalize_invoice tools/call finalize_invoice", "the prerequisite runs nested")
	assert.Contains(t, draft, "    #2 send_invoice tools/call send_invoice")
	assert.Contains(t, draft, `"status":"sent"`)

	destructive := parts[3]
	assert.Contains(t, destructive, "409 confirmation_required")
	assert.Contains(t, destructive, "-> confirm: confirmation challenge")
	assert.Contains(t, destructive, "-> confirm: confirmation challenge, approved by the confirm policy")
	assert.Contains(t, destructive, "#2 delete_customer tools/call delete_customer  confirmationToken")
	assert.NotContains(t, destructive, "#3 ")
	assert.Contains(t, destructive, `=> {"id":"cus_ada","deleted":true}`)
}
