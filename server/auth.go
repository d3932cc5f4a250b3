package server

import (
	"context"
	"errors"
	"net/http"
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

// authenticate identifies the caller before anything else about the operation is checked.
func authenticate(next handler) handler {
	return func(x *exchange) error {
		x.principal = Anonymous
		if au := x.api.auth; au != nil {
			p, err := au.Authenticate(x.r, x.op)
			switch {
			case errors.Is(err, ErrUnauthenticated):
				pr := Error(CodeUnauthorized, "the request carries no valid credentials")
				pr.Header = map[string]string{"WWW-Authenticate": "Bearer"}
				return pr
			case errors.Is(err, ErrForbidden):
				return Error(CodeForbidden, "the caller may not call "+x.op.ID)
			case err != nil:
				return err
			case p == "":
				return errors.New("the authenticator returned an empty principal")
			}
			x.principal = p
		}
		return next(x)
	}
}
