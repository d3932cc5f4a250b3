// Package nettest holds the hostile network peers several packages' tests need.
package nettest

import (
	"net"
	"sync/atomic"
	"testing"
)

// Hangup listens on loopback, takes every connection and closes it at once — before a TLS
// handshake or a request could complete — counting the connections it took. It closes when
// the test ends.
func Hangup(t testing.TB) (addr string, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = new(atomic.Int32)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conn.Close()
		}
	}()
	return ln.Addr().String(), accepted
}
