package server

import (
	"context"
	"net/http"
)

// Observer observes the requests an API serves through its pipeline (the operations' REST
// requests and MCP tool calls), for tracing and metrics: package
// github.com/remedy-go/remedy/otel makes OpenTelemetry spans and metrics of them. Every
// field is optional; an API without an observer pays nothing for it.
type Observer struct {
	// Start runs when a request enters the pipeline, before it is routed. The stages and the
	// operation's handler run under the context it returns (a span's), and End receives it.
	Start func(ctx context.Context, r *http.Request) context.Context
	// TraceID is the trace id of the context Start returned, as 32 lowercase hex digits, or
	// "" when it has none: a failure's envelope then carries it as its trace_id (and the log
	// lines of the request), so that a caller's report leads to the span. Without it, or when
	// it says "", the trace id is the request's traceparent's, else a random one.
	TraceID func(ctx context.Context) string
	// End runs once the pipeline is done with the request, with what it answered.
	End func(ctx context.Context, s *Served)
}

// Served describes a request the pipeline answered.
type Served struct {
	// Operation is the operation the request was routed to; nil when it matched none (a 404
	// or 405, or a request refused before routing). Read it; do not change it.
	Operation *Operation
	Tool      bool // an MCP tool call, not a REST request
	Status    int  // the response's status; 0 when nothing was written (the caller left)
	// Code is the failure's code when the response is a failure (an envelope): a refusal of
	// the pipeline (invalid_body, rate_limited, confirmation_required, ...) or the handler's.
	Code string
	// Confirmation is what the request did with the confirmation gate.
	Confirmation Confirmation
	Replayed     bool // an idempotent request answered with its key's stored result
}

// Confirmation is what a request did with an operation's confirmation gate.
type Confirmation uint8

const (
	ConfirmationNone   Confirmation = iota // the gate was not reached, or the operation has none
	ConfirmationIssued                     // a challenge was issued: a token was stored and sent
	ConfirmationUsed                       // a valid token was spent, and the request went on
)

var confirmationNames = [...]string{"none", "issued", "used"}

// String is the event's name: "issued".
func (c Confirmation) String() string {
	if int(c) < len(confirmationNames) {
		return confirmationNames[c]
	}
	return "confirmation(?)"
}

// WithObserver observes every request the pipeline serves with o (see Observer).
func WithObserver(o Observer) Option { return func(a *API) error { a.observer = o; return nil } }

// observed is what an exchange notes for its observer as it goes.
type observed struct {
	status   int
	code     string
	confirm  Confirmation
	replayed bool
}

// observeStart runs the observer's Start, and reports whether End is to run.
func (x *exchange) observeStart() bool {
	o := &x.api.observer
	if o.Start != nil {
		x.ctx = o.Start(x.ctx, x.r)
	}
	return o.End != nil
}

// observeEnd runs the observer's End with what the exchange answered.
func (x *exchange) observeEnd() {
	s := &Served{Operation: x.op, Tool: x.tool, Status: x.obs.status, Code: x.obs.code,
		Confirmation: x.obs.confirm, Replayed: x.obs.replayed}
	x.api.observer.End(x.ctx, s)
}

// observedTrace is the trace id the observer reads from the exchange's context; "" for none.
func (x *exchange) observedTrace() string {
	f := x.api.observer.TraceID
	if f == nil || x.ctx == nil {
		return ""
	}
	if id := f(x.ctx); len(id) == 32 && isLowerHex(id) && id != "00000000000000000000000000000000" {
		return id
	}
	return ""
}
