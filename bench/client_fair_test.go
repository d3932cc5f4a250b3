package bench

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// recordingServer wraps h, counting the connections it accepts and keeping the last request's
// method, path, headers and body.
type recordingServer struct {
	*httptest.Server
	conns atomic.Int64
	mu    sync.Mutex
	last  *http.Request
	body  []byte
}

func newRecordingServer(t *testing.T, h http.Handler) *recordingServer {
	rs := &recordingServer{}
	rs.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rs.mu.Lock()
		rs.last, rs.body = r, body
		rs.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	rs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rs.conns.Add(1)
		}
	}
	rs.Start()
	t.Cleanup(rs.Close)
	return rs
}

// TestContendersSendTheSameRequest holds the client benchmarks to one request on the wire:
// the same method, path, body and headers (the Idempotency-Key's value aside).
func TestContendersSendTheSameRequest(t *testing.T) {
	rs := newRecordingServer(t, &orderServer{})
	type seen struct {
		method, path, body, contentType, accept, userAgent string
		key                                                bool
	}
	var want *seen
	for _, c := range clientContenders(t, rs.Server) {
		if err := c.call(context.Background()); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rs.mu.Lock()
		r := rs.last
		got := seen{r.Method, r.URL.Path, string(rs.body), r.Header.Get("Content-Type"), r.Header.Get("Accept"),
			r.Header.Get("User-Agent"), r.Header.Get("Idempotency-Key") != ""}
		rs.mu.Unlock()
		if want == nil {
			want = &got
			continue
		}
		if got != *want {
			t.Errorf("%s sent %+v, remedy sent %+v", c.name, got, *want)
		}
	}
}

// TestRetryContenders holds the retry benchmark to what it claims: every contender's call
// ends in the 200 after exactly one 503, and calls reuse pooled connections rather than
// dialing anew (a response left open by a retry would cost a connection per call).
func TestRetryContenders(t *testing.T) {
	for _, flaky := range []bool{false, true} {
		s := &orderServer{flaky: flaky}
		rs := newRecordingServer(t, s)
		for _, c := range clientContenders(t, rs.Server) {
			if flaky && c.name == "net-http" {
				continue
			}
			s.requests.Store(0)
			before := rs.conns.Load()
			const calls = 50
			for range calls {
				if err := c.call(context.Background()); err != nil {
					t.Fatalf("flaky %v, %s: %v", flaky, c.name, err)
				}
			}
			if flaky {
				if n := s.requests.Load(); n != 2*calls {
					t.Errorf("%s: %d requests for %d calls, want %d", c.name, n, calls, 2*calls)
				}
			}
			if dialed := rs.conns.Load() - before; dialed > 2 {
				t.Errorf("flaky %v, %s: %d connections for %d calls, want at most 2", flaky, c.name, dialed, calls)
			}
		}
	}
}
