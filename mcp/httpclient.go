package mcp

import (
	"context"
	"net/http"
	"sync"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
)

// HTTPClient returns an HTTP client for a go-sdk StreamableClientTransport that lets the
// Transport read a failed tool call's HTTP answer: its status, its headers (Retry-After,
// RateLimit-*) and its body. The go-sdk keeps only the status text of an answer it refuses (a
// 429, a 5xx) and closes its body, so without this client a server's wait never reaches the
// loop, which then retries on its own backoff, before the server said a retry could succeed.
//
//	cs, _ := sdk.NewClient(impl, nil).Connect(ctx,
//		&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: mcp.HTTPClient(nil)}, nil)
//
// The client is base (nil: http.DefaultClient) with its Transport wrapped; base is not
// changed. For a request made for a Transport's tool call, on the call's context, it reads at
// most remedy.DefaultMaxBody bytes of the body of an answer of 400 or more before handing the
// response on; the go-sdk still reads the whole body, from its start. Any other request (the
// session's own, or another program's) passes through untouched.
func HTTPClient(base *http.Client) *http.Client {
	c := new(http.Client)
	if base != nil {
		*c = *base
	}
	if _, ok := c.Transport.(*recorder); ok {
		return c
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &recorder{base: rt}
	return c
}

// recorder is HTTPClient's RoundTripper: it gives each failed answer to the attempt whose
// context the request carries.
type recorder struct{ base http.RoundTripper }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	a, _ := req.Context().Value(answerKey{}).(*answer)
	// Only a POST carries a tool call; the GET that resumes its event stream does not answer
	// for it (a refusal of that GET says nothing of whether the call ran).
	if a == nil || req.Method != http.MethodPost {
		return r.base.RoundTrip(req)
	}
	n := a.begin()
	resp, err := r.base.RoundTrip(req)
	if err != nil || n == 0 || resp.StatusCode < 400 {
		return resp, err
	}
	// ParseResponse reads a bounded prefix and leaves resp.Body whole for the go-sdk.
	if env, ok := remedy.ParseResponse(resp); ok {
		a.set(n, &client.Response{Status: resp.StatusCode, Header: resp.Header.Clone(), Envelope: env})
	}
	return resp, err
}

// CloseIdleConnections closes the idle connections of the wrapped RoundTripper, as
// http.Client.CloseIdleConnections asks.
func (r *recorder) CloseIdleConnections() {
	if c, ok := r.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// answerKey is the context key of an attempt's answer.
type answerKey struct{}

// answer is the HTTP answer to one attempt's tool call, as HTTPClient's RoundTripper saw it:
// the failure the last request made on the attempt's context got, if it got one. One attempt,
// one answer: calls in flight at once on a session each carry their own, so that none is
// given another's answer.
type answer struct {
	mu     sync.Mutex
	seq    uint64           // requests begun on the context
	sealed bool             // the attempt took its answer: later requests are not its own
	resp   *client.Response // the failure the last request begun got; nil: none, or not yet
}

// withAnswer returns ctx carrying a new answer for the attempt.
func withAnswer(ctx context.Context) (context.Context, *answer) {
	a := &answer{}
	return context.WithValue(ctx, answerKey{}, a), a
}

// begin notes a new request (a retry after authorization, a redirect's next leg): only its
// answer counts now. It returns the request's number, or 0 once the answer was taken (the
// go-sdk's notifications/cancelled after an abandoned call carries the call's context).
func (a *answer) begin() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sealed {
		return 0
	}
	a.seq++
	a.resp = nil
	return a.seq
}

// set records the failure request n got, unless a later request began since.
func (a *answer) set(n uint64, resp *client.Response) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.sealed && n == a.seq {
		a.resp = resp
	}
}

// status is the HTTP status of the failure the attempt's last request got so far, or 0; the
// answer stays open (a call sent again on a new session is its next request).
func (a *answer) status() int {
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.resp == nil {
		return 0
	}
	return a.resp.Status
}

// take seals the answer and returns the failure the attempt's last request got, or nil.
func (a *answer) take() *client.Response {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sealed = true
	return a.resp
}
