package remedy

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
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
func (e *Envelope) Prompt() string {
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
	if h := oneLine(e.Hint); h != "" {
		b.WriteString("Hint: ")
		b.WriteString(clip(h, promptMaxText))
		b.WriteByte('\n')
	}
	for i, s := range e.Suggestions {
		if i == 3 {
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
	b.WriteString(e.nextStep())
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
	case e.ConfirmationToken != "":
		return "The operation needs confirmation. Only if it is intended, send the identical call again with confirmation token " + clip(e.ConfirmationToken, 200) + ".\n"
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

func writeIssue(b *strings.Builder, is *Issue) {
	b.WriteString("- ")
	if is.Path == "" {
		b.WriteString("(whole request)")
	} else {
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
	if !validJSON(string(v)) {
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
