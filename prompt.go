package remedy

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/remedy-go/remedy/internal/codename"
	"github.com/remedy-go/remedy/internal/jsonw"
	"github.com/remedy-go/remedy/internal/prose"
)

// promptMaxBytes keeps a prompt short enough to hand to a model after every failure.
const promptMaxBytes = 1024

// Prompt renders the envelope as a short repair instruction for an LLM: what failed, each
// field to fix with what was expected, allowed or suggested, the next operation if one is
// named, and whether and when to retry. It is deterministic (the same envelope gives the same
// text) and at most 1 KB: issues past the sixth are counted, not listed.
//
// It never holds the confirmation token, wherever the server wrote it (the token member, or
// inside the message or a hint): a model that could send it back would confirm on its own
// what only the user may approve. A confirmation challenge is told as the user's to approve.
//
// Prompt reads the envelope alone. What a Toolset tells a model after the loop stopped is
// derived from the loop's decision instead (see Toolset.Dispatch), which knows more: whether
// the request may have executed, whether the wait the server asked for was too long.
func (e *Envelope) Prompt() string {
	return e.withoutSecrets(nil).render(true)
}

// Summary is Prompt without its last line, the next step: what failed and what to fix, for a
// caller that words the next step itself from what it decided (as package client's model
// text does).
func (e *Envelope) Summary() string { return e.withoutSecrets(nil).render(false) }

// Redacted is the envelope as a model may read it: without its confirmation token, and with
// the token and each of secrets (an idempotency key, a token of the call) replaced by
// [withheld] wherever the server wrote them in its words. It is e itself when there is nothing
// to hide; otherwise a copy (the issues too): e is never changed.
func (e *Envelope) Redacted(secrets []string) *Envelope { return e.withoutSecrets(secrets) }

// render writes the prompt, with its next step when next is set. The envelope holds no
// secrets (see withoutSecrets).
func (e *Envelope) render(next bool) string {
	var b strings.Builder
	b.Grow(256)
	b.WriteString("The call failed")
	if e.Code != "" {
		b.WriteString(" with ")
		b.WriteString(prose.Clip(e.Code, 80))
	}
	if e.Status != 0 {
		b.WriteString(" (HTTP ")
		b.WriteString(strconv.Itoa(e.Status))
		b.WriteByte(')')
	}
	end := byte('.')
	if msg := prose.OneLine(e.Message); msg != "" {
		msg = prose.Clip(msg, 2*prose.MaxText)
		b.WriteString(": ")
		b.WriteString(msg)
		if strings.ContainsRune(".!?…", rune(msg[len(msg)-1])) || strings.HasSuffix(msg, "…") {
			end = 0
		}
	}
	if end != 0 {
		b.WriteByte(end)
	}
	b.WriteByte('\n')

	if len(e.Issues) > 0 {
		b.WriteString("Fix these fields:\n")
		for i := range e.Issues {
			if i == prose.MaxIssues {
				b.WriteString("- and ")
				b.WriteString(strconv.Itoa(len(e.Issues) - i))
				b.WriteString(" more\n")
				break
			}
			b.WriteString("- ")
			b.WriteString(e.Issues[i].Prompt())
			b.WriteByte('\n')
		}
	}
	// A confirmation's hint and suggestions tell how to send the token back, which is the
	// program's to do once the user approved, not the model's.
	confirm := e.AsksConfirmation()
	if h := prose.OneLine(e.Hint); h != "" && !confirm {
		b.WriteString("Hint: ")
		b.WriteString(prose.Clip(h, prose.MaxText))
		b.WriteByte('\n')
	}
	for i, s := range e.Suggestions {
		if i == 3 || confirm {
			break
		}
		b.WriteString("Suggestion: ")
		b.WriteString(prose.Clip(prose.OneLine(s), prose.MaxText))
		b.WriteByte('\n')
	}
	if e.CurrentStatus != "" || e.RequiredStatus != "" {
		b.WriteString("State: the resource is ")
		b.WriteString(orUnknown(prose.Clip(e.CurrentStatus, 40)))
		if e.RequiredStatus != "" {
			b.WriteString("; the call needs ")
			b.WriteString(prose.Clip(e.RequiredStatus, 40))
		}
		b.WriteString(".\n")
	}
	if next {
		b.WriteString(e.nextStep())
	}
	out := b.String()
	if len(out) > promptMaxBytes {
		out = prose.Clip(out[:strings.LastIndexByte(out[:promptMaxBytes-8], '\n')+1], promptMaxBytes) + "…\n"
	}
	return out
}

// nextStep is the one instruction that follows from the decision fields, in the order the loop
// applies them: fatal, confirmation, prerequisite, repair, wait and retry, stop.
func (e *Envelope) nextStep() string {
	switch {
	case e.Severity == SeverityFatal:
		return "Do not retry: the failure is fatal.\n"
	case e.AsksConfirmation():
		return "The operation needs the user's confirmation and did not run. The user approves it in the program that makes the call, not by calling again.\n"
	case e.NextOperation != "":
		s := "First call " + prose.Clip(e.NextOperation, 80)
		if len(e.NextOperationArgs) > 0 {
			s += " with " + prose.Clip(jsonw.Inline(e.NextOperationArgs), 2*prose.MaxValue)
		}
		return s + ", then retry this call.\n"
	case len(e.Issues) > 0:
		return "Change the fields above, then call again; the same call will fail the same way.\n"
	case e.Retryable:
		if e.RetryAfter > 0 {
			return "Retry the same call unchanged after " + prose.Duration(e.RetryAfter) + ".\n"
		}
		return "Retry the same call unchanged, after a short backoff.\n"
	}
	return "Do not retry the same call: it will fail the same way.\n"
}

// AsksConfirmation reports whether the failure is a confirmation challenge: a token, or the
// code confirmation_required without one.
func (e *Envelope) AsksConfirmation() bool {
	if e.ConfirmationToken != "" {
		return true
	}
	var buf [64]byte
	code, _ := codename.Norm(&buf, e.Code)
	return code == "confirmationrequired"
}

// Prompt renders the issue as Envelope.Prompt lists it, on one line: the field (its pointer,
// else the server's name for it), the code, the message, and what was expected, allowed,
// received or suggested.
func (is *Issue) Prompt() string {
	var b strings.Builder
	switch {
	case is.Path == "" && is.Field != "":
		b.WriteString(prose.Clip(prose.OneLine(is.Field), 120))
		b.WriteString(" (as the server names it)")
	case is.Path == "":
		b.WriteString("(whole request)")
	default:
		b.WriteString(prose.Clip(is.Path, 120))
	}
	if is.Code != "" {
		b.WriteString(" [")
		b.WriteString(prose.Clip(is.Code, 40))
		b.WriteByte(']')
	}
	if m := prose.OneLine(is.Message); m != "" {
		b.WriteString(": ")
		b.WriteString(prose.Clip(m, prose.MaxText))
	}
	var parts []string
	if len(is.Expected) > 0 {
		parts = append(parts, "expected "+prose.Value(is.Expected))
	}
	if len(is.AllowedValues) > 0 {
		vals := make([]string, 0, len(is.AllowedValues))
		for _, v := range is.AllowedValues {
			vals = append(vals, jsonw.Inline(v))
		}
		parts = append(parts, "allowed "+prose.Clip(strings.Join(vals, ", "), 2*prose.MaxValue))
	}
	if len(is.Received) > 0 {
		parts = append(parts, "received "+prose.Value(is.Received))
	}
	if len(is.SuggestedValue) > 0 {
		parts = append(parts, "suggested "+prose.Value(is.SuggestedValue))
	}
	if len(parts) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(parts, "; "))
		b.WriteByte(')')
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "in another state"
	}
	return s
}

// withoutSecrets is the envelope as a model may read it: without its confirmation token, and
// with the token and each of secrets (the idempotency keys and tokens of a call) replaced by
// [withheld] wherever the server wrote them in its words. It is e itself when there is
// nothing to hide; otherwise a copy (the issues too), so that e is never changed.
func (e *Envelope) withoutSecrets(secrets []string) *Envelope {
	if e.ConfirmationToken != "" {
		secrets = append(secrets[:len(secrets):len(secrets)], e.ConfirmationToken)
	}
	if len(secrets) == 0 {
		return e
	}
	c := *e
	c.ConfirmationToken = ""
	c.Title = prose.Redact(c.Title, secrets)
	c.Message = prose.Redact(c.Message, secrets)
	c.Hint = prose.Redact(c.Hint, secrets)
	c.Code = prose.Redact(c.Code, secrets)
	c.CurrentStatus = prose.Redact(c.CurrentStatus, secrets)
	c.RequiredStatus = prose.Redact(c.RequiredStatus, secrets)
	c.NextOperation = prose.Redact(c.NextOperation, secrets)
	c.NextOperationArgs = redactRaw(c.NextOperationArgs, secrets)
	if len(c.Suggestions) > 0 {
		c.Suggestions = make([]string, len(e.Suggestions))
		for i, s := range e.Suggestions {
			c.Suggestions[i] = prose.Redact(s, secrets)
		}
	}
	if len(c.Issues) > 0 {
		c.Issues = make([]Issue, len(e.Issues))
		for i, is := range e.Issues {
			is.Path = prose.Redact(is.Path, secrets)
			is.Code = prose.Redact(is.Code, secrets)
			is.Message = prose.Redact(is.Message, secrets)
			is.Expected = redactRaw(is.Expected, secrets)
			is.Received = redactRaw(is.Received, secrets)
			is.SuggestedValue = redactRaw(is.SuggestedValue, secrets)
			if len(is.AllowedValues) > 0 {
				vals := make([]json.RawMessage, len(is.AllowedValues))
				for j, v := range is.AllowedValues {
					vals[j] = redactRaw(v, secrets)
				}
				is.AllowedValues = vals
			}
			c.Issues[i] = is
		}
	}
	return &c
}

// redactRaw is redact of a JSON value's text.
func redactRaw(v json.RawMessage, secrets []string) json.RawMessage {
	if len(v) == 0 {
		return v
	}
	if s := prose.Redact(string(v), secrets); s != string(v) {
		return json.RawMessage(s)
	}
	return v
}
