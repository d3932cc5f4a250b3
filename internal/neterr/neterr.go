// Package neterr tells a transport error that sending the request again can fix from one it
// cannot: what remedy's loop and its go-retryablehttp adapter (package retryable) both decide
// before any response was read.
package neterr

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
)

// Transient reports whether a request that failed with err, before any response
// or while reading it, can succeed if sent again unchanged. Unknown errors are not transient:
// retrying is for failures known to pass.
//
// The caller checks its own context first: a deadline found here is taken for a per-attempt
// timeout (http.Client.Timeout, a dialer's), which is transient, while a cancellation is not.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	// The typed checks come first and allocate nothing (a walk down the chain, not errors.As,
	// whose target escapes): they decide every error a dropped or refused connection
	// produces, so the loop's decision stays allocation-free.
	for e := err; e != nil; {
		switch x := e.(type) {
		case *net.DNSError:
			return x.IsTemporary || x.IsTimeout
		case *net.AddrError, *net.ParseError:
			return false // an address that cannot be dialled, whatever the attempt
		case *net.OpError:
			// Refused, unreachable, reset, broken pipe, aborted: the connection failed, not
			// the request. Matched by operation rather than by errno because the errno values
			// differ between systems (and do not exist on some).
			if x.Op == "dial" || x.Op == "read" || x.Op == "write" {
				switch x.Err.(type) {
				case *net.DNSError, *net.AddrError, *net.ParseError: // decided one step down
				default:
					return true
				}
			}
		}
		if e == io.EOF || e == io.ErrUnexpectedEOF {
			return true
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			// A joined error (errors.Join, fmt.Errorf with several %w) is transient when one
			// of its errors is and none is permanent: the connection loss it carries decides,
			// not its companions (the go-sdk joins one to its JSON-RPC "rejected" error).
			transient := false
			for _, x := range j.Unwrap() {
				if permanent(x) {
					return false
				}
				transient = transient || Transient(x)
			}
			return transient
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	var netErr net.Error
	if permanent(err) {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true // through a joined error, which the walk above does not enter
	}
	if errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	// Connection losses net/http reports without a type to match.
	msg := err.Error()
	for _, s := range [...]string{
		"server closed idle connection",
		"http2: client connection lost",
		"http2: server sent GOAWAY",
		"REFUSED_STREAM",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// permanent recognizes failures that sending again cannot fix: the peer's
// certificate, a plain-HTTP peer behind an https URL, the URL itself, the redirect chain, the
// request's own headers. Several are reported by net/http only as text.
func permanent(err error) bool {
	var (
		certErr      *tls.CertificateVerificationError
		unknownAuth  x509.UnknownAuthorityError
		hostnameErr  x509.HostnameError
		certInvalid  x509.CertificateInvalidError
		recordHeader tls.RecordHeaderError
		escapeErr    url.EscapeError
		hostErr      url.InvalidHostError
	)
	if errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostnameErr) ||
		errors.As(err, &certInvalid) || errors.As(err, &recordHeader) ||
		errors.As(err, &escapeErr) || errors.As(err, &hostErr) {
		return true
	}
	msg := err.Error()
	for _, s := range [...]string{
		"unsupported protocol scheme",
		"no Host in request URL",
		"invalid header field",
		"certificate is not trusted",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	// http.Client's "stopped after 10 redirects", the wording retryablehttp also matches.
	return strings.Contains(msg, "stopped after ") && strings.HasSuffix(msg, " redirects")
}
