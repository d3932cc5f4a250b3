package tools

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/prose"
	"github.com/remedy-go/remedy/internal/sent"
)

// What a model reads when a tool call did not succeed is derived from why the loop stopped:
// one row per cause, in this table, so that the text always agrees with the decision. It never
// holds a confirmation token or an idempotency key (see outcome.secrets), never invites a
// resend the loop judged unsafe, and says what the model can do next (outcome.text):
//
//	cause                         what the model is told to do
//	ErrInvalidArguments           nothing was sent; fix the named arguments, call again
//	ErrRewriteGaveUp              fix the fields the failure names, call again
//	ErrRewriteRefused             the only repair changes what the call means; choose, call again
//	ErrNotRetryable               fix the fields named, or do not call again unchanged
//	ErrConfirmationRequired       the program that runs the model decides; tell the user
//	ErrConfirmationRejected       the server refused the confirmation; tell the user
//	ErrOutcomeUnknown             it may have run: do not call again; check with a read
//	ErrWaitTooLong, and a budget  a new call can succeed after the time the server gave
//	  or deadline with a wait
//	ErrAttemptsExhausted,         stopped at the program's limit: what the last failure
//	  ErrRetryBudget, budgets       allows (later, a fix, the user), or check first
//	ErrNextOperation              the prerequisite is not offered, or failed (its own row)
//	ErrIdempotencyKeyReused       tell the user
//	ErrOperationFailed            it ran and failed; calling again runs it again
//	ErrPollsExhausted,            it was accepted and runs; do not call again
//	  ErrPollLocation
func (o *outcome) text() string {
	switch o.ce.Cause {
	case client.ErrInvalidArguments:
		return o.invalidArguments()
	case client.ErrRewriteGaveUp:
		return o.fixFields()
	case client.ErrRewriteRefused:
		return o.refusedRepair()
	case client.ErrNotRetryable:
		return o.notRetryable()
	case client.ErrConfirmationRequired:
		return o.confirmationRequired()
	case client.ErrConfirmationRejected:
		return o.confirmationRejected()
	case client.ErrOutcomeUnknown:
		return o.outcomeUnknown()
	case client.ErrWaitTooLong, client.ErrElapsedBudget, client.ErrDeadline, client.ErrAttemptsExhausted, client.ErrRetryBudget:
		return o.stoppedAtLimit()
	case client.ErrNextOperation:
		return o.nextOperation()
	case client.ErrIdempotencyKeyReused:
		return o.keyReused()
	case client.ErrOperationFailed:
		return o.operationFailed()
	case client.ErrPollsExhausted, client.ErrPollLocation:
		return o.stillRunning()
	}
	return o.summary() + o.tool + " did not succeed: " + o.ce.Detail + ".\n"
}

// outcome is what the text of a call that did not succeed is made of.
type outcome struct {
	tool string            // the tool's name, as the model knows it
	op   *client.Operation // the operation, when the toolset has it
	ce   *client.CallError
	env  *remedy.Envelope // ce.Envelope without its secrets; nil when no failure came back
	// read is the tool that reads what the call writes, for a call that may have run; "" when
	// none is known.
	read    string
	secrets []string
}

// failureText is what a model reads of a call to tool that did not succeed (err), following
// the table above; readTool names the tool that reads what op writes, if any.
func failureText(tool string, op *client.Operation, err error, readTool func(*client.Operation) string) string {
	var ce *client.CallError
	if !errors.As(err, &ce) {
		return fmt.Sprintf("The call to %s failed: %s.", tool, strings.TrimPrefix(err.Error(), "remedy: "))
	}
	o := &outcome{tool: tool, op: op, ce: ce, secrets: callSecrets(ce)}
	if ce.Envelope != nil {
		o.env = ce.Envelope.Redacted(o.secrets)
	}
	if readTool != nil && op != nil {
		o.read = readTool(op)
	}
	text := o.text()
	// The rows render the envelope without its secrets; the details and errors they quote
	// are searched once more.
	return prose.Redact(text, o.secrets)
}

// callSecrets are the confirmation tokens and idempotency keys of a call: every token a
// failure carried (next operations' included), the challenge's, and every key sent.
func callSecrets(ce *client.CallError) []string {
	var out []string
	for e := ce; e != nil; {
		out = attemptSecrets(out, e.Attempts)
		if e.Envelope != nil {
			out = addSecret(out, e.Envelope.ConfirmationToken)
		}
		if e.Challenge != nil {
			out = addSecret(out, e.Challenge.Token)
		}
		var inner *client.CallError
		if e.Err == nil || !errors.As(e.Err, &inner) || inner == e {
			break
		}
		e = inner
	}
	return out
}

// attemptSecrets adds to out the keys the attempts sent and the tokens their failures carried.
func attemptSecrets(out []string, attempts []client.Attempt) []string {
	for i := range attempts {
		a := &attempts[i]
		out = addSecret(out, a.IdempotencyKey)
		if a.Envelope != nil {
			out = addSecret(out, a.Envelope.ConfirmationToken)
		}
	}
	return out
}

func addSecret(out []string, s string) []string {
	if s != "" && !slices.Contains(out, s) {
		out = append(out, s)
	}
	return out
}

// summary is what failed and what to fix, from the last failure the server sent; empty when
// none came back. When the call may have run, the server's hint and suggestions are left out:
// written before it knew, they may say to send it again, which the loop judged unsafe.
func (o *outcome) summary() string {
	if o.env == nil {
		return ""
	}
	if (o.env.Hint != "" || len(o.env.Suggestions) > 0) && (o.ce.Cause == client.ErrOutcomeUnknown || o.mayHaveRun()) {
		e := *o.env
		e.Hint, e.Suggestions = "", nil
		return e.Summary()
	}
	return o.env.Summary()
}

// mayHaveRun reports whether the call may have executed: a write whose attempt failed after
// it was written, or was answered by a failure that leaves open whether it ran.
func (o *outcome) mayHaveRun() bool {
	if o.op != nil && o.op.Method != "" && isRead(o.op.Method) {
		return false
	}
	for i := range o.ce.Attempts {
		a := &o.ce.Attempts[i]
		if a.Depth != 0 || a.Poll {
			continue
		}
		switch {
		case a.Err != nil:
			if !sent.Marked(a.Err) && !errors.As(a.Err, new(*client.ArgumentsError)) {
				return true
			}
		case a.Envelope != nil && outcomeOpen(a.Envelope):
			return true
		}
	}
	return false
}

// outcomeOpen reports whether a failure leaves open whether the request executed: a server
// error other than 503 (which says nothing ran), or a failure with no status that nothing
// places among the client's faults.
func outcomeOpen(e *remedy.Envelope) bool {
	switch {
	case e.Status >= 500:
		return e.Status != 503 && e.Status != 501 && e.Status != 505
	case e.Status == 0:
		return e.Category == remedy.CategoryInternal || e.Category == remedy.CategoryDependency
	}
	return false
}

func isRead(method string) bool {
	switch strings.ToUpper(method) {
	case "GET", "HEAD", "OPTIONS":
		return true
	}
	return false
}

// checkFirst tells the model not to call again before checking whether the call took effect.
func (o *outcome) checkFirst() string {
	s := "Do not call " + o.tool + " again: it could run twice. First check whether it took effect"
	if o.read != "" {
		s += " (call " + o.read + ")"
	}
	return s + "; if you cannot tell, tell the user.\n"
}

func (o *outcome) invalidArguments() string {
	var b strings.Builder
	b.WriteString(o.tool)
	b.WriteString(" was not called: its arguments are invalid, and nothing was sent.\n")
	var ae *client.ArgumentsError
	if errors.As(o.ce, &ae) && len(ae.Issues) > 0 {
		b.WriteString("Fix these arguments:\n")
		for i := range ae.Issues {
			if i == prose.MaxIssues {
				b.WriteString("- and " + strconv.Itoa(len(ae.Issues)-i) + " more\n")
				break
			}
			b.WriteString("- ")
			b.WriteString(ae.Issues[i].Prompt())
			b.WriteByte('\n')
		}
	}
	b.WriteString("Change the arguments above, then call " + o.tool + " again.\n")
	return b.String()
}

func (o *outcome) fixFields() string {
	s := o.summary()
	if o.mayHaveRun() {
		return s + o.tool + " may have run." + " " + o.checkFirst()
	}
	if o.env != nil && len(o.env.Issues) > 0 {
		return s + o.tool + " did not run. Change the fields above, then call it again; the same call will fail the same way.\n"
	}
	return s + o.tool + " did not run. Change the arguments as the failure says, then call it again; the same call will fail the same way.\n"
}

func (o *outcome) refusedRepair() string {
	var b strings.Builder
	b.WriteString(o.summary())
	b.WriteString(o.tool)
	b.WriteString(" did not run. The only repair found changes what the call means, so it was not made:\n")
	if p := o.ce.Proposal; p != nil {
		for _, c := range p.Changes {
			if !c.Lossy {
				continue
			}
			b.WriteString("- ")
			b.WriteString(prose.Clip(c.Path, 120))
			b.WriteString(": ")
			switch {
			case len(c.Old) > 0 && len(c.New) > 0:
				b.WriteString(prose.Value(c.Old) + " → " + prose.Value(c.New))
			case len(c.New) > 0:
				b.WriteString("add " + prose.Value(c.New))
			default:
				b.WriteString("remove " + prose.Value(c.Old))
			}
			b.WriteString(" (" + c.Rule + ")\n")
		}
	}
	b.WriteString("Decide which values the user means (ask them if you cannot tell), then call " + o.tool + " again with them.\n")
	return b.String()
}

func (o *outcome) notRetryable() string {
	if o.env == nil {
		return o.tool + " could not be sent (" + o.ce.Detail + errSuffix(o.ce.Err) + "). Calling it again will fail the same way; tell the user.\n"
	}
	s := o.summary()
	switch {
	case o.mayHaveRun():
		return s + o.tool + " may have run: the server failed without saying whether it did. " + o.checkFirst()
	case o.env.Severity == remedy.SeverityFatal:
		return s + o.tool + " did not run, and the failure is fatal: do not call it again.\n"
	case len(o.env.Issues) > 0:
		return s + o.tool + " did not run. Change the fields above, then call it again; the same call will fail the same way.\n"
	}
	return s + o.tool + " did not run. Do not call it again unchanged: it will fail the same way.\n"
}

func (o *outcome) confirmationRequired() string {
	var b strings.Builder
	b.WriteString(o.tool)
	b.WriteString(" needs the user's confirmation before it runs, and it did not run.")
	if o.env != nil {
		if msg := prose.Clip(prose.OneLine(o.env.Message), 2*prose.MaxText); msg != "" {
			b.WriteString(" The server says: ")
			b.WriteString(msg)
			if !strings.ContainsAny(msg[len(msg)-1:], ".!?…") {
				b.WriteByte('.')
			}
		}
	}
	b.WriteString("\nConfirmations are decided by the program that runs you (its confirm policy: client.WithConfirmPolicy, or --confirm for the remedy command), not by a tool call: calling ")
	b.WriteString(o.tool)
	b.WriteString(" again, with any arguments, is refused the same way. Tell the user what the call would do and that it waits for their approval in that program.\n")
	return b.String()
}

func (o *outcome) confirmationRejected() string {
	return o.summary() + o.tool + " did not run: the server refused its confirmation. Do not call it again; tell the user.\n"
}

func (o *outcome) outcomeUnknown() string {
	s := o.summary()
	if o.env == nil {
		s = o.tool + " was sent and no answer came back"
		if o.ce.Err != nil {
			s += " (" + prose.Clip(prose.OneLine(o.ce.Err.Error()), prose.MaxText) + ")"
		}
		s += ".\n"
	}
	return s + o.tool + " may have run. " + o.checkFirst()
}

// stoppedAtLimit: the loop stopped at a bound — a wait the server asked for that it would not
// spend, or its own attempts, budgets or deadline.
func (o *outcome) stoppedAtLimit() string {
	var b strings.Builder
	b.WriteString(o.summary())
	var later *client.RetryLater
	if errors.As(o.ce, &later) {
		b.WriteString(o.tool)
		if o.mayHaveRun() {
			b.WriteString(" may have run. ")
			b.WriteString(o.checkFirst())
			return b.String()
		}
		b.WriteString(" did not run. The server asks to wait " + prose.Duration(later.After) +
			": a new call can succeed after " + later.At.UTC().Format(time.RFC3339) + ", and calling it sooner will fail the same way.\n")
		return b.String()
	}
	b.WriteString(o.tool)
	b.WriteString(" was stopped after " + plural(len(o.ce.Attempts), "attempt") + ": " + o.limit() + ".")
	switch {
	case o.mayHaveRun():
		b.WriteString(" It may have run. ")
		b.WriteString(o.checkFirst())
	case o.env != nil && o.env.AsksConfirmation():
		b.WriteString(" It did not run, and it needs the user's confirmation, which the program that runs you decides, not a tool call. Tell the user.\n")
	case o.env != nil && len(o.env.Issues) > 0:
		b.WriteString(" It did not run. Change the fields above, then call it again.\n")
	case o.env != nil && !o.env.Retryable:
		b.WriteString(" It did not run. Do not call it again unchanged: it will fail the same way.\n")
	default:
		b.WriteString(" It did not run. The failure is temporary: call it again later, not right away.\n")
	}
	return b.String()
}

// limit names the bound the loop stopped at, in words.
func (o *outcome) limit() string {
	switch o.ce.Cause {
	case client.ErrRetryBudget:
		return "many calls are failing at once, and the program's retry budget is spent"
	case client.ErrElapsedBudget:
		return "the time the program gives a call ran out"
	case client.ErrDeadline:
		return "the call's deadline came"
	case client.ErrWaitTooLong:
		return "the server asks for a longer wait than the program waits"
	}
	return "the most the program makes"
}

func (o *outcome) nextOperation() string {
	next := ""
	if o.env != nil {
		next = o.env.NextOperation
	}
	var inner *client.CallError
	if errors.As(o.ce.Err, &inner) && inner != o.ce {
		// The prerequisite's own row tells what happened to it.
		return o.tool + " needs " + next + " to run first, and " + next + " did not succeed; " + o.tool + " did not run.\n" +
			failureText(next, nil, inner, nil)
	}
	if errors.Is(o.ce.Err, client.ErrNotRegistered) {
		return o.summary() + o.tool + " did not run: it needs " + next + " to run first, which this program does not offer. Tell the user.\n"
	}
	return o.summary() + o.tool + " did not run: " + o.ce.Detail + ". Tell the user.\n"
}

func (o *outcome) keyReused() string {
	return o.tool + " did not run: the server holds this call's idempotency key for another payload. Tell the user.\n"
}

func (o *outcome) operationFailed() string {
	return o.summary() + o.tool + " was accepted and ran, then failed. Calling it again runs it again: do that only if the user wants it, after fixing what the failure says.\n"
}

func (o *outcome) stillRunning() string {
	s := o.tool + " was accepted and is still running"
	if o.ce.Cause == client.ErrPollLocation {
		s = o.tool + " was accepted and runs, but its progress cannot be followed from here"
	}
	return s + ". Do not call it again: that would start it a second time. Tell the user it is under way.\n"
}

// errSuffix is ": " and an error's text, or nothing.
func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + prose.Clip(prose.OneLine(strings.TrimPrefix(err.Error(), "remedy: ")), prose.MaxText)
}

// readOf names the operation among ops that reads what op writes, for a model told to check
// whether a call took effect; "" when there is none. Over HTTP: a GET of op's path, of op's
// path without its last segment when that segment is fixed ("/invoices/{id}/send" →
// "/invoices/{id}"), or of op's path with one more parameter ("/invoices" → "/invoices/{id}").
// Without paths (MCP tools): a tool named get_, read_ or describe_ and op's noun
// (delete_customer → get_customer), or list_ and its plural.
func readOf(op *client.Operation, ops []client.Operation) string {
	if op.Path != "" {
		p := strings.TrimSuffix(op.Path, "/")
		var parent string
		if i := strings.LastIndexByte(p, '/'); i > 0 && !strings.HasPrefix(p[i+1:], "{") {
			parent = p[:i]
		}
		for _, want := range []func(string) bool{
			func(q string) bool { return q == p },
			func(q string) bool { return parent != "" && q == parent },
			func(q string) bool {
				rest, ok := strings.CutPrefix(q, p+"/{")
				return ok && strings.HasSuffix(rest, "}") && !strings.Contains(rest, "/")
			},
		} {
			for i := range ops {
				if c := &ops[i]; c.Name != op.Name && strings.EqualFold(c.Method, "GET") && want(strings.TrimSuffix(c.Path, "/")) {
					return c.Name
				}
			}
		}
		return ""
	}
	sep := strings.IndexAny(op.Name, "_-.")
	if sep < 0 {
		return ""
	}
	noun, s := op.Name[sep+1:], op.Name[sep:sep+1]
	if noun == "" {
		return ""
	}
	for _, want := range []string{"get" + s + noun, "read" + s + noun, "describe" + s + noun, "list" + s + noun + "s", "list" + s + noun} {
		for i := range ops {
			if c := &ops[i]; c.Name == want && c.Path == "" && (c.Method == "" || isRead(c.Method)) {
				return c.Name
			}
		}
	}
	return ""
}

// plural is n and the noun, in the plural unless n is 1: "1 attempt", "5 attempts".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
