// Package nettest holds the hostile network peers, and the watchers of a connection, that
// several packages' tests need.
package nettest

import (
	"io"
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

// EndingBody is a response body that hands the error that ends it to Ended, once, without
// blocking: io.EOF when the server ended the response properly, another error when the
// connection was cut.
type EndingBody struct {
	io.ReadCloser
	Ended chan<- error
}

func (b *EndingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		select {
		case b.Ended <- err:
		default:
		}
	}
	return n, err
}
