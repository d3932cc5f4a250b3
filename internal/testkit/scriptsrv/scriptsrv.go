// Package scriptsrv is a real HTTP server on 127.0.0.1 for tests of the client: it records every
// request and answers the nth request to a path as the test's scenario says.
package scriptsrv

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
)

// Request is one request as the server saw it.
type Request struct {
	Method  string
	Path    string // decoded
	RawPath string // as sent (escaped)
	Query   string
	Body    []byte
	Key     string // Idempotency-Key
	Token   string // X-Confirmation-Token
	Header  http.Header
}

// Server records every request and answers the nth request to a path (from 1) with respond.
type Server struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []Request
	byPath map[string]int
}

// New starts a Server, closed when t ends.
func New(t testing.TB, respond func(w http.ResponseWriter, r *http.Request, n int)) *Server {
	t.Helper()
	s := &Server{byPath: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, Request{
			Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(), Query: r.URL.RawQuery, Body: body,
			Key: r.Header.Get(remedy.HeaderIdempotencyKey), Token: r.Header.Get(remedy.HeaderConfirmationToken),
			Header: r.Header.Clone(),
		})
		s.byPath[r.URL.Path]++
		n := s.byPath[r.URL.Path]
		s.mu.Unlock()
		respond(w, r, n)
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests returns the requests so far, in the order they arrived.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Reply writes a JSON response.
func Reply(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// Client is a client of s with a backoff that never makes a test wait and a transport of its
// own (so that tests running in parallel share no connections), and opts after those.
func Client(t testing.TB, s *Server, opts ...client.Option) *client.Client {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	all := append([]client.Option{
		client.WithBaseURL(s.URL),
		client.WithHTTPClient(&http.Client{Transport: tr}),
		client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(time.Millisecond) }),
	}, opts...)
	c, err := client.New(all...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
