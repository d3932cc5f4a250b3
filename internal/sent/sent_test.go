package sent_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/remedy-go/remedy/internal/sent"
)

func TestWatch(t *testing.T) {
	t.Parallel()
	if (*sent.Watch)(nil).NothingWritten() {
		t.Error("a nil watch knows nothing")
	}
	// A refused connection: GetConn, no header written.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, w := sent.Start(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addr+"/", nil)
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("a closed port answered")
	}
	if !w.NothingWritten() {
		t.Error("a refused connection wrote nothing")
	}
	// A server that reads the request and closes without answering: written.
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		c, _, _ := rw.(http.Hijacker).Hijack()
		c.Close()
	}))
	defer srv.Close()
	ctx, w = sent.Start(context.Background())
	req, _ = http.NewRequestWithContext(ctx, "POST", srv.URL, nil)
	if _, err := srv.Client().Do(req); err == nil {
		t.Fatal("a hung-up server answered")
	}
	if w.NothingWritten() {
		t.Error("the request reached the server: it may have executed")
	}
	// No events at all: nothing known.
	_, w = sent.Start(context.Background())
	if w.NothingWritten() {
		t.Error("a watch that saw nothing knows nothing")
	}
}
