// Package transcript writes what the loop did, attempt by attempt, as the quickstart and the
// remedy command print it.
package transcript

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/remedy-go/remedy"
)

// Attempt writes one attempt of a call: what was sent, what came back, what the
// loop decided.
func Attempt(out io.Writer, a *remedy.Attempt) {
	indent := strings.Repeat("  ", a.Depth)
	// Over MCP the key and the token are arguments of the tool call, not headers.
	keyLabel, tokenLabel := remedy.HeaderIdempotencyKey, remedy.HeaderConfirmationToken
	if a.Method == "tools/call" {
		keyLabel, tokenLabel = remedy.ArgIdempotencyKey, remedy.ArgConfirmationToken
	}
	sent := a.Method + " " + a.Target
	if a.IdempotencyKey != "" {
		sent += "  " + keyLabel + ": " + a.IdempotencyKey[:min(8, len(a.IdempotencyKey))] + "…"
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
}

// JoinRaw writes JSON values as one JSON array.
func JoinRaw(vs []json.RawMessage) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
