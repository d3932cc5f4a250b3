package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestQuickstart runs the quickstart as `go run` does and checks that every scenario ends the
// way its transcript says: repaired, run after its prerequisite, replayed, waited for,
// confirmed by the policy, confirmed by a (simulated) person over MCP — and that no side effect ran twice (run itself fails otherwise).
func TestQuickstart(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	s := out.String()
	for _, want := range []string{
		"agent: 9 operations loaded",
		"-> poll: the server accepted the operation: polling its status",
		"GET /operations/",
		"-> poll: the operation is still running",
		"an export that takes time",
		`checked: change /currency "EUR" → "eur" by enum_match`, // before sending, from the OpenAPI schema
		"next_operation finalize_invoice",
		"201 (Idempotency-Replayed: true)",
		"retry after 20ms",
		"-> confirm: confirmation challenge",
		"a charge whose response is lost    2         201 (replayed)  charge ×1",
		`person (simulated, no TTY) asked by the server: delete_customer {"id":"cus_grace"}? approve`,
		"a deletion a person confirms       1         200             delete_customer ×1", // this call's, not the earlier deletion's too
		"every side effect executed exactly once",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, s)
		}
	}
}
