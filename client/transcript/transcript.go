// Package transcript writes what the loop did, attempt by attempt, for a person to read: what
// was sent, what came back, what the loop decided and every change made to the arguments, one
// line each. The quickstart, the other examples and `remedy call` print with it; give Attempt
// to client.Hooks.AttemptEnd to print a call of your own.
//
// Everything a server, a document or a rewriter said is escaped (control characters, escape
// sequences and bidirectional controls are made visible), so a hostile server can neither move
// the cursor nor start a line of its own. Idempotency keys are shortened to their first 8
// characters; the text is for a terminal or a log, not for a model (see package tools for that).
package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/termsafe"
	"github.com/remedy-go/remedy/rewrite"
)

// Attempt writes one attempt of a call: what was sent, what came back, what the loop
// decided, and every change made to the arguments after it, one line each. A change that
// may alter what the call means is marked "(lossy, approved)"; when the call stopped because
// the rewrite policy refused such a repair, the changes proposed are marked refused, since
// none of them was sent. What the server, the document or a rewriter said (codes, messages,
// paths, values, errors) is shown escaped (see termsafe): it can neither move the cursor nor
// start a line of its own.
func Attempt(out io.Writer, a *client.Attempt) {
	indent := strings.Repeat("  ", a.Depth)
	// Over MCP the key and the token are arguments of the tool call, not headers.
	keyLabel, tokenLabel := remedy.HeaderIdempotencyKey, remedy.HeaderConfirmationToken
	if a.Method == "tools/call" {
		keyLabel, tokenLabel = remedy.ArgIdempotencyKey, remedy.ArgConfirmationToken
	}
	sent := a.Method + " " + a.Target
	if a.IdempotencyKey != "" {
		sent += "  " + keyLabel + ": " + shortKey(a.IdempotencyKey)
	}
	if a.Confirmed {
		sent += "  " + tokenLabel + ": …"
	}
	line(out, "    %s#%d %s %s", indent, a.Number, a.Operation, sent)
	for _, c := range a.Checked {
		// Made before sending: the arguments broke the operation's schema.
		line(out, "    %s   checked: change %s%s", indent, Change(c), mark(c.Lossy, false))
	}
	switch {
	case a.Err != nil:
		line(out, "    %s   no response: %v", indent, a.Err)
	case a.Envelope != nil:
		e := a.Envelope
		line(out, "    %s   %d %s: %s", indent, a.Status, e.Code, e.Message)
		for _, is := range e.Issues {
			s := "issue " + is.Path + " " + is.Code
			if len(is.AllowedValues) > 0 {
				s += " allowed " + joinRaw(is.AllowedValues)
			}
			if len(is.SuggestedValue) > 0 {
				s += " suggested " + string(is.SuggestedValue)
			}
			line(out, "    %s     %s", indent, s)
		}
		if e.NextOperation != "" {
			line(out, "    %s     next_operation %s %s", indent, e.NextOperation, e.NextOperationArgs)
		}
		if e.RetryAfter > 0 {
			line(out, "    %s     retry after %s", indent, e.RetryAfter)
		}
	default:
		replayed := ""
		if a.Replayed {
			replayed = " (Idempotency-Replayed: true)"
		}
		line(out, "    %s   %d%s", indent, a.Status, replayed)
	}
	d := a.Decision
	decided := d.Action.String() + ": " + d.Why
	if d.Wait > 0 {
		decided += fmt.Sprintf(" (waiting %s)", d.Wait.Round(time.Millisecond))
	}
	line(out, "    %s   -> %s", indent, decided)
	refused := d.Action == client.ActStop && errors.Is(d.Cause, client.ErrRewriteRefused)
	for _, c := range a.Changes {
		line(out, "    %s      change %s%s", indent, Change(c), mark(c.Lossy, refused))
	}
}

// line writes one line of the transcript, escaped whole: the format is the transcript's own
// printable text, and every argument that came from a server or a rewriter is made visible
// instead of acting on the terminal, a newline in it included.
func line(out io.Writer, format string, args ...any) {
	fmt.Fprintln(out, termsafe.String(fmt.Sprintf(format, args...)))
}

// shortKey is an idempotency key as the transcript shows it: its first 8 characters, enough
// to tell one from another, marked as cut only when it is longer.
func shortKey(k string) string {
	if utf8.RuneCountInString(k) <= 8 {
		return k
	}
	return string([]rune(k)[:8]) + "…"
}

// mark says whether a change was sent, for a change that needed the rewrite policy's approval
// or one of a refused proposal.
func mark(lossy, refused bool) string {
	switch {
	case lossy && refused:
		return " (lossy, refused)"
	case lossy:
		return " (lossy, approved)"
	case refused:
		return " (refused)"
	}
	return ""
}

// Change describes one edit of the arguments: its path, the value before and after, and the
// rule that made it, as in `/amount 99999999 → 1000000 by clamp`. A value that was absent or
// removed is said so; a long value is shortened. The path, the values and the rule come from
// a rewriter (a model's, maybe): they are escaped (see termsafe), so the line is safe to print.
func Change(c rewrite.Change) string {
	path := c.Path
	if path == "" {
		path = "(the whole arguments)"
	}
	s := path + " " + value(c.Old, "(absent)") + " → " + value(c.New, "(removed)")
	if c.Rule != "" {
		s += " by " + c.Rule
	}
	return termsafe.String(s)
}

// maxValue is how many characters of a value a change line shows.
const maxValue = 80

// value is v as one line of compact JSON, at most maxValue characters, or none when v is nil.
// Bytes that are not JSON (a rewriter's own account may hold anything) are shown quoted.
func value(v json.RawMessage, none string) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return none
	}
	var buf bytes.Buffer
	s := strconv.Quote(string(v))
	if json.Compact(&buf, v) == nil {
		s = buf.String()
	}
	if utf8.RuneCountInString(s) <= maxValue {
		return s
	}
	r := []rune(s)
	return string(r[:maxValue-1]) + "…"
}

// joinRaw writes JSON values as one JSON array.
func joinRaw(vs []json.RawMessage) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
