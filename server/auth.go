package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Principal is who makes a request: the scope of its rate limit, its idempotency keys and its
// confirmation tokens.
type Principal string

// Anonymous is the principal of every caller when the API has no Authenticator.
const Anonymous Principal = "anonymous"

// Authenticator decides who is calling and whether they may call the operation. It returns
// the principal; ErrUnauthenticated (or an error wrapping it) for a caller it cannot
// identify, answered 401 unauthorized; ErrForbidden (or a *Problem with code forbidden) for
// one it knows but will not let call op, answered 403 forbidden. Any other error is an
// internal error. Neither 401 nor 403 is retryable: the caller needs other credentials.
//
// At the MCP endpoint, every HTTP request (initialize, tools/list, a session's event stream,
// each JSON-RPC message) is authenticated with op nil before the MCP SDK reads it: the
// Authenticator identifies the caller and may refuse it the endpoint as a whole. A tools/call
// is then authenticated again, with its tool's operation, from the same headers: return the
// same principal for both.
type Authenticator interface {
	Authenticate(r *http.Request, op *Operation) (Principal, error)
}

// AuthenticatorFunc adapts a function to Authenticator.
type AuthenticatorFunc func(r *http.Request, op *Operation) (Principal, error)

// Authenticate calls f.
func (f AuthenticatorFunc) Authenticate(r *http.Request, op *Operation) (Principal, error) {
	return f(r, op)
}

var (
	// ErrUnauthenticated: the request carries no credentials the Authenticator accepts.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrForbidden: the principal may not call the operation.
	ErrForbidden = errors.New("forbidden")
)

// PrincipalFrom returns the principal a handler's context was authenticated as.
func PrincipalFrom(ctx context.Context) Principal {
	if x, ok := ctx.Value(exchangeKey{}).(*exchange); ok {
		return x.principal
	}
	return Anonymous
}

// Defaults of the limit on failed authentication (WithAuthFailureLimit): a client address
// may fail DefaultAuthFailureBurst times in a row, then once per second.
const (
	DefaultAuthFailureRate  = 1.0
	DefaultAuthFailureBurst = 20
)

// AuthFailureLimitOptions configures WithAuthFailureLimit: a token bucket of failed
// authentications for every client.
type AuthFailureLimitOptions struct {
	// PerSecond is the rate the bucket refills at (default DefaultAuthFailureRate; negative:
	// no limit).
	PerSecond float64
	// Burst is how many failures the bucket holds (default DefaultAuthFailureBurst).
	Burst int
	// Key names the client of a request (default ClientAddr); a key of "" exempts the request.
	Key func(*http.Request) string
}

// WithAuthFailureLimit limits failed authentication (the Authenticator's ErrUnauthenticated)
// by client: each key has a bucket of o.Burst failures, refilled at o.PerSecond. Once a key's
// bucket is empty, its requests are answered 429 rate_limited with Retry-After before the
// Authenticator is called, with credentials or without, on REST and on the MCP endpoint alike;
// a request that authenticates does not spend the bucket. A rate that is not a number, or a
// negative burst, is an error.
//
// An API with an Authenticator has this limit by default, as WithAuthFailureLimit of a zero
// AuthFailureLimitOptions: DefaultAuthFailureRate, DefaultAuthFailureBurst and ClientAddr.
// Behind a proxy every request comes from the proxy's address: give a Key that reads the
// address the proxy reports, and trust that header only from the proxy.
func WithAuthFailureLimit(o AuthFailureLimitOptions) Option {
	return func(a *API) error {
		if o.PerSecond == 0 {
			o.PerSecond = DefaultAuthFailureRate
		}
		if o.Burst == 0 {
			o.Burst = DefaultAuthFailureBurst
		}
		if _, err := bucketSize("WithAuthFailureLimit", o.PerSecond, o.Burst); err != nil {
			return err
		}
		a.authFail = authFailure{set: true, key: o.Key}
		if o.PerSecond > 0 {
			a.authFail.limiter = newRateLimiter(o.PerSecond, o.Burst, func() time.Time { return a.now() })
		}
		return nil
	}
}

// authFailure is the limit on failed authentication.
type authFailure struct {
	set     bool // configured by WithAuthFailureLimit
	limiter *rateLimiter
	key     func(*http.Request) string
}

// setupAuthFailure gives an API with an Authenticator the default limit on failed
// authentication, unless WithAuthFailureLimit configured one.
func (a *API) setupAuthFailure() {
	if !a.authFail.set && a.auth != nil {
		a.authFail.limiter = newRateLimiter(DefaultAuthFailureRate, DefaultAuthFailureBurst, func() time.Time { return a.now() })
	}
	if a.authFail.key == nil {
		a.authFail.key = ClientAddr
	}
}

// ClientAddr is the client a request comes from as the connection says (r.RemoteAddr),
// without its port, and an IPv6 address reduced to its /64 network, which one client
// usually holds whole. It reads no header: X-Forwarded-For and the like are whatever the
// client wrote. A request without a remote address (one built in the process) has "".
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return host
}

// identify authenticates the request for op (nil at the MCP endpoint) and sets x.principal.
// A client whose failures have emptied its bucket is refused before the Authenticator runs.
func (a *API) identify(x *exchange, op *Operation) error {
	x.principal = Anonymous
	au := a.auth
	if au == nil {
		return nil
	}
	var key string
	l := a.authFail.limiter
	if l != nil {
		key = a.authFail.key(x.r)
		if key == "" {
			l = nil
		} else if ok, wait := l.check(key); !ok {
			return l.limited("too many failed authentications from this client", wait)
		}
	}
	p, err := au.Authenticate(x.r, op)
	if l != nil && errors.Is(err, ErrUnauthenticated) {
		// Only a failure spends the bucket (so that a client's concurrent good requests never
		// empty it); concurrent failures may each pass the check before one spends.
		l.take(key)
	}
	switch {
	case errors.Is(err, ErrUnauthenticated):
		pr := Error(CodeUnauthorized, "the request carries no valid credentials")
		pr.Header = map[string]string{"WWW-Authenticate": "Bearer"}
		return pr
	case errors.Is(err, ErrForbidden):
		if op == nil {
			return Error(CodeForbidden, "the caller may not use the MCP endpoint")
		}
		return Error(CodeForbidden, "the caller may not call "+op.ID)
	case err != nil:
		return err
	case p == "":
		return errors.New("the authenticator returned an empty principal")
	}
	x.principal = p
	return nil
}

// authenticate identifies the caller before anything else about the operation is checked.
func authenticate(next handler) handler {
	return func(x *exchange) error {
		if err := x.api.identify(x, x.op); err != nil {
			return err
		}
		return next(x)
	}
}
