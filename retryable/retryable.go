// Package retryable adapts remedy's retry decision to github.com/hashicorp/go-retryablehttp:
// CheckRetry, Backoff and ErrorHandler have exactly that package's function types, so an
// existing client adopts them by assigning three fields (and wrapping its transport in
// RoundTripper, so that a lost POST is resent only when that is safe), or starts from
// NewClient. It is a package of its own so that a program that never uses go-retryablehttp
// does not link it.
package retryable

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/neterr"
)

// The three share one parse per response: CheckRetry leaves resp.Body wrapped in a checkedBody
// that remembers the envelope, and Backoff and ErrorHandler read it back from there. Tying the
// envelope to the response rather than to a package-level cache means nothing has to be cleared
// and nothing leaks when a caller mixes these functions with others; it matters because by the
// time retryablehttp calls Backoff it has already drained and closed the body, so a wait given
// only in the body (retry_after_ms) could not be read a second time.

// CheckRetry is a retryablehttp.CheckRetry that retries exactly when remedy's envelope says a
// retry can succeed.
//
//   - The request's context done: no retry, and the context's error is returned.
//   - A transport error (or a response handler's error): retried when it is transient —
//     connection refused or reset, an EOF before the response ended, a timeout — and never for
//     TLS certificate failures, bad URLs or schemes, or too many redirects. A request whose
//     method is not idempotent (POST, PATCH) is retried only when it failed before it was
//     written (a refused connection, a failed dial) or carries an Idempotency-Key header: once
//     written, it may have executed, and sent again it could execute twice. So a POST without a
//     key whose answer was lost is not retried, and the error returned wraps
//     remedy.ErrOutcomeUnknown (errors.Is finds it through ErrorHandler's error). Whether the
//     request was written and carried a key is known from RoundTripper, which NewClient
//     installs; without it, only a failed dial counts as not written. The adapter cannot know
//     whether the server honours keys: the key's presence is taken as the caller's word.
//   - A response: read with ParseResponse, at most remedy.DefaultMaxBody of its body (resp.Body is
//     restored, so the caller still reads the whole body from its start). A success, including a 2xx without an in-band failure, is
//     not retried and returns no error. A failure — any status of 400 or more, or an in-band
//     failure inside a 2xx such as GraphQL errors — is retried when Envelope.Retryable is true
//     and its severity is not fatal, and the *remedy.Envelope is returned as the error either way.
//     Retryable means that the same request can succeed later, so a failure that names fields
//     to fix (issues, a field with its allowed or suggested values, an example request) is
//     never retried, whatever its body (AgentBack's retryable: true means "with corrected
//     input"), a header or its status says: sent again unchanged, it fails the same way.
//
// Returning the envelope for a failure that is not retried differs from retryablehttp's
// default policy, which hands a 4xx back as a response with a nil error: here Client.Do then
// reports the failure as an error (through ErrorHandler, when set), so a caller that still
// wants the response should use retryablehttp.PassthroughErrorHandler.
//
// The body of a non-failure status is read only when it could carry an in-band failure: not
// for a 1xx (a 101's body is the upgraded connection), not for streams (text/event-stream,
// NDJSON) or media that reading 1 MiB of would only delay, and not when its Content-Length
// already exceeds remedy.DefaultMaxBody, which Parse would classify by status alone anyway.
func CheckRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		// retryablehttp reports both a failed round trip and a failed response handler
		// here; in both cases the error, not the response, says what went wrong.
		if !neterr.Transient(err) {
			return false, nil
		}
		if !safeToResend(err) {
			return false, fmt.Errorf("%w: %w", remedy.ErrOutcomeUnknown, err)
		}
		return true, nil
	}
	if resp == nil {
		return false, nil
	}
	env := responseEnvelope(resp)
	if env == nil {
		return false, nil
	}
	return env.Retryable && env.Severity != remedy.SeverityFatal, env
}

// Backoff is a retryablehttp.Backoff that waits as long as the server asked, whatever the
// status, and backs off exponentially otherwise.
//
// A server's wait (Envelope.RetryAfter: retry_after_ms, Retry-After-Ms, Retry-After as
// seconds or an HTTP-date, Google RetryInfo, rate-limit reset headers, ...) is honoured on any
// failure, whatever its status, unlike retryablehttp.DefaultBackoff which reads Retry-After on
// 429 and 503 only; a response that is not a failure has no envelope and so no such wait. It
// is honoured even below min, since the server knows when it will recover. The wait lies in
// [RetryAfter, RetryAfter + 10%], so that clients told the same instant do not return
// together, and is capped at max.
//
// Without a server wait (none given, or zero) the wait is min·2^attemptNum capped at max, with
// equal jitter: uniform in [base/2, base] for that base. Half the wait stays fixed so that a
// failing server is not hammered by waits near zero, and the other half spreads clients that
// failed together, including once the base has reached max. min is therefore the base of the
// exponent rather than a floor: the first wait lies in [min/2, min].
//
// No input yields a negative or overflowing wait: negative min or attemptNum count as zero,
// max <= 0 means no wait, min > max behaves as min = max, and large values saturate at max.
//
// Backoff reads the envelope CheckRetry stored with the response. For a response CheckRetry
// did not see it parses the response itself; if retryablehttp has already drained and closed
// the body by then, only the status and headers can be read.
func Backoff(min, max time.Duration, attemptNum int, resp *http.Response) time.Duration {
	if max <= 0 {
		return 0
	}
	if resp != nil {
		if env := responseEnvelope(resp); env != nil && env.RetryAfter > 0 {
			return serverWait(env.RetryAfter, max)
		}
	}
	return exponentialWait(min, max, attemptNum)
}

// serverWait adds up to 10% to what the server asked, never going below it, within max.
func serverWait(after, max time.Duration) time.Duration {
	if after >= max {
		return max
	}
	d := after + rand.N(after/10+1)
	if d > max || d < after { // d < after: the sum overflowed
		return max
	}
	return d
}

// exponentialWait is min·2^n capped at max, with equal jitter.
func exponentialWait(min, max time.Duration, n int) time.Duration {
	if min <= 0 {
		return 0
	}
	if n < 0 {
		n = 0
	}
	base := max
	// min <= max>>n is exactly min<<n <= max, asked without computing a product that can
	// overflow.
	if min < max && n < 63 && min <= max>>n {
		base = min << n
	}
	half := base / 2
	return base - half + rand.N(half+1)
}

// ErrorHandler is a retryablehttp.ErrorHandler for when Client.Do gives up. It closes the
// response body and returns no response; the error says how many attempts were made and
// wraps what ended them: the *remedy.Envelope of the last response (errors.As(err, &env) finds it),
// else the transport error or the context's error (errors.Is finds them), with
// remedy.ErrOutcomeUnknown for a request CheckRetry would not send again because it may have
// executed.
func ErrorHandler(resp *http.Response, err error, numTries int) (*http.Response, error) {
	if resp != nil {
		if err == nil {
			// Another CheckRetry retried without saying why: the response still can.
			if env := responseEnvelope(resp); env != nil {
				err = env
			}
		}
		if resp.Body != nil {
			// Drain a little so that the connection can be reused, as retryablehttp does,
			// without reading an arbitrarily long body nobody wants.
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
			_ = resp.Body.Close()
		}
	}
	attempts := "attempts"
	if numTries == 1 {
		attempts = "attempt"
	}
	if err == nil {
		return nil, fmt.Errorf("remedy: giving up after %d %s", numTries, attempts)
	}
	return nil, fmt.Errorf("remedy: giving up after %d %s: %w", numTries, attempts, err)
}

// NewClient returns retryablehttp.NewClient() with CheckRetry, Backoff and
// ErrorHandler from this package, its HTTPClient's transport wrapped in RoundTripper, and no
// logger, since a library should not print by default. Its other settings are retryablehttp's
// defaults (4 retries, waits from 1s to 30s), to be changed on the returned client; a
// transport of one's own goes in as RoundTripper(yours). An existing client adopts the same
// policy by assigning the three fields and wrapping its transport.
func NewClient() *retryablehttp.Client {
	c := retryablehttp.NewClient()
	c.Logger = nil
	c.HTTPClient.Transport = RoundTripper(c.HTTPClient.Transport)
	c.CheckRetry = CheckRetry
	c.Backoff = Backoff
	c.ErrorHandler = ErrorHandler
	return c
}

// checkedBody is a response body whose response has been read as an envelope: env, or nil for
// a response that is not a failure.
type checkedBody struct {
	io.ReadCloser
	env *remedy.Envelope
}

// responseEnvelope reads resp as an envelope once; later calls on the same response return the
// envelope the first one found. nil means resp is not a failure.
func responseEnvelope(resp *http.Response) *remedy.Envelope {
	if b, ok := resp.Body.(*checkedBody); ok {
		return b.env
	}
	if !mayCarryFailure(resp) {
		return nil
	}
	before := resp.Body
	env, ok := remedy.ParseResponse(resp)
	if !ok {
		env = nil
	}
	// Only a body ParseResponse replaced (with one that replays what it read) is worth
	// remembering on: a nil or http.NoBody body parses again for free, and must stay what the
	// caller may compare it with.
	if resp.Body != before {
		resp.Body = &checkedBody{ReadCloser: resp.Body, env: env}
	}
	return env
}

// mayCarryFailure reports whether reading resp can find a failure, so that bodies that cannot
// hold one are never buffered or, worse, waited on.
func mayCarryFailure(resp *http.Response) bool {
	switch {
	case resp.StatusCode >= 400:
		return true
	case resp.StatusCode < 200:
		return false
	case resp.ContentLength > remedy.DefaultMaxBody:
		return false
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		return true // an unreadable or missing type: let the body decide
	}
	switch {
	case mt == "text/event-stream", mt == "application/octet-stream",
		mt == "application/jsonl", mt == "application/json-seq",
		strings.HasSuffix(mt, "ndjson"),
		strings.HasPrefix(mt, "image/"), strings.HasPrefix(mt, "audio/"),
		strings.HasPrefix(mt, "video/"), strings.HasPrefix(mt, "multipart/"):
		return false
	}
	return true
}
