package retryable

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/httpop"
	"github.com/remedy-go/remedy/internal/sent"
)

// CheckRetry sees only the request's context, the response and the error, so a transport
// failure cannot tell it whether the request was written, nor whether it carried an
// Idempotency-Key. RoundTripper finds both out where the request is in hand and attaches them
// to the error it returns, which http.Client hands on inside its *url.Error.

// RoundTripper wraps base (nil: http.DefaultTransport) so that CheckRetry can tell a transport
// failure that is safe to retry from one that may have executed: it watches, through
// net/http/httptrace, whether the request's header block was written, and notes whether the
// request is safe to send twice (an idempotent method, or an Idempotency-Key header). A failure
// before the request was written is also marked remedy.NotSent. NewClient installs it; a
// client that adopts CheckRetry by assigning fields should set
// HTTPClient.Transport = retryable.RoundTripper(HTTPClient.Transport) as well, or a POST or
// PATCH that fails after its connection was made is not retried.
//
// It reports its events only for a base that reports httptrace's (net/http's Transport does);
// for any other, every failure counts as one that may have executed.
func RoundTripper(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &watchingRoundTripper{base: base}
}

type watchingRoundTripper struct{ base http.RoundTripper }

func (t *watchingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, watch := sent.Start(req.Context())
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err == nil {
		return resp, nil
	}
	// A redirect's leg: what Client.Do sends again is the first request, which has executed.
	first := req
	for first.Response != nil && first.Response.Request != nil {
		first = first.Response.Request
	}
	e := &sendError{err: err, repeatable: repeatable(first)}
	if first == req && watch.NothingWritten() {
		e.err, e.notWritten = remedy.NotSent(err), true
	}
	return nil, e
}

// CloseIdleConnections lets http.Client.CloseIdleConnections, which retryablehttp calls, reach
// base.
func (t *watchingRoundTripper) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// sendError is a transport failure as RoundTripper saw it. It reads as, and unwraps to, the
// transport's error.
type sendError struct {
	err        error
	notWritten bool // no byte of the request went out
	repeatable bool // safe to send twice: an idempotent method, or an Idempotency-Key
}

func (e *sendError) Error() string { return e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// repeatable reports whether req is safe to send twice. The adapter cannot know whether the
// server honours keys, so an Idempotency-Key header (in any spelling of its name) is taken as
// the caller's word that it does.
func repeatable(req *http.Request) bool {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if httpop.Idempotent(method) {
		return true
	}
	for k, v := range req.Header {
		if strings.EqualFold(k, "Idempotency-Key") && len(v) > 0 && v[0] != "" {
			return true
		}
	}
	return false
}

// safeToResend reports whether the request that failed with err, a transient transport
// error, can be sent again without the risk of executing it twice. Without RoundTripper's
// word (a client that does not use it, or an http.Client.Timeout, whose error replaces the
// transport's) it falls back on what the *url.Error says: the method, and a failed dial.
func safeToResend(err error) bool {
	var se *sendError
	if errors.As(err, &se) {
		return se.notWritten || se.repeatable
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		// Not a round trip's failure but a response handler's: the answer came back, and the
		// handler, which knows the request, judged it.
		return true
	}
	if httpop.Idempotent(strings.ToUpper(ue.Op)) { // Op is the method, as "Post"
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}
