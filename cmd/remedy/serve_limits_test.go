package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestServeLimits runs serve with short connection limits: a client that stalls in its body,
// or idles after a request, loses its connection, and an answer is cut at the write limit.
// It changes serveLimits, so it is not parallel (the parallel tests wait until it is over).
func TestServeLimits(t *testing.T) {
	saved := serveLimits
	defer func() { serveLimits = saved }()
	serveLimits.read, serveLimits.write, serveLimits.idle = 300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond
	urls, _, _ := startServe(t, "--addr", "127.0.0.1:0")
	u, err := url.Parse(urls[0])
	if err != nil {
		t.Fatal(err)
	}

	// closedWithin reads c until the server closes it, and fails when that takes 5 seconds.
	closedWithin := func(what string, c net.Conn) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: the connection is still open after 5 s", what)
		}
	}

	stalled, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	io.WriteString(stalled, "POST /v1/invoices HTTP/1.1\r\nHost: "+u.Host+
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"customer_id\":")
	closedWithin("a body that stalls", stalled)

	idle, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	io.WriteString(idle, "GET /openapi.json HTTP/1.1\r\nHost: "+u.Host+"\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi.json: %s", resp.Status)
	}
	closedWithin("an idle connection", idle)

	// An answer is cut once the write limit has passed (the API exempts MCP event streams:
	// see the server package's tests).
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		time.Sleep(3 * serveLimits.write)
		io.WriteString(w, "late\n")
	}), context.Background(), nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	resp, err = http.Get("http://" + ln.Addr().String() + "/v1/invoices")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if body, err := io.ReadAll(resp.Body); err == nil {
		t.Errorf("a late answer arrived whole (%q) after the write limit", body)
	}
}
