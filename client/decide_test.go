package client_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
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
func base() client.State {
	return client.State{Attempt: 1, SafeToRepeat: true, CanRewrite: true, BudgetLeft: true, Backoff: 100 * time.Millisecond}
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
		state  func(*client.State)
		action client.Action
		cause  error
		wait   time.Duration
		asked  time.Duration
	}
	rows := []row{
		// DESIGN.md's table, row by row.
		{name: "success", action: client.ActReturn},
		{name: "success with a warning", env: &remedy.Envelope{Status: 200, Code: "deprecated", Severity: remedy.SeverityWarning}, action: client.ActReturn},
		{name: "confirmation challenge", status: 409, body: confirm, action: client.ActConfirm},
		{name: "transient 429 waits what the server asked", status: 429, body: rate, action: client.ActRetry, wait: 1500 * time.Millisecond, asked: 1500 * time.Millisecond},
		{name: "transient 503 without a wait uses the backoff", status: 503, body: unavailable, action: client.ActRetry, wait: 100 * time.Millisecond},
		{name: "quota with RetryInfo waits, not rewrites", status: 429, body: quota, action: client.ActRetry, wait: 2 * time.Second, asked: 2 * time.Second},
		{name: "empty 503 with no body", status: 503, body: " ", action: client.ActRetry, wait: 100 * time.Millisecond},
		{name: "in flight: same key, after the wait", status: 409, body: inFlight, action: client.ActRetry, wait: 200 * time.Millisecond, asked: 200 * time.Millisecond},
		{name: "issues name the fix", status: 422, body: invalid, action: client.ActRewrite},
		{name: "Stripe param names the fix", status: 400, body: stripeParam, action: client.ActRewrite},
		{name: "next operation", status: 409, body: next, action: client.ActNextOperation},
		{name: "not retryable", status: 404, body: notFound, action: client.ActStop, cause: client.ErrNotRetryable},
		{name: "fatal", status: 503, body: fatal, action: client.ActStop, cause: client.ErrNotRetryable},
		{name: "key reused", status: 422, body: reused, action: client.ActStop, cause: client.ErrIdempotencyKeyReused},
		{name: "confirmation invalid", status: 409, body: confirmBad, action: client.ActStop, cause: client.ErrConfirmationRejected},
		{name: "challenge without a token", status: 409, body: confirmNone, action: client.ActStop, cause: client.ErrConfirmationRequired},
		{name: "transport reset, safe", err: reset, action: client.ActRetry, wait: 100 * time.Millisecond},
		{name: "transport EOF, safe", err: io.ErrUnexpectedEOF, action: client.ActRetry, wait: 100 * time.Millisecond},
		{name: "transport timeout, safe", err: &net.OpError{Op: "dial", Err: timeoutErr{}}, action: client.ActRetry, wait: 100 * time.Millisecond},
		{name: "transport refused, safe", err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, action: client.ActRetry, wait: 100 * time.Millisecond},
		{name: "transport error for good", err: errors.New("x509: certificate signed by unknown authority"), action: client.ActStop, cause: client.ErrNotRetryable},
		{name: "arguments that cannot make a request: nothing sent", err: fmt.Errorf("building: %w", &client.ArgumentsError{Issues: []remedy.Issue{{Path: "/sku", Code: "required"}}}), action: client.ActStop, cause: client.ErrInvalidArguments},
		{name: "arguments error beats a transient look", err: &client.ArgumentsError{}, state: func(s *client.State) { s.SafeToRepeat = true }, action: client.ActStop, cause: client.ErrInvalidArguments},

		// Precedence.
		{name: "fatal beats retryable", status: 503, body: fatal, action: client.ActStop, cause: client.ErrNotRetryable},
		{name: "a replayed failure is replayed again: not resent", env: &remedy.Envelope{Status: 500, Code: "api_error",
			Retryable: true, RetrySource: remedy.RetryFromBody, Severity: remedy.SeverityError, Replayed: true},
			action: client.ActStop, cause: client.ErrNotRetryable},
		{name: "a request not safe to repeat is never resent after a transport error", err: reset,
			state: func(s *client.State) { s.SafeToRepeat = false }, action: client.ActStop, cause: remedy.ErrOutcomeUnknown},
		{name: "status-only retryable needs a safe request", status: 502, body: "<html>Bad Gateway</html>",
			state: func(s *client.State) { s.SafeToRepeat = false }, action: client.ActStop, cause: remedy.ErrOutcomeUnknown},
		{name: "the body's retryable is the server's word even when unsafe", status: 503, body: unavailable,
			state: func(s *client.State) { s.SafeToRepeat = false }, action: client.ActRetry, wait: 100 * time.Millisecond},
		{name: "issues go to the rewriter even when the body says retryable false", status: 422, body: invalidNo, action: client.ActRewrite},
		{name: "no rewriter", status: 422, body: invalid, state: func(s *client.State) { s.CanRewrite = false },
			action: client.ActStop, cause: client.ErrRewriteGaveUp},
		{name: "a retryable validation failure without a fix goes to the rewriter", status: 422, body: invalidBare, action: client.ActRewrite},
		{name: "and without a rewriter is not sent again unchanged", status: 422, body: invalidBare,
			state: func(s *client.State) { s.CanRewrite = false }, action: client.ActStop, cause: client.ErrNotRetryable},
		{name: "success beats a done context", state: func(s *client.State) { s.Done = true }, action: client.ActReturn},
		{name: "a done context beats a retry", status: 429, body: rate, state: func(s *client.State) { s.Done = true },
			action: client.ActStop, cause: client.ErrDeadline},
		{name: "a deadline beats any wait", status: 429, body: rate,
			state:  func(s *client.State) { s.HasDeadline, s.Remaining = true, time.Second },
			action: client.ActStop, cause: client.ErrDeadline, asked: 1500 * time.Millisecond},
		{name: "a wait that fits before the deadline", status: 429, body: rate,
			state:  func(s *client.State) { s.HasDeadline, s.Remaining = true, 2*time.Second },
			action: client.ActRetry, wait: 1500 * time.Millisecond, asked: 1500 * time.Millisecond},
		{name: "a wait longer than MaxWait stops at once, never clamped", status: 429, body: rateHuge,
			action: client.ActStop, cause: client.ErrWaitTooLong, asked: 1e12 * time.Millisecond},
		{name: "a wait of exactly MaxWait is taken", status: 429, body: `{"error":{"code":"rate_limited","message":"m","retryable":true,"retry_after_ms":30000}}`,
			action: client.ActRetry, wait: client.DefaultMaxWait, asked: client.DefaultMaxWait},
		{name: "a wait past the elapsed budget stops at once", status: 429, body: rate,
			state:  func(s *client.State) { s.Elapsed = client.DefaultMaxElapsed - time.Second },
			action: client.ActStop, cause: client.ErrElapsedBudget, asked: 1500 * time.Millisecond},
		{name: "the largest wait cannot overflow past the elapsed budget",
			env: &remedy.Envelope{Status: 429, Code: "rate_limited", Retryable: true, RetrySource: remedy.RetryFromBody,
				RetryAfter: math.MaxInt64, Severity: remedy.SeverityError},
			state: func(s *client.State) {
				s.Elapsed, s.Limits.MaxWait = time.Second, time.Duration(math.MaxInt64)
			},
			action: client.ActStop, cause: client.ErrElapsedBudget, asked: math.MaxInt64},
		{name: "a backoff past the elapsed budget stops too", status: 503, body: unavailable,
			state:  func(s *client.State) { s.Elapsed = client.DefaultMaxElapsed - time.Millisecond },
			action: client.ActStop, cause: client.ErrElapsedBudget},
		{name: "the backoff is capped at MaxWait, not stopped by it", status: 503, body: unavailable,
			state:  func(s *client.State) { s.Backoff = time.Hour },
			action: client.ActRetry, wait: client.DefaultMaxWait},
		{name: "attempts beat the retry budget", status: 503, body: unavailable,
			state:  func(s *client.State) { s.Attempt, s.BudgetLeft = client.DefaultMaxAttempts, false },
			action: client.ActStop, cause: client.ErrAttemptsExhausted},
		{name: "retry budget", status: 503, body: unavailable, state: func(s *client.State) { s.BudgetLeft = false },
			action: client.ActStop, cause: client.ErrRetryBudget},
		{name: "the retry budget does not bound a rewrite", status: 422, body: invalid, state: func(s *client.State) { s.BudgetLeft = false },
			action: client.ActRewrite},
		{name: "backoff gave up", status: 503, body: unavailable, state: func(s *client.State) { s.Backoff = -1 },
			action: client.ActStop, cause: client.ErrAttemptsExhausted},
		{name: "a server wait does not need the backoff", status: 429, body: rate, state: func(s *client.State) { s.Backoff = -1 },
			action: client.ActRetry, wait: 1500 * time.Millisecond, asked: 1500 * time.Millisecond},
		{name: "attempts bound a rewrite", status: 422, body: invalid, state: func(s *client.State) { s.Attempt = 5 },
			action: client.ActStop, cause: client.ErrAttemptsExhausted},
		{name: "attempts bound a confirmation", status: 409, body: confirm, state: func(s *client.State) { s.Attempt = 5 },
			action: client.ActStop, cause: client.ErrAttemptsExhausted},
		{name: "one confirmation round", status: 409, body: confirm, state: func(s *client.State) { s.Confirmed = true },
			action: client.ActStop, cause: client.ErrConfirmationRejected},
		{name: "next operations nest only so deep", status: 409, body: next, state: func(s *client.State) { s.Depth = client.DefaultMaxDepth },
			action: client.ActStop, cause: client.ErrNextOperation},
		{name: "limits are the caller's", status: 503, body: unavailable,
			state: func(s *client.State) { s.Limits.MaxAttempts, s.Attempt = 2, 2 }, action: client.ActStop, cause: client.ErrAttemptsExhausted},
		{name: "a 429 that states its wait spends no attempt", status: 429, body: rate,
			state:  func(s *client.State) { s.Attempt = client.DefaultMaxAttempts },
			action: client.ActRetry, wait: 1500 * time.Millisecond, asked: 1500 * time.Millisecond},
		{name: "nor a rate_limit failure under another status", status: 400, body: `{"error":{"code":"rate_limited","message":"m","retryable":true,"category":"rate_limit","retry_after_ms":1500}}`,
			state:  func(s *client.State) { s.Attempt = client.DefaultMaxAttempts },
			action: client.ActRetry, wait: 1500 * time.Millisecond, asked: 1500 * time.Millisecond},
		{name: "but only MaxAttempts of them", status: 429, body: rate,
			state:  func(s *client.State) { s.Attempt, s.Throttled = client.DefaultMaxAttempts, client.DefaultMaxAttempts },
			action: client.ActStop, cause: client.ErrAttemptsExhausted},
		{name: "a 429 without a wait spends one", status: 429, body: `{"error":{"code":"rate_limited","message":"m","retryable":true}}`,
			state:  func(s *client.State) { s.Attempt = client.DefaultMaxAttempts },
			action: client.ActStop, cause: client.ErrAttemptsExhausted},
		{name: "a 503 that states its wait spends one: an outage is bounded", status: 503, body: `{"error":{"code":"unavailable","message":"m","retryable":true,"retry_after_ms":1500}}`,
			state:  func(s *client.State) { s.Attempt = client.DefaultMaxAttempts },
			action: client.ActStop, cause: client.ErrAttemptsExhausted},
		{name: "the caller's longest wait", status: 429, body: rate,
			state:  func(s *client.State) { s.Limits.MaxWait = time.Second },
			action: client.ActStop, cause: client.ErrWaitTooLong, asked: 1500 * time.Millisecond},
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
			d := client.Decide(e, r.err, &s)
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
	if n := testing.AllocsPerRun(100, func() { client.Decide(e, nil, &s) }); n != 0 {
		t.Errorf("Decide on an envelope allocated %.0f times", n)
	}
	if n := testing.AllocsPerRun(100, func() { client.Decide(nil, reset, &s) }); n != 0 {
		t.Errorf("Decide on a transport error allocated %.0f times", n)
	}
}

func BenchmarkDecide(b *testing.B) {
	e := env(b, 429, `{"error":{"code":"rate_limited","message":"slow down","retryable":true,"retry_after_ms":1500}}`)
	s := base()
	b.ReportAllocs()
	for b.Loop() {
		client.Decide(e, nil, &s)
	}
}

// TestDecideByContent: a failure that names fields goes to the rewriter whatever its status,
// transport or retryable flag — in every dialect that carries field-level facts, with the
// status an HTTP server would send, a status that says something else (a 500), and none at
// all (an MCP tool result, a message without a transport). The other rows of the design's
// table hold without a status too.
func TestDecideByContent(t *testing.T) {
	t.Parallel()
	mcpText := func(inner string) string {
		b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": inner}}, "isError": true})
		return string(b)
	}
	const agentBack = `{"error":{"code":"invalid_input","message":"Invalid input for tool charge: currency: Invalid option","issues":[{"path":["currency"],"code":"invalid_value","message":"Invalid option: expected one of \"eur\"|\"usd\""}],"schema":{"type":"object","properties":{"currency":{"type":"string","enum":["eur","usd"]}}},"retryable":true,"hint":"Fix the listed issues and retry"}}`
	fix := []struct{ dialect, body string }{
		{"AgentBack over MCP (invalid_input, retryable true)", agentBack},
		{"AgentBack in an MCP tool result", mcpText(agentBack)},
		{"agent error spec, a code nothing knows", `{"error":{"code":"CURRENCY_NOT_SUPPORTED","message":"no","field":"currency","allowed_values":["eur","usd"],"retryable":true}}`},
		{"agent error spec, retryable false", `{"error":{"code":"CURRENCY_NOT_SUPPORTED","message":"no","field":"currency","suggested_value":"eur","retryable":false}}`},
		{"RFC 9457 invalid_fields", `{"type":"https://example.com/probs/validation","title":"Invalid","invalid_fields":[{"field":"currency","reason":"not supported","valid_values":["eur"]}]}`},
		{"AX details", `{"error_code":"VALIDATION_ERROR","message":"bad","details":[{"field":"amount","code":"too_small","message":"at least 50"}]}`},
		{"Google BadRequest", `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"bad","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"currency","description":"unsupported"}]}]}}`},
		{"Stripe param", `{"error":{"type":"invalid_request_error","code":"parameter_invalid_integer","param":"amount","message":"Invalid integer: abc"}}`},
	}
	for _, f := range fix {
		for _, status := range []int{0, 422, 500} {
			t.Run(fmt.Sprintf("%s, status %d", f.dialect, status), func(t *testing.T) {
				e, ok := remedy.Parse(status, nil, []byte(f.body))
				if !ok {
					t.Fatalf("not a failure")
				}
				if len(e.Issues) == 0 {
					t.Fatalf("no issues read from %s", f.body)
				}
				if e.Retryable || remedy.Classify(status, nil, []byte(f.body)).Retryable {
					t.Fatalf("read as retryable (%s): sent unchanged, it fails the same way", e.RetrySource)
				}
				s := base()
				s.SafeToRepeat = false
				if d := client.Decide(e, nil, &s); d.Action != client.ActRewrite {
					t.Fatalf("got %v (%v: %s), want rewrite", d.Action, d.Cause, d.Why)
				}
				s.CanRewrite = false
				if d := client.Decide(e, nil, &s); d.Action != client.ActStop || !errors.Is(d.Cause, client.ErrRewriteGaveUp) {
					t.Fatalf("without a rewriter: got %v (%v), want stop, never the same payload again", d.Action, d.Cause)
				}
			})
		}
	}

	// Field-level facts do not make a rate limit, an outage or an auth failure the arguments'.
	notFix := []struct {
		name   string
		status int
		body   string
		action client.Action
		cause  error
	}{
		{"rate limited with issues", 429, `{"error":{"code":"rate_limited","message":"m","retryable":true,"retry_after_ms":10,"issues":[{"path":["amount"],"message":"too many"}]}}`, client.ActRetry, nil},
		{"unavailable with issues, no status", 0, `{"error":{"code":"unavailable","message":"m","retryable":true,"issues":[{"path":["amount"],"message":"x"}]}}`, client.ActRetry, nil},
		{"forbidden with issues", 403, `{"error":{"code":"forbidden","message":"m","issues":[{"path":["account"],"message":"not yours"}]}}`, client.ActStop, client.ErrNotRetryable},
		{"a conflict by a known code", 409, `{"error":{"code":"already_exists","message":"m","issues":[{"path":["email"],"message":"taken"}]}}`, client.ActStop, client.ErrNotRetryable},
		{"message-only issues under a known state code", 0, `{"error":{"code":"conflict","message":"m","retryable":false,"issues":["busy"]}}`, client.ActStop, client.ErrNotRetryable},
		// The other rows of the table, without a status.
		{"confirmation challenge, no status", 0, `{"error":{"code":"confirmation_required","message":"m","retryable":true,"confirmationToken":"tok"}}`, client.ActConfirm, nil},
		{"next operation, no status", 0, `{"error":{"code":"precondition_failed","message":"m","retryable":true,"next_operation":"add_item"}}`, client.ActNextOperation, nil},
		{"transient, no status", 0, `{"error":{"code":"rate_limited","message":"m","retryable":true,"retry_after_ms":10}}`, client.ActRetry, nil},
		{"not found names the field but offers no value: looked up, not guessed", 404, `{"error":{"code":"not_found","message":"m","retryable":false,"issues":[{"path":["order_id"],"message":"no such order"}]}}`, client.ActStop, client.ErrNotRetryable},
		{"not found that offers the values", 404, `{"error":{"code":"plan_not_found","message":"m","issues":[{"path":["plan"],"allowed_values":["pro","team"]}]}}`, client.ActRewrite, nil},
		{"not retryable, no status", 0, `{"error":{"code":"not_found","message":"m","retryable":false}}`, client.ActStop, client.ErrNotRetryable},
		{"payment required says retryable, but not unchanged", 0, `{"error":{"code":"payment_required","message":"m","retryable":true}}`, client.ActStop, client.ErrNotRetryable},
		{"idempotency key required says retryable, but not unchanged", 0, `{"error":{"code":"idempotency_key_required","message":"m","retryable":true}}`, client.ActStop, client.ErrNotRetryable},
		{"fatal, no status", 0, `{"error":{"code":"account_closed","message":"m","retryable":true,"severity":"fatal"}}`, client.ActStop, client.ErrNotRetryable},
	}
	for _, r := range notFix {
		t.Run(r.name, func(t *testing.T) {
			e := env(t, r.status, r.body)
			if r.action == client.ActRetry && !e.Retryable {
				t.Fatal("read as not retryable: its issues are not the arguments' fault")
			}
			s := base()
			d := client.Decide(e, nil, &s)
			if d.Action != r.action || !errors.Is(d.Cause, r.cause) || (r.cause == nil && d.Cause != nil) {
				t.Fatalf("got %v (%v: %s), want %v (%v)", d.Action, d.Cause, d.Why, r.action, r.cause)
			}
		})
	}
}
