package frameworks

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"
)

// The repair suite judges the client by what the server saw, not by what the client says it
// did: every server runs behind a counter that records each request it received and the
// status it answered. The Go apps that are an http.Handler get it as a middleware; the others
// (fiber, which listens itself; the RPC servers; the Node servers and Prism, in another
// process) get it in front of a reverse proxy to them, which changes nothing they answer.

// seen is one request a server received and what it answered, by the server's clock.
type seen struct {
	method, path, query string
	body                []byte
	status              int
	arrived, answered   time.Time
}

// counter records the requests of one server.
type counter struct {
	mu   sync.Mutex
	reqs []seen
}

// wrap returns h behind the counter.
func (c *counter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, arrived: time.Now()}
		if r.Body != nil {
			// Bounded: the suite's requests are small; a larger one is cut, not stored whole.
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body.Close()
			s.body = body
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		s.status, s.answered = sw.status, time.Now()
		c.mu.Lock()
		c.reqs = append(c.reqs, s)
		c.mu.Unlock()
	})
}

// mark is the number of requests recorded so far: since(mark) returns the ones after it.
func (c *counter) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.reqs)
}

func (c *counter) since(mark int) []seen {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]seen(nil), c.reqs[mark:]...)
}

// statusWriter keeps the status a handler wrote. Unwrap lets http.ResponseController reach
// the connection (connect and the gateway flush).
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// proxyTo is a reverse proxy to base. It adds no X-Forwarded-* header (Rewrite without
// SetXForwarded): express-rate-limit, not told to trust a proxy, would complain of one.
func proxyTo(t *testing.T, base string) http.Handler {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }}
}

// counted serves h behind a new counter on loopback and returns its base URL and the counter.
func counted(t *testing.T, h http.Handler) (string, *counter) {
	t.Helper()
	c := &counter{}
	return serve(t, c.wrap(h)), c
}
