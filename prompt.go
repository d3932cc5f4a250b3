package remedy

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/remedy-go/remedy/internal/tape"
)

// Limits that keep a prompt short enough to hand to a model after every failure.
const (
	promptMaxBytes  = 1024
	promptMaxIssues = 6
	promptMaxText   = 160
	promptMaxValue  = 100
)

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

// summary is the prompt without its last line, the next step: what failed and what to fix.
func (e *Envelope) summary() string { return e.render(false) }

// render writes the prompt, with its next step when next is set. The envelope holds no
// secrets (see withoutSecrets).
func (e *Envelope) render(next bool) string {
	var b strings.Builder
	b.Grow(256)
	b.WriteString("The call failed")
	if e.Code != "" {
		b.WriteString(" with ")
		b.WriteString(clip(e.Code, 80))
	}
	if e.Status != 0 {
		b.WriteString(" (HTTP ")
		b.WriteString(strconv.Itoa(e.Status))
		b.WriteByte(')')
	}
	end := byte('.')
	if msg := oneLine(e.Message); msg != "" {
		msg = clip(msg, 2*promptMaxText)
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
			if i == promptMaxIssues {
				b.WriteString("- and ")
				b.WriteString(strconv.Itoa(len(e.Issues) - i))
				b.WriteString(" more\n")
				break
			}
			writeIssue(&b, &e.Issues[i])
		}
	}
	// A confirmation's hint and suggestions tell how to send the token back, which is the
	// program's to do once the user approved, not the model's.
	confirm := e.needsConfirmation()
	if h := oneLine(e.Hint); h != "" && !confirm {
		b.WriteString("Hint: ")
		b.WriteString(clip(h, promptMaxText))
		b.WriteByte('\n')
	}
	for i, s := range e.Suggestions {
		if i == 3 || confirm {
			break
		}
		b.WriteString("Suggestion: ")
		b.WriteString(clip(oneLine(s), promptMaxText))
		b.WriteByte('\n')
	}
	if e.CurrentStatus != "" || e.RequiredStatus != "" {
		b.WriteString("State: the resource is ")
		b.WriteString(orUnknown(clip(e.CurrentStatus, 40)))
		if e.RequiredStatus != "" {
			b.WriteString("; the call needs ")
			b.WriteString(clip(e.RequiredStatus, 40))
		}
		b.WriteString(".\n")
	}
	if next {
		b.WriteString(e.nextStep())
	}
	out := b.String()
	if len(out) > promptMaxBytes {
		out = clip(out[:strings.LastIndexByte(out[:promptMaxBytes-8], '\n')+1], promptMaxBytes) + "…\n"
	}
	return out
}

// nextStep is the one instruction that follows from the decision fields, in the order the loop
// applies them: fatal, confirmation, prerequisite, repair, wait and retry, stop.
func (e *Envelope) nextStep() string {
	switch {
	case e.Severity == SeverityFatal:
		return "Do not retry: the failure is fatal.\n"
	case e.needsConfirmation():
		return "The operation needs the user's confirmation and did not run. The user approves it in the program that makes the call, not by calling again.\n"
	case e.NextOperation != "":
		s := "First call " + clip(e.NextOperation, 80)
		if len(e.NextOperationArgs) > 0 {
			s += " with " + clip(compactJSON(e.NextOperationArgs), 2*promptMaxValue)
		}
		return s + ", then retry this call.\n"
	case len(e.Issues) > 0:
		return "Change the fields above, then call again; the same call will fail the same way.\n"
	case e.Retryable:
		if e.RetryAfter > 0 {
			return "Retry the same call unchanged after " + humanDuration(e.RetryAfter) + ".\n"
		}
		return "Retry the same call unchanged, after a short backoff.\n"
	}
	return "Do not retry the same call: it will fail the same way.\n"
}

// needsConfirmation reports whether the failure is a confirmation challenge: a token, or the
// code without one.
func (e *Envelope) needsConfirmation() bool {
	if e.ConfirmationToken != "" {
		return true
	}
	var buf [64]byte
	code, _ := normCode(&buf, e.Code)
	return code == "confirmationrequired"
}

func writeIssue(b *strings.Builder, is *Issue) {
	b.WriteString("- ")
	switch {
	case is.Path == "" && is.Field != "":
		b.WriteString(clip(oneLine(is.Field), 120))
		b.WriteString(" (as the server names it)")
	case is.Path == "":
		b.WriteString("(whole request)")
	default:
		b.WriteString(clip(is.Path, 120))
	}
	if is.Code != "" {
		b.WriteString(" [")
		b.WriteString(clip(is.Code, 40))
		b.WriteByte(']')
	}
	if m := oneLine(is.Message); m != "" {
		b.WriteString(": ")
		b.WriteString(clip(m, promptMaxText))
	}
	var parts []string
	if len(is.Expected) > 0 {
		parts = append(parts, "expected "+value(is.Expected))
	}
	if len(is.AllowedValues) > 0 {
		vals := make([]string, 0, len(is.AllowedValues))
		for _, v := range is.AllowedValues {
			vals = append(vals, compactJSON(v))
		}
		parts = append(parts, "allowed "+clip(strings.Join(vals, ", "), 2*promptMaxValue))
	}
	if len(is.Received) > 0 {
		parts = append(parts, "received "+value(is.Received))
	}
	if len(is.SuggestedValue) > 0 {
		parts = append(parts, "suggested "+value(is.SuggestedValue))
	}
	if len(parts) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(parts, "; "))
		b.WriteByte(')')
	}
	b.WriteByte('\n')
}

func value(v json.RawMessage) string { return clip(compactJSON(v), promptMaxValue) }

// compactJSON renders raw JSON on one line; what is not valid JSON is shown as a string.
func compactJSON(v json.RawMessage) string {
	if !tape.Valid(string(v)) {
		return string(quoteJSON(string(v)))
	}
	return string(compact(string(v)))
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, "\r\n\t") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "in another state"
	}
	return s
}

// humanDuration prints a wait the way a person would say it: "1.5s", "2m0s", "250ms".
func humanDuration(d time.Duration) string {
	if d >= 1<<62 {
		return "more than 100 years"
	}
	if d >= time.Second {
		d = d.Round(time.Millisecond)
	}
	return d.String()
}

// withheld replaces a secret in text for a model.
const withheld = "[withheld]"

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
	c.Title = redact(c.Title, secrets)
	c.Message = redact(c.Message, secrets)
	c.Hint = redact(c.Hint, secrets)
	c.Code = redact(c.Code, secrets)
	c.CurrentStatus = redact(c.CurrentStatus, secrets)
	c.RequiredStatus = redact(c.RequiredStatus, secrets)
	c.NextOperation = redact(c.NextOperation, secrets)
	c.NextOperationArgs = redactRaw(c.NextOperationArgs, secrets)
	if len(c.Suggestions) > 0 {
		c.Suggestions = make([]string, len(e.Suggestions))
		for i, s := range e.Suggestions {
			c.Suggestions[i] = redact(s, secrets)
		}
	}
	if len(c.Issues) > 0 {
		c.Issues = make([]Issue, len(e.Issues))
		for i, is := range e.Issues {
			is.Path = redact(is.Path, secrets)
			is.Code = redact(is.Code, secrets)
			is.Message = redact(is.Message, secrets)
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

// redact replaces every secret in s by [withheld]. An empty secret is none.
func redact(s string, secrets []string) string {
	for _, x := range secrets {
		if x != "" && strings.Contains(s, x) {
			s = strings.ReplaceAll(s, x, withheld)
		}
	}
	return s
}

// redactRaw is redact of a JSON value's text.
func redactRaw(v json.RawMessage, secrets []string) json.RawMessage {
	if len(v) == 0 {
		return v
	}
	if s := redact(string(v), secrets); s != string(v) {
		return json.RawMessage(s)
	}
	return v
}
