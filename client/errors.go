package client

import (
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/jsonw"
	"github.com/remedy-go/remedy/internal/sent"
	"github.com/remedy-go/remedy/rewrite"
)

// Why a call stopped without succeeding: the Cause of a CallError, for errors.Is.
var (
	// ErrNotRetryable: the failure cannot succeed by retrying (the server said so, it is fatal,
	// or the request is not safe to send twice).
	ErrNotRetryable = errors.New("not retryable")
	// ErrAttemptsExhausted: the call made as many attempts as Limits.MaxAttempts allows, or
	// the backoff gave up.
	ErrAttemptsExhausted = errors.New("attempts exhausted")
	// ErrElapsedBudget: the next wait would take the call past Limits.MaxElapsed.
	ErrElapsedBudget = errors.New("elapsed budget spent")
	// ErrRetryBudget: the client-wide retry budget is empty (an outage, not this call).
	ErrRetryBudget = errors.New("retry budget spent")
	// ErrDeadline: the context is done, or its deadline comes before the next attempt could.
	ErrDeadline = errors.New("deadline")
	// ErrConfirmationRequired: the server asks for confirmation and the ConfirmPolicy did not
	// approve; CallError.Challenge holds what to approve.
	ErrConfirmationRequired = errors.New("confirmation required")
	// ErrConfirmationRejected: the server refused the confirmation token, or asked again
	// after it was sent (a call has one confirmation round).
	ErrConfirmationRejected = errors.New("confirmation rejected")
	// ErrRewriteGaveUp: the failure names a fix and no rewriter could make it.
	ErrRewriteGaveUp = errors.New("rewrite gave up")
	// ErrNextOperation: the failure names a prerequisite operation that is not registered,
	// nests too deep, or failed itself.
	ErrNextOperation = errors.New("next operation failed")
	// ErrIdempotencyKeyReused: the server holds the idempotency key for another payload.
	ErrIdempotencyKeyReused = errors.New("idempotency key reused with another payload")
	// ErrWaitTooLong: the server asked to wait longer than Limits.MaxWait before a retry can
	// succeed. The call stopped at once, without retrying early; CallError.Err is a
	// *RetryLater saying when a new call can succeed.
	ErrWaitTooLong = errors.New("the server asks to wait longer than the loop waits")
	// ErrOutcomeUnknown: the request was written and no answer came back (a reset, a timeout,
	// a lost response), so it may have executed; sending it again could execute it twice,
	// because the operation is not idempotent and the server is not known to honour
	// idempotency keys (see KeySupport). It is the contract's remedy.ErrOutcomeUnknown, the
	// error other packages (retryable) wrap too.
	ErrOutcomeUnknown = remedy.ErrOutcomeUnknown
	// ErrRewriteRefused: the only repair the rewriter found changes what the call means
	// (a clamp, a cut, a dropped member, a choice among several values) and the rewrite.Policy
	// did not approve it; CallError.Proposal holds the proposed arguments and each change.
	ErrRewriteRefused = errors.New("rewrite not approved")
	// ErrOperationFailed: the server accepted the operation (202) and its status resource
	// says it failed or was canceled; CallError.Envelope is the failure. It is not submitted
	// again: it ran.
	ErrOperationFailed = errors.New("the accepted operation failed")
	// ErrPollsExhausted: the server accepted the operation and it was still running after
	// Limits.MaxPolls polls; CallError.Accepted says where its status is.
	ErrPollsExhausted = errors.New("the accepted operation was still running after the polls allowed")
	// ErrPollLocation: the server accepted the operation and named a status resource (or
	// result, or redirect) the loop does not poll: another origin than the client's base URL,
	// which would be sent the caller's credentials, or no URL at all. CallError.Accepted holds
	// the location, for a caller who trusts it.
	ErrPollLocation = errors.New("the accepted operation's status location is not followed")
	// ErrInvalidArguments: the client found, before sending anything, that the arguments
	// cannot make the request — not a JSON object, a path parameter missing or not a scalar,
	// a member only the loop may set (a confirmation token, an idempotency key) — so nothing
	// was sent. CallError.Err is an *ArgumentsError naming each argument.
	ErrInvalidArguments = errors.New("invalid arguments, nothing sent")
)

// ArgumentsError says what is wrong with a call's arguments, as the client found it before
// sending anything (ErrInvalidArguments). Each issue names an argument by its JSON Pointer
// ("" for the arguments as a whole), with a code (required, type, invalid_value, reserved,
// not_object) and a message.
type ArgumentsError struct {
	Issues []remedy.Issue
}

// Error lists the issues: "/sku: required: missing path parameter".
func (e *ArgumentsError) Error() string {
	var b strings.Builder
	b.WriteString("invalid arguments")
	for i, is := range e.Issues {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		if is.Path != "" {
			b.WriteString(is.Path)
			b.WriteString(": ")
		}
		b.WriteString(is.Message)
	}
	return b.String()
}

// argumentsError is one issue with an argument as an *ArgumentsError; name is the argument's
// member name at the top level ("" for the arguments as a whole).
func argumentsError(name, code, message string) *ArgumentsError {
	var path strings.Builder
	if name != "" {
		path.WriteByte('/')
		jsonw.WriteSegment(&path, name)
	}
	return &ArgumentsError{Issues: []remedy.Issue{{Path: path.String(), Code: code, Message: message}}}
}

// RetryLater is the wait a server asked for before a retry can succeed, when the loop would
// not spend it: longer than Limits.MaxWait (ErrWaitTooLong), past Limits.MaxElapsed
// (ErrElapsedBudget) or past the context's deadline (ErrDeadline). A CallError holds it in
// Err, so errors.As finds it; an agent reschedules the call for At instead of retrying now.
type RetryLater struct {
	After time.Duration // what the server asked to wait
	At    time.Time     // when a new call can succeed: the failed attempt's end plus After
}

// Error says how long the server asked to wait.
func (e *RetryLater) Error() string {
	return "the server asks to retry after " + e.After.String()
}

// wasNotSent reports whether err is marked by NotSent.
func wasNotSent(err error) bool { return sent.Marked(err) }

// CallError is the error of a call that did not succeed. It holds every attempt (nested next
// operations included), the last envelope, and the sentinel cause:
//
//	errors.Is(err, ErrConfirmationRequired)
//	var env *remedy.Envelope; errors.As(err, &env) // the last failure the server sent
//
// When a next operation failed (ErrNextOperation), Err is that operation's own *CallError,
// so errors.Is also matches its cause: a prerequisite that needs confirmation reports
// ErrConfirmationRequired, with its Challenge in the inner error.
type CallError struct {
	Operation string
	Cause     error            // one of the Err* sentinels
	Detail    string           // why, in words
	Attempts  []Attempt        // every attempt, in order
	Envelope  *remedy.Envelope // the last failure the server sent; nil when none came back
	Err       error            // the underlying error: transport, rewriter, policy or nested call
	// Challenge is the confirmation to approve (ErrConfirmationRequired).
	Challenge *Challenge
	// Proposal is the repair that was not approved (ErrRewriteRefused).
	Proposal *rewrite.Proposal
	// Blocked lists the issues the rewriter could not address, and why (ErrRewriteGaveUp).
	Blocked []rewrite.Blocked
	// Asked is how long the server asked to wait, when the wait is why the call stopped.
	Asked time.Duration
	// Accepted is set when the server accepted the operation (202) and the call stopped
	// before it ended (a wait or a bound, a poll that failed, a location not followed): its
	// status resource, to look at later. errors.As finds it too.
	Accepted *Accepted
}

// Error says which call stopped, why (with the first few issues the rewriter could not
// address, when it gave up), after how many attempts, and the last failure.
func (e *CallError) Error() string {
	var b strings.Builder
	b.WriteString("remedy: ")
	if e.Operation != "" {
		b.WriteString(e.Operation)
		b.WriteString(": ")
	}
	b.WriteString(e.Cause.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	writeBlocked(&b, e.Blocked)
	n := len(e.Attempts)
	b.WriteString(" (after ")
	b.WriteString(strconv.Itoa(n))
	if n == 1 {
		b.WriteString(" attempt)")
	} else {
		b.WriteString(" attempts)")
	}
	if e.Envelope != nil {
		b.WriteString(": ")
		b.WriteString(e.Envelope.Error())
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// The bounds of the blocked issues an error message names: the first few, each name cut
// short, so that a failure listing hundreds of issues, or a path of thousands of segments,
// makes a message of a few lines.
const (
	maxBlockedNamed   = 5
	maxBlockedNameLen = 64
	maxBlockedWhyLen  = 160
)

// writeBlocked names the issues a rewriter could not address, and why: "; not repaired:
// /color (enum): no allowed value or type is known; and 2 more".
func writeBlocked(b *strings.Builder, blocked []rewrite.Blocked) {
	if len(blocked) == 0 {
		return
	}
	b.WriteString("; not repaired: ")
	for i, x := range blocked {
		if i == maxBlockedNamed {
			b.WriteString("; and ")
			b.WriteString(strconv.Itoa(len(blocked) - i))
			b.WriteString(" more")
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		name := x.Path
		if name == "" {
			name = x.Field
		}
		b.WriteString(cutText(name, maxBlockedNameLen))
		if x.Code != "" {
			if name != "" {
				b.WriteByte(' ')
			}
			b.WriteByte('(')
			b.WriteString(cutText(x.Code, maxBlockedNameLen))
			b.WriteByte(')')
		}
		if name != "" || x.Code != "" {
			b.WriteString(": ")
		}
		b.WriteString(cutText(x.Why, maxBlockedWhyLen))
	}
}

// cutText shortens s to n bytes at most, at a character boundary, marking the cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Unwrap gives errors.Is and errors.As the cause, the last envelope and the underlying error.
func (e *CallError) Unwrap() []error {
	errs := []error{e.Cause}
	if e.Envelope != nil {
		errs = append(errs, e.Envelope)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	if e.Accepted != nil {
		errs = append(errs, e.Accepted)
	}
	return errs
}
