package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/codename"
	"github.com/remedy-go/remedy/internal/neterr"
	"github.com/remedy-go/remedy/internal/sent"
	"github.com/remedy-go/remedy/internal/tape"
	"github.com/remedy-go/remedy/rewrite"
)

// Action is what the loop does after an attempt.
type Action uint8

const (
	ActReturn        Action = iota + 1 // the call succeeded: return the response
	ActRetry                           // send the same request again after Decision.Wait
	ActRewrite                         // ask the Rewriter for new arguments, then send them
	ActNextOperation                   // run the failure's next_operation, then the call again
	ActConfirm                         // ask the ConfirmPolicy; approved, send again with the token
	ActStop                            // give up: Decision.Cause says why
	ActPoll                            // the operation was accepted and runs: poll its status after Decision.Wait (see async.go)
)

var actionNames = [...]string{"", "return", "retry", "rewrite", "next_operation", "confirm", "stop", "poll"}

// String is the action's name, as logs and records show it ("retry").
func (a Action) String() string {
	if int(a) < len(actionNames) && a != 0 {
		return actionNames[a]
	}
	return "action(" + strconv.Itoa(int(a)) + ")"
}

// Limits bound one call. A zero field takes its default.
type Limits struct {
	// MaxAttempts bounds the attempts of a call, the first included (default 5). Polls are
	// not counted, nor up to MaxAttempts refusals that stated their wait (a 429 or a
	// rate_limit failure with RetryAfter) and were waited out: a server pacing its clients is
	// not failing, and MaxElapsed bounds the waits.
	MaxAttempts int
	MaxElapsed  time.Duration // from the first attempt to the last, next operations included (default 2 min); see Loop.Do
	MaxWait     time.Duration // the longest single wait, whatever the server asks (default 30 s)
	MaxDepth    int           // nesting of next operations (default 2)
	MaxBody     int64         // bytes of an error body read (default DefaultMaxBody)
	// MaxPolls bounds the polls of accepted operations (202) in a call, next operations
	// included (default DefaultMaxPolls). Polls are not attempts: MaxAttempts does not count
	// them, MaxElapsed and MaxWait bound them as they bound retries.
	MaxPolls int
}

// Default limits.
const (
	DefaultMaxAttempts = 5
	DefaultMaxElapsed  = 2 * time.Minute
	DefaultMaxWait     = 30 * time.Second
	DefaultMaxDepth    = 2
)

func (l Limits) withDefaults() Limits {
	if l.MaxAttempts <= 0 {
		l.MaxAttempts = DefaultMaxAttempts
	}
	if l.MaxElapsed <= 0 {
		l.MaxElapsed = DefaultMaxElapsed
	}
	if l.MaxWait <= 0 {
		l.MaxWait = DefaultMaxWait
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxBody <= 0 {
		l.MaxBody = remedy.DefaultMaxBody
	}
	if l.MaxPolls <= 0 {
		l.MaxPolls = DefaultMaxPolls
	}
	return l
}

// State is what the decision knows about the call besides the attempt's outcome. The loop
// fills it; it is exported so that other executors (and tests) can ask the same question.
type State struct {
	Attempt int // attempts counted in this call and its next operations, the one decided on included
	// Throttled: the earlier attempts that were refusals stating their wait (429 or
	// rate_limit with RetryAfter), waited out and not counted in Attempt (see
	// Limits.MaxAttempts).
	Throttled   int
	Elapsed     time.Duration // since the call began
	Done        bool          // the context is done
	HasDeadline bool          // the context has a deadline...
	Remaining   time.Duration // ...this far away
	Depth       int           // nesting of next operations; 0 for the caller's own call
	Confirmed   bool          // a confirmation token was sent with the arguments as they are now
	// SafeToRepeat: sending the request twice has the effect of sending it once — an
	// idempotent operation, or an idempotency key the server is known to honour.
	SafeToRepeat bool
	CanRewrite   bool          // a Rewriter is configured
	BudgetLeft   bool          // the client-wide retry budget has a token
	Backoff      time.Duration // the next backoff delay; negative when the BackOff says stop
	Limits       Limits        // zero fields take their defaults
}

// Decision is the loop's next step.
type Decision struct {
	Action Action
	Wait   time.Duration // before the next attempt (ActRetry)
	Asked  time.Duration // what the server asked to wait, before the cap
	Cause  error         // ActStop: one of the Err* sentinels
	Why    string        // the rule that decided, in words
}

// Decide is the loop's decision after one attempt: a pure function of the outcome (env is the
// failure the server sent, nil on success; err is a transport error, when no response came)
// and the state. It does no I/O and allocates nothing. Rules, first match wins:
//
//  1. No transport error and no failure (or a failure whose severity is info or warning):
//     return. A success beats a context that ended meanwhile.
//  2. The context is done: stop (ErrDeadline).
//  3. A transport error: an *ArgumentsError (the arguments cannot make a request, so nothing
//     was sent) stops (ErrInvalidArguments); otherwise, retry unchanged when it is transient (connection refused or reset,
//     EOF, a timeout) and either the request was never written (NotSent, a failed dial) or it
//     is safe to repeat (State.SafeToRepeat); a transient error after the request was written
//     that is not safe to repeat stops (ErrOutcomeUnknown: it may have executed); any other
//     stops (ErrNotRetryable).
//  4. Severity fatal: stop (ErrNotRetryable), whatever the retryable flag says.
//  5. The idempotency key is held for another payload: stop (ErrIdempotencyKeyReused).
//  6. A confirmation challenge with a token: confirm (the ConfirmPolicy is asked about this
//     payload). A challenge for the payload a token was already sent with, or
//     confirmation_invalid, stops (ErrConfirmationRejected); a challenge without a token stops
//     (ErrConfirmationRequired). A challenge after a rewrite is for a new payload: a new
//     question for the policy.
//  7. payment_required or idempotency_key_required: stop (ErrNotRetryable) — whatever the
//     retryable flag says, the same request cannot succeed until the caller acts.
//  8. next_operation: run it, unless the nesting is at Limits.MaxDepth (ErrNextOperation)
//     or the retry budget is empty (ErrRetryBudget).
//  9. A failure that names fields — issues or an example request, in a validation failure or
//     one nothing categorizes, or field-level facts (a path, allowed or suggested values)
//     under a code nothing knows — goes to the Rewriter, whatever its status, transport or
//     retryable flag: it is never sent again unchanged (without a Rewriter: ErrRewriteGaveUp),
//     and Parse reads it as not retryable.
//     A failure of another category (rate limit, auth, dependency) named by a known code
//     or by its status is not the arguments' fault, whatever issues it lists.
//  10. Retryable: retry unchanged after the server's wait, else the backoff. A failure that is
//     retryable only by its status (no word from the body or a header) is retried only when
//     the request is safe to repeat or the status says nothing ran (408, 425, 429, 503);
//     otherwise it stops (ErrOutcomeUnknown). A retryable validation failure that names no fix
//     (a 4xx other than 408 and 429) is not sent again unchanged — it would fail the same way —
//     but handed to the Rewriter, which may repair it from the message (else ErrNotRetryable).
//     A failure the server replayed from its idempotency record (Envelope.Replayed) is not
//     sent again: with the same key it is replayed again (ErrNotRetryable).
//     A refusal that states its wait (a 429, a 503 or a rate_limit failure with RetryAfter)
//     is the server pacing its clients, not an outage: the retry budget does not bound it.
//     Nor does MaxAttempts bound a 429 or rate_limit one, while State.Throttled is under
//     MaxAttempts: it is not counted in State.Attempt. (A 503's attempts are counted: an
//     outage that states a wait is still an outage.)
//  11. Otherwise: stop (ErrNotRetryable).
//
// Every step that sends again is bounded, in this order: Limits.MaxAttempts, counted over the
// whole call with its next operations (ErrAttemptsExhausted); for unchanged retries, the
// backoff giving up (ErrAttemptsExhausted) and the retry budget (ErrRetryBudget). A wait the
// server asks for is obeyed or not taken at all: longer than Limits.MaxWait it stops the call
// at once (ErrWaitTooLong), and a wait (the server's or the backoff's) that would end past
// Limits.MaxElapsed (ErrElapsedBudget) or the context's deadline (ErrDeadline) stops it too —
// retrying before the server's time spends an attempt the server said would fail. Asked says
// how long the server wanted.
func Decide(env *remedy.Envelope, err error, s *State) Decision {
	lim := s.Limits.withDefaults()
	switch {
	case err == nil && (env == nil || env.Severity == remedy.SeverityInfo || env.Severity == remedy.SeverityWarning):
		return Decision{Action: ActReturn, Why: "success"}
	case s.Done:
		return stop(ErrDeadline, "the context is done")
	case err != nil:
		switch {
		case argumentsFault(err):
			return stop(ErrInvalidArguments, "the arguments cannot make a request; nothing was sent")
		case !neterr.Transient(err):
			return stop(ErrNotRetryable, "the transport failed for good")
		case notSentError(err):
			return retry(0, s, lim, "the connection failed before the request was written")
		case !s.SafeToRepeat:
			return stop(ErrOutcomeUnknown, "the request was written and no answer came back, and it is not safe to send twice: it may have executed")
		}
		return retry(0, s, lim, "transient transport error")
	case env.Severity == remedy.SeverityFatal:
		return stop(ErrNotRetryable, "the failure is fatal")
	}
	var buf [64]byte
	code, _ := codename.Norm(&buf, env.Code) // IDEMPOTENCY_KEY_REUSED and idempotency-key-reused alike
	switch {
	case code == "idempotencykeyreused":
		return stop(ErrIdempotencyKeyReused, "the server holds this idempotency key for another payload")
	case code == "confirmationinvalid":
		return stop(ErrConfirmationRejected, "the server refused the confirmation token")
	case env.ConfirmationToken != "":
		if s.Confirmed {
			return stop(ErrConfirmationRejected, "the server asked again to confirm the payload its token was sent with")
		}
		return resend(ActConfirm, s, lim, "confirmation challenge")
	case code == "confirmationrequired":
		return stop(ErrConfirmationRequired, "the server asks for confirmation but sent no token")
	case code == "paymentrequired":
		return stop(ErrNotRetryable, "the server asks for payment before the call can succeed")
	case code == "idempotencykeyrequired":
		return stop(ErrNotRetryable, "the server requires an idempotency key the call did not send")
	case env.NextOperation != "":
		switch {
		case s.Depth >= lim.MaxDepth:
			return stop(ErrNextOperation, "next operations nest deeper than the limit")
		case !s.BudgetLeft:
			return stop(ErrRetryBudget, "the client-wide retry budget is empty")
		}
		return resend(ActNextOperation, s, lim, "the failure names the operation to run first")
	case env.NamesFix():
		if !s.CanRewrite {
			return stop(ErrRewriteGaveUp, "the failure names a fix and no rewriter is configured")
		}
		return resend(ActRewrite, s, lim, "the failure names a fix")
	case env.Retryable && env.Category == remedy.CategoryValidation && env.Status >= 400 && env.Status < 500 &&
		env.Status != 408 && env.Status != 429:
		if !s.CanRewrite {
			return stop(ErrNotRetryable, "a validation failure that names no fix fails the same way when sent again")
		}
		return resend(ActRewrite, s, lim, "a validation failure: the rewriter may repair it from the message")
	case env.Retryable && env.Replayed:
		return stop(ErrNotRetryable, "the server replayed a failure it stored under the idempotency key: sent again with the key, it is replayed again")
	case env.Retryable:
		if env.RetrySource == remedy.RetryFromStatus && !s.SafeToRepeat && !unprocessedStatus(env.Status) {
			return stop(ErrOutcomeUnknown, "only the status says retryable, the request may have executed, and it is not safe to send twice")
		}
		if env.RetryAfter > 0 && rateLimited(env) {
			// The server paces its clients; its wait is obeyed, and spends no retry budget —
			// nor an attempt, the first MaxAttempts times a 429 says it.
			s2 := *s
			s2.BudgetLeft = true
			if spared(env, s, lim) {
				s2.Attempt--
			}
			return retry(env.RetryAfter, &s2, lim, "rate limited: retry after the server's stated wait")
		}
		return retry(env.RetryAfter, s, lim, "retryable")
	}
	return stop(ErrNotRetryable, "the failure is not retryable")
}

func stop(cause error, why string) Decision {
	return Decision{Action: ActStop, Cause: cause, Why: why}
}

// resend bounds the steps that send again without waiting.
func resend(a Action, s *State, lim Limits, why string) Decision {
	switch {
	case s.Attempt >= lim.MaxAttempts:
		return stop(ErrAttemptsExhausted, "no attempts left")
	case s.Elapsed >= lim.MaxElapsed:
		return stop(ErrElapsedBudget, "no time left in the call's budget")
	}
	return Decision{Action: a, Why: why}
}

// retry bounds an unchanged retry; asked is the server's wait (0: none, use the backoff).
func retry(asked time.Duration, s *State, lim Limits, why string) Decision {
	switch {
	case s.Attempt >= lim.MaxAttempts:
		return stop(ErrAttemptsExhausted, "no attempts left")
	case asked <= 0 && s.Backoff < 0:
		return stop(ErrAttemptsExhausted, "the backoff gave up")
	case !s.BudgetLeft:
		return stop(ErrRetryBudget, "the client-wide retry budget is empty")
	}
	d := Decision{Action: ActRetry, Wait: asked, Asked: asked, Why: why}
	if asked <= 0 {
		d.Wait = min(s.Backoff, lim.MaxWait) // the backoff is ours to cap
	}
	switch {
	case asked > lim.MaxWait:
		d = stop(ErrWaitTooLong, "the server asks to wait longer than the longest wait")
	case d.Wait > lim.MaxElapsed-s.Elapsed: // not Elapsed+Wait, which a huge wait overflows
		d = stop(ErrElapsedBudget, "the wait would end after the call's elapsed budget")
	case s.HasDeadline && d.Wait >= s.Remaining:
		d = stop(ErrDeadline, "the wait would end after the context's deadline")
	}
	d.Asked = asked
	return d
}

// keyHeld reports whether a failure shows that the server keeps idempotency keys: it holds
// this one in flight, or for another payload.
func keyHeld(e *remedy.Envelope) bool {
	var buf [64]byte
	code, _ := codename.Norm(&buf, e.Code)
	return code == "idempotencyinflight" || code == "idempotencykeyreused"
}

// unprocessedStatus reports whether a status says the server did not process the request:
// too many requests, unavailable, request timeout, too early. A retry cannot run it twice.
func unprocessedStatus(status int) bool {
	switch status {
	case 408, 425, 429, 503:
		return true
	}
	return false
}

// notSentError reports whether err happened before any of the request was written: marked by
// the transport (NotSent), or a failed dial. It walks the chain by hand, as
// transientTransportError does, so that the decision allocates nothing.
func notSentError(err error) bool {
	for e := err; e != nil; {
		if sent.IsMark(e) {
			return true
		}
		switch x := e.(type) {
		case *net.OpError:
			if x.Op == "dial" {
				return true
			}
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

// argumentsFault reports whether err is the transport's *ArgumentsError: the arguments could
// not make a request, and nothing was sent. It walks the chain by hand, as notSentError does.
func argumentsFault(err error) bool {
	for e := err; e != nil; {
		if _, ok := e.(*ArgumentsError); ok {
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

// Transport sends one attempt: over HTTP (Client), MCP (package mcp), or the caller's own.
// It returns the response — with Envelope set when the attempt failed, including a failure
// carried in a 2xx — or an error when no response came at all.
type Transport interface {
	RoundTrip(ctx context.Context, req *Request) (*Response, error)
}

// TransportFunc adapts a function to a Transport.
type TransportFunc func(ctx context.Context, req *Request) (*Response, error)

// RoundTrip calls f.
func (f TransportFunc) RoundTrip(ctx context.Context, req *Request) (*Response, error) {
	return f(ctx, req)
}

// Call is one logical operation: what the caller asks for once, whatever the attempts.
type Call struct {
	Operation string          // the operation (tool, operationId) to run
	Args      json.RawMessage // its arguments: a JSON object, or nil
	// Idempotent says the operation can run twice with the same effect (GET, PUT, DELETE):
	// it is then sent without an idempotency key, unless the caller gave one.
	Idempotent bool
	// IdempotencyKey is the caller's key, sent as is for these arguments; a rewritten payload
	// gets a key of its own (idempotent operations included), derived from the caller's key
	// and the payload, so that running the call again with the same key replays rather than
	// repeats a repaired request. Empty: the loop mints one for each distinct payload of a
	// non-idempotent operation.
	IdempotencyKey string
	// ConfirmationToken is a token the caller approved (from a CallError's Challenge), sent
	// with the first attempt only.
	ConfirmationToken string
	// Keys is what is known of the server's support for idempotency keys on the operation:
	// KeysOff sends none; KeysHonoured counts on them to make a retry after a lost answer
	// safe; KeysUnknown (the default) sends them without counting on them.
	Keys KeySupport
	// NoPoll returns an accepted answer (202 Accepted) as the call's result, as is, instead
	// of polling the status resource it names until the operation ends.
	NoPoll bool
	// Schema is the JSON Schema of Args (an Operation's Parameters, an MCP tool's input
	// schema), nil when unknown: the loop checks Args against it before the first attempt
	// (see WithSchemaCheck) and gives it to the Rewriter.
	Schema json.RawMessage
	// Origin is the server the call goes to ("https://api.example.com"), the key under which
	// the Loop's Pacer holds what the server said of its rate limits; "" is not paced. Client
	// sets it from its base URL (or the request's, for Do); package mcp from the session's
	// server. A Client's call is paced under its origin and the limit the operation's answers
	// named, when they named one (GitHub's X-RateLimit-Resource: "https://api.github.com
	// search"), so that one exhausted limit holds only the operations counted against it.
	Origin string

	checked bool   // Args is known to be a JSON object already
	scope   string // the rate limit the call counts against, when its server named one (Client)
}

// Request is one attempt, as the transport sends it.
type Request struct {
	Operation string
	Args      json.RawMessage // exactly the bytes to send; never rewritten by a transport
	// IdempotencyKey goes as the Idempotency-Key header (or its MCP argument); may be empty. A
	// transport that cannot send it clears it, so that the loop does not count on it to make
	// a retry safe.
	IdempotencyKey    string
	ConfirmationToken string // send as X-Confirmation-Token (or its MCP argument); may be empty
	// KeysHonoured is set by a transport that knows the server honours the key it sent for
	// this operation (declared in its OpenAPI document or tool schema, or shown by a replayed
	// answer): a retry after a lost answer is then safe.
	KeysHonoured bool
	Attempt      int // from 1, within its call
	Depth        int // nesting of next operations
	// Method and Target describe the attempt for records and logs ("POST", "/v1/orders";
	// "tools/call", a tool's name); the transport sets them.
	Method, Target string

	run *run // the loop's run that made the attempt, which lends it memory (Request.borrow); nil elsewhere
}

// Response is what an attempt got back, and what a successful call returns.
type Response struct {
	Status int         // the HTTP status, or the transport's equivalent
	Header http.Header // nil when the transport has none
	Body   []byte      // the result as the server sent it
	// Envelope is the failure, when the attempt failed. On a returned success it is a warning
	// the server attached (severity info or warning), or nil.
	Envelope *remedy.Envelope
	Replayed bool      // the server replayed a stored result (Idempotency-Replayed: true)
	Attempts []Attempt // on a returned success: every attempt of the call

	http *http.Response // Client.Do's response, with its body unread
}

// Attempt records one attempt and what the loop decided after it; hooks receive it.
type Attempt struct {
	Operation      string
	Number         int    // within its call, from 1
	Depth          int    // nesting of next operations
	Method         string // as the transport described the request: "POST"
	Target         string // "/v1/orders"
	IdempotencyKey string
	Confirmed      bool // the attempt carried a confirmation token
	Status         int  // 0 when no response came
	Envelope       *remedy.Envelope
	Err            error // the transport error, when no response came
	Replayed       bool
	// Poll says the attempt polled the status of an operation the server accepted (a GET of
	// its status resource, or of the result's resource it named); the attempt before it
	// decided ActPoll.
	Poll     bool
	Decision Decision
	// Changes are the edits made to the arguments after this attempt (Decision.Action is
	// ActRewrite), each with the rule that made it; for a refused proposal, what was proposed.
	Changes []rewrite.Change
	// Checked are the edits made to the arguments before this attempt was sent (the first
	// attempt only), when they broke the call's Schema and the Rewriter repaired them without
	// changing what the call means, each with the rule that made it.
	Checked []rewrite.Change
	// Paced is how long the attempt waited, before it was sent, for the time its server had
	// said a request can succeed (Loop.Pacer): a wait another call learned, or this call's own
	// retry's remainder. 0 when it did not wait.
	Paced   time.Duration
	Elapsed time.Duration // the attempt's round trip
}

// Loop runs calls: it sends each through the Transport and, after every attempt, follows
// Decide — retrying what is transient, repairing what the failure names, running the
// operation it names first, confirming when the policy approves — within the Limits. A Loop
// is safe for concurrent use once configured; Client configures one for HTTP.
type Loop struct {
	Transport Transport
	Rewriter  rewrite.Rewriter // nil: failures that name a fix stop the call (ErrRewriteGaveUp)
	Rewrites  rewrite.Policy   // approves lossy repairs; nil: SafeRewrites (none)
	Confirm   ConfirmPolicy    // nil: RefuseAll
	// Registered reports whether name may run as a failure's next_operation, and whether it
	// is idempotent. The loop runs nothing this does not approve; nil approves nothing.
	Registered func(name string) (ok, idempotent bool)
	// Backoff makes the backoff for one call's transient retries (nil: exponential with
	// jitter from 100 ms). Only NextBackOff and Reset are used; the loop enforces its own
	// limits, and a server's wait takes precedence.
	Backoff func() backoff.BackOff
	Limits  Limits
	// Check is what happens to arguments that break the call's Schema before the first
	// attempt (see SchemaCheck); the zero value is CheckRepair.
	Check  SchemaCheck
	Budget *RetryBudget // shared by every call; nil: no client-wide budget
	// Pacer holds every call to an origin until the time its server said a request can
	// succeed (see Pacer); nil: calls are not paced.
	Pacer Pacer
	// Hooks observe every call and attempt (see Hooks): spans, metrics, records.
	Hooks  Hooks
	Logger *slog.Logger // nil: nothing is logged
}

// Do runs one call to its end: the success (with every attempt in Response.Attempts), or a
// *CallError saying why it stopped.
//
// Limits.MaxElapsed bounds what the loop adds: no wait begins that would end past it, and
// once the call goes beyond its first attempt (a retry, a rewrite, a confirmation, a next
// operation) every attempt runs under a context that ends with it, so that a server that
// never answers cannot hold a retrying call longer. The first attempt runs under ctx as
// given, as a plain net/http request would, so that a call that succeeds at once pays for
// no timer: bound it with a deadline on ctx or a Timeout on the http.Client.
//
// opts are the options of one call (see Option), on top of the loop's.
func (l *Loop) Do(ctx context.Context, c Call, opts ...Option) (*Response, error) {
	if l.Transport == nil {
		return nil, errors.New("remedy: Loop.Transport is nil")
	}
	if len(opts) > 0 {
		var err error
		if l, err = l.with(&c, opts); err != nil {
			return nil, err
		}
	}
	r := newRun(l)
	r.guard = true
	resp, err := r.call(ctx, l.Transport, c, 0)
	r.lent.release()
	if r.cancel != nil {
		r.cancel()
		r.bounded, r.cancel = nil, nil // the returned Response keeps the run reachable
	}
	return resp, err
}

// settle gives the caller's call (depth 0) its final cause: a call its elapsed bound (not the
// caller's context) ended during an attempt stopped on the elapsed budget, not a deadline.
func (r *run) settle(ctx context.Context, err error) error {
	if r.cancel == nil || err == nil || ctx.Err() != nil {
		return err // (before ce, which errors.As moves to the heap)
	}
	var ce *CallError
	if errors.As(err, &ce) && ce.Cause == ErrDeadline {
		ce.Cause, ce.Detail = ErrElapsedBudget, "the call's elapsed budget ran out during an attempt"
	}
	return err
}

// bound returns the context the call's later attempts run under: ctx, ended at the elapsed
// budget when the run guards it and ctx ends later. It is derived once per run.
func (r *run) bound(ctx context.Context) context.Context {
	if !r.guard || r.cancel != nil {
		return ctx
	}
	end := r.start.Add(r.loop.Limits.withDefaults().MaxElapsed)
	if deadlineBefore(ctx, end) {
		r.guard = false
		return ctx
	}
	r.bounded, r.cancel = context.WithDeadline(ctx, end)
	return r.bounded
}

// deadlineBefore reports whether the context ends no later than t.
func deadlineBefore(ctx context.Context, t time.Time) bool {
	dl, ok := ctx.Deadline()
	return ok && !dl.After(t)
}

// run is one caller's call, with the next operations it runs on the way.
type run struct {
	loop     *Loop
	start    time.Time
	attempts []Attempt
	// guard: later attempts are bounded by the elapsed budget (Loop.Do, not Client.Do, whose
	// success body is read after the call returns); bounded is that context once derived.
	guard bool
	// polls are the attempts that polled an accepted operation, and throttled the refusals
	// that stated their wait and were waited out (see spared): recorded, not counted against
	// Limits.MaxAttempts. (Beside guard, in its padding.)
	throttled uint16
	polls     int32
	bounded   context.Context
	cancel    context.CancelFunc
	// req and first back the common call (one attempt) without allocations of their own, and
	// key its minted key; lent is what the Client's transports borrow for the call's
	// attempts, made on first use (Request.borrow). (The run stays within 512 bytes, which
	// the allocator serves much more cheaply than larger objects.)
	req   Request
	first [1]Attempt
	key   keySpace
	lent  *lent
}

// tries are the attempts Limits.MaxAttempts counts: every one recorded, but the polls and
// the throttled.
func (r *run) tries() int { return len(r.attempts) - int(r.polls) - int(r.throttled) }

func newRun(l *Loop) *run {
	r := &run{loop: l, start: time.Now()}
	r.attempts = r.first[:0]
	return r
}

// call runs one call (the caller's, or a next operation at depth > 0) to its end.
func (r *run) call(ctx context.Context, t Transport, c Call, depth int) (*Response, error) {
	if r.loop.Hooks.callHooked() {
		return r.observed(ctx, t, c, depth)
	}
	resp, err := r.send(ctx, t, c, depth)
	if depth == 0 {
		err = r.settle(ctx, err)
	}
	return resp, err
}

// send makes a call's attempts, deciding after each what follows.
func (r *run) send(ctx context.Context, t Transport, c Call, depth int) (*Response, error) {
	l := r.loop
	lim := l.Limits.withDefaults()
	if len(c.Args) > 0 && !c.checked && !isJSONObject(c.Args) {
		return nil, &CallError{Operation: c.Operation, Cause: ErrInvalidArguments, Detail: "the arguments are not a JSON object", Attempts: r.attempts,
			Err: argumentsError("", "not_object", "the arguments are not a JSON object")}
	}
	var bo backoff.BackOff // made when a retry first needs it
	keys := keyring{caller: c.IdempotencyKey, spare: &r.key}
	args := c.Args
	token := c.ConfirmationToken
	// confirmed: a confirmation token was sent with args as they are now. A rewrite makes a
	// new payload, which the server may challenge anew.
	confirmed := token != ""
	// honoured: the server is known to honour the call's idempotency keys — declared, or
	// shown by a replayed answer or a key it holds in flight or for another payload.
	honoured := c.Keys == KeysHonoured
	rewritten := false // args are no longer the caller's
	// checked: the repairs made before the first attempt, when args broke c.Schema. Not when
	// the call carries a confirmation token: the server challenged these very arguments, so
	// it accepted them in every other way, and the token is good for them alone.
	var checked []rewrite.Change
	if len(c.Schema) > 0 && l.Check != CheckOff && c.ConfirmationToken == "" {
		next, made, e := r.check(ctx, &c)
		if e != nil {
			return nil, e
		}
		if made != nil {
			keys.replaced(c.Args)
			args, checked, rewritten = next, made, true
		}
	}
	var last *remedy.Envelope
	for n := 1; ; n++ {
		if r.tries() >= lim.MaxAttempts {
			// Only a next operation gets here: it spent what was left of the call's attempts.
			return nil, r.fail(c, ErrAttemptsExhausted, "no attempts left: the call's next operations spent them", last, nil)
		}
		paced, took, perr := r.pace(ctx, &c, lim)
		if perr != nil {
			perr.Envelope = last
			return nil, perr
		}
		r.req = Request{Operation: c.Operation, Args: args, ConfirmationToken: token, Attempt: n, Depth: depth, run: r}
		req := &r.req
		switch {
		case c.Keys == KeysOff:
			// No key is minted; the caller's own goes with the caller's payload only.
			if c.IdempotencyKey != "" && !rewritten {
				req.IdempotencyKey = c.IdempotencyKey
			}
		case c.IdempotencyKey != "" || !c.Idempotent:
			req.IdempotencyKey = keys.key(args)
		}
		token = "" // a token goes with one attempt, with the payload it was issued for
		// Times are read from the monotonic clock, as offsets from the call's start (one clock
		// read each, where time.Now takes two); the call's first attempt begins with it.
		var began time.Duration
		if len(r.attempts) > 0 {
			began = time.Since(r.start)
		}
		actx := ctx // the attempt's context: ctx, or what AttemptStart made of it
		if h := l.Hooks.AttemptStart; h != nil {
			actx = h(ctx, &AttemptStart{
				Operation: c.Operation, Number: n, Total: r.tries() + 1, Depth: depth,
				IdempotencyKey: req.IdempotencyKey != "", Confirmed: req.ConfirmationToken != "", Rewritten: rewritten,
				Paced: paced,
			})
		}
		resp, err := t.RoundTrip(actx, req)
		since := time.Since(r.start)
		after := r.start.Add(since)
		if l := r.lent; l != nil && l.attached {
			// The transport attached the run's watch to ctx: the later attempts go under the
			// context that carries it (see lent.watch), and so does the elapsed bound. Not
			// when a hook made the attempt's context: it is that attempt's alone (its span),
			// and the later attempts are watched afresh.
			l.attached = false
			if r.loop.Hooks.AttemptStart == nil {
				ctx = l.watched
			}
		}
		elapsed := since - began
		var env *remedy.Envelope
		if resp != nil && err == nil {
			env = resp.Envelope
		} else {
			resp = nil
		}
		if env != nil && (env.Severity != remedy.SeverityInfo && env.Severity != remedy.SeverityWarning) {
			last = env
		}
		if took {
			r.paceLearn(ctx, &c, resp, after)
		}
		honoured = honoured || req.KeysHonoured || (resp != nil && resp.Replayed) || (env != nil && keyHeld(env))
		s := State{
			// Attempts count over the whole call: next operations spend the same budget.
			Attempt: r.tries() + 1, Throttled: int(r.throttled), Elapsed: since, Depth: depth, Confirmed: confirmed,
			SafeToRepeat: c.Idempotent || (req.IdempotencyKey != "" && honoured), CanRewrite: l.Rewriter != nil,
			BudgetLeft: l.Budget.available(), Limits: lim, Done: ctx.Err() != nil,
		}
		if dl, ok := ctx.Deadline(); ok {
			s.HasDeadline, s.Remaining = true, dl.Sub(after)
		}
		if err != nil || (env != nil && env.RetryAfter <= 0) {
			if bo == nil {
				bo = l.newBackoff()
			}
			s.Backoff = bo.NextBackOff()
		}
		d := Decide(env, err, &s)
		if d.Action == ActRetry && spared(env, &s, lim) && r.throttled < math.MaxUint16 {
			r.throttled++
		}
		var follow *following
		if d.Action == ActReturn && resp.Status == http.StatusAccepted && !c.NoPoll {
			if p, ok := t.(poller); ok {
				follow, d, _ = r.accept(p, req, resp, &s)
				if d.Action == 0 {
					d = Decision{Action: ActReturn, Why: "success"}
				}
			}
		}
		// The policies and the rewriter are asked before the attempt is reported, so that the
		// record says what was done: confirmed or rewritten, or stopped, and why.
		var (
			ch      *Challenge
			prop    *rewrite.Proposal
			next    json.RawMessage
			changes []rewrite.Change
			blocked []rewrite.Blocked
			cause   = err // what the call's error wraps when it stops here
		)
		switch d.Action {
		case ActConfirm:
			ch = &Challenge{Operation: c.Operation, Args: args, Message: env.Message, Token: env.ConfirmationToken, Envelope: env}
			policy := l.Confirm
			if policy == nil {
				policy = RefuseAll
			}
			ok, perr := policy.Approve(ctx, ch)
			if ok && perr == nil {
				d.Why = "confirmation challenge, approved by the confirm policy"
			} else {
				d = Decision{Action: ActStop, Cause: ErrConfirmationRequired, Why: "confirmation challenge, not approved by the confirm policy"}
				cause = perr
			}
		case ActRewrite:
			next, changes, prop, blocked, d, cause = r.rewrite(ctx, c, args, env, n, d)
		case ActStop:
			if d.Asked > 0 && (d.Cause == ErrWaitTooLong || d.Cause == ErrElapsedBudget || d.Cause == ErrDeadline) {
				cause = &RetryLater{After: d.Asked, At: after.Add(d.Asked)}
			}
		}
		a := r.record(Attempt{
			Operation: c.Operation, Number: n, Depth: depth, Method: req.Method, Target: req.Target,
			IdempotencyKey: req.IdempotencyKey, Confirmed: req.ConfirmationToken != "",
			Envelope: env, Err: err, Decision: d, Elapsed: elapsed, Changes: changes, Paced: paced, Checked: checked,
		}, resp)
		checked = nil // the first attempt's alone
		r.report(actx, a)
		if d.Action != ActReturn && d.Action != ActStop {
			ctx = r.bound(ctx)
		}

		switch d.Action {
		case ActReturn:
			l.Budget.succeed()
			resp.Attempts = r.attempts
			return resp, nil
		case ActPoll:
			return r.follow(ctx, t.(poller), c, follow, n, depth, d.Wait)
		case ActStop:
			e := r.fail(c, d.Cause, d.Why, last, cause)
			e.Challenge, e.Proposal, e.Blocked, e.Asked = ch, prop, blocked, d.Asked
			if follow != nil {
				e.Accepted = follow.accepted()
			}
			if d.Asked > 0 {
				e.Detail += " (the server asked to wait " + d.Asked.String() + ")"
			}
			return nil, e
		case ActRetry:
			// A refusal that says when to come back is the server pacing its clients, not an
			// outage: it does not spend the budget that bounds retry storms.
			if !(d.Asked > 0 && env != nil && rateLimited(env)) && !l.Budget.spend() {
				return nil, r.fail(c, ErrRetryBudget, "the client-wide retry budget is empty", last, err)
			}
			if !sleep(ctx, d.Wait) {
				return nil, r.fail(c, ErrDeadline, "the context ended during the wait", last, ctx.Err())
			}
		case ActRewrite:
			args, confirmed, rewritten = next, false, true
			if bo != nil {
				bo.Reset()
			}
		case ActConfirm:
			token, confirmed = env.ConfirmationToken, true
		case ActNextOperation:
			if !l.Budget.spend() {
				return nil, r.fail(c, ErrRetryBudget, "the client-wide retry budget is empty", last, nil)
			}
			if err := r.next(ctx, env, c.Origin, depth); err != nil {
				return nil, r.fail(c, ErrNextOperation, "next operation "+strconv.Quote(env.NextOperation)+": "+nextWhy(err), last, err)
			}
		}
	}
}

// rewrite asks the Rewriter to repair args, and the rewrite.Policy about a repair that changes
// what the call means. It returns the new arguments and their changes; or, when there is no
// repair to send, the decision turned into a stop, with the refused proposal if there was one,
// the rewriter's account of what blocked it if it gave up, and the error to keep.
func (r *run) rewrite(ctx context.Context, c Call, args json.RawMessage, env *remedy.Envelope, n int, d Decision) (json.RawMessage, []rewrite.Change, *rewrite.Proposal, []rewrite.Blocked, Decision, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}") // no arguments: an empty object the repair can add to
	}
	o := r.repair(ctx, r.loop.Rewriter, &rewrite.Request{Operation: c.Operation, Args: args, Envelope: env, Attempt: n, Schema: c.Schema})
	switch {
	case o.prop != nil:
		return nil, o.changes, o.prop, nil, stop(ErrRewriteRefused, o.why), o.err
	case o.next == nil:
		return nil, nil, nil, o.blocked, stop(ErrRewriteGaveUp, o.why), o.err
	case o.approved:
		d.Why = "the failure names a fix; the repair changes what the call means, approved by the rewrite policy"
	}
	return o.next, o.changes, nil, nil, d, nil
}

// repaired is what a rewriter and the rewrite.Policy made of a Rewrite.
type repaired struct {
	next     json.RawMessage   // the arguments to send; nil when there are none
	changes  []rewrite.Change  // next's changes, or the refused proposal's
	approved bool              // next changes what the call means, and the policy approved
	prop     *rewrite.Proposal // the repair the policy did not approve
	blocked  []rewrite.Blocked // the rewriter's account of what it could not address
	why      string            // why nothing is to be sent
	err      error             // the rewriter's or the policy's error
}

// repair asks rw of rewriter, and the rewrite.Policy about a repair that changes what the call
// means: after a failure (rewrite) and before the first attempt (check) alike.
func (r *run) repair(ctx context.Context, rewriter rewrite.Rewriter, rw *rewrite.Request) repaired {
	next, err := rewriter.Rewrite(ctx, rw)
	switch {
	case err != nil:
		return repaired{why: "the rewriter failed", err: err}
	case next == nil:
		return repaired{why: "no rewriter could address every issue", blocked: rw.Blocked}
	case !isJSONObject(next):
		return repaired{why: "the rewriter returned something other than a JSON object"}
	case sameJSON(next, rw.Args):
		return repaired{why: "the rewriter returned the arguments unchanged"}
	}
	changes := rw.Changes
	if len(changes) == 0 {
		changes = rewrite.Diff(rw.Args, next)
	}
	if !rewrite.AnyLossy(changes) {
		return repaired{next: next, changes: changes}
	}
	p := &rewrite.Proposal{Operation: rw.Operation, Args: rw.Args, New: next, Changes: changes, Envelope: rw.Envelope}
	policy := r.loop.Rewrites
	if policy == nil {
		policy = rewrite.Safe
	}
	if ok, perr := policy.Approve(ctx, p); !ok || perr != nil {
		return repaired{changes: changes, prop: p, err: perr,
			why: "the repair changes what the call means (" + lossyRules(changes) + "), not approved by the rewrite policy"}
	}
	return repaired{next: next, changes: changes, approved: true}
}

// lossyRules names the rules of the lossy changes, once each: "clamp, drop_unknown".
func lossyRules(changes []rewrite.Change) string {
	var names []string
	for _, c := range changes {
		if c.Lossy && !slices.Contains(names, c.Rule) {
			names = append(names, c.Rule)
		}
	}
	return strings.Join(names, ", ")
}

// next runs a failure's next_operation through the loop, one level deeper.
func (r *run) next(ctx context.Context, env *remedy.Envelope, origin string, depth int) error {
	l := r.loop
	ok, idem := false, false
	if l.Registered != nil {
		ok, idem = l.Registered(env.NextOperation)
	}
	if !ok {
		return ErrNotRegistered
	}
	_, err := r.call(ctx, l.Transport, Call{Operation: env.NextOperation, Args: env.NextOperationArgs, Idempotent: idem, Origin: origin}, depth+1)
	return err
}

// ErrNotRegistered is wrapped by the error of a next operation the failure names that the caller
// did not register (CallError.Err of an ErrNextOperation): the loop runs only what it was
// given.
var ErrNotRegistered = errors.New("not registered with the client")

func nextWhy(err error) string {
	if errors.Is(err, ErrNotRegistered) {
		return "not registered with the client, so not run"
	}
	return "failed"
}

// record keeps an attempt and returns it in place.
func (r *run) record(a Attempt, resp *Response) *Attempt {
	if resp != nil {
		a.Status, a.Replayed = resp.Status, resp.Replayed
	}
	r.attempts = append(r.attempts, a)
	return &r.attempts[len(r.attempts)-1]
}

// report hands an attempt to the hook and the logger, with the attempt's context.
func (r *run) report(ctx context.Context, a *Attempt) {
	if h := r.loop.Hooks.AttemptEnd; h != nil {
		h(ctx, a)
	}
	if lg := r.loop.Logger; lg != nil {
		attrs := []slog.Attr{
			slog.String("operation", a.Operation), slog.Int("attempt", a.Number),
			slog.String("method", a.Method), slog.String("target", a.Target),
			slog.Int("status", a.Status), slog.String("action", a.Decision.Action.String()),
			slog.String("why", a.Decision.Why), slog.Duration("elapsed", a.Elapsed),
		}
		if a.Decision.Wait > 0 {
			attrs = append(attrs, slog.Duration("wait", a.Decision.Wait))
		}
		if a.Envelope != nil {
			attrs = append(attrs, slog.String("code", a.Envelope.Code))
		}
		if a.Err != nil {
			attrs = append(attrs, slog.String("error", a.Err.Error()))
		}
		lg.LogAttrs(ctx, slog.LevelDebug, "remedy attempt", attrs...)
	}
}

func (r *run) fail(c Call, cause error, why string, last *remedy.Envelope, err error) *CallError {
	return &CallError{Operation: c.Operation, Cause: cause, Detail: why, Attempts: r.attempts, Envelope: last, Err: err}
}

func (l *Loop) newBackoff() backoff.BackOff {
	var b backoff.BackOff
	if l.Backoff != nil {
		b = l.Backoff()
	}
	if b == nil {
		e := backoff.NewExponentialBackOff()
		e.InitialInterval = 100 * time.Millisecond
		e.MaxInterval = l.Limits.withDefaults().MaxWait
		e.MaxElapsedTime = 0 // the loop's own budget decides
		b = e
	}
	b.Reset()
	return b
}

// sleep waits d, or until the context ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func isJSONObject(b json.RawMessage) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{' && tape.Valid(tape.View(b))
	}
	return false
}
