package client

import (
	"context"
	"errors"
	"time"
)

// Hooks observe a Loop's calls, for tracing, metrics and logs (package
// github.com/remedy-go/remedy/otel makes OpenTelemetry spans and metrics of them). A call
// runs CallStart, then for each attempt AttemptStart and AttemptEnd, then CallEnd exactly
// once, on every way it returns; a failure's next operation is a call of its own, one level
// deeper, run between the AttemptEnd of the attempt that named it and the next AttemptStart.
//
// Every hook is optional, runs on the call's goroutine, and must not retain the records'
// pointers past its return. A Loop with no hook set pays nothing for them.
type Hooks struct {
	// CallStart runs before the call's first attempt; the context it returns is the call's
	// (a span's context): the attempts, the policies and the rewriter run under it, and
	// CallEnd receives it.
	CallStart func(ctx context.Context, c *CallStart) context.Context
	// AttemptStart runs before each attempt, with the context the attempt would be sent
	// under; the attempt is sent under the context it returns (a span's, which the transport
	// then propagates), and AttemptEnd receives that context. It applies to that attempt only.
	AttemptStart func(ctx context.Context, a *AttemptStart) context.Context
	// AttemptEnd runs after each attempt, once the loop has decided what follows it (the
	// rewriter and the policies asked): the record says what was done and why.
	AttemptEnd func(ctx context.Context, a *Attempt)
	// CallEnd runs once when the call returns: its success, or why it gave up.
	CallEnd func(ctx context.Context, e *CallEnd)
}

// CallStart describes a call about to make its first attempt.
type CallStart struct {
	Operation string
	// Depth is 0 for the caller's call; a failure's next operation, run by the call one
	// level up, has that call's depth plus one.
	Depth          int
	Idempotent     bool // the operation can run twice with the same effect
	IdempotencyKey bool // the caller gave an idempotency key (never the key itself)
	Confirmed      bool // the caller gave a confirmation token
}

// AttemptStart describes an attempt about to be sent. Its method and target are known once
// the transport has built the request: the Attempt given to AttemptEnd holds them.
type AttemptStart struct {
	Operation string
	Number    int // within its call, from 1
	// Total counts the attempts of the caller's call, its next operations' included, this
	// one too: what Limits.MaxAttempts bounds.
	Total int
	Depth int // nesting of next operations
	// IdempotencyKey says a key goes with the attempt (a transport that cannot send it
	// drops it; the Attempt tells).
	IdempotencyKey bool
	Confirmed      bool // a confirmation token goes with the attempt
	Rewritten      bool // the arguments are a repair of the caller's, no longer theirs
	// Poll says the attempt polls the status of an operation the server accepted (see
	// Attempt.Poll); Total does not count it.
	Poll bool
	// Paced is how long the attempt waited, before it was sent, for the time its server had
	// said a request can succeed (Loop.Pacer); 0 when it did not wait.
	Paced time.Duration
}

// CallEnd describes a call that returned.
type CallEnd struct {
	Operation string
	Depth     int // as in CallStart
	// Attempts are the call's attempts, its next operations' included, in order. They are
	// the loop's own records: read them during the hook, keep nothing of them.
	Attempts []Attempt
	// Err is nil when the call succeeded; otherwise what the caller gets, a *CallError.
	Err error
	// Cause is why the call gave up: the CallError's Cause, one of the Err* sentinels
	// (ErrRetryBudget, ErrAttemptsExhausted, ErrNotRetryable, ErrRewriteGaveUp, ...); nil on
	// success.
	Cause error
	// Recovered says the call succeeded after at least one attempt that did not: a retry,
	// a repair, a confirmation or a next operation turned a failure into a success.
	Recovered bool
	Elapsed   time.Duration // from the call's start to its return
	// BudgetTokens is what the loop's retry budget holds once the call returned, when
	// HasBudget says the loop has one.
	BudgetTokens float64
	HasBudget    bool
}

// callHooked reports whether a hook of the call itself is set (the attempts' are asked where they run).
func (h *Hooks) callHooked() bool { return h.CallStart != nil || h.CallEnd != nil }

// observed runs a call between its CallStart and CallEnd hooks.
func (r *run) observed(ctx context.Context, t Transport, c Call, depth int) (*Response, error) {
	h := &r.loop.Hooks
	first := len(r.attempts)
	began := time.Since(r.start)
	if h.CallStart != nil {
		ctx = h.CallStart(ctx, &CallStart{
			Operation: c.Operation, Depth: depth, Idempotent: c.Idempotent,
			IdempotencyKey: c.IdempotencyKey != "", Confirmed: c.ConfirmationToken != "",
		})
	}
	resp, err := r.send(ctx, t, c, depth)
	if depth == 0 {
		err = r.settle(ctx, err)
	}
	if h.CallEnd != nil {
		e := &CallEnd{Operation: c.Operation, Depth: depth, Attempts: r.attempts[first:], Err: err,
			Elapsed: time.Since(r.start) - began}
		if err != nil {
			e.Cause = err
			var ce *CallError
			if errors.As(err, &ce) {
				e.Cause = ce.Cause
			}
		} else {
			e.Recovered = recovered(e.Attempts)
		}
		if b := r.loop.Budget; b != nil {
			e.BudgetTokens, e.HasBudget = b.Tokens(), true
		}
		h.CallEnd(ctx, e)
	}
	return resp, err
}

// recovered reports whether attempts end in a success after one that did not succeed: polls,
// which only waited for an accepted operation, do not count.
func recovered(attempts []Attempt) bool {
	n := 0
	for i := range attempts {
		if !attempts[i].Poll {
			n++
		}
	}
	return n > 1
}
