package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// typed is a terminal a test types into.
type typed struct{ *strings.Reader }

func (typed) Terminal() bool { return true }

// callAt runs remedy with stdin a terminal that types input.
func callAt(t *testing.T, input string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, typed{strings.NewReader(input)}, &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// TestCallPromptsAtTerminal: on a terminal, a confirmation — the token flow over REST, the
// server's question to the person over MCP (elicitation) — is asked as approve? [y/N],
// showing the operation and the payload; only y runs the call, and anything else runs
// nothing.
func TestCallPromptsAtTerminal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, typed string
		mcp         bool
		exit, runs  int
		out         string // in stdout
	}{
		{name: "REST yes", typed: "y\n", exit: exitOK, runs: 1, out: "approved at the terminal: delete_customer"},
		{name: "REST no", typed: "n\n", exit: exitFailed, out: "needs confirmation"},
		{name: "REST nothing typed", typed: "", exit: exitFailed, out: "needs confirmation"},
		{name: "MCP yes", typed: "yes\n", mcp: true, exit: exitOK, runs: 1, out: "approved at the terminal: delete_customer"},
		{name: "MCP no", typed: "\n", mcp: true, exit: exitFailed, out: "confirmation_declined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := startBilling(t)
			args := []string{"call", b.url, "delete_customer", `{"id":"cus_ada"}`}
			if tc.mcp {
				args = []string{"call", "--mcp", b.url + "/mcp", "delete_customer", `{"id":"cus_ada"}`}
			}
			r := callAt(t, tc.typed, args...)
			r.wantExit(t, tc.exit)
			for _, want := range []string{"operation: delete_customer", `payload:   {"id":"cus_ada"}`, "approve? [y/N] "} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("the prompt lacks %q:\n%s", want, r)
				}
			}
			if tc.mcp && !strings.Contains(r.stderr, "MCP elicitation") {
				t.Errorf("want the server's question to the person:\n%s", r)
			}
			if !strings.Contains(r.stdout, tc.out) {
				t.Errorf("the output lacks %q:\n%s", tc.out, r)
			}
			if n := b.store.Effects("delete_customer"); n != tc.runs {
				t.Errorf("delete_customer executed %d times, want %d", n, tc.runs)
			}
		})
	}
}

// TestCallConfirmFlagDoesNotPrompt: --confirm approves without asking, even at a terminal.
func TestCallConfirmFlagDoesNotPrompt(t *testing.T) {
	t.Parallel()
	b := startBilling(t)
	r := callAt(t, "n\n", "call", "--confirm", "--mcp", b.url+"/mcp", "delete_customer", `{"id":"cus_ada"}`)
	r.wantExit(t, exitOK)
	if strings.Contains(r.stderr, "approve?") {
		t.Errorf("--confirm asked:\n%s", r)
	}
	if !strings.Contains(r.stdout, "--confirm: approving delete_customer") {
		t.Errorf("want the approval in the transcript:\n%s", r)
	}
	if n := b.store.Effects("delete_customer"); n != 1 {
		t.Errorf("delete_customer executed %d times, want once", n)
	}
}
