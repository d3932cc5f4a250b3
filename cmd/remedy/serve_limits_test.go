package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"
)

// TestServeLimits runs serve with short connection limits: a client that stalls in its body
// loses its connection at the read limit, one that idles after a request at the idle limit,
// and an answer still being written at the write limit is cut. Each part shortens only the
// limit it tests, so that no other limit can cut its exchange however slow the machine, and
// waits for the cut itself rather than for a fixed time. It changes serveLimits, so it is not
// parallel (the parallel tests wait until it is over).
func TestServeLimits(t *testing.T) {
	saved := serveLimits
	defer func() { serveLimits = saved }()
	const short = 50 * time.Millisecond
	// guard only turns a limit that never acts into a failure: it is well below the limits
	// left long (serveLimits' defaults, 30 s and more), so that one of them cannot stand in
	// for the limit under test.
	const guard = 10 * time.Second
	if saved.read <= guard || saved.write <= guard || saved.idle <= guard {
		t.Fatalf("serveLimits %+v: the test needs the defaults above %v", saved, guard)
	}

	// serveWith runs serve with the limits set, and returns its host:port.
	serveWith := func(set func()) string {
		t.Helper()
		serveLimits = saved
		set()
		urls, _, _ := startServe(t, "--addr", "127.0.0.1:0")
		u, err := url.Parse(urls[0])
		if err != nil {
			t.Fatal(err)
		}
		return u.Host
	}
	// closedWithinGuard reads c until the server closes it.
	closedWithinGuard := func(what string, c net.Conn) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(guard))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: the connection is still open after %v", what, guard)
		}
	}

	host := serveWith(func() { serveLimits.read = short })
	stalled, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	io.WriteString(stalled, "POST /v1/invoices HTTP/1.1\r\nHost: "+host+
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"customer_id\":")
	closedWithinGuard("a body that stalls", stalled)

	// The read limit stays long here: net/http applies it while idle when there is no idle
	// limit, and a short one could cut a request a slow client has not finished sending.
	host = serveWith(func() { serveLimits.idle = short })
	idle, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	io.WriteString(idle, "GET /openapi.json HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi.json: %s", resp.Status)
	}
	closedWithinGuard("an idle connection", idle)

	// An answer is cut once the write limit has passed (the API exempts MCP event streams:
	// see the server package's tests). The handler writes until a write fails, so the cut
	// does not depend on when the limit's timer fires; if none fails, it ends the answer
	// properly at the guard, and the client receives it whole.
	serveLimits = saved
	serveLimits.write = short
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		for end := time.Now().Add(guard); time.Now().Before(end); time.Sleep(short / 5) {
			io.WriteString(w, "more\n")
			if rc.Flush() != nil {
				return
			}
		}
	}), nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	resp, err = http.Get("http://" + ln.Addr().String() + "/v1/invoices")
	if err != nil {
		// The limit passed before even the header went out: cut as well.
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatal(err)
		}
		return
	}
	defer resp.Body.Close()
	if body, err := io.ReadAll(resp.Body); err == nil {
		t.Errorf("an answer arrived whole (%d bytes) though it was written past the write limit", len(body))
	}
}
