// Package transcript writes what the loop did, attempt by attempt, as the quickstart and the
// remedy command print it.
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
)

// Attempt writes one attempt of a call: what was sent, what came back, what the loop
// decided, and every change made to the arguments after it, one line each. A change that
// may alter what the call means is marked "(lossy, approved)"; when the call stopped because
// the rewrite policy refused such a repair, the changes proposed are marked refused, since
// none of them was sent.
func Attempt(out io.Writer, a *remedy.Attempt) {
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
	fmt.Fprintf(out, "    %s#%d %s %s\n", indent, a.Number, a.Operation, sent)
	switch {
	case a.Err != nil:
		fmt.Fprintf(out, "    %s   no response: %v\n", indent, a.Err)
	case a.Envelope != nil:
		e := a.Envelope
		fmt.Fprintf(out, "    %s   %d %s: %s\n", indent, a.Status, e.Code, e.Message)
		for _, is := range e.Issues {
			fmt.Fprintf(out, "    %s     issue %s %s", indent, is.Path, is.Code)
			if len(is.AllowedValues) > 0 {
				fmt.Fprintf(out, " allowed %s", JoinRaw(is.AllowedValues))
			}
			if len(is.SuggestedValue) > 0 {
				fmt.Fprintf(out, " suggested %s", is.SuggestedValue)
			}
			fmt.Fprintln(out)
		}
		if e.NextOperation != "" {
			fmt.Fprintf(out, "    %s     next_operation %s %s\n", indent, e.NextOperation, e.NextOperationArgs)
		}
		if e.RetryAfter > 0 {
			fmt.Fprintf(out, "    %s     retry after %s\n", indent, e.RetryAfter)
		}
	default:
		replayed := ""
		if a.Replayed {
			replayed = " (Idempotency-Replayed: true)"
		}
		fmt.Fprintf(out, "    %s   %d%s\n", indent, a.Status, replayed)
	}
	d := a.Decision
	line := d.Action.String() + ": " + d.Why
	if d.Wait > 0 {
		line += fmt.Sprintf(" (waiting %s)", d.Wait.Round(time.Millisecond))
	}
	fmt.Fprintf(out, "    %s   -> %s\n", indent, line)
	refused := d.Action == remedy.ActStop && errors.Is(d.Cause, remedy.ErrRewriteRefused)
	for _, c := range a.Changes {
		fmt.Fprintf(out, "    %s      change %s%s\n", indent, Change(c), mark(c.Lossy, refused))
	}
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
// removed is said so; a long value is shortened.
func Change(c remedy.Change) string {
	path := c.Path
	if path == "" {
		path = "(the whole arguments)"
	}
	s := path + " " + value(c.Old, "(absent)") + " → " + value(c.New, "(removed)")
	if c.Rule != "" {
		s += " by " + c.Rule
	}
	return s
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

// JoinRaw writes JSON values as one JSON array.
func JoinRaw(vs []json.RawMessage) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
