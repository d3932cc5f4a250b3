package transcript_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/client/transcript"
	"github.com/remedy-go/remedy/internal/termsafe"
	"github.com/remedy-go/remedy/rewrite"
)

func TestAttemptChanges(t *testing.T) {
	t.Parallel()
	env := &remedy.Envelope{Status: 422, Code: "invalid_body", Message: "amount must be at most 1000000"}
	rw := client.Decision{Action: client.ActRewrite, Why: "the failure names a fix"}
	refused := client.Decision{Action: client.ActStop, Cause: client.ErrRewriteRefused, Why: "not approved"}
	long := json.RawMessage(`"` + strings.Repeat("é", 200) + `"`)
	for _, tc := range []struct {
		name     string
		decision client.Decision
		changes  []rewrite.Change
		want     []string
	}{
		{"none", rw, nil, nil},
		{"lossless", rw, []rewrite.Change{
			{Path: "/amount", Old: json.RawMessage(`"1200"`), New: json.RawMessage(`1200`), Rule: "coerce"},
		}, []string{`      change /amount "1200" → 1200 by coerce`}},
		{"lossy, approved", rw, []rewrite.Change{
			{Path: "/amount", Old: json.RawMessage(`99999999`), New: json.RawMessage(`1000000`), Rule: "clamp", Lossy: true},
		}, []string{`      change /amount 99999999 → 1000000 by clamp (lossy, approved)`}},
		{"refused", refused, []rewrite.Change{
			{Path: "/amount", Old: json.RawMessage(`10`), New: json.RawMessage(`50`), Rule: "clamp", Lossy: true},
			{Path: "/currency", Old: json.RawMessage(`"EUR"`), New: json.RawMessage(`"eur"`), Rule: "enum_match"},
		}, []string{
			`      change /amount 10 → 50 by clamp (lossy, refused)`,
			`      change /currency "EUR" → "eur" by enum_match (refused)`,
		}},
		{"added, removed, spaced, not JSON", rw, []rewrite.Change{
			{Path: "/currency", New: json.RawMessage(`"usd"`), Rule: "default"},
			{Path: "/extra", Old: json.RawMessage("{\n  \"a\": 1\n}"), Rule: "drop_unknown", Lossy: true},
			{Path: "/x", Old: json.RawMessage("not\njson"), New: json.RawMessage(`1`)},
		}, []string{
			`      change /currency (absent) → "usd" by default`,
			`      change /extra {"a":1} → (removed) by drop_unknown (lossy, approved)`,
			`      change /x "not\njson" → 1` + "\n",
		}},
		{"long", rw, []rewrite.Change{{Path: "/memo", Old: long, New: json.RawMessage(`"short"`), Rule: "truncate", Lossy: true}},
			[]string{`      change /memo "` + strings.Repeat("é", 78) + `… → "short" by truncate (lossy, approved)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			transcript.Attempt(&out, &client.Attempt{Operation: "charge", Number: 1, Method: "POST", Target: "/v1/charges",
				Status: 422, Envelope: env, Decision: tc.decision, Changes: tc.changes})
			got := out.String()
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if n := len(lines); n != 3+len(tc.changes) {
				t.Errorf("want %d lines, one a change, got %d:\n%s", 3+len(tc.changes), n, got)
			}
			if !strings.HasPrefix(lines[2], "       -> ") {
				t.Errorf("the decision is not the third line:\n%s", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestChange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    rewrite.Change
		want string
	}{
		{rewrite.Change{Path: "/a/0", Old: json.RawMessage(`0`), New: json.RawMessage(`1`), Rule: "clamp"}, "/a/0 0 → 1 by clamp"},
		{rewrite.Change{Path: "", Old: json.RawMessage(`{}`), New: json.RawMessage(`{"a":1}`)}, `(the whole arguments) {} → {"a":1}`},
		{rewrite.Change{Path: "/b"}, "/b (absent) → (removed)"},
		// A model's rewriter may say anything: its path, value and rule are shown escaped.
		{rewrite.Change{Path: "/c\x1b[2K", New: json.RawMessage("\"txt.exe\u202egnp\""), Rule: "llm\r\n"},
			`/c\x1b[2K (absent) → "txt.exe\u202egnp" by llm\r\n`},
	} {
		if got := transcript.Change(tc.c); got != tc.want {
			t.Errorf("Change(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}

// The key the attempt sent is shown as sent: whole when short (a caller's own key, often), its
// first 8 characters marked as cut when longer.
func TestAttemptKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ key, want, method string }{
		{"k", "  Idempotency-Key: k\n", "POST"},
		{"order-17", "  Idempotency-Key: order-17\n", "POST"},
		{"01J2ABCDEFGHJKMNPQRSTVWXYZ", "  Idempotency-Key: 01J2ABCD…\n", "POST"},
		{"ключ-заказа-17", "  idempotencyKey: ключ-зак…\n", "tools/call"},
	} {
		var out bytes.Buffer
		transcript.Attempt(&out, &client.Attempt{Operation: "charge", Number: 1, Method: tc.method, Target: "/v1/charges",
			IdempotencyKey: tc.key, Status: 201, Decision: client.Decision{Action: client.ActReturn, Why: "success"}})
		first, _, _ := strings.Cut(out.String(), "\n")
		if !strings.HasSuffix(first+"\n", tc.want) {
			t.Errorf("key %q: first line %q, want it to end %q", tc.key, first, tc.want)
		}
	}
}

// hostile is what a server can put in its words to act on a terminal instead of being read:
// an OSC window title, a carriage return, an erased line, the cursor moved up, a forged line,
// a C1 control sequence introducer and a right-to-left override.
const hostile = "\x1b]0;pwned\x07\r\x1b[2K\x1b[1A\n  operation: get_balance\u009b2J\u202eevil"

// hostileShown is hostile as the transcript shows it.
const hostileShown = `\x1b]0;pwned\x07\r\x1b[2K\x1b[1A\n  operation: get_balance\u009b2J\u202eevil`

// TestAttemptEscapesWhatTheServerSaid: every string of a server's envelope, a transport error,
// a decision and a rewriter's change reaches the transcript as visible escapes, one line per
// line the transcript means to write.
func TestAttemptEscapesWhatTheServerSaid(t *testing.T) {
	t.Parallel()
	env := &remedy.Envelope{Status: 409, Code: "conflict" + hostile, Message: hostile,
		Issues: []remedy.Issue{{Path: "/to" + hostile, Code: "enum" + hostile,
			AllowedValues:  []json.RawMessage{json.RawMessage(`"` + hostile + `"`)},
			SuggestedValue: json.RawMessage(`"` + hostile + `"`)}},
		NextOperation: "verify" + hostile, NextOperationArgs: json.RawMessage(`{"x":"` + hostile + `"}`)}
	for _, tc := range []struct {
		name  string
		a     client.Attempt
		lines int
	}{
		{"envelope", client.Attempt{Operation: "transfer", Number: 1, Method: "POST", Target: "/v1/transfers" + hostile,
			Status: 409, Envelope: env, Decision: client.Decision{Action: client.ActStop, Why: "stopped: " + hostile},
			Changes: []rewrite.Change{{Path: "/to" + hostile, Old: json.RawMessage(`"a"`), New: json.RawMessage(`"` + hostile + `"`), Rule: "llm" + hostile}}},
			6}, // sent, answer, issue, next_operation, decision, change
		{"transport error", client.Attempt{Operation: "transfer", Number: 1, Method: "POST", Target: "/v1/transfers",
			Err: errors.New("read: " + hostile), Decision: client.Decision{Action: client.ActStop, Why: "no response"}},
			3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			transcript.Attempt(&out, &tc.a)
			got := out.String()
			if i := strings.IndexFunc(got, func(r rune) bool { return r != '\n' && !termsafe.Safe(string(r)) }); i >= 0 {
				t.Errorf("a raw %q at byte %d reached the transcript:\n%s", got[i:i+1], i, got)
			}
			if n := strings.Count(got, "\n"); n != tc.lines {
				t.Errorf("want %d lines, got %d: the server's words started lines of their own:\n%s", tc.lines, n, got)
			}
			if !strings.Contains(got, hostileShown) {
				t.Errorf("the server's words are not shown escaped (%s):\n%s", hostileShown, got)
			}
			for _, l := range strings.Split(got, "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), "operation:") {
					t.Errorf("a forged line: %q", l)
				}
			}
		})
	}
}
