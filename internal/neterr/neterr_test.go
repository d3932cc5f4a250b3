package neterr

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTransient(t *testing.T) {
	t.Parallel()
	urlErr := func(err error) error { return &url.Error{Op: "Get", URL: "http://127.0.0.1/", Err: err} }
	opErr := func(op string, err error) error {
		return urlErr(&net.OpError{Op: op, Net: "tcp", Err: os.NewSyscallError(op, err)})
	}

	// Real failures from net/http, not imitations of them.
	refused := func() error {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		_, err = http.Get("http://" + addr + "/")
		return err
	}()
	untrusted := func() error {
		srv := quietTLSServer()
		defer srv.Close()
		_, err := http.Get(srv.URL)
		return err
	}()
	plainBehindHTTPS := func() error {
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		defer srv.Close()
		_, err := http.Get(strings.Replace(srv.URL, "http:", "https:", 1))
		return err
	}()
	redirects := func() error {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, r.URL.Path, http.StatusFound)
		}))
		defer srv.Close()
		resp, err := http.Get(srv.URL)
		if resp != nil {
			_ = resp.Body.Close()
		}
		return err
	}()
	_, scheme := http.Get("ftp://127.0.0.1/")
	_, badURL := http.Get("http://127.0.0.1:99999/")
	timeout := func() error {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}))
		defer srv.Close()
		_, err := (&http.Client{Timeout: 20 * time.Millisecond}).Get(srv.URL)
		return err
	}()

	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"connection refused (real)", refused, true},
		{"connection refused", opErr("dial", syscall.ECONNREFUSED), true},
		{"connection reset", opErr("read", syscall.ECONNRESET), true},
		{"broken pipe", opErr("write", syscall.EPIPE), true},
		{"EOF", urlErr(io.EOF), true},
		{"unexpected EOF", urlErr(fmt.Errorf("reading body: %w", io.ErrUnexpectedEOF)), true},
		{"client timeout (real)", timeout, true},
		{"dial timeout", urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}), true},
		{"deadline exceeded", urlErr(context.DeadlineExceeded), true},
		{"server closed idle connection", urlErr(errors.New("http: server closed idle connection")), true},
		{"http2 GOAWAY", urlErr(errors.New("http2: server sent GOAWAY and closed the connection; LastStreamID=1, ErrCode=NO_ERROR")), true},
		{"DNS temporary", urlErr(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}}), true},
		{"DNS no such host", urlErr(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}}), false},
		{"canceled", urlErr(context.Canceled), false},
		{"untrusted certificate (real)", untrusted, false},
		{"plain HTTP behind an https URL (real)", plainBehindHTTPS, false},
		{"unknown authority", urlErr(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), false},
		{"hostname mismatch", urlErr(x509.HostnameError{Host: "x", Certificate: &x509.Certificate{}}), false},
		{"expired certificate", urlErr(x509.CertificateInvalidError{Reason: x509.Expired, Cert: &x509.Certificate{}}), false},
		{"TLS alert", urlErr(&net.OpError{Op: "remote error", Err: errors.New("tls: handshake failure")}), false},
		{"unsupported scheme (real)", scheme, false},
		{"invalid port (real)", badURL, false},
		{"too many redirects (real)", redirects, false},
		{"too many redirects", urlErr(errors.New("stopped after 10 redirects")), false},
		{"invalid URL escape", urlErr(url.EscapeError("%zz")), false},
		{"invalid header", urlErr(errors.New(`net/http: invalid header field name "a b"`)), false},
		{"unknown", errors.New("boom"), false},
		// Joined errors, as the MCP go-sdk reports a call its transport lost.
		{"a reset joined to a protocol error", errors.Join(errors.New("rejected by transport"), opErr("read", syscall.ECONNRESET)), true},
		{"a refusal joined, wrapped", fmt.Errorf("calling tool: %w", errors.Join(errors.New("rejected"), opErr("dial", syscall.ECONNREFUSED))), true},
		{"a certificate failure joined to an EOF", errors.Join(urlErr(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), io.EOF), false},
		{"nothing transient joined", errors.Join(errors.New("a"), errors.New("b")), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.name != "nil" {
				require.Error(t, c.err)
			}
			require.Equal(t, c.want, Transient(c.err), "%v", c.err)
		})
	}
}

// quietTLSServer is a TLS server whose certificate no client trusts, which does not log the
// handshakes that fail for it.
func quietTLSServer() *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	return srv
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }
