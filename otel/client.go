package remedyotel

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
)

// ClientHooks returns the hooks that trace and measure a remedy client's calls (pass them to
// client.WithHooks, or set them as a client.Loop's Hooks).
//
// A call is a span named after its operation; each attempt is a child span of kind client,
// named as the HTTP semantic conventions say ("POST", or "tools/call get_invoice" over MCP),
// which lasts the attempt's round trip and ends with what the loop decided: the envelope's
// code and category, the action and why, the wait, the paths a repair rewrote. A failure's
// next operation is a call span under the call that ran it. Attempts and calls are counted
// as the package documentation says.
func ClientHooks(opts ...Option) client.Hooks {
	c := newConfig(opts)
	h := &clientHooks{tracer: c.tp.Tracer(ScopeName)}
	m := c.mp.Meter(ScopeName)
	var errs []error
	var err error
	h.attempts, err = m.Int64Counter("remedy.client.attempts", metric.WithUnit("{attempt}"),
		metric.WithDescription("Attempts sent, by the decision taken after each."))
	errs = append(errs, err)
	h.calls, err = m.Int64Counter("remedy.client.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Calls ended: succeeded at once, recovered after a failure, or failed by cause."))
	errs = append(errs, err)
	h.waits, err = m.Float64Histogram("remedy.client.wait.duration", metric.WithUnit("s"),
		metric.WithDescription("Waits before unchanged retries."))
	errs = append(errs, err)
	h.budget, err = m.Float64Gauge("remedy.client.retry_budget.tokens", metric.WithUnit("{token}"),
		metric.WithDescription("Retries the client-wide retry budget allows, after a call."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		otel.Handle(err) // the instruments returned are no-ops then: the spans still work
	}
	return client.Hooks{CallStart: h.callStart, AttemptStart: h.attemptStart, AttemptEnd: h.attemptEnd, CallEnd: h.callEnd}
}

type clientHooks struct {
	tracer   trace.Tracer
	attempts metric.Int64Counter
	calls    metric.Int64Counter
	waits    metric.Float64Histogram
	budget   metric.Float64Gauge
}

// began is when an attempt's span began, for its end: the round trip's.
type beganKey struct{}

func (h *clientHooks) callStart(ctx context.Context, c *client.CallStart) context.Context {
	attrs := []attribute.KeyValue{attribute.String(AttrOperation, c.Operation)}
	if c.Depth > 0 {
		attrs = append(attrs, attribute.Int(AttrDepth, c.Depth))
	}
	if c.IdempotencyKey {
		attrs = append(attrs, attribute.Bool(AttrIdempotencyKey, true))
	}
	ctx, _ = h.tracer.Start(ctx, c.Operation, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx
}

func (h *clientHooks) attemptStart(ctx context.Context, a *client.AttemptStart) context.Context {
	now := time.Now()
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperation, a.Operation), attribute.Int(AttrAttempt, a.Number),
		attribute.Bool(AttrIdempotencyKey, a.IdempotencyKey),
	}
	if a.Number > 1 {
		attrs = append(attrs, semconv.HTTPRequestResendCountKey.Int(a.Number-1))
	}
	if a.Depth > 0 {
		attrs = append(attrs, attribute.Int(AttrDepth, a.Depth))
	}
	if a.Confirmed {
		attrs = append(attrs, attribute.Bool(AttrConfirmed, true))
	}
	if a.Rewritten {
		attrs = append(attrs, attribute.Bool(AttrRewritten, true))
	}
	if a.Paced > 0 {
		// The wait before this attempt for the time its server had stated (to this call or
		// another): on the attempt's span, and among the waits, as what it is.
		attrs = append(attrs, attribute.Float64(AttrPaced, a.Paced.Seconds()))
		h.waits.Record(ctx, a.Paced.Seconds(), metric.WithAttributes(attribute.String(AttrOperation, a.Operation),
			attribute.String(AttrWaitSource, "paced")))
	}
	ctx, _ = h.tracer.Start(ctx, a.Operation, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(now), trace.WithAttributes(attrs...))
	return context.WithValue(ctx, beganKey{}, now)
}

func (h *clientHooks) attemptEnd(ctx context.Context, a *client.Attempt) {
	span := trace.SpanFromContext(ctx)
	d := a.Decision
	op := attribute.String(AttrOperation, a.Operation)
	action := attribute.String(AttrAction, d.Action.String())
	h.attempts.Add(ctx, 1, metric.WithAttributes(op, action))
	if d.Action == client.ActRetry {
		source := "backoff"
		if d.Asked > 0 {
			source = "server"
		}
		h.waits.Record(ctx, d.Wait.Seconds(), metric.WithAttributes(op, attribute.String(AttrWaitSource, source)))
	}
	if !span.IsRecording() {
		span.End()
		return
	}
	switch a.Method {
	case "tools/call":
		span.SetName("tools/call " + a.Target)
	case "":
	default:
		name, attrs := requestMethod(a.Method)
		span.SetName(name)
		span.SetAttributes(append(attrs, semconv.URLPathKey.String(a.Target))...)
	}
	attrs := []attribute.KeyValue{action, attribute.String(AttrWhy, d.Why)}
	if a.Status > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCodeKey.Int(a.Status))
	}
	if a.IdempotencyKey == "" {
		attrs = append(attrs, attribute.Bool(AttrIdempotencyKey, false)) // the transport dropped it
	}
	if a.Replayed {
		attrs = append(attrs, attribute.Bool(AttrReplayed, true))
	}
	if d.Action == client.ActRetry {
		attrs = append(attrs, attribute.Float64(AttrWait, d.Wait.Seconds()))
	}
	if len(a.Changes) > 0 {
		paths := make([]string, len(a.Changes))
		for i, c := range a.Changes {
			paths[i] = c.Path
		}
		attrs = append(attrs, attribute.StringSlice(AttrRewrittenPaths, paths))
	}
	failed := a.Err != nil
	if e := a.Envelope; e != nil {
		attrs = append(attrs, attribute.String(AttrCode, e.Code), attribute.String(AttrCategory, string(e.Category)),
			attribute.Bool(AttrRetryable, e.Retryable))
		if e.Severity != remedy.SeverityInfo && e.Severity != remedy.SeverityWarning {
			failed = true
		}
	}
	if failed {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errorType(a)))
		span.SetStatus(codes.Error, errorType(a))
	}
	span.SetAttributes(attrs...)
	end := time.Now()
	if began, ok := ctx.Value(beganKey{}).(time.Time); ok && a.Elapsed > 0 {
		end = began.Add(a.Elapsed) // the round trip's end, before the rewriter and the policies
	}
	span.End(trace.WithTimestamp(end))
}

// errorType is an attempt's error.type: the envelope's code, else the status, else the
// transport error's kind.
func errorType(a *client.Attempt) string {
	switch {
	case a.Envelope != nil && a.Envelope.Code != "":
		return a.Envelope.Code
	case a.Status > 0:
		return strconv.Itoa(a.Status)
	case errors.Is(a.Err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(a.Err, context.Canceled):
		return "canceled"
	}
	return "transport"
}

func (h *clientHooks) callEnd(ctx context.Context, e *client.CallEnd) {
	span := trace.SpanFromContext(ctx)
	op := attribute.String(AttrOperation, e.Operation)
	outcome := "success"
	switch {
	case e.Err != nil:
		outcome = "failed"
	case e.Recovered:
		outcome = "recovered"
	}
	if e.Depth == 0 {
		attrs := []attribute.KeyValue{op, attribute.String(AttrOutcome, outcome)}
		if e.Err != nil {
			attrs = append(attrs, attribute.String(AttrCause, Cause(e.Cause)))
		}
		h.calls.Add(ctx, 1, metric.WithAttributes(attrs...))
		if e.HasBudget {
			h.budget.Record(ctx, e.BudgetTokens)
		}
	}
	span.SetAttributes(attribute.Int(AttrAttempts, len(e.Attempts)), attribute.String(AttrOutcome, outcome))
	if e.Err != nil {
		cause := Cause(e.Cause)
		span.SetAttributes(attribute.String(AttrCause, cause), semconv.ErrorTypeKey.String(cause))
		span.SetStatus(codes.Error, e.Err.Error())
	}
	span.End()
}

var causes = []struct {
	err  error
	name string
}{
	{client.ErrNotRetryable, "not_retryable"},
	{client.ErrAttemptsExhausted, "attempts_exhausted"},
	{client.ErrElapsedBudget, "elapsed_budget"},
	{client.ErrRetryBudget, "retry_budget"},
	{client.ErrDeadline, "deadline"},
	{client.ErrConfirmationRequired, "confirmation_required"},
	{client.ErrConfirmationRejected, "confirmation_rejected"},
	{client.ErrRewriteGaveUp, "rewrite_gave_up"},
	{client.ErrRewriteRefused, "rewrite_refused"},
	{client.ErrNextOperation, "next_operation"},
	{client.ErrIdempotencyKeyReused, "idempotency_key_reused"},
	{client.ErrWaitTooLong, "wait_too_long"},
	{remedy.ErrOutcomeUnknown, "outcome_unknown"},
}

// Cause names why a call gave up, as the remedy.cause attribute says it: one of
// not_retryable, attempts_exhausted, elapsed_budget, retry_budget, deadline,
// confirmation_required, confirmation_rejected, rewrite_gave_up, rewrite_refused,
// next_operation, idempotency_key_reused, wait_too_long, outcome_unknown for remedy's
// sentinels (a CallError's Cause), "" for nil, and "other" for anything else.
func Cause(err error) string {
	if err == nil {
		return ""
	}
	for _, c := range causes {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	return "other"
}

// Transport returns a RoundTripper that injects the trace context of each request's context
// (the attempt's span, under ClientHooks) into its headers with the configured propagator —
// traceparent and tracestate with propagation.TraceContext — and sends it with base
// (nil: http.DefaultTransport). The request is copied, not changed.
func Transport(base http.RoundTripper, opts ...Option) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base, props: newConfig(opts).props}
}

type transport struct {
	base  http.RoundTripper
	props propagation.TextMapPropagator
}

// RoundTrip sends a copy of r that carries its context's trace context.
func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	if len(t.props.Fields()) == 0 {
		return t.base.RoundTrip(r) // a propagator that injects nothing (the global default)
	}
	cp := *r
	cp.Header = r.Header.Clone() // keeps the spelling of every name, "idempotency-key" included
	if cp.Header == nil {
		cp.Header = http.Header{}
	}
	t.props.Inject(ctx, propagation.HeaderCarrier(cp.Header))
	return t.base.RoundTrip(&cp)
}
