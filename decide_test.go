package remedy_test

import (
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/remedy-go/remedy"
)

// env builds a failure as Parse reads it from an agent envelope body.
func env(t testing.TB, status int, body string) *remedy.Envelope {
	t.Helper()
	e, ok := remedy.Parse(status, nil, []byte(body))
	if !ok {
		t.Fatalf("not a failure: %s", body)
	}
	return e
}

// base is a state with room for everything: the rows below take away what they test.
func base() remedy.State {
	return remedy.State{Attempt: 1, SafeToRepeat: true, CanRewrite: true, BudgetLeft: true, Backoff: 100 * time.Millisecond}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	const (
		invalid     = `{"error":{"code":"invalid_body","message":"bad","retryable":true,"issues":[{"path":["currency"],"code":"enum","allowed_values":["usd"]}]}}`
		invalidNo   = `{"error":{"code":"invalid_body","message":"bad","retryable":false,"issues":[{"path":["currency"],"code":"enum"}]}}`
		stripeParam = `{"error":{"type":"invalid_request_error","code":"parameter_invalid_integer","param":"amount","message":"Invalid integer: abc"}}`
		rate        = `{"error":{"code":"rate_limited","message":"slow down","retryable":true,"retry_after_ms":1500}}`
		rateHuge    = `{"error":{"code":"rate_limited","message":"slow down","retryable":true,"retry_after_ms":1000000000000}}`
		unavailable = `{"error":{"code":"unavailable","message":"try later","retryable":true}}`
		fatal       = `{"error":{"code":"account_closed","message":"gone","retryable":true,"severity":"fatal"}}`
		confirm     = `{"error":{"code":"confirmation_required","message":"Deleting 3 orders","retryable":true,"confirmationToken":"tok_123"}}`
		confirmNone = `{"error":{"code":"confirmation_required","message":"confirm","retryable":true}}`
		confirmBad  = `{"error":{"code":"confirmation_invalid","message":"token for another payload"}}`
		next        = `{"error":{"code":"precondition_failed","message":"cart is empty","retryable":true,"next_operation":"add_item","next_operation_args":{"sku":"a"}}}`
		reused      = `{"error":{"code":"idempotency_key_reused","message":"another payload"}}`
		inFlight    = `{"error":{"code":"idempotency_in_flight","message":"outstanding","retryable":true,"retry_after_ms":200}}`
		notFound    = `{"error":{"code":"not_found","message":"no such order"}}`
		invalidBare = `{"error":{"code":"invalid_body","message":"currency must be lowercase","retryable":true,"category":"validation"}}`
		quota       = `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"quota","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"subject":"project:1","description":"limit"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s"}]}}`
	)
	reset := &url.Error{Op: "Post", URL: "http://127.0.0.1:1/v1/orders", Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}

	type row struct {
		name   string
		status int
		body   string // "" with err set: a transport error; "" without: success
		err    error
		env    *remedy.Envelope // instead of a body
		state  func(*remedy.State)
		action remedy.Action
		cause  error
		wait   time.Duration
		asked  time.Duration
	}
	rows := []row{
		// DESIGN.md's table, row by row.
		{name: "success", action: remedy.ActReturn},
		{name: "success with a warning", env: &remedy.Envelope{Status: 200, Code: "deprecated", Severity: remedy.SeverityWarning}, action: remedy.ActReturn},
		{name: "confirmation challenge", status: 409, body: confirm, action: remedy.ActConfirm},
		{name: "transient 429 waits what the server asked", status: 429, body: rate, action: remedy.ActRetry, wait: 1500 * time.Millisecond, asked: 1500 * time.Millisecond},
		{name: "transient 503 without a wait uses the backoff", status: 503, body: unavailable, action: remedy.ActRetry, wait: 100 * time.Millisecond},
		{name: "quota with RetryInfo waits, not rewrites", status: 429, body: quota, action: remedy.ActRetry, wait: 2 * time.Second, asked: 2 * time.Second},
		{name: "empty 503 with no body", status: 503, body: " ", action: remedy.ActRetry, wait: 100 * time.Millisecond},
		{name: "in flight: same key, after the wait", status: 409, body: inFlight, action: remedy.ActRetry, wait: 200 * time.Millisecond, asked: 200 * time.Millisecond},
		{name: "issues name the fix", status: 422, body: invalid, action: remedy.ActRewrite},
		{name: "Stripe param names the fix", status: 400, body: stripeParam, action: remedy.ActRewrite},
		{name: "next operation", status: 409, body: next, action: remedy.ActNextOperation},
		{name: "not retryable", status: 404, body: notFound, action: remedy.ActStop, cause: remedy.ErrNotRetryable},
		{name: "fatal", status: 503, body: fatal, action: remedy.ActStop, cause: remedy.ErrNotRetryable},
		{name: "key reused", status: 422, body: reused, action: remedy.ActStop, cause: remedy.ErrIdempotencyKeyReused},
		{name: "confirmation invalid", status: 409, body: confirmBad, action: remedy.ActStop, cause: remedy.ErrConfirmationRejected},
		{name: "challenge without a token", status: 409, body: confirmNone, action: remedy.ActStop, cause: remedy.ErrConfirmationRequired},
		{name: "transport reset, safe", err: reset, action: remedy.ActRetry, wait: 100 * time.Millisecond},
		{name: "transport EOF, safe", err: io.ErrUnexpectedEOF, action: remedy.ActRetry, wait: 100 * time.Millisecond},
		{name: "transport timeout, safe", err: &net.OpError{Op: "dial", Err: timeoutErr{}}, action: remedy.ActRetry, wait: 100 * time.Millisecond},
		{name: "transport refused, safe", err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, action: remedy.ActRetry, wait: 100 * time.Millisecond},
		{name: "transport error for good", err: errors.New("x509: certificate signed by unknown authority"), action: remedy.ActStop, cause: remedy.ErrNotRetryable},

		// Precedence.
		{name: "fatal beats retryable", status: 503, body: fatal, action: remedy.ActStop, cause: remedy.ErrNotRetryable},
		{name: "a request not safe to repeat is never resent after a transport error", err: reset,
			state: func(s *remedy.State) { s.SafeToRepeat = false }, action: remedy.ActStop, cause: remedy.ErrOutcomeUnknown},
		{name: "status-only retryable needs a safe request", status: 502, body: "<html>Bad Gateway</html>",
			state: func(s *remedy.State) { s.SafeToRepeat = false }, action: remedy.ActStop, cause: remedy.ErrOutcomeUnknown},
		{name: "the body's retryable is the server's word even when unsafe", status: 503, body: unavailable,
			state: func(s *remedy.State) { s.SafeToRepeat = false }, action: remedy.ActRetry, wait: 100 * time.Millisecond},
		{name: "retryable false beats issues", status: 422, body: invalidNo, action: remedy.ActStop, cause: remedy.ErrNotRetryable},
		{name: "no rewriter", status: 422, body: invalid, state: func(s *remedy.State) { s.CanRewrite = false },
			action: remedy.ActStop, cause: remedy.ErrRewriteGaveUp},
		{name: "a retryable validation failure without a fix goes to the rewriter", status: 422, body: invalidBare, action: remedy.ActRewrite},
		{name: "and without a rewriter is not sent again unchanged", status: 422, body: invalidBare,
			state: func(s *remedy.State) { s.CanRewrite = false }, action: remedy.ActStop, cause: remedy.ErrNotRetryable},
		{name: "success beats a done context", state: func(s *remedy.State) { s.Done = true }, action: remedy.ActReturn},
		{name: "a done context beats a retry", status: 429, body: rate, state: func(s *remedy.State) { s.Done = true },
			action: remedy.ActStop, cause: remedy.ErrDeadline},
		{name: "a deadline beats any wait", status: 429, body: rate,
			state:  func(s *remedy.State) { s.HasDeadline, s.Remaining = true, time.Second },
			action: remedy.ActStop, cause: remedy.ErrDeadline, asked: 1500 * time.Millisecond},
		{name: "a wait that fits before the deadline", status: 429, body: rate,
			state:  func(s *remedy.State) { s.HasDeadline, s.Remaining = true, 2*time.Second },
			action: remedy.ActRetry, wait: 1500 * time.Millisecond, asked: 1500 * time.Millisecond},
		{name: "a huge wait is clamped", status: 429, body: rateHuge,
			action: remedy.ActRetry, wait: remedy.DefaultMaxWait, asked: 1e12 * time.Millisecond},
		{name: "a clamped wait past the elapsed budget stops at once", status: 429, body: rateHuge,
			state:  func(s *remedy.State) { s.Elapsed = remedy.DefaultMaxElapsed - time.Second },
			action: remedy.ActStop, cause: remedy.ErrElapsedBudget, asked: 1e12 * time.Millisecond},
		{name: "a clamped wait past the deadline stops at once", status: 429, body: rateHuge,
			state:  func(s *remedy.State) { s.HasDeadline, s.Remaining = true, 10*time.Second },
			action: remedy.ActStop, cause: remedy.ErrDeadline, asked: 1e12 * time.Millisecond},
		{name: "attempts beat the retry budget", status: 503, body: unavailable,
			state:  func(s *remedy.State) { s.Attempt, s.BudgetLeft = remedy.DefaultMaxAttempts, false },
			action: remedy.ActStop, cause: remedy.ErrAttemptsExhausted},
		{name: "retry budget", status: 503, body: unavailable, state: func(s *remedy.State) { s.BudgetLeft = false },
			action: remedy.ActStop, cause: remedy.ErrRetryBudget},
		{name: "the retry budget does not bound a rewrite", status: 422, body: invalid, state: func(s *remedy.State) { s.BudgetLeft = false },
			action: remedy.ActRewrite},
		{name: "backoff gave up", status: 503, body: unavailable, state: func(s *remedy.State) { s.Backoff = -1 },
			action: remedy.ActStop, cause: remedy.ErrAttemptsExhausted},
		{name: "a server wait does not need the backoff", status: 429, body: rate, state: func(s *remedy.State) { s.Backoff = -1 },
			action: remedy.ActRetry, wait: 1500 * time.Millisecond, asked: 1500 * time.Millisecond},
		{name: "attempts bound a rewrite", status: 422, body: invalid, state: func(s *remedy.State) { s.Attempt = 5 },
			action: remedy.ActStop, cause: remedy.ErrAttemptsExhausted},
		{name: "attempts bound a confirmation", status: 409, body: confirm, state: func(s *remedy.State) { s.Attempt = 5 },
			action: remedy.ActStop, cause: remedy.ErrAttemptsExhausted},
		{name: "one confirmation round", status: 409, body: confirm, state: func(s *remedy.State) { s.Confirmed = true },
			action: remedy.ActStop, cause: remedy.ErrConfirmationRejected},
		{name: "next operations nest only so deep", status: 409, body: next, state: func(s *remedy.State) { s.Depth = remedy.DefaultMaxDepth },
			action: remedy.ActStop, cause: remedy.ErrNextOperation},
		{name: "limits are the caller's", status: 503, body: unavailable,
			state: func(s *remedy.State) { s.Limits.MaxAttempts, s.Attempt = 2, 2 }, action: remedy.ActStop, cause: remedy.ErrAttemptsExhausted},
		{name: "the caller's longest wait", status: 429, body: rateHuge,
			state:  func(s *remedy.State) { s.Limits.MaxWait = 50 * time.Millisecond },
			action: remedy.ActRetry, wait: 50 * time.Millisecond, asked: 1e12 * time.Millisecond},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			s := base()
			if r.state != nil {
				r.state(&s)
			}
			e := r.env
			if r.body != "" {
				e = env(t, r.status, r.body)
			}
			d := remedy.Decide(e, r.err, &s)
			if d.Action != r.action || !errors.Is(d.Cause, r.cause) || (r.cause == nil && d.Cause != nil) {
				t.Fatalf("got %v (cause %v: %s), want %v (cause %v)", d.Action, d.Cause, d.Why, r.action, r.cause)
			}
			if d.Wait != r.wait || d.Asked != r.asked {
				t.Fatalf("wait %v asked %v, want %v and %v", d.Wait, d.Asked, r.wait, r.asked)
			}
			if d.Why == "" {
				t.Fatal("a decision says why")
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestDecideAllocatesNothing(t *testing.T) {
	e := env(t, 429, `{"error":{"code":"rate_limited","message":"slow down","retryable":true,"retry_after_ms":1500}}`)
	s := base()
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	if n := testing.AllocsPerRun(100, func() { remedy.Decide(e, nil, &s) }); n != 0 {
		t.Errorf("Decide on an envelope allocated %.0f times", n)
	}
	if n := testing.AllocsPerRun(100, func() { remedy.Decide(nil, reset, &s) }); n != 0 {
		t.Errorf("Decide on a transport error allocated %.0f times", n)
	}
}

func BenchmarkDecide(b *testing.B) {
	e := env(b, 429, `{"error":{"code":"rate_limited","message":"slow down","retryable":true,"retry_after_ms":1500}}`)
	s := base()
	b.ReportAllocs()
	for b.Loop() {
		remedy.Decide(e, nil, &s)
	}
}
