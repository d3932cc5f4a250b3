package server

import (
	"context"
	"encoding/json"
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

// exchange is one request on its way through the pipeline.
type exchange struct {
	api *API
	w   http.ResponseWriter
	r   *http.Request
	ctx context.Context

	op        *Operation
	pathVals  []string // the path parameters' raw values, in op.route's order
	principal Principal
	body      []byte // the body as sent (nil when there is none); never written once read
	// text is the body as a string sharing body's bytes, for the text checks and binder,
	// which read it without a copy and keep nothing of it (what they return is copied).
	text    string
	input   any             // the validated input, a pointer to the operation's In
	fp      []byte          // the payload's fingerprint, once computed
	capture *StoredResponse // where a success is recorded, for idempotency
	traceID string
	obs     observed // what the observer is told at the end (observe.go)
	wrote   bool
	tool    bool // the request is an MCP tool call's: tokens and keys are arguments, not headers
	// submitted is what the idempotency key holds once an Async operation's job is stored,
	// whatever the call then answers (see exchange.submission).
	submitted *StoredResponse
}

// handler is a step of the pipeline: it handles the exchange, or returns the error to answer.
type handler func(*exchange) error

// stage wraps the rest of the pipeline.
type stage func(next handler) handler

// run runs the pipeline and answers any error or panic with an envelope.
func (x *exchange) run() {
	x.ctx = x.r.Context()
	if x.api.observer.Start != nil || x.api.observer.End != nil {
		if x.observeStart() {
			defer x.observeEnd() // after the recovery below has answered a panic
		}
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			x.fail(&panicError{value: v, stack: debug.Stack()})
		}
	}()
	if err := x.api.run(x); err != nil {
		x.fail(err)
	}
}

// panicError carries a recovered panic to the log; it never reaches a response.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// fail answers err: a *Problem or *remedy.Envelope as it says, anything else as a 500
// internal_error whose real cause goes to the log under the response's trace id.
func (x *exchange) fail(err error) {
	if x.wrote {
		// The response has started: nothing can be said to the caller any more.
		x.logInternal(err, "error after the response started")
		return
	}
	if p, ok := err.(*Problem); ok && p.made {
		// A refusal of the validate stage (a pipeline code, never wrapped) is written from an
		// envelope on the stack, sharing the registry's related codes, which nothing changes.
		if c, ok := x.api.reg.Lookup(p.Code); ok {
			env := c.envelope(p.Message)
			p.fill(&env)
			capIssues(&env)
			env.TraceID = x.trace()
			x.writeEnvelope(&env, p.Header, madeEnvelope(&env))
			return
		}
	}
	env, header := x.envelope(err)
	if env.TraceID == "" {
		env.TraceID = x.trace()
	}
	x.writeEnvelope(env, header, false)
}

// envelope maps an error to the envelope to send, and the headers that go with it.
func (x *exchange) envelope(err error) (*remedy.Envelope, map[string]string) {
	var p *Problem
	var env *remedy.Envelope
	switch {
	case asProblem(err, &p):
		c, ok := x.api.reg.Lookup(p.Code)
		if !ok {
			x.logInternal(err, "error code not in the registry: "+p.Code)
			return x.internal(), nil
		}
		if x.op != nil && !x.op.emits(p.Code) && !isPipelineCode(p.Code) {
			if _, warned := x.op.undeclared.LoadOrStore(p.Code, true); !warned {
				x.api.logger.LogAttrs(x.ctx, slog.LevelWarn, "remedy: operation emitted a code it does not declare (server.Errors): "+
					"the OpenAPI document and the MCP tool description do not list it",
					slog.String("operation", x.op.ID), slog.String("code", p.Code))
			}
		}
		env := p.envelope(c)
		capIssues(env)
		return env, p.Header
	case asEnvelope(err, &env):
		if env.Status < 400 || env.Status > 599 || env.Code == "" {
			x.logInternal(err, "handler returned an envelope without a failure status or code")
			return x.internal(), nil
		}
		cp := *env
		capIssues(&cp)
		return &cp, nil
	default:
		x.logInternal(err, "internal error")
		return x.internal(), nil
	}
}

// internal is the 500 every unknown error and panic becomes: the code, the trace id, and
// nothing of the cause.
func (x *exchange) internal() *remedy.Envelope {
	c, _ := x.api.reg.Lookup(CodeInternalError)
	env := c.Envelope("")
	env.TraceID = x.trace()
	return env
}

func (x *exchange) logInternal(err error, msg string) {
	attrs := []slog.Attr{slog.String("trace_id", x.trace()), slog.String("error", err.Error()),
		slog.String("method", x.r.Method), slog.String("path", x.r.URL.Path)}
	if x.op != nil {
		attrs = append(attrs, slog.String("operation", x.op.ID))
	}
	if p, ok := err.(*panicError); ok {
		attrs = append(attrs, slog.String("stack", string(p.stack)))
	}
	x.api.logger.LogAttrs(x.ctx, slog.LevelError, "remedy: "+msg, attrs...)
}

// trace is the request's trace id: the W3C traceparent's when the request has a valid one,
// else a new random one, the same for the whole exchange.
func (x *exchange) trace() string {
	if x.traceID == "" {
		x.traceID = x.observedTrace() // the span's, when an observer started one
	}
	if x.traceID == "" {
		x.traceID = traceID(x.r.Header.Get("Traceparent"))
	}
	return x.traceID
}

// writeEnvelope sends a failure: RFC 9457 problem details when the caller's Accept asks for
// them, the canonical {"error":{...}} otherwise, with Retry-After when there is a wait. made
// says that env's raw JSON members are the server's own, which encodeMade writes.
func (x *exchange) writeEnvelope(env *remedy.Envelope, header map[string]string, made bool) {
	var body []byte
	if made {
		// The refusals the validate stage made are the failures a careless client sends most:
		// they are encoded into a buffer the next one reuses (Write copies it).
		buf := encodeBuffers.Get().(*[]byte)
		defer func() {
			if cap(body) <= maxPooledEncode {
				*buf = body[:0]
			}
			encodeBuffers.Put(buf)
		}()
		body = *buf
	}
	h := x.w.Header()
	for k, v := range header {
		h.Set(k, v)
	}
	ct := "application/json"
	if wantsProblem(x.r.Header.Values("Accept")) {
		body, _ = env.MarshalProblem()
		ct = remedy.ProblemContentType
	} else {
		var ok bool
		if made {
			body, ok = encodeMade(body, env)
		}
		if !ok {
			body, _ = env.MarshalJSON()
		}
	}
	if env.RetryAfter > 0 {
		secs := int64((env.RetryAfter + time.Second - 1) / time.Second)
		h.Set("Retry-After", strconv.FormatInt(secs, 10))
	}
	// One array holds the three values, where h.Set would allocate one each; each header gets
	// a full slice of it, so that appending to one (h.Add) copies it.
	vals := &[...]string{ct, strconv.Itoa(len(body)), "nosniff"}
	h["Content-Type"] = vals[0:1:1]
	h["Content-Length"] = vals[1:2:2]
	h["X-Content-Type-Options"] = vals[2:3:3]
	x.wrote = true
	x.obs.status, x.obs.code = env.Status, env.Code
	x.w.WriteHeader(env.Status)
	x.w.Write(body)
}

// encodeBuffers are the buffers writeEnvelope encodes the validate stage's refusals into; one
// that grew past maxPooledEncode (a refusal quoting large values) is not kept.
var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledEncode = 64 << 10

// writeJSON sends a success.
func (x *exchange) writeJSON(status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding the result: %w", err)
	}
	h := x.w.Header()
	h.Set("Content-Type", "application/json")
	x.record(status, body)
	x.wrote = true
	x.w.WriteHeader(status)
	x.w.Write(body)
	return nil
}

// wantsProblem reports whether an Accept header prefers application/problem+json.
func wantsProblem(accept []string) bool {
	for _, a := range accept {
		for part := range strings.SplitSeq(a, ",") {
			mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.EqualFold(strings.TrimSpace(mt), remedy.ProblemContentType) && !zeroQ(params) {
				return true
			}
		}
	}
	return false
}

// zeroQ reports whether media-type parameters say q=0 (not acceptable).
func zeroQ(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(k, "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q == 0
		}
	}
	return false
}
