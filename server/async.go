package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/remedy-go/remedy"
)

// Operations that take time. An operation registered with Async is answered 202 Accepted as
// soon as its request passed the pipeline (authenticated, within its rate, its idempotency key
// claimed, its input valid, confirmed when it must be), with the status resource to poll in
// Location and Operation-Location and when to look in Retry-After (and Retry-After-Ms). Its
// handler runs in the background, its end stored in the API's JobStore so that any instance
// sharing the store answers the poll:
//
//	GET /operations/{id}  →  200 {"id":…, "operation":…, "status":"running"}     Retry-After
//	                         200 {"id":…, "operation":…, "status":"succeeded", "result":…}
//	                         200 {"id":…, "operation":…, "status":"failed", "error":{…}}
//
// The "error" member is the envelope a synchronous call would have been answered with (the
// canonical {"error":{…}}'s member, statusCode included); a poll of an operation that is not
// the caller's, or no longer kept, is 404 not_found. The status resource is the operation
// get_operation, registered with the first Async operation: it goes through the pipeline like
// any other (authentication and rate limits included), is described in the OpenAPI document,
// and is an MCP tool.
//
// An ended status is final: once a poll has read succeeded or failed, every later poll reads
// the same, on every instance sharing the store (a JobStore refuses to replace an end). A job
// whose handler has not ended within AsyncOptions.Timeout and a grace of a few seconds is
// ended by the next poll as failed with internal_error, not retryable, whose message says that
// the outcome is unknown: the handler may still be running and may still take effect (or its
// instance stopped), so the caller checks before it submits again. An end that handler comes
// to later is dropped, and logged.
//
// Over MCP, a tool call of an Async operation waits for its end for AsyncOptions.ToolWait and
// answers as a synchronous call would (the result, or the failure as an isError result); an
// operation still running then is answered with its status, its id and a hint to call
// get_operation, which answers a failed operation as an isError result carrying its envelope.
// (MCP's tasks extension is the natural successor of this hint once the go-sdk supports it.)
// An idempotency key covers the submission on both surfaces: the key holds the job whatever
// the first call answered (its failure included), and a tool call with the same key runs
// nothing and is answered, marked replayed, with that job's end, or its status while it runs.

// asyncNote is what an Async operation's description (OpenAPI and MCP tool) tells its callers.
const asyncNote = "Runs in the background: the call is answered 202 Accepted (over MCP, after a short wait for the result) " +
	"with the operation's id and status resource, " + StatusPath + "/{id} (the operation " + GetOperationID + "). " +
	"Poll it after the Retry-After it answers with: running, then succeeded with the result, or failed with the error envelope."

// StatusPath is where the status of an Async operation is: StatusPath + "/" + its id.
const StatusPath = "/operations"

// GetOperationID is the operation id (and MCP tool name) of the status resource.
const GetOperationID = "get_operation"

// Defaults of AsyncOptions.
const (
	DefaultJobWorkers   = 64
	DefaultJobTimeout   = 30 * time.Minute
	DefaultJobRetention = 24 * time.Hour
	DefaultPollAfter    = time.Second
	DefaultToolWait     = 2 * time.Second
)

// AsyncOptions configure the operations registered with Async.
type AsyncOptions struct {
	// Store keeps the jobs (default: the idempotency store when it is a JobStore, as the
	// MemoryStore and redisstore.Store are; else a MemoryStore). Instances of one API behind a
	// load balancer must share it.
	Store JobStore
	// Workers bounds the handlers running in the background in this instance (default
	// DefaultJobWorkers); a request that finds them all busy is refused with 503 unavailable
	// and Retry-After, before anything is done.
	Workers int
	// ScopeWorkers bounds the handlers one principal runs in the background in this instance
	// (default Workers/8, at least 1), so that no caller can take every worker from the
	// others; a request beyond it is refused as beyond Workers.
	ScopeWorkers int
	// Timeout bounds one handler's run (default DefaultJobTimeout): its context ends then. A
	// job that has not stored its end a few seconds after that (its handler ignored its
	// context, or its instance stopped) is ended by the next poll: failed, with a not
	// retryable internal_error saying that the outcome is unknown, since the handler may still
	// run and take effect; the end its handler may store later is dropped (and logged), so
	// that the status never changes once read.
	Timeout time.Duration
	// Retention is how long an ended job's status is kept (default DefaultJobRetention).
	Retention time.Duration
	// PollAfter is the wait the status resource asks for while the job runs (default
	// DefaultPollAfter), sent as Retry-After in whole seconds (rounded up) and Retry-After-Ms.
	PollAfter time.Duration
	// ToolWait is how long an MCP tool call waits for its operation's end before it answers
	// with the operation's id (default DefaultToolWait; negative: no wait).
	ToolWait time.Duration
}

// WithAsync configures the operations registered with Async; zero fields keep their
// defaults. A negative Workers, Timeout, Retention or PollAfter is an error.
func WithAsync(o AsyncOptions) Option {
	return func(a *API) error {
		if o.Workers < 0 || o.ScopeWorkers < 0 || o.Timeout < 0 || o.Retention < 0 || o.PollAfter < 0 {
			return fmt.Errorf("WithAsync: a negative Workers (%d), ScopeWorkers (%d), Timeout (%v), Retention (%v) or PollAfter (%v)",
				o.Workers, o.ScopeWorkers, o.Timeout, o.Retention, o.PollAfter)
		}
		a.async.opts = o
		return nil
	}
}

// Async makes the operation run in the background: its call is answered 202 Accepted with
// the status resource to poll (see StatusPath), and the result or failure is stored for the
// polls. Its idempotency key (with Idempotent) covers the submission, over REST and MCP alike:
// a retried submission with the same key is answered with the same operation, never a second
// job (over MCP, with that job's end once it has one, its failure included).
func Async() OpOption { return func(o *Operation) { o.Async = true } }

// asyncState is an API's background operations.
type asyncState struct {
	opts   AsyncOptions
	once   sync.Once
	store  JobStore
	sem    chan struct{}
	ctx    context.Context // the jobs' contexts derive from it; Shutdown ends it
	cancel context.CancelFunc
	// mu orders the start of jobs (wg.Add) with Shutdown (closed, then wg.Wait), and guards
	// running, the handlers each scope runs here.
	mu      sync.Mutex
	closed  bool
	wg      sync.WaitGroup
	running map[string]int
}

// jobs returns the API's background operations, configured at first use.
func (a *API) jobs() *asyncState {
	s := &a.async
	s.once.Do(func() {
		o := &s.opts
		if o.Store == nil {
			if js, ok := a.idem.Store.(JobStore); ok {
				o.Store = js
			} else {
				o.Store = NewMemoryStore(MemoryOptions{Now: a.now})
			}
		}
		if o.Workers == 0 {
			o.Workers = DefaultJobWorkers
		}
		if o.ScopeWorkers == 0 {
			o.ScopeWorkers = max(o.Workers/8, 1)
		}
		if o.Timeout == 0 {
			o.Timeout = DefaultJobTimeout
		}
		if o.Retention == 0 {
			o.Retention = DefaultJobRetention
		}
		if o.PollAfter == 0 {
			o.PollAfter = DefaultPollAfter
		}
		if o.ToolWait == 0 {
			o.ToolWait = DefaultToolWait
		}
		s.store = o.Store
		s.sem = make(chan struct{}, o.Workers)
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.running = map[string]int{}
	})
	return s
}

// endJobs cancels the handlers of the operations running in the background (Async) and
// refuses new ones with 503 unavailable; the channel it returns is closed once each has
// stored its end (a cancelled handler's failure).
func (a *API) endJobs() <-chan struct{} {
	s := a.jobs()
	s.mu.Lock()
	s.closed = true
	s.cancel()
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	return done
}

// addStatusRoute registers get_operation, once, with the first Async operation.
func (a *API) addStatusRoute() error {
	for _, o := range a.ops {
		if o.ID == GetOperationID && o.Path == StatusPath+"/{id}" {
			return nil
		}
	}
	return Get(a, StatusPath+"/{id}", a.getOperation, OperationID(GetOperationID), Errors(CodeNotFound),
		Summary("The status of an operation that runs in the background: running, then succeeded with its result or failed with its error. Poll it after the Retry-After it answers with."))
}

// getOperationIn is get_operation's input.
type getOperationIn struct {
	ID string `path:"id" json:"-" schema:"pattern=^[A-Za-z0-9_-]{1,64}$"`
}

// jobStatus is the status resource's body.
type jobStatus struct {
	ID        string          `json:"id"`
	Operation string          `json:"operation"`
	Status    JobState        `json:"status"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`
	Hint      string          `json:"hint,omitempty"`
}

// getOperation answers the status of the caller's job id.
func (a *API) getOperation(ctx context.Context, in getOperationIn) (json.RawMessage, error) {
	x, _ := ctx.Value(exchangeKey{}).(*exchange)
	if x == nil {
		return nil, errors.New("get_operation ran outside the pipeline")
	}
	s := a.jobs()
	job, ok, err := x.readJob(s, x.storeScope(), in.ID)
	switch {
	case err != nil:
		return nil, x.storeFailure("reading a job", err)
	case !ok:
		return nil, Error(CodeNotFound, "no operation "+strconv.Quote(in.ID)+" of this caller is kept: it was never accepted, belongs to another caller, or its status expired")
	}
	st := jobStatus{ID: in.ID, Operation: job.Operation, Status: job.State}
	switch job.State {
	case JobRunning:
		setPollAfter(x.w.Header(), s.opts.PollAfter)
	case JobSucceeded:
		st.Result = job.Body
		if len(st.Result) == 0 {
			st.Result = json.RawMessage("null")
		}
	case JobFailed:
		var env struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(job.Body, &env) != nil || len(env.Error) == 0 {
			env.Error = json.RawMessage(`{"statusCode":500,"code":"internal_error","message":"the operation failed"}`)
		}
		if x.tool {
			// Over MCP, a failed operation is an isError result carrying its envelope.
			if e, ok := remedy.Parse(job.Status, nil, job.Body); ok && e.Status >= 400 {
				return nil, e
			}
		}
		st.Error = env.Error
	}
	return json.Marshal(st)
}

// readJob reads job id of scope. A job still running past its deadline is ended in the store
// first (see timedOut), so that what a poll reads is what every later poll reads: when the
// handler's end got there first, that end is read; when the store cannot take the timed-out
// end, the error is returned (the poll is answered 503) rather than a status that may change.
func (x *exchange) readJob(s *asyncState, scope, id string) (Job, bool, error) {
	job, ok, err := s.store.GetJob(x.ctx, scope, id)
	if err != nil || !ok || job.State != JobRunning || job.Deadline.IsZero() || !x.api.now().After(job.Deadline) {
		return job, ok, err
	}
	lost := x.api.timedOut(job)
	switch err := s.store.PutJob(x.ctx, scope, id, lost, s.opts.Retention); {
	case err == nil:
		return lost, true, nil
	case errors.Is(err, ErrJobEnded): // its handler's end came first
		return s.store.GetJob(x.ctx, scope, id)
	default:
		return Job{}, false, err
	}
}

// timedOut is job ended as its deadline ends it: failed, with an outcome nobody knows. Its
// handler overran its Timeout (ignoring its context) or its instance stopped; either way it
// may have taken effect, and may still, so the failure is internal_error, which is not
// retryable: a caller that submitted again could run it twice.
func (a *API) timedOut(job Job) Job {
	c, _ := a.reg.Lookup(CodeInternalError)
	env := c.Envelope("the operation did not end within its time limit: it may still be running, or the instance running it stopped, " +
		"and it may still take effect (or took effect in part); its outcome is unknown, and this status is final")
	env.Hint = "Do not submit it again before checking whether it took effect (read what it changes); submit it again only if it did not."
	job.State, job.Status = JobFailed, env.Status
	job.Body, _ = env.MarshalJSON()
	return job
}

// setPollAfter asks the poller to wait d: Retry-After in whole seconds, rounded up, for every
// client, and Retry-After-Ms for those that read it.
func setPollAfter(h http.Header, d time.Duration) {
	secs := int64((d + time.Second - 1) / time.Second)
	h.Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
	h.Set("Retry-After-Ms", strconv.FormatInt(d.Milliseconds(), 10))
}

// async is the pipeline's last stage before the handler: an Async operation's handler is
// started in the background and the call answered 202 Accepted with its status resource (over
// MCP, after waiting a little for its end).
func async(next handler) handler {
	return func(x *exchange) error {
		if !x.op.Async {
			return next(x)
		}
		s := x.api.jobs()
		busy := func(why string) error {
			p := Error(CodeUnavailable, why+"; nothing was done")
			p.RetryAfter = time.Second
			return p
		}
		scope := x.storeScope()
		select {
		case s.sem <- struct{}{}:
		default:
			return busy("the service runs as many background operations as it may")
		}
		s.mu.Lock()
		switch {
		case s.closed:
			s.mu.Unlock()
			<-s.sem
			return busy("the service is shutting down")
		case s.running[scope] >= s.opts.ScopeWorkers:
			s.mu.Unlock()
			<-s.sem
			return busy("this caller runs as many background operations as it may")
		}
		s.running[scope]++
		s.wg.Add(1)
		s.mu.Unlock()
		end := func() {
			s.mu.Lock()
			if s.running[scope]--; s.running[scope] <= 0 {
				delete(s.running, scope)
			}
			s.mu.Unlock()
			<-s.sem
			s.wg.Done()
		}
		id := newToken()
		now := x.api.now()
		job := Job{Operation: x.op.ID, State: JobRunning, Started: now, Deadline: now.Add(s.opts.Timeout + completeBudget)}
		if err := s.store.PutJob(x.ctx, scope, id, job, s.opts.Timeout+s.opts.Retention); err != nil {
			end()
			return x.storeFailure("storing a job", err)
		}
		if x.capture != nil {
			// The idempotency key holds the job from now on, whatever this call answers (over
			// MCP, the job's failure), as it does over REST: a retry must not run it again.
			x.submitted = x.submission(id)
		}
		done := make(chan struct{})
		bx, cancel := x.detach(s)
		var ended Job // read by the waiting tool call once done is closed
		go func() {
			defer end()
			defer cancel()
			ended = bx.background(s, scope, id, job, next)
			close(done)
		}()
		if x.tool && s.opts.ToolWait > 0 {
			t := time.NewTimer(s.opts.ToolWait)
			defer t.Stop()
			select {
			case <-done:
				return x.answerEnded(ended)
			case <-t.C:
			case <-x.ctx.Done():
			}
		}
		return x.accepted(id)
	}
}

// accepted answers 202 with the status resource of job id.
func (x *exchange) accepted(id string) error {
	x.locate(x.w.Header(), id)
	st := jobStatus{ID: id, Operation: x.op.ID, Status: JobRunning}
	if x.tool {
		st.Hint = "the operation runs in the background: call " + GetOperationID + ` with {"id": "` + id + `"} to get its result, after a few seconds`
	}
	return x.writeJSON(http.StatusAccepted, st)
}

// locate sets the headers of an accepted job id: where its status is, and how soon to ask.
func (x *exchange) locate(h http.Header, id string) {
	loc := StatusPath + "/" + id
	h.Set("Location", loc)
	h.Set(remedy.HeaderOperationLocation, loc)
	setPollAfter(h, x.api.async.opts.PollAfter)
}

// submission is what an idempotency key of an Async operation holds: the 202 a REST call is
// answered with for job id, whichever surface submitted it.
func (x *exchange) submission(id string) *StoredResponse {
	h := http.Header{"Content-Type": {"application/json"}}
	x.locate(h, id)
	body, _ := json.Marshal(jobStatus{ID: id, Operation: x.op.ID, Status: JobRunning})
	return &StoredResponse{Status: http.StatusAccepted, Header: h, Body: body}
}

// replayJob answers a tool call whose idempotency key holds an Async operation's submission
// res: as the call that submitted it was answered once it had waited, with the job's end, or
// with its status while it runs; marked replayed, and running nothing.
func (x *exchange) replayJob(scope string, res StoredResponse) error {
	id, ok := strings.CutPrefix(res.Header.Get("Location"), StatusPath+"/")
	if !ok {
		x.replay(res)
		return nil
	}
	s := x.api.jobs()
	job, ok, err := x.readJob(s, scope, id)
	switch {
	case err != nil:
		return x.storeFailure("reading a job", err)
	case !ok: // its status expired before its key did: the submission is all there is
		x.replay(res)
		return nil
	}
	x.w.Header().Set(remedy.HeaderReplayed, "true")
	x.obs.replayed = true
	if job.State == JobRunning {
		return x.accepted(id)
	}
	return x.answerEnded(job)
}

// answerEnded answers a tool call whose operation ended while it waited, as a synchronous
// call is answered.
func (x *exchange) answerEnded(job Job) error {
	if job.State == JobSucceeded {
		if len(job.Body) == 0 {
			return x.writeJSON(job.Status, nil)
		}
		return x.writeJSON(job.Status, json.RawMessage(job.Body))
	}
	if env, ok := remedy.Parse(job.Status, nil, job.Body); ok && env.Status >= 400 {
		return env
	}
	return errors.New("a background operation failed without an envelope")
}

// detach is the exchange the background run of x's handler goes on in: a copy made before
// x's request ends, answering into a recorder, under a context of its own that ends with
// Shutdown or AsyncOptions.Timeout, not with the request.
func (x *exchange) detach(s *asyncState) (*exchange, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.Timeout)
	r := x.r.Clone(ctx)
	r.Header.Del("Accept") // the stored failure is the canonical envelope
	return &exchange{api: x.api, w: &recorder{h: http.Header{}}, r: r, ctx: ctx, op: x.op, pathVals: x.pathVals,
		principal: x.principal, body: x.body, text: x.text, input: x.input, fp: x.fp, traceID: x.trace(), tool: x.tool}, cancel
}

// background runs the rest of the pipeline (the handler) for job id in x (see detach), and
// stores its end: the result, or the envelope a synchronous call would have been answered
// with. A panic is a failed job (500 internal_error, logged with its stack), never a crash.
func (x *exchange) background(s *asyncState, scope, id string, job Job, next handler) Job {
	rec := x.w.(*recorder)
	func() {
		defer func() {
			if v := recover(); v != nil {
				x.fail(&panicError{value: v, stack: debug.Stack()})
			}
		}()
		if err := next(x); err != nil {
			x.fail(err)
		}
	}()
	job.Status = rec.status
	if job.Status == 0 {
		job.Status = http.StatusOK
	}
	job.Body = bytes.Clone(rec.body.Bytes())
	job.State = JobSucceeded
	if job.Status >= 400 {
		job.State = JobFailed
	}
	// The end is stored whatever became of the request, trying again briefly on failure.
	sctx, scancel := context.WithTimeout(context.Background(), completeBudget)
	defer scancel()
	pause := completePause
	for attempt := 1; ; attempt++ {
		err := s.store.PutJob(sctx, scope, id, job, s.opts.Retention)
		if err == nil {
			break
		}
		if errors.Is(err, ErrJobEnded) {
			// A poll ended the job when its time ran out: that end was read, and it stays.
			x.api.logger.LogAttrs(sctx, slog.LevelWarn, "remedy: a background operation ended after its time ran out; its status was already final (failed, outcome unknown), and this end is dropped",
				slog.String("operation", x.op.ID), slog.String("trace_id", x.trace()),
				slog.String("dropped_state", string(job.State)), slog.Int("dropped_status", job.Status))
			if stored, ok, err := s.store.GetJob(sctx, scope, id); err == nil && ok {
				return stored
			}
			return x.api.timedOut(job)
		}
		if attempt == completeAttempts || sctx.Err() != nil {
			x.api.logger.LogAttrs(sctx, slog.LevelError, "remedy: storing the end of a background operation failed; its status stays running until its timeout",
				slog.String("operation", x.op.ID), slog.String("trace_id", x.trace()), slog.String("error", err.Error()))
			break
		}
		time.Sleep(pause)
		pause *= 4
	}
	return job
}

// asyncDoc describes, in the OpenAPI document, an Async operation's 202 answer (in place of
// its synchronous success, which REST callers never get) and get_operation's status body.
func asyncDoc(o *oaOp, op *Operation) {
	status := strconv.Itoa(op.Status)
	switch {
	case op.Async:
		var result json.RawMessage
		if s := o.Responses[status]; s != nil {
			result = s.Content["application/json"].Schema
		}
		delete(o.Responses, status)
		o.Async = true
		o.Responses["202"] = &oaResponse{
			Description: "Accepted: the operation runs in the background. Poll its status resource (Operation-Location, or Location: the operation " +
				GetOperationID + ") after Retry-After; it answers running, then succeeded with the result or failed with the error envelope.",
			Headers: map[string]*oaHeader{
				"Location":                     {Description: "The status resource: " + StatusPath + "/{id}.", Schema: json.RawMessage(`{"type":"string"}`)},
				remedy.HeaderOperationLocation: {Description: "The status resource, as Location.", Schema: json.RawMessage(`{"type":"string"}`)},
				"Retry-After":                  {Ref: "#/components/headers/RetryAfter"},
			},
			Content: map[string]oaMediaType{"application/json": {Schema: statusSchema(result)}},
		}
	case op.ID == GetOperationID:
		if s := o.Responses[status]; s != nil {
			s.Description = "The operation's status: running (poll again after Retry-After), succeeded with its result, or failed with its error envelope."
			s.Content = map[string]oaMediaType{"application/json": {Schema: statusSchema(nil)}}
			s.Headers = map[string]*oaHeader{"Retry-After": {Ref: "#/components/headers/RetryAfter"}}
		}
	}
}

// statusSchema is the schema of a status body, whose result has the schema result (nil: any).
func statusSchema(result json.RawMessage) json.RawMessage {
	if len(result) == 0 {
		result = json.RawMessage(`{}`)
	}
	return json.RawMessage(`{"type":"object","required":["id","operation","status"],"properties":{` +
		`"id":{"type":"string","description":"The operation's id: poll ` + StatusPath + `/{id}."},` +
		`"operation":{"type":"string","description":"The operation id that was called."},` +
		`"status":{"type":"string","enum":["running","succeeded","failed"]},` +
		`"result":` + string(result) + `,` +
		`"error":{"type":"object","description":"The error envelope's error member, as a synchronous call would have been answered with."},` +
		`"hint":{"type":"string"}}}`)
}
