package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/sent"
)

// rawTransport sends one caller-built request, again and again: the body is buffered once,
// and each attempt is a clone carrying the current arguments (a rewrite edits a JSON body).
type rawTransport struct {
	hc      *http.Client      // sends through a client (Client.Do)...
	rt      http.RoundTripper // ...or a round tripper (NewRoundTripper)
	req     *http.Request
	body    []byte // a body that is not a JSON object, resent as is
	maxBody int64
	// keepFailure leaves a failure's body readable (the RoundTripper form returns the last
	// failure as a response); last is that response, closed when another attempt starts.
	keepFailure bool
	last        *http.Response
	// idempotent: the method is; keys: the client's key support; shown: an answer during
	// the call showed that the server honours keys.
	idempotent bool
	keys       KeySupport
	shown      bool
}

func newRawTransport(hc *http.Client, req *http.Request, maxBody int64, keepFailure bool, keys KeySupport) (*rawTransport, Call, error) {
	t := &rawTransport{req: req, maxBody: maxBody, keepFailure: keepFailure, keys: keys}
	t.hc = hc
	t.idempotent = (&Operation{Method: req.Method}).idempotent()
	call := Call{
		Operation:      req.URL.Path,
		Origin:         originOf(req.URL),
		Idempotent:     t.idempotent,
		IdempotencyKey: req.Header.Get(remedy.HeaderIdempotencyKey),
		// The caller's own token goes with the first attempt, as WithConfirmationToken's.
		ConfirmationToken: req.Header.Get(remedy.HeaderConfirmationToken),
		// The caller's own key is sent whatever the support (KeysOff mints none); it is
		// counted on only when keys are declared honoured.
		Keys: keys,
	}
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, call, fmt.Errorf("remedy: reading the request body: %w", err)
		}
		if isJSONType(req.Header) && isJSONObject(b) {
			call.Args, call.checked = b, true
		} else {
			t.body = b
		}
	}
	return t, call, nil
}

// RoundTrip sends one attempt of the caller's request, as opTransport.RoundTrip sends a
// registered operation's: watched and spelled quietly when it is not safe to repeat.
func (t *rawTransport) RoundTrip(ctx context.Context, req *Request) (*Response, error) {
	t.closeLast()
	req.KeysHonoured = req.IdempotencyKey != "" && (t.keys == KeysHonoured || t.shown)
	unsafe := !t.idempotent && !req.KeysHonoured
	var watch *sent.Watch
	if unsafe {
		ctx, watch = req.borrow().watch(ctx)
	}
	// A shallow copy with its own header map: the caller's request is never changed.
	hreq := t.req.WithContext(ctx)
	if req.IdempotencyKey != t.req.Header.Get(remedy.HeaderIdempotencyKey) || req.ConfirmationToken != t.req.Header.Get(remedy.HeaderConfirmationToken) ||
		(unsafe && replayableKey(t.req.Header)) {
		// A header map of its own, so that the caller's request is never changed; the values
		// are shared, as headers are only ever replaced in the copy, never edited.
		hreq.Header = make(http.Header, len(t.req.Header)+2)
		for k, v := range t.req.Header {
			hreq.Header[k] = v
		}
		setKeyAndToken(hreq.Header, req, unsafe)
	}
	body := t.body
	if req.Args != nil {
		body = req.Args
	}
	if body != nil {
		hreq.Body = io.NopCloser(bytes.NewReader(body))
		hreq.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		hreq.ContentLength = int64(len(body))
	} else {
		hreq.Body, hreq.GetBody, hreq.ContentLength = nil, nil, 0
	}
	req.Method, req.Target = hreq.Method, hreq.URL.Path
	var hresp *http.Response
	var err error
	if t.hc != nil {
		hresp, err = t.hc.Do(hreq)
	} else {
		hresp, err = t.rt.RoundTrip(hreq)
	}
	if err != nil {
		return nil, markNotSent(watch, err)
	}
	resp := req.borrow().response()
	*resp = Response{Status: hresp.StatusCode, Header: hresp.Header, Replayed: remedy.Replayed(hresp.Header), http: hresp}
	failure := hresp.StatusCode >= 400 || hresp.StatusCode < 200
	// A success is read for an in-band failure only when it is JSON of a size Parse reads.
	if failure || (isJSONType(hresp.Header) && hresp.ContentLength <= t.maxBody) {
		// ParseResponse reads a bounded prefix and leaves the body readable from the start.
		if env, ok := remedy.ParseResponse(hresp, remedy.WithMaxBody(t.maxBody)); ok {
			resp.Envelope = env
			// A warning or notice is a success the loop returns: its body stays readable.
			failure = env.Severity != remedy.SeverityInfo && env.Severity != remedy.SeverityWarning
		}
	}
	if req.IdempotencyKey != "" && showsKeysHonoured(resp) {
		t.shown = true
	}
	if failure {
		if t.keepFailure {
			t.last = hresp
		} else {
			discard(hresp.Body)
		}
	}
	return resp, nil
}

func (t *rawTransport) closeLast() {
	if t.last != nil {
		discard(t.last.Body)
		t.last = nil
	}
}

// NewRoundTripper wraps base (nil: http.DefaultTransport) for code that cannot change its call
// sites: every request runs through the loop, with idempotency keys attached to requests
// whose method is not idempotent (unless WithIdempotencyKeys turned them off), and transient
// failures retried unchanged within the limits — a request that is not idempotent only when
// it failed before it was written, or when its key is known honoured (WithIdempotencyKeys).
// Nothing is rewritten, confirmed or run first. When the loop gives up on a failure the server
// sent, that last response is returned as is (its body readable), as a RoundTripper should;
// an error is returned only when no response came: the transport's own, or — for a request
// that was written and is not safe to send again — a *CallError whose cause is
// ErrOutcomeUnknown (errors.Is finds both through the http.Client's *url.Error).
//
// A redirect is followed by the http.Client above, not here; use New's Do to have keys
// and tokens dropped on redirects to another host.
func NewRoundTripper(base http.RoundTripper, opts ...Option) (http.RoundTripper, error) {
	cfg, err := configure(scopeRoundTripper, opts)
	if err != nil {
		return nil, err
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &roundTripper{base: base, loop: cfg.loop, keys: cfg.keys}, nil
}

type roundTripper struct {
	base http.RoundTripper
	loop Loop
	keys KeySupport
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	t, call, err := newRawTransport(nil, req, rt.loop.Limits.withDefaults().MaxBody, true, rt.keys)
	if err != nil {
		return nil, err
	}
	t.rt = rt.base
	r := newRun(&rt.loop)
	resp, err := r.call(req.Context(), t, call, 0)
	r.lent.release()
	if err == nil {
		return resp.http, nil
	}
	if t.last != nil {
		return t.last, nil
	}
	var ce *CallError
	if errors.As(err, &ce) && ce.Err != nil && ce.Cause != ErrOutcomeUnknown {
		return nil, ce.Err
	}
	// Including a request that may have executed: the *CallError says so, and unwraps to the
	// transport's error as well.
	return nil, err
}
