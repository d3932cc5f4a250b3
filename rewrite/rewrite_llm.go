package rewrite

import (
	"errors"
	"fmt"
	"strings"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/jsonw"
	"github.com/remedy-go/remedy/internal/prose"
	"github.com/remedy-go/remedy/internal/tape"
)

// maxRewriteReply bounds the model's reply: arguments are a request body, and a reply past the
// bound is a runaway generation, not a repair.
const maxRewriteReply = 1 << 20

var errNoCompletion = errors.New("remedy: LLMRewriter has no completion function")

// rewritePrompt is the envelope's repair instruction followed by what it applies to. The
// arguments are sent compact and whole: the model must return all of them, not only the fields
// it changes.
func rewritePrompt(e *remedy.Envelope, operation string, args []byte) string {
	var b strings.Builder
	p := e.Prompt()
	b.Grow(len(p) + len(args) + 256)
	b.WriteString(p)
	b.WriteByte('\n')
	if operation != "" {
		b.WriteString("Operation: ")
		b.WriteString(prose.Clip(prose.OneLine(operation), 200))
		b.WriteByte('\n')
	}
	b.WriteString("Arguments sent:\n")
	b.Write(jsonw.Compact(string(args)))
	b.WriteString("\n\nReply with the corrected arguments as one JSON object and nothing else: no prose, no Markdown. " +
		"Change only what the failure requires and keep every other argument as it was. " +
		"If the arguments cannot be repaired, reply null.\n")
	return b.String()
}

// readRewriteReply accepts one JSON object, possibly inside a Markdown code fence; empty and
// null mean the model gave up.
func readRewriteReply(reply string) ([]byte, error) {
	if len(reply) > maxRewriteReply {
		return nil, fmt.Errorf("%w: the reply is %d bytes, over the 1 MiB limit", ErrReply, len(reply))
	}
	s := stripFence(strings.TrimSpace(reply))
	if s == "" || s == "null" {
		return nil, nil
	}
	if !tape.Valid(s) {
		return nil, fmt.Errorf("%w: not valid JSON: %q", ErrReply, prose.Clip(s, 80))
	}
	if s[0] != '{' {
		return nil, fmt.Errorf("%w: a JSON %s, not an object", ErrReply, jsonKind(s[0]))
	}
	return jsonw.Compact(s), nil
}

// stripFence removes one Markdown code fence around s: ```json … ``` or ``` … ```. A fence for
// another language is left, and the reply then fails as not JSON.
func stripFence(s string) string {
	if !strings.HasPrefix(s, "```") || len(s) < 6 || !strings.HasSuffix(s, "```") {
		return s
	}
	inner := s[3 : len(s)-3]
	if len(inner) >= 4 && strings.EqualFold(inner[:4], "json") {
		inner = inner[4:]
	}
	if strings.Contains(inner, "```") {
		return s // more than one block: not a single fenced object
	}
	return strings.TrimSpace(inner)
}

func jsonKind(first byte) string {
	switch first {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}
