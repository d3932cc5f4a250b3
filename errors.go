package remedy

import (
	"errors"
	"strconv"
	"strings"
	"time"
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
)

// CallError is the error of a call that did not succeed. It holds every attempt (nested next
// operations included), the last envelope, and the sentinel cause:
//
//	errors.Is(err, remedy.ErrConfirmationRequired)
//	var env *remedy.Envelope; errors.As(err, &env) // the last failure the server sent
//
// When a next operation failed (ErrNextOperation), Err is that operation's own *CallError,
// so errors.Is also matches its cause: a prerequisite that needs confirmation reports
// ErrConfirmationRequired, with its Challenge in the inner error.
type CallError struct {
	Operation string
	Cause     error     // one of the Err* sentinels
	Detail    string    // why, in words
	Attempts  []Attempt // every attempt, in order
	Envelope  *Envelope // the last failure the server sent; nil when none came back
	Err       error     // the underlying error: transport, rewriter, policy or nested call
	// Challenge is the confirmation to approve (ErrConfirmationRequired).
	Challenge *Challenge
	// Asked is how long the server asked to wait, when the wait is why the call stopped.
	Asked time.Duration
}

// Error says which call stopped, why, after how many attempts, and the last failure.
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

// Unwrap gives errors.Is and errors.As the cause, the last envelope and the underlying error.
func (e *CallError) Unwrap() []error {
	errs := []error{e.Cause}
	if e.Envelope != nil {
		errs = append(errs, e.Envelope)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}
