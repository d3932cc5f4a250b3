package remedyotel

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the tracers and meters this package makes.
const ScopeName = "github.com/remedy-go/remedy/otel"

// Option configures ClientHooks, Transport and ServerObserver.
type Option func(*config)

type config struct {
	tp    trace.TracerProvider
	mp    metric.MeterProvider
	props propagation.TextMapPropagator
}

// WithTracerProvider makes spans with tp (default: the global TracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider records metrics with mp (default: the global MeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithPropagator injects (Transport) and extracts (ServerObserver) trace context with p
// (default: the global TextMapPropagator, which is a no-op until one is set, e.g.
// propagation.TraceContext{}).
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *config) { c.props = p }
}

func newConfig(opts []Option) *config {
	c := &config{}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.props == nil {
		c.props = otel.GetTextMapPropagator()
	}
	return c
}

// Attribute keys of remedy's own, beside the semantic conventions' (http.*, url.*,
// error.type).
const (
	AttrOperation      = "remedy.operation"               // the operation (operationId, tool name)
	AttrDepth          = "remedy.depth"                   // nesting of next operations; set when above 0
	AttrAttempt        = "remedy.attempt"                 // the attempt's number within its call, from 1
	AttrIdempotencyKey = "remedy.idempotency_key.present" // a key was sent (never the key itself)
	AttrConfirmed      = "remedy.confirmed"               // a confirmation token was sent
	AttrRewritten      = "remedy.rewritten"               // the arguments are a repair of the caller's
	AttrCode           = "remedy.code"                    // the envelope's code
	AttrCategory       = "remedy.category"                // the envelope's category
	AttrRetryable      = "remedy.retryable"               // the envelope's retryable flag
	AttrAction         = "remedy.action"                  // what the loop decided after the attempt
	AttrWhy            = "remedy.why"                     // the rule that decided, in words
	AttrWait           = "remedy.wait"                    // the wait before the next attempt, in seconds
	AttrWaitSource     = "remedy.wait.source"             // server (asked) or backoff
	AttrPaced          = "remedy.paced"                   // the wait before the attempt for the time its server stated (client.Pacer), in seconds
	AttrRewrittenPaths = "remedy.rewritten_paths"         // JSON Pointers a repair changed
	AttrReplayed       = "remedy.replayed"                // the answer was replayed from the idempotency key
	AttrAttempts       = "remedy.attempts"                // a call's attempts, its next operations' included
	AttrOutcome        = "remedy.outcome"                 // success, recovered or failed
	AttrCause          = "remedy.cause"                   // why a call gave up (Cause)
	AttrConfirmation   = "remedy.confirmation"            // the server's confirmation gate: issued or used
)
