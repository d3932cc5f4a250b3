package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/tidwall/gjson"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/neterr"
	"github.com/remedy-go/remedy/internal/waits"
)

// Operations that take time: a server answers 202 Accepted with where to follow the operation
// (Operation-Location, else Location) and when to look (Retry-After), and the loop polls that
// status resource until the operation succeeds or fails, as Azure's long-running operations,
// Google's and most job APIs expect of their callers. The rules:
//
//   - What is polled: a 202 whose Operation-Location or Location header names a status
//     resource, resolved against the request's URL. A 202 without either is returned as is
//     (there is nothing to follow), as is every 202 of a call with polling off
//     (Operation.NoPoll, WithoutPolling) or of a transport that cannot poll (Client.Do and
//     NewRoundTripper send the caller's own requests and return the 202 to it).
//   - Where polls go: only to the origin (scheme, host and port) of the client's base URL. A
//     status resource elsewhere would be sent the caller's credentials (an Authorization or
//     cookie its http.Client adds, which the loop cannot strip), so the call stops with
//     ErrPollLocation and the location in CallError.Accepted instead; a poll redirected to
//     another origin stops the same way.
//   - What a status says: a JSON body's "status" (Azure's notStarted, running, succeeded,
//     failed, canceled; pending, queued, in_progress, completed and their kin, in any case and
//     spelling), or Google's "done" with "response" or "error". A 202 without a status word is
//     still running; a 2xx answer without one is the result itself (a status resource that
//     redirected to the resource it made, 303 See Other).
//   - What a call returns: once the status says succeeded, the resource its
//     "resourceLocation" names (fetched with one more GET, same origin only) when it names
//     one, else its "result" member (this package's server writes it), else Google's
//     "response", else the status body as sent. Response.Status and Header are the answer's
//     that said so.
//   - A failed or canceled operation stops the call with ErrOperationFailed and the failure as
//     the Envelope (Parse reads the status body's "error" member in every dialect Parse knows).
//     It is never submitted again: it ran, and its failure is the caller's to read.
//   - When: never earlier than the server asks (Retry-After-Ms, else Retry-After); without a
//     hint, after a backoff from DefaultPollInterval. A wait longer than Limits.MaxWait, or
//     past Limits.MaxElapsed or the context's deadline, is not taken: the call stops at once
//     (ErrWaitTooLong, ErrElapsedBudget, ErrDeadline) with the wait in a *RetryLater and the
//     status resource in CallError.Accepted, for the caller to look again later.
//   - Bounds: Limits.MaxPolls polls (ErrPollsExhausted), within the call's elapsed budget. A
//     poll answered "still running" spends no retry budget and no attempt of
//     Limits.MaxAttempts; a poll that failed (a transient error, a 503) and is sent again
//     spends the client-wide retry budget as any retry does. A poll that fails for good stops
//     the call with ErrOutcomeUnknown: the operation was accepted and may have run.
//   - Records: each poll is an Attempt with Poll set (Method GET, Target the status path),
//     passed to the hooks and the logger; the attempt before it decided ActPoll.

// DefaultPollInterval is the first wait between polls when the server gives no Retry-After;
// later waits grow by half each time, up to Limits.MaxWait.
const DefaultPollInterval = time.Second

// DefaultMaxPolls bounds the polls of one call unless Limits.MaxPolls says otherwise.
const DefaultMaxPolls = 100

// Accepted is an operation the server accepted that had not finished when the call stopped:
// its status resource, to look at later (a GET of Location), and what it last said.
type Accepted struct {
	Location string // the status resource, as an absolute URL
	Status   string // the last status the server gave, as sent ("running"); empty when none
}

// Error says where the operation's status is.
func (a *Accepted) Error() string {
	s := "the operation was accepted; its status is at " + a.Location
	if a.Status != "" {
		s += " (last status: " + a.Status + ")"
	}
	return s
}

// opState is what a status body says of its operation.
type opState uint8

const (
	stateNone      opState = iota // no status word: not a status body
	statePending                  // not started or running
	stateSucceeded                // done, with a result
	stateFailed                   // done, failed
	stateCanceled                 // done, cancelled before it finished
)

// readStatus reads a status body: its "status" word, or Google's "done". word is the status as
// sent.
func readStatus(body []byte) (st opState, word string) {
	if len(body) == 0 || !gjson.ValidBytes(body) {
		return stateNone, ""
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return stateNone, ""
	}
	if s := root.Get("status"); s.Type == gjson.String {
		if st := statusWord(s.Str); st != stateNone {
			return st, s.Str
		}
	}
	switch done := root.Get("done"); {
	case done.Type == gjson.False && root.Get("name").Exists():
		return statePending, "done: false"
	case done.Type == gjson.True && root.Get("error").IsObject():
		return stateFailed, "done: true, error"
	case done.Type == gjson.True:
		return stateSucceeded, "done: true"
	}
	return stateNone, ""
}

// statusWord classifies a status word, whatever its case and separators ("InProgress",
// "in_progress", "in-progress" alike).
func statusWord(w string) opState {
	var buf [32]byte
	n := 0
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c == '_' || c == '-' || c == ' ':
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		if n == len(buf) {
			return stateNone
		}
		buf[n] = c
		n++
	}
	switch string(buf[:n]) {
	case "notstarted", "running", "pending", "inprogress", "queued", "accepted", "started",
		"processing", "waiting", "scheduled", "submitted":
		return statePending
	case "succeeded", "success", "successful", "completed", "complete", "done", "finished":
		return stateSucceeded
	case "failed", "failure", "error", "errored":
		return stateFailed
	case "canceled", "cancelled", "aborted":
		return stateCanceled
	}
	return stateNone
}

// pollAfter is the wait a status answer asks for before the next poll: Retry-After-Ms, else
// Retry-After (delta-seconds, or an HTTP-date from the answer's Date); 0 when it asks none.
func pollAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if w := waits.FromFloat(waits.ParseFloat(v), float64(time.Millisecond)); w.OK {
			return w.D
		}
	}
	if w := waits.RetryAfter(h.Get("Retry-After"), h.Get("Date")); w.OK {
		return w.D
	}
	return 0
}

// location is the status resource an accepted answer names (Operation-Location, else
// Location), resolved against from; nil when it names none; an error when it names one that
// is not a URL.
func location(h http.Header, from *url.URL) (*url.URL, error) {
	v := strings.TrimSpace(h.Get(remedy.HeaderOperationLocation))
	if v == "" {
		v = strings.TrimSpace(h.Get("Location"))
	}
	if v == "" {
		return nil, nil
	}
	u, err := url.Parse(v)
	if err != nil {
		return nil, err
	}
	if from != nil {
		u = from.ResolveReference(u)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("the status location " + strconv.Quote(v) + " is not an absolute http(s) URL")
	}
	return u, nil
}

// poller is a transport that can follow an accepted operation's status resource (the Client's
// transport of registered operations).
type poller interface {
	// requestURL is the URL the accepted attempt was sent to, against which its locations
	// resolve.
	requestURL(req *Request) *url.URL
	// origin says whether a location may be polled with the caller's credentials.
	sameOrigin(u *url.URL) bool
	// poll sends one GET of u.
	poll(ctx context.Context, req *Request, u *url.URL) (*Response, error)
}

// following is an operation the loop polls.
type following struct {
	loc   *url.URL // the status resource, or the result's resource once fetching (final)
	word  string   // the last status word
	final bool     // loc is the result's resource: its answer is the result
	polls int      // made so far in this call
	bo    backoff.BackOff
}

func (f *following) accepted() *Accepted {
	return &Accepted{Location: f.loc.String(), Status: f.word}
}

// accept decides what follows an accepted answer (a 202 of a transport that polls): poll its
// status resource after the wait it asks, or stop, or (nil) return it as is, as any success.
func (r *run) accept(p poller, req *Request, resp *Response, s *State) (*following, Decision, bool) {
	loc, err := location(resp.Header, p.requestURL(req))
	if err != nil {
		return nil, stop(ErrPollLocation, "the server accepted the operation and named a status location that is not a URL: "+err.Error()), true
	}
	if loc == nil {
		return nil, Decision{}, false // nothing to follow: the 202 is the answer
	}
	_, word := readStatus(resp.Body)
	f := &following{loc: loc, word: word, polls: int(r.polls)}
	if !p.sameOrigin(loc) {
		return f, stop(ErrPollLocation, "the server accepted the operation; its status is at another origin than the API's, which is not sent the caller's credentials: poll it yourself if you trust it"), true
	}
	return f, f.next(pollAfter(resp.Header), s, r.loop.Limits.withDefaults(), "the server accepted the operation: polling its status"), true
}

// next decides the wait before the next poll: the server's (never shortened), else the
// backoff's; or a stop when the polls, the wait or the call's time run out.
func (f *following) next(asked time.Duration, s *State, lim Limits, why string) Decision {
	if f.polls >= lim.MaxPolls {
		return stop(ErrPollsExhausted, "the operation was still running after "+strconv.Itoa(f.polls)+" polls, the limit")
	}
	d := Decision{Action: ActPoll, Wait: asked, Asked: asked, Why: why}
	if asked <= 0 {
		if f.bo == nil {
			f.bo = newPollBackoff(lim)
		}
		d.Wait = min(f.bo.NextBackOff(), lim.MaxWait)
	}
	switch {
	case asked > lim.MaxWait:
		d = stop(ErrWaitTooLong, "the server asks to wait longer than the longest wait before the next poll")
	case d.Wait > lim.MaxElapsed-s.Elapsed:
		d = stop(ErrElapsedBudget, "the wait before the next poll would end after the call's elapsed budget")
	case s.HasDeadline && d.Wait >= s.Remaining:
		d = stop(ErrDeadline, "the wait before the next poll would end after the context's deadline")
	}
	d.Asked = asked
	return d
}

func newPollBackoff(lim Limits) backoff.BackOff {
	e := backoff.NewExponentialBackOff()
	e.InitialInterval = DefaultPollInterval
	e.Multiplier = 1.5
	e.RandomizationFactor = 0.1
	e.MaxInterval = lim.MaxWait
	e.MaxElapsedTime = 0 // the loop's own budget decides
	e.Reset()
	return e
}

// polled is what one poll's answer says: the decision, and on success the result to return.
func (r *run) polled(f *following, resp *Response, err error, s *State, lim Limits) (Decision, *remedy.Envelope) {
	switch {
	case err != nil && errors.Is(err, errPollRedirect):
		return stop(ErrPollLocation, "the status resource redirected to another origin than the API's, which is not sent the caller's credentials"), nil
	case err != nil && s.Done:
		return stop(ErrDeadline, "the context is done"), nil
	case err != nil && neterr.Transient(err):
		if !r.loop.Budget.available() {
			return stop(ErrRetryBudget, "the client-wide retry budget is empty"), nil
		}
		return f.next(0, s, lim, "the poll failed in transit: polling again"), nil
	case err != nil:
		return stop(ErrOutcomeUnknown, "the poll failed for good: the operation was accepted and may have run"), nil
	}
	env := resp.Envelope
	failed := resp.Status >= 400 || resp.Status < 200
	var (
		st   opState
		word string
	)
	if !failed && !f.final {
		st, word = readStatus(resp.Body)
	}
	if !failed && env != nil && env.Severity != remedy.SeverityInfo && env.Severity != remedy.SeverityWarning && (f.final || st == stateNone) {
		// A failure inside a 2xx (success:false, a JSON-RPC error, ok:false) with no status
		// word of an operation: the answer failed, as the same body failing a plain call does.
		failed = true
	}
	if failed {
		switch {
		case s.Done:
			return stop(ErrDeadline, "the context is done"), env
		case env != nil && env.Retryable:
			if !r.loop.Budget.available() {
				return stop(ErrRetryBudget, "the client-wide retry budget is empty"), env
			}
			asked := env.RetryAfter
			d := f.next(asked, s, lim, "the status resource failed for now: polling again")
			return d, env
		case f.final:
			return stop(ErrNotRetryable, "the operation succeeded, and its result's resource answered with a failure"), env
		}
		return stop(ErrOutcomeUnknown, "the status resource answered with a failure: the operation was accepted and may have run"), env
	}
	if f.final {
		return Decision{Action: ActReturn, Why: "the operation's result"}, nil
	}
	if word != "" {
		f.word = word
	}
	switch {
	case st == stateFailed:
		return stop(ErrOperationFailed, "the operation failed"), opFailure(resp, "operation_failed", "the operation failed ("+word+")")
	case st == stateCanceled:
		return stop(ErrOperationFailed, "the operation was canceled"), opFailure(resp, "operation_canceled", "the operation was canceled ("+word+")")
	case st == statePending || (st == stateNone && resp.Status == http.StatusAccepted):
		if loc, err := location(resp.Header, f.loc); err == nil && loc != nil && resp.Status == http.StatusAccepted {
			if !sameOrigin(loc, f.loc) {
				return stop(ErrPollLocation, "the status resource moved to another origin than the API's, which is not sent the caller's credentials"), nil
			}
			f.loc = loc
		}
		return f.next(pollAfter(resp.Header), s, lim, "the operation is still running"), nil
	case st == stateSucceeded:
		if rl := gjson.GetBytes(resp.Body, "resourceLocation"); rl.Type == gjson.String && rl.Str != "" {
			u, err := url.Parse(rl.Str)
			if err != nil {
				return stop(ErrPollLocation, "the operation succeeded and named a result location that is not a URL"), nil
			}
			u = f.loc.ResolveReference(u)
			if !sameOrigin(u, f.loc) {
				f.loc = u
				return stop(ErrPollLocation, "the operation succeeded; its result is at another origin than the API's, which is not sent the caller's credentials"), nil
			}
			f.loc, f.final = u, true
			d := f.next(0, s, lim, "the operation succeeded: fetching the resource it names")
			if d.Action == ActPoll {
				d.Wait = 0 // the result is there now: no reason to wait
			}
			return d, nil
		}
		return Decision{Action: ActReturn, Why: "the operation succeeded"}, nil
	}
	return Decision{Action: ActReturn, Why: "the status resource answered with the result"}, nil
}

// opFailure is a failed status's envelope: what Parse reads in it, else one that says only
// that it failed.
func opFailure(resp *Response, code, msg string) *remedy.Envelope {
	e := gjson.GetBytes(resp.Body, "error")
	if e.IsObject() {
		status := 0
		// (RFC 9457's "status" is a number; Google's, a string, is skipped.)
		for _, k := range [...]string{"statusCode", "status_code", "httpStatus", "status"} {
			if v := e.Get(k); v.Type == gjson.Number && v.Int() >= 400 && v.Int() <= 599 {
				status = int(v.Int())
				break
			}
		}
		guessed := false
		if status == 0 {
			status, guessed = rpcStatus(e.Get("code"))
		}
		// Without the answer's headers: its Retry-After was about polling, not this failure.
		if env, ok := remedy.Parse(status, nil, []byte(`{"error":`+e.Raw+`}`)); ok {
			if guessed && env.RetrySource == remedy.RetryFromStatus {
				// A status the failure did not state says nothing of retrying.
				env.Retryable, env.RetrySource = false, remedy.RetryFromNone
			}
			return env
		}
	}
	if env := resp.Envelope; env != nil && env.Severity != remedy.SeverityInfo && env.Severity != remedy.SeverityWarning {
		return env
	}
	return &remedy.Envelope{Status: http.StatusInternalServerError, Code: code, Message: msg, Severity: remedy.SeverityError,
		RetrySource: remedy.RetryFromNone, Dialect: "status"}
}

// rpcStatus is the HTTP status of a google.rpc.Code (as a long-running operation's error
// carries it), or of an HTTP status given as the code; for anything else, 500 and guessed.
func rpcStatus(code gjson.Result) (status int, guessed bool) {
	if code.Type != gjson.Number {
		return http.StatusInternalServerError, true
	}
	c := code.Int()
	if c >= 400 && c <= 599 {
		return int(c), false
	}
	switch c {
	case 1:
		return 499, false
	case 3, 9, 11:
		return http.StatusBadRequest, false
	case 4:
		return http.StatusGatewayTimeout, false
	case 5:
		return http.StatusNotFound, false
	case 6, 10:
		return http.StatusConflict, false
	case 7:
		return http.StatusForbidden, false
	case 8:
		return http.StatusTooManyRequests, false
	case 12:
		return http.StatusNotImplemented, false
	case 14:
		return http.StatusServiceUnavailable, false
	case 16:
		return http.StatusUnauthorized, false
	}
	return http.StatusInternalServerError, true
}

// result is a succeeded status's result, in a Response the call returns.
func result(resp *Response, final bool) *Response {
	out := &Response{Status: resp.Status, Header: resp.Header, Body: resp.Body, Envelope: resp.Envelope, Replayed: resp.Replayed}
	if final {
		return out
	}
	if out.Envelope != nil && out.Envelope.Severity != remedy.SeverityInfo && out.Envelope.Severity != remedy.SeverityWarning {
		out.Envelope = nil // a status body read as a failure elsewhere; it said succeeded
	}
	if st, _ := readStatus(resp.Body); st != stateSucceeded {
		return out
	}
	for _, k := range [...]string{"result", "response"} {
		if v := gjson.GetBytes(resp.Body, k); v.Exists() && v.Type != gjson.Null {
			out.Body = []byte(v.Raw)
			return out
		}
	}
	return out
}

// follow polls an accepted operation to its end: the result, or a *CallError. n is the number
// of the attempt the server accepted; wait the decided wait before the first poll.
func (r *run) follow(ctx context.Context, p poller, c Call, f *following, n, depth int, wait time.Duration) (*Response, error) {
	l := r.loop
	lim := l.Limits.withDefaults()
	var last *remedy.Envelope
	for {
		if !sleep(ctx, wait) {
			e := r.fail(c, ErrDeadline, "the context ended during the wait before a poll", last, ctx.Err())
			e.Accepted = f.accepted()
			return nil, e
		}
		n++
		f.polls = int(r.polls) + 1 // this one included
		began := time.Since(r.start)
		actx := ctx
		if h := l.Hooks.AttemptStart; h != nil {
			actx = h(ctx, &AttemptStart{Operation: c.Operation, Number: n, Total: r.tries(), Depth: depth, Poll: true})
		}
		req := &Request{Operation: c.Operation, Attempt: n, Depth: depth, Method: http.MethodGet, Target: f.loc.Path}
		resp, err := p.poll(actx, req, f.loc)
		since := time.Since(r.start)
		if err != nil {
			resp = nil
		}
		s := State{Elapsed: since, Depth: depth, Limits: lim, Done: ctx.Err() != nil, BudgetLeft: l.Budget.available()}
		if dl, ok := ctx.Deadline(); ok {
			s.HasDeadline, s.Remaining = true, dl.Sub(r.start.Add(since))
		}
		target := f.loc
		d, env := r.polled(f, resp, err, &s, lim)
		if env != nil {
			last = env
		}
		var cause error = err
		if d.Action == ActStop && d.Asked > 0 && (d.Cause == ErrWaitTooLong || d.Cause == ErrElapsedBudget || d.Cause == ErrDeadline) {
			cause = &RetryLater{After: d.Asked, At: r.start.Add(since).Add(d.Asked)}
		}
		r.polls++
		a := r.record(Attempt{Operation: c.Operation, Number: n, Depth: depth, Method: http.MethodGet, Target: target.Path,
			Envelope: env, Err: err, Decision: d, Elapsed: since - began, Poll: true}, resp)
		r.report(actx, a)
		switch d.Action {
		case ActReturn:
			l.Budget.succeed()
			out := result(resp, f.final)
			out.Attempts = r.attempts
			return out, nil
		case ActStop:
			e := r.fail(c, d.Cause, d.Why, last, cause)
			e.Asked = d.Asked
			if d.Asked > 0 {
				e.Detail += " (the server asked to wait " + d.Asked.String() + ")"
			}
			if d.Cause != ErrOperationFailed {
				e.Accepted = f.accepted()
			}
			return nil, e
		}
		if err != nil || (resp != nil && resp.Status >= 400) {
			// A poll sent again after a failure is a retry: it spends the budget.
			if !l.Budget.spend() {
				e := r.fail(c, ErrRetryBudget, "the client-wide retry budget is empty", last, err)
				e.Accepted = f.accepted()
				return nil, e
			}
		}
		wait = d.Wait
	}
}

// errPollRedirect: a poll was redirected to another origin (see guardRedirects).
var errPollRedirect = errors.New("a poll was redirected to another origin")

// pollKey marks a poll's context, for the redirect guard.
type pollKey struct{}

func isPoll(ctx context.Context) bool { return ctx.Value(pollKey{}) != nil }

// requestURL is the URL of the attempt req sent: the base URL's origin and the attempt's path.
func (t opTransport) requestURL(req *Request) *url.URL {
	u := *t.c.base
	u.Path, u.RawPath, u.RawQuery = req.Target, "", ""
	return &u
}

// sameOrigin reports whether u has the base URL's origin.
func (t opTransport) sameOrigin(u *url.URL) bool { return sameOrigin(u, t.c.base) }

// poll sends one GET of an accepted operation's status resource (or its result's), with no
// idempotency key or confirmation token, under a context the redirect guard knows.
func (t opTransport) poll(ctx context.Context, req *Request, u *url.URL) (*Response, error) {
	c := t.c
	hreq, err := http.NewRequestWithContext(context.WithValue(ctx, pollKey{}, true), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	hreq.Header["Accept"] = acceptJSON
	req.Method, req.Target = http.MethodGet, u.Path
	hresp, err := c.hc.Do(hreq)
	if err != nil {
		return nil, err
	}
	maxBody := c.loop.Limits.MaxBody
	if maxBody <= 0 {
		maxBody = remedy.DefaultMaxBody
	}
	return readResponse(hresp, maxBody, c.maxResult, new(Response))
}
