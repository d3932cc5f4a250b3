package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
)

// Guard is the part of an API's pipeline that guards side effects — idempotency replay and
// the confirmation gate — and its failure encoding, for handlers another framework routes,
// validates and answers (the Huma add-on, package remedy/huma). It runs the very stages an
// API runs, with the same stores, scopes, fingerprints, tokens and messages, so that a
// confirmation token or an idempotency key means the same on both, and a store shared with
// an API is shared in full. A Guard is safe for concurrent use.
type Guard struct{ api *API }

// NewGuard returns a Guard configured by the options of an API that apply to it:
// WithConfirmation, WithIdempotency, WithRegistry, WithLogger and WithClock (the clock of the
// default MemoryStore). The others are accepted and have no effect. Without WithConfirmation
// and WithIdempotency, challenges and records are kept in one MemoryStore of the Guard's own,
// sized for one principal as an API without an Authenticator sizes it; give a store (with
// quotas per principal, or Redis for several instances) when callers are told apart.
func NewGuard(opts ...Option) (*Guard, error) {
	a, err := New(opts...)
	if err != nil {
		return nil, err
	}
	a.setup()
	return &Guard{api: a}, nil
}

// Registry is the registry the Guard's failures are coded from.
func (g *Guard) Registry() *Registry { return g.api.reg }

// GuardedFunc serves a request the Guard let through. It writes its response to w: a 2xx
// there is the result an idempotency key replays; any other status is a failure, which
// releases the key. Once the input is valid, and before anything is done, it calls confirm,
// which returns nil when the operation needs no confirmation or the request carries a valid
// token, and otherwise the refusal (a challenge, a spent or foreign token, a store failure):
// then it writes nothing and returns that refusal, which the Guard answers. Any other error
// it returns is answered as a handler's error is (a *Problem, a *remedy.Envelope, or 500
// internal_error with the cause logged).
type GuardedFunc func(w http.ResponseWriter, confirm func() error) error

// Serve runs the request r, whose body (nil when there is none) has been read already, for
// the operation op (its ID, Summary, Confirm and Idempotency are read) on behalf of p (""
// is Anonymous), in the order of an API's pipeline: the idempotency stage first (a replay
// of a completed key, 409 idempotency_in_flight, 422 idempotency_key_reused, ...), then
// next, which calls the confirmation gate after its own validation. Refusals are written
// to w as an API writes them.
func (g *Guard) Serve(w http.ResponseWriter, r *http.Request, body []byte, op *Operation, p Principal, next GuardedFunc) {
	if p == "" {
		p = Anonymous
	}
	x := &exchange{api: g.api, w: w, r: r, ctx: r.Context(), op: op, principal: p, body: body}
	if len(body) > 0 {
		x.text = string(body)
	}
	gate := confirm(func(*exchange) error { return nil })
	run := func(x *exchange) error {
		rec := &guardRecorder{ResponseWriter: x.w}
		err := next(rec, func() error { return gate(x) })
		if err != nil {
			if rec.wrote {
				x.wrote = true
			}
			return err
		}
		x.wrote = true
		if rec.status < 200 || rec.status > 299 {
			// A failure the framework answered: not stored, so that a retry really retries.
			return errAnswered
		}
		x.record(rec.status, rec.body.Bytes())
		return nil
	}
	if err := idempotency(run)(x); err != nil && !errors.Is(err, errAnswered) {
		x.fail(err)
	}
}

// errAnswered is what a guarded request returns when the framework has answered a failure
// already: the claim on its key is released, and nothing more is written.
var errAnswered = errors.New("server: the failure has been answered")

// Failure is a failure as an API answers it: the status, the headers (Content-Type, Retry-After
// when there is a wait, X-Content-Type-Options, and those the *Problem names) and the body,
// in the encoding the request's Accept asks for (RFC 9457 problem details, or the canonical
// envelope).
type Failure struct {
	Status int
	Header http.Header
	Body   []byte
}

// Failure encodes err as an API answers a handler's error for the request r: a *Problem by
// its registered code, a *remedy.Envelope as it says, anything else as 500 internal_error
// whose cause is logged under the trace id the answer carries (the request's traceparent's,
// when it has one). The answer has no Content-Length: a framework that writes the body sets
// its own.
func (g *Guard) Failure(r *http.Request, err error) Failure {
	rec := &guardRecorder{ResponseWriter: headerOnly{}, header: http.Header{}}
	x := &exchange{api: g.api, w: rec, r: r, ctx: r.Context()}
	x.fail(err)
	h := rec.Header()
	h.Del("Content-Length")
	return Failure{Status: rec.status, Header: h, Body: rec.body.Bytes()}
}

// guardRecorder passes a response on to its ResponseWriter (when it has one that writes) and
// keeps its status and body.
type guardRecorder struct {
	http.ResponseWriter
	header http.Header // when set, the headers, kept here instead of the ResponseWriter's
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *guardRecorder) Header() http.Header {
	if r.header != nil {
		return r.header
	}
	return r.ResponseWriter.Header()
}

func (r *guardRecorder) WriteHeader(status int) {
	if r.wrote {
		return
	}
	r.status, r.wrote = status, true
	r.ResponseWriter.WriteHeader(status)
}

func (r *guardRecorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.WriteHeader(http.StatusOK)
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the ResponseWriter.
func (r *guardRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// headerOnly is a ResponseWriter that writes nothing: Failure keeps what is written in its
// guardRecorder.
type headerOnly struct{}

func (headerOnly) Header() http.Header         { return http.Header{} }
func (headerOnly) WriteHeader(int)             {}
func (headerOnly) Write(b []byte) (int, error) { return len(b), nil }

// EnvelopeSchemas returns the JSON Schemas an API's OpenAPI document gives its failures, by
// their names in its components: Envelope (the canonical {"error":{...}}), Failure (its
// member), Issue, and Problem (RFC 9457 with the same members). Their references point at
// one another under #/components/schemas/, so a document that describes the same failures
// adds all four.
func EnvelopeSchemas() map[string]json.RawMessage {
	return map[string]json.RawMessage{
		"Envelope": json.RawMessage(envelopeSchema),
		"Problem":  json.RawMessage(problemSchema),
		"Failure":  json.RawMessage(failureSchema),
		"Issue":    json.RawMessage(issueSchema),
	}
}
