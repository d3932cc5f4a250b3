// Package remedyotel makes OpenTelemetry spans and metrics of remedy's client loop and of
// its reference server.
//
// On the client, ClientHooks returns the client.Hooks that trace each call as a span with a
// child span per attempt — HTTP semantic conventions, plus what remedy decided: the
// envelope's code and category, the action, the wait, the paths a repair rewrote — and count
// attempts by decision, calls recovered or failed by cause, the waits and the retry budget.
// Transport injects each attempt's trace context into its HTTP request (traceparent), so
// that the server's span joins the attempt's:
//
//	c, err := client.New(client.WithBaseURL(url),
//		client.WithHooks(remedyotel.ClientHooks()),
//		client.WithHTTPClient(&http.Client{Transport: remedyotel.Transport(nil)}))
//
// On the server, ServerObserver returns the server.Observer that traces each request the
// pipeline serves as a span (a child of the caller's, from the request's traceparent), makes
// that span's trace id the trace_id of the envelopes it answers, and counts refusals by code,
// confirmations issued and used, and idempotent replays:
//
//	api, err := server.New(server.WithObserver(remedyotel.ServerObserver()))
//
// Both use the global TracerProvider, MeterProvider and TextMapPropagator (see package
// go.opentelemetry.io/otel) unless an Option says otherwise.
//
// # Metrics
//
// The client's (instrumentation scope github.com/remedy-go/remedy/otel):
//
//   - remedy.client.attempts (counter): attempts, by remedy.operation and remedy.action (the
//     decision after the attempt: return, retry, rewrite, next_operation, confirm, stop).
//   - remedy.client.calls (counter): the callers' calls (not the next operations they ran), by
//     remedy.operation and remedy.outcome — success (at the first attempt), recovered (a
//     success after a failed attempt) or failed — and, for a failure, remedy.cause (Cause).
//   - remedy.client.wait.duration (histogram, s): the waits before unchanged retries, by
//     remedy.operation and remedy.wait.source (server: the server asked; backoff).
//   - remedy.client.retry_budget.tokens (gauge): what the retry budget holds after a call.
//
// The server's:
//
//   - remedy.server.refusals (counter): failures answered, by remedy.operation, remedy.code
//     and http.response.status_code.
//   - remedy.server.confirmations (counter): by remedy.operation and remedy.confirmation
//     (issued: a challenge sent; used: a valid token spent).
//   - remedy.server.replays (counter): idempotent requests answered with their key's stored
//     result, by remedy.operation.
package remedyotel
