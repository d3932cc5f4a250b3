package sent_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"testing"

	"github.com/remedy-go/remedy/internal/sent"
)

// A watch attached once watches one request after another under its context, or a context
// derived from it: Reset forgets what the last request showed, and Settled says when that is
// safe. The caller's own trace still sees every event, once.
func TestWatchReused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	var callerConns int
	caller := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GetConn: func(string) { callerConns++ }})

	var w sent.Watch
	if !w.Settled() {
		t.Fatal("a watch that saw nothing is settled")
	}
	ctx := w.Attach(caller)
	if !w.In(ctx) || w.In(caller) {
		t.Fatal("In: the attached context and what derives from it, not its parent")
	}
	derived, cancel := context.WithCancel(ctx)
	defer cancel()
	if !w.In(derived) {
		t.Error("a context derived from the attached one reports to the watch")
	}
	if w.In(httptrace.WithClientTrace(derived, &httptrace.ClientTrace{})) {
		t.Error("another trace in between: the requests report to it first")
	}

	for i, c := range []context.Context{ctx, derived} {
		req, _ := http.NewRequestWithContext(c, "POST", srv.URL, nil)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if w.NothingWritten() || !w.Settled() {
			t.Fatalf("request %d: written and answered, the watch is settled", i)
		}
		w.Reset()
		if w.NothingWritten() || !w.Settled() {
			t.Fatalf("request %d: a reset watch saw nothing", i)
		}
	}
	// After a reset, a request that fails before a byte is written shows as such: nothing of
	// the requests before it is left in the watch.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	req, _ := http.NewRequestWithContext(derived, "POST", "http://"+closed+"/", nil)
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("a closed port answered")
	}
	if !w.NothingWritten() || w.Settled() {
		t.Error("a refused connection after a reset: nothing written, and not settled")
	}
	if callerConns != 3 {
		t.Errorf("the caller's trace saw %d connections, want 3", callerConns)
	}
}
