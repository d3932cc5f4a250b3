package remedyotel

import (
	"context"
	"errors"
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/remedy-go/remedy/server"
)

// ServerObserver returns the observer that traces and measures the requests a reference
// server's pipeline serves (pass it to server.WithObserver).
//
// Each request is a span of kind server, a child of the trace context its headers carry
// (traceparent, with the configured propagator), named as the HTTP semantic conventions
// say ("POST /v1/invoices", or "tools/call create_invoice" for an MCP tool call). Its trace
// id is the trace_id of the envelope the request may be answered with, so that the id a
// caller reports finds the trace. It ends with the status, the failure's code, and what the
// request did with the confirmation gate and its idempotency key. Refusals, confirmations and
// replays are counted as the package documentation says.
func ServerObserver(opts ...Option) server.Observer {
	c := newConfig(opts)
	o := &observer{tracer: c.tp.Tracer(ScopeName), props: c.props}
	m := c.mp.Meter(ScopeName)
	var errs []error
	var err error
	o.refusals, err = m.Int64Counter("remedy.server.refusals", metric.WithUnit("{refusal}"),
		metric.WithDescription("Failures answered, by code."))
	errs = append(errs, err)
	o.confirmations, err = m.Int64Counter("remedy.server.confirmations", metric.WithUnit("{confirmation}"),
		metric.WithDescription("Confirmation challenges issued, and tokens used."))
	errs = append(errs, err)
	o.replays, err = m.Int64Counter("remedy.server.replays", metric.WithUnit("{replay}"),
		metric.WithDescription("Idempotent requests answered with their key's stored result."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		otel.Handle(err)
	}
	return server.Observer{Start: o.start, TraceID: traceID, End: o.end}
}

type observer struct {
	tracer        trace.Tracer
	props         propagation.TextMapPropagator
	refusals      metric.Int64Counter
	confirmations metric.Int64Counter
	replays       metric.Int64Counter
}

func (o *observer) start(ctx context.Context, r *http.Request) context.Context {
	ctx = o.props.Extract(ctx, propagation.HeaderCarrier(r.Header))
	name, attrs := requestMethod(r.Method)
	ctx, _ = o.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(append(attrs, semconv.URLPathKey.String(r.URL.Path))...))
	return ctx
}

// traceID is the trace id of the context's span; "" when it has none.
func traceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		return sc.TraceID().String()
	}
	return ""
}

func (o *observer) end(ctx context.Context, s *server.Served) {
	span := trace.SpanFromContext(ctx)
	var op attribute.KeyValue
	if s.Operation != nil {
		op = attribute.String(AttrOperation, s.Operation.ID)
		if s.Tool {
			span.SetName("tools/call " + s.Operation.ID)
		} else {
			name, _ := requestMethod(s.Operation.Method)
			span.SetName(name + " " + s.Operation.Path)
			span.SetAttributes(semconv.HTTPRouteKey.String(s.Operation.Path))
		}
		span.SetAttributes(op)
	} else {
		op = attribute.String(AttrOperation, "")
	}
	if s.Status > 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCodeKey.Int(s.Status))
	}
	if s.Code != "" {
		span.SetAttributes(attribute.String(AttrCode, s.Code))
		o.refusals.Add(ctx, 1, metric.WithAttributes(op, attribute.String(AttrCode, s.Code),
			semconv.HTTPResponseStatusCodeKey.Int(s.Status)))
		if s.Status >= 500 {
			// The semantic conventions count a server span failed for 5xx only: a 4xx is the
			// caller's to repair, and the request was served as it should be.
			span.SetAttributes(semconv.ErrorTypeKey.String(s.Code))
			span.SetStatus(codes.Error, s.Code)
		}
	}
	if s.Confirmation != server.ConfirmationNone {
		c := attribute.String(AttrConfirmation, s.Confirmation.String())
		span.SetAttributes(c)
		o.confirmations.Add(ctx, 1, metric.WithAttributes(op, c))
	}
	if s.Replayed {
		span.SetAttributes(attribute.Bool(AttrReplayed, true))
		o.replays.Add(ctx, 1, metric.WithAttributes(op))
	}
	span.End()
}
