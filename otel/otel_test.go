package remedyotel_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/examples/billing"
	remedyotel "github.com/remedy-go/remedy/otel"
	"github.com/remedy-go/remedy/server"
)

// rig is the billing API on loopback, observed by ServerObserver, and a remedy client with
// ClientHooks and Transport, all on one real SDK TracerProvider and MeterProvider whose
// spans and metrics the test reads.
type rig struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	srv    *httptest.Server
	client *client.Client
	store  *billing.Store
}

func newRig(t *testing.T) *rig {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	opts := []remedyotel.Option{remedyotel.WithTracerProvider(tp), remedyotel.WithMeterProvider(mp),
		remedyotel.WithPropagator(propagation.TraceContext{})}
	api, store, err := billing.New(server.WithObserver(remedyotel.ServerObserver(opts...)))
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	approve := client.ConfirmFunc(func(context.Context, *client.Challenge) (bool, error) { return true, nil })
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithConfirmPolicy(approve),
		client.WithHooks(remedyotel.ClientHooks(opts...)),
		client.WithHTTPClient(&http.Client{Transport: remedyotel.Transport(nil, opts...)}))
	require.NoError(t, err)
	_, err = c.LoadOpenAPI(context.Background(), "/openapi.json")
	require.NoError(t, err)
	return &rig{spans: spans, reader: reader, srv: srv, client: c, store: store}
}

// ended returns the spans once the server is done: Close waits for its handlers, so that
// every server span has ended.
func (r *rig) ended() []sdktrace.ReadOnlySpan {
	r.srv.Close()
	return r.spans.Ended()
}

func attr(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func str(t *testing.T, s sdktrace.ReadOnlySpan, key string) string {
	t.Helper()
	v, ok := attr(s, key)
	require.True(t, ok, "span %q has no %s", s.Name(), key)
	return v.Emit()
}

// children are the spans whose parent is p, in the order they ended.
func children(spans []sdktrace.ReadOnlySpan, p sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Parent().SpanID() == p.SpanContext().SpanID() && s.Parent().TraceID() == p.SpanContext().TraceID() {
			out = append(out, s)
		}
	}
	return out
}

// callSpan is the client's span of the call whose trace is id (or the only one named op
// when id is invalid).
func callSpan(t *testing.T, spans []sdktrace.ReadOnlySpan, op string, id trace.TraceID) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == op && s.SpanKind() == trace.SpanKindInternal && (!id.IsValid() || s.SpanContext().TraceID() == id) {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "call spans of %s", op)
	return found[0]
}

// attempts are a call span's attempt spans, each with the one server span under it.
func attempts(t *testing.T, spans []sdktrace.ReadOnlySpan, call sdktrace.ReadOnlySpan, n int) (att, srv []sdktrace.ReadOnlySpan) {
	t.Helper()
	att = children(spans, call)
	require.Len(t, att, n, "attempts of %s", call.Name())
	for _, a := range att {
		assert.Equal(t, trace.SpanKindClient, a.SpanKind())
		below := children(spans, a)
		require.Len(t, below, 1, "the server's span is the attempt's child: traceparent reached it")
		assert.Equal(t, trace.SpanKindServer, below[0].SpanKind())
		srv = append(srv, below[0])
	}
	return att, srv
}

// A 503 then a 200: one call span, two attempt spans under it, each with the server's span
// under it (the trace context crossed the wire), and the attributes of the decisions.
func TestClientRetryTrace(t *testing.T) {
	r := newRig(t)
	r.store.Busy(1)
	resp, err := r.client.Call(context.Background(), "revenue_report", map[string]string{"currency": "usd"})
	require.NoError(t, err)
	require.Len(t, resp.Attempts, 2)
	spans := r.ended()

	call := callSpan(t, spans, "revenue_report", trace.TraceID{})
	assert.Equal(t, "recovered", str(t, call, remedyotel.AttrOutcome))
	assert.Equal(t, "2", str(t, call, remedyotel.AttrAttempts))
	att, srv := attempts(t, spans, call, 2)

	first, second := att[0], att[1]
	assert.Equal(t, "GET", first.Name())
	assert.Equal(t, "GET", str(t, first, "http.request.method"))
	assert.Equal(t, "/v1/reports/revenue", str(t, first, "url.path"))
	assert.Equal(t, "503", str(t, first, "http.response.status_code"))
	assert.Equal(t, "unavailable", str(t, first, remedyotel.AttrCode))
	assert.Equal(t, "unavailable", str(t, first, "error.type"))
	assert.Equal(t, "retry", str(t, first, remedyotel.AttrAction))
	assert.Equal(t, "true", str(t, first, remedyotel.AttrRetryable))
	wait, ok := attr(first, remedyotel.AttrWait)
	require.True(t, ok)
	assert.Equal(t, billing.RetryWait.Seconds(), wait.AsFloat64(), "the server's wait")
	assert.Equal(t, codes.Error, first.Status().Code)
	assert.True(t, first.EndTime().Before(second.StartTime()), "an attempt's span ends with its round trip, before the wait")

	assert.Equal(t, "200", str(t, second, "http.response.status_code"))
	assert.Equal(t, "return", str(t, second, remedyotel.AttrAction))
	assert.Equal(t, "1", str(t, second, "http.request.resend_count"))
	assert.Equal(t, "2", str(t, second, remedyotel.AttrAttempt))
	assert.Equal(t, codes.Unset, second.Status().Code)

	assert.Equal(t, "GET /v1/reports/revenue", srv[0].Name())
	assert.Equal(t, "/v1/reports/revenue", str(t, srv[0], "http.route"))
	assert.Equal(t, "unavailable", str(t, srv[0], remedyotel.AttrCode))
	assert.Equal(t, "503", str(t, srv[0], "http.response.status_code"))
	assert.Equal(t, codes.Error, srv[0].Status().Code, "a 5xx fails the server's span")
	assert.Equal(t, "200", str(t, srv[1], "http.response.status_code"))

	m := collect(t, r.reader)
	assert.EqualValues(t, 1, m.sum("remedy.client.attempts", remedyotel.AttrOperation, "revenue_report", remedyotel.AttrAction, "retry"))
	assert.EqualValues(t, 1, m.sum("remedy.client.attempts", remedyotel.AttrOperation, "revenue_report", remedyotel.AttrAction, "return"))
	assert.EqualValues(t, 1, m.sum("remedy.client.calls", remedyotel.AttrOperation, "revenue_report", remedyotel.AttrOutcome, "recovered"))
	assert.EqualValues(t, 1, m.waits(remedyotel.AttrWaitSource, "server"))
	tokens, ok := m.gauge("remedy.client.retry_budget.tokens")
	require.True(t, ok)
	assert.InDelta(t, 10, tokens, 1e-9, "the default budget, full: a 503 that states its wait spends no token")
	assert.EqualValues(t, 1, m.sum("remedy.server.refusals", remedyotel.AttrCode, "unavailable", "http.response.status_code", "503"))
}

// A validation refusal the client does not repair (the only repair, a clamp to the minimum,
// changes what the call means, and the default policy refuses it): the call fails with its
// cause, and the envelope's trace_id is the server span's, the trace the client's call
// began. A request that carries no trace context gets a root span, whose trace id the
// envelope carries too: the server takes it from its span, not from a header.
func TestRefusalTraceID(t *testing.T) {
	r := newRig(t)
	_, err := r.client.Call(context.Background(), "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "usd", "amount": 0})
	var ce *client.CallError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, client.ErrRewriteRefused)
	require.NotNil(t, ce.Envelope)
	code := ce.Envelope.Code

	plain, err := http.Post(r.srv.URL+"/v1/invoices", "application/json", strings.NewReader(`{"customer_id":"cus_ada","currency":"usd","amount":0}`))
	require.NoError(t, err)
	var body struct {
		Error struct {
			TraceID string `json:"trace_id"`
		} `json:"error"`
	}
	require.NoError(t, json.NewDecoder(plain.Body).Decode(&body))
	plain.Body.Close()
	spans := r.ended()

	call := callSpan(t, spans, "create_invoice", trace.TraceID{})
	assert.Equal(t, "failed", str(t, call, remedyotel.AttrOutcome))
	assert.Equal(t, "rewrite_refused", str(t, call, remedyotel.AttrCause))
	assert.Equal(t, codes.Error, call.Status().Code)
	att, srv := attempts(t, spans, call, 1)
	assert.Equal(t, "stop", str(t, att[0], remedyotel.AttrAction))
	assert.Equal(t, "validation", str(t, att[0], remedyotel.AttrCategory))
	assert.Equal(t, call.SpanContext().TraceID().String(), ce.Envelope.TraceID)
	assert.Equal(t, srv[0].SpanContext().TraceID().String(), ce.Envelope.TraceID)
	assert.Equal(t, codes.Unset, srv[0].Status().Code, "a 4xx is the caller's: the server's span is not failed")

	var root sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.SpanKind() == trace.SpanKindServer && !s.Parent().IsValid() {
			require.Nil(t, root, "one request came without trace context")
			root = s
		}
	}
	require.NotNil(t, root)
	assert.Equal(t, root.SpanContext().TraceID().String(), body.Error.TraceID)

	m := collect(t, r.reader)
	assert.EqualValues(t, 1, m.sum("remedy.client.calls", remedyotel.AttrOutcome, "failed", remedyotel.AttrCause, "rewrite_refused"))
	assert.EqualValues(t, 1, m.sum("remedy.client.attempts", remedyotel.AttrAction, "stop"))
	assert.EqualValues(t, 2, m.sum("remedy.server.refusals", remedyotel.AttrOperation, "create_invoice", remedyotel.AttrCode, code))
}

// A confirmation round: the challenge, then the confirmed attempt; the server counts one
// challenge issued and one token used, and its spans say which was which.
func TestConfirmationRound(t *testing.T) {
	r := newRig(t)
	_, err := r.client.Call(context.Background(), "delete_customer", map[string]string{"id": "cus_grace"})
	require.NoError(t, err)
	spans := r.ended()

	call := callSpan(t, spans, "delete_customer", trace.TraceID{})
	att, srv := attempts(t, spans, call, 2)
	assert.Equal(t, "confirm", str(t, att[0], remedyotel.AttrAction))
	assert.Equal(t, "confirmation_required", str(t, att[0], remedyotel.AttrCode))
	assert.Equal(t, "true", str(t, att[1], remedyotel.AttrConfirmed))
	assert.Equal(t, "issued", str(t, srv[0], remedyotel.AttrConfirmation))
	assert.Equal(t, "used", str(t, srv[1], remedyotel.AttrConfirmation))
	assert.Equal(t, "DELETE /v1/customers/{id}", srv[1].Name())

	m := collect(t, r.reader)
	assert.EqualValues(t, 1, m.sum("remedy.server.confirmations", remedyotel.AttrOperation, "delete_customer", remedyotel.AttrConfirmation, "issued"))
	assert.EqualValues(t, 1, m.sum("remedy.server.confirmations", remedyotel.AttrOperation, "delete_customer", remedyotel.AttrConfirmation, "used"))
	assert.EqualValues(t, 1, m.sum("remedy.server.refusals", remedyotel.AttrCode, "confirmation_required"))
	assert.EqualValues(t, 1, m.sum("remedy.client.calls", remedyotel.AttrOperation, "delete_customer", remedyotel.AttrOutcome, "recovered"))
	assert.EqualValues(t, 1, m.sum("remedy.client.attempts", remedyotel.AttrAction, "confirm"))
}

// The same call twice with one idempotency key: the second is replayed, which both sides
// say, and the server counts; the key itself is in no span.
func TestIdempotentReplay(t *testing.T) {
	r := newRig(t)
	args := map[string]any{"customer_id": "cus_ada", "currency": "usd", "amount": 1200}
	for range 2 {
		_, err := r.client.Call(context.Background(), "create_invoice", args, client.WithIdempotencyKey("invoice-key-7"))
		require.NoError(t, err)
	}
	assert.Equal(t, 1, r.store.Effects("create_invoice"))
	spans := r.ended()

	var replayed []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if v, ok := attr(s, remedyotel.AttrReplayed); ok && v.AsBool() {
			replayed = append(replayed, s)
		}
		for _, kv := range s.Attributes() {
			assert.NotContains(t, kv.Value.Emit(), "invoice-key-7", "span %q, attribute %s", s.Name(), kv.Key)
		}
	}
	require.Len(t, replayed, 2, "the attempt's span and the server's")
	if replayed[0].SpanKind() == trace.SpanKindServer { // they end in either order
		replayed[0], replayed[1] = replayed[1], replayed[0]
	}
	assert.Equal(t, trace.SpanKindClient, replayed[0].SpanKind())
	assert.Equal(t, "true", str(t, replayed[0], remedyotel.AttrIdempotencyKey))
	assert.Equal(t, trace.SpanKindServer, replayed[1].SpanKind())
	assert.Equal(t, replayed[0].SpanContext().SpanID(), replayed[1].Parent().SpanID())

	m := collect(t, r.reader)
	assert.EqualValues(t, 1, m.sum("remedy.server.replays", remedyotel.AttrOperation, "create_invoice"))
	assert.EqualValues(t, 2, m.sum("remedy.client.calls", remedyotel.AttrOperation, "create_invoice", remedyotel.AttrOutcome, "success"))
	assert.EqualValues(t, 0, m.sum("remedy.server.refusals"))
}

// Cause names every sentinel, wrapped or not.
func TestCause(t *testing.T) {
	assert.Equal(t, "", remedyotel.Cause(nil))
	assert.Equal(t, "retry_budget", remedyotel.Cause(client.ErrRetryBudget))
	assert.Equal(t, "outcome_unknown", remedyotel.Cause(&client.CallError{Cause: remedy.ErrOutcomeUnknown}))
	assert.Equal(t, "other", remedyotel.Cause(errors.New("boom")))
}

// metrics is one collection of the ManualReader.
type metrics struct{ rm metricdata.ResourceMetrics }

func collect(t *testing.T, r *sdkmetric.ManualReader) metrics {
	t.Helper()
	var m metrics
	require.NoError(t, r.Collect(context.Background(), &m.rm))
	return m
}

func (m metrics) find(name string) (metricdata.Metrics, bool) {
	for _, sm := range m.rm.ScopeMetrics {
		for _, x := range sm.Metrics {
			if x.Name == name {
				return x, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// has reports whether set holds every key and value of kv (pairs).
func has(set attribute.Set, kv []string) bool {
	for i := 0; i+1 < len(kv); i += 2 {
		v, ok := set.Value(attribute.Key(kv[i]))
		if !ok || v.Emit() != kv[i+1] {
			return false
		}
	}
	return true
}

// sum adds up a counter's points whose attributes include kv.
func (m metrics) sum(name string, kv ...string) int64 {
	x, ok := m.find(name)
	if !ok {
		return 0
	}
	var n int64
	for _, p := range x.Data.(metricdata.Sum[int64]).DataPoints {
		if has(p.Attributes, kv) {
			n += p.Value
		}
	}
	return n
}

// waits counts the wait histogram's observations whose attributes include kv.
func (m metrics) waits(kv ...string) uint64 {
	x, ok := m.find("remedy.client.wait.duration")
	if !ok {
		return 0
	}
	var n uint64
	for _, p := range x.Data.(metricdata.Histogram[float64]).DataPoints {
		if has(p.Attributes, kv) {
			n += p.Count
		}
	}
	return n
}

func (m metrics) gauge(name string) (float64, bool) {
	x, ok := m.find(name)
	if !ok {
		return 0, false
	}
	pts := x.Data.(metricdata.Gauge[float64]).DataPoints
	if len(pts) != 1 {
		return 0, false
	}
	return pts[0].Value, true
}

// An attempt that waited for the time its server had stated (client.Pacer) says so on its
// span, and the wait is counted among the waits as paced.
func TestPacedAttempt(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	pacer := client.NewPacer()
	const origin = "https://api.example.com"
	require.NoError(t, pacer.Learn(context.Background(), origin, client.Limit{Until: time.Now().Add(50 * time.Millisecond)}))
	loop := client.Loop{Pacer: pacer, Hooks: remedyotel.ClientHooks(remedyotel.WithTracerProvider(tp), remedyotel.WithMeterProvider(mp)),
		Transport: client.TransportFunc(func(context.Context, *client.Request) (*client.Response, error) {
			return &client.Response{Status: 200, Body: []byte(`{}`)}, nil
		})}
	resp, err := loop.Do(context.Background(), client.Call{Operation: "read", Origin: origin, Idempotent: true})
	require.NoError(t, err)
	paced := resp.Attempts[0].Paced
	require.Positive(t, paced)
	var found bool
	for _, s := range spans.Ended() {
		if v, ok := attr(s, remedyotel.AttrPaced); ok {
			found = true
			assert.Equal(t, paced.Seconds(), v.AsFloat64())
		}
	}
	assert.True(t, found, "the attempt's span says how long it was paced")
	assert.EqualValues(t, 1, collect(t, reader).waits(remedyotel.AttrWaitSource, "paced"))
}
