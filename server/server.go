package server

import (
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// API is the reference server: the operations registered on it, served through the pipeline.
// Register every operation before serving; registration is not safe concurrently with
// ServeHTTP.
type API struct {
	reg     *Registry
	auth    Authenticator
	limiter *rateLimiter
	maxBody int64
	logger  *slog.Logger

	ops    []*Operation
	routes router

	once sync.Once
	run  handler // the pipeline, assembled at the first request
}

// Option configures an API.
type Option func(*API)

// DefaultMaxBody is the largest request body an API reads unless WithMaxBody says otherwise.
const DefaultMaxBody = 1 << 20

// New returns an API with no operations. Without options it authenticates nobody (every
// caller is the anonymous principal), limits no rates, and reads bodies up to DefaultMaxBody.
func New(opts ...Option) *API {
	a := &API{reg: NewRegistry(), maxBody: DefaultMaxBody, logger: slog.Default()}
	for _, o := range opts {
		o(a)
	}
	return a
}

// WithRegistry sets the registry the API's errors come from (default: NewRegistry(), the
// built-in codes). Register application codes on it before serving.
func WithRegistry(r *Registry) Option {
	return func(a *API) {
		if r != nil {
			a.reg = r
		}
	}
}

// WithAuthenticator sets who may call what. Without one, every caller is Anonymous.
func WithAuthenticator(au Authenticator) Option { return func(a *API) { a.auth = au } }

// WithRateLimit gives every principal a token bucket of burst requests, refilled at perSecond;
// a request that finds it empty is refused with 429 rate_limited saying how long to wait.
// A perSecond or burst below 1 turns rate limiting off.
func WithRateLimit(perSecond float64, burst int) Option {
	return func(a *API) {
		a.limiter = nil
		if perSecond > 0 && burst >= 1 {
			a.limiter = newRateLimiter(perSecond, burst, time.Now)
		}
	}
}

// WithMaxBody sets the largest request body read (default DefaultMaxBody); a larger one is
// refused with 413 payload_too_large.
func WithMaxBody(n int64) Option {
	return func(a *API) {
		if n > 0 {
			a.maxBody = n
		}
	}
}

// WithLogger sets where the real causes of internal errors are logged (default
// slog.Default()), under the trace id the response carries.
func WithLogger(l *slog.Logger) Option {
	return func(a *API) {
		if l != nil {
			a.logger = l
		}
	}
}

// Registry is the registry the API's errors come from.
func (a *API) Registry() *Registry { return a.reg }

// Operations lists the registered operations in registration order.
func (a *API) Operations() []*Operation { return append([]*Operation(nil), a.ops...) }

// ServeHTTP routes the request to its operation and runs it through the pipeline.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.once.Do(func() { a.run = a.pipeline() })
	x := &exchange{api: a, w: w, r: r}
	x.run()
}

// pipeline is the order every request goes through, outermost first. Each stage sees only
// what passed the stages before it: an unauthenticated caller is refused before anything
// about the operation is revealed, a rate-limited one before its body is read, and the
// handler runs only on input its schema accepts. The idempotency and confirmation stages
// slot in between reading the body and validating it.
func (a *API) pipeline() handler {
	stages := []stage{
		route,        // 404 not_found / 405 method_not_allowed
		authenticate, // 401 unauthorized / 403 forbidden
		rateLimit,    // 429 rate_limited
		readBody,     // 415 unsupported_media_type / 413 payload_too_large
		validate,     // 400 invalid_json / 400 invalid_parameter / 422 invalid_body
	}
	h := invoke
	for i := len(stages) - 1; i >= 0; i-- {
		h = stages[i](h)
	}
	return h
}
