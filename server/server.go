package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	now     func() time.Time
	confirm ConfirmationOptions
	idem    IdempotencyOptions
	// observer observes the pipeline's requests (observe.go).
	observer Observer

	ops    []*Operation
	routes router

	info        Info
	openapiPath string
	docOnce     sync.Once
	doc         []byte
	docErr      error
	mcpConf     MCPOptions
	mcpServer   *mcp.Server
	mcpHandler  http.Handler
	gate        *mcpGate    // the MCP endpoint's sessions and mark (nil when it is disabled)
	authFail    authFailure // the limit on failed authentication
	hosts       []string    // WithHostCheck's, for the routes other than MCP
	hostCheck   bool

	once sync.Once
	run  handler // the pipeline, assembled at the first request

	async asyncState // the background operations (async.go)

	// stopping is done once Shutdown is called: what waits on a client's user stops waiting.
	stopping context.Context
	stop     context.CancelFunc
}

// Option configures an API (New, NewGuard). Every option follows one pattern: a setting of
// one value is With<Setting>(value), as WithMaxBody(n); a feature of several settings is one
// With<Feature>(<Feature>Options), as WithIdempotency(IdempotencyOptions{…}), whose zero
// fields take their defaults. An option given a value it cannot take makes New fail with an
// error that names it, rather than be ignored.
type Option func(*API) error

// DefaultMaxBody is the largest request body an API reads unless WithMaxBody says otherwise.
const DefaultMaxBody = 1 << 20

// New returns an API with no operations. Without options it authenticates nobody (every
// caller is the anonymous principal), limits no rates, and reads bodies up to DefaultMaxBody.
// It fails only when an option is given a value it cannot take.
func New(opts ...Option) (*API, error) {
	a := &API{reg: NewRegistry(), maxBody: DefaultMaxBody, logger: slog.Default(), now: time.Now,
		openapiPath: DefaultOpenAPIPath}
	a.stopping, a.stop = context.WithCancel(context.Background())
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(a); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	if a.mcpConf.Path == "" {
		a.mcpConf.Path = DefaultMCPPath
	}
	return a, nil
}

// ConfirmationOptions configures the gate of the operations registered with Confirm.
type ConfirmationOptions struct {
	// Store keeps the challenges (default: one MemoryStore the API shares with idempotency,
	// which keeps challenges and records apart). Instances of one API behind a load balancer
	// must share it.
	Store ConfirmStore
	// TTL is how long a challenge's token stays valid (default DefaultConfirmTTL).
	TTL time.Duration
}

// IdempotencyOptions configures the operations registered with Idempotent or
// RequireIdempotencyKey.
type IdempotencyOptions struct {
	// Store keeps the claims and results (default: one MemoryStore the API shares with
	// confirmation, which keeps challenges and records apart). Instances of one API behind a
	// load balancer must share it.
	Store IdempotencyStore
	// Retention is how long a completed result is replayed (default DefaultRetention).
	Retention time.Duration
	// Lease is how long a claim holds a key while its request runs (default DefaultLease). A
	// request still running when it runs out may be executed again by a retry; set it above
	// the longest time a handler takes. A success whose result the store would not take keeps
	// its claim until the lease ends: retries of it are answered 409 idempotency_in_flight
	// meanwhile, not executed.
	Lease time.Duration
	// Wait is how long a duplicate of a request in flight waits for its result before it is
	// answered 409 idempotency_in_flight (default DefaultInFlightWait; negative: no wait).
	Wait time.Duration
}

// Defaults of ConfirmationOptions and IdempotencyOptions.
const (
	DefaultConfirmTTL   = 5 * time.Minute
	DefaultRetention    = 24 * time.Hour
	DefaultLease        = time.Minute
	DefaultInFlightWait = 5 * time.Second
)

// WithConfirmation configures the confirmation gate; zero fields keep their defaults. A
// negative TTL is an error.
func WithConfirmation(c ConfirmationOptions) Option {
	return func(a *API) error {
		if c.TTL < 0 {
			return fmt.Errorf("WithConfirmation: a negative TTL (%v)", c.TTL)
		}
		a.confirm = c
		return nil
	}
}

// WithIdempotency configures idempotency; zero fields keep their defaults. A negative
// Retention or Lease is an error (a negative Wait means no wait, as documented).
func WithIdempotency(c IdempotencyOptions) Option {
	return func(a *API) error {
		if c.Retention < 0 || c.Lease < 0 {
			return fmt.Errorf("WithIdempotency: a negative Retention (%v) or Lease (%v)", c.Retention, c.Lease)
		}
		a.idem = c
		return nil
	}
}

// WithClock sets the clock the API reads (default time.Now): the rate limiter's, and the
// default MemoryStore's, from which tokens and results expire. For tests.
func WithClock(now func() time.Time) Option {
	return func(a *API) error {
		if now == nil {
			return errors.New("WithClock: a nil clock")
		}
		a.now = now
		return nil
	}
}

// setup completes the configuration before the first request: defaults, and the one
// MemoryStore that stands in for every store not given. Without an Authenticator every
// caller is the one principal Anonymous, whose quotas are then the whole of each space.
func (a *API) setup() {
	var mem *MemoryStore
	memory := func() *MemoryStore {
		if mem == nil {
			opts := MemoryOptions{Now: a.now}
			if a.auth == nil {
				opts.ScopeChallenges, opts.ScopeRecords, opts.ScopeJobs = DefaultMaxChallenges, DefaultMaxRecords, DefaultMaxJobs
			}
			mem = NewMemoryStore(opts)
		}
		return mem
	}
	if a.confirm.Store == nil {
		a.confirm.Store = memory()
	}
	if a.idem.Store == nil {
		a.idem.Store = memory()
	}
	a.confirm.TTL = cmp.Or(max(a.confirm.TTL, 0), DefaultConfirmTTL)
	a.idem.Retention = cmp.Or(max(a.idem.Retention, 0), DefaultRetention)
	a.idem.Lease = cmp.Or(max(a.idem.Lease, 0), DefaultLease)
	if a.idem.Wait == 0 {
		a.idem.Wait = DefaultInFlightWait
	}
}

// WithRegistry sets the registry the API's errors come from (default: NewRegistry(), the
// built-in codes). Register application codes on it before serving.
func WithRegistry(r *Registry) Option {
	return func(a *API) error {
		if r == nil {
			return errors.New("WithRegistry: a nil registry")
		}
		a.reg = r
		return nil
	}
}

// WithAuthenticator sets who may call what. Without one, every caller is Anonymous.
func WithAuthenticator(au Authenticator) Option {
	return func(a *API) error {
		if au == nil {
			return errors.New("WithAuthenticator: a nil Authenticator (leave the option out for none)")
		}
		a.auth = au
		return nil
	}
}

// RateLimitOptions configures WithRateLimit: a token bucket for every principal.
type RateLimitOptions struct {
	// PerSecond is the rate the bucket refills at; zero or below, there is no rate limit (the
	// default).
	PerSecond float64
	// Burst is how many requests the bucket holds (default PerSecond rounded up, at least 1).
	Burst int
}

// WithRateLimit gives every principal a token bucket of o.Burst requests, refilled at
// o.PerSecond; a request that finds it empty is refused with 429 rate_limited saying how long
// to wait. A rate that is not a number, or a negative burst, is an error.
func WithRateLimit(o RateLimitOptions) Option {
	return func(a *API) error {
		burst, err := bucketSize("WithRateLimit", o.PerSecond, o.Burst)
		if err != nil {
			return err
		}
		a.limiter = nil
		if o.PerSecond > 0 {
			a.limiter = newRateLimiter(o.PerSecond, burst, func() time.Time { return a.now() })
		}
		return nil
	}
}

// bucketSize checks a token bucket's rate and size, given to the option named, and returns its
// size: burst, or the rate rounded up when burst is zero.
func bucketSize(option string, perSecond float64, burst int) (int, error) {
	switch {
	case math.IsNaN(perSecond) || math.IsInf(perSecond, 0):
		return 0, fmt.Errorf("%s: a rate of %v per second", option, perSecond)
	case burst < 0:
		return 0, fmt.Errorf("%s: a burst of %d", option, burst)
	case burst == 0:
		return max(1, int(min(math.Ceil(perSecond), math.MaxInt32))), nil
	}
	return burst, nil
}

// WithMaxBody sets the largest request body read (default DefaultMaxBody); a larger one is
// refused with 413 payload_too_large. A bound below 1 is an error.
func WithMaxBody(n int64) Option {
	return func(a *API) error {
		if n < 1 {
			return fmt.Errorf("WithMaxBody: a bound of %d bytes", n)
		}
		a.maxBody = n
		return nil
	}
}

// WithHostCheck refuses, with 403 forbidden and before anything else, every request whose
// Host header HostAllowed(r, hosts) refuses: the defence against DNS rebinding for the REST
// routes and the OpenAPI document, which the MCP endpoint always has. With no hosts it is
// HostAllowed's loopback rule (a request that arrived on a loopback address must name a
// loopback host). The MCP endpoint takes hosts too, unless MCPOptions.AllowedHosts lists its
// own. Off by default: a server behind a proxy on the same machine sees the public name.
func WithHostCheck(hosts ...string) Option {
	return func(a *API) error {
		if slices.Contains(hosts, "") {
			return errors.New("WithHostCheck: an empty host name")
		}
		a.hostCheck, a.hosts = true, append([]string(nil), hosts...)
		return nil
	}
}

// errHostRefused is the answer to a request naming a host the server does not answer to.
func errHostRefused() *Problem {
	return Error(CodeForbidden, "the Host header names a host this server does not answer to")
}

// WithLogger sets where the real causes of internal errors are logged (default
// slog.Default()), under the trace id the response carries.
func WithLogger(l *slog.Logger) Option {
	return func(a *API) error {
		if l == nil {
			return errors.New("WithLogger: a nil logger")
		}
		a.logger = l
		return nil
	}
}

// Registry is the registry the API's errors come from.
func (a *API) Registry() *Registry { return a.reg }

// Operations lists the registered operations in registration order.
func (a *API) Operations() []*Operation { return append([]*Operation(nil), a.ops...) }

// ServeHTTP serves the OpenAPI document and the MCP endpoint at their paths, and routes every
// other request to its operation, through the pipeline. A request of the MCP endpoint is
// checked (Host, authentication with op nil, rate limit, session cap) before the MCP SDK reads
// it; a client's event stream (a GET of the MCP path) is exempt from the http.Server's
// ReadTimeout and WriteTimeout once it is open, so that a server can set them for everything
// else.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.start()
	if a.hostCheck && r.URL.Path != a.mcpConf.Path && !HostAllowed(r, a.hosts) {
		x := &exchange{api: a, w: w, r: r, ctx: r.Context()}
		x.fail(errHostRefused())
		return
	}
	switch p := r.URL.Path; {
	case p == a.openapiPath && p != "":
		a.serveOpenAPI(w, r)
		return
	case p == a.mcpConf.Path && a.mcpHandler != nil:
		a.serveMCP(w, r)
		return
	}
	x := &exchange{api: a, w: w, r: r}
	x.run()
}

// start completes the API at its first request (or MCPServer call): no operation can be
// registered after it.
func (a *API) start() {
	a.once.Do(func() {
		a.setup()
		a.setupAuthFailure()
		a.run = a.pipeline()
		a.buildMCP()
	})
}

// pipeline is the order every request goes through, outermost first. Each stage sees only
// what passed the stages before it: an unauthenticated caller is refused before anything
// about the operation is revealed, a rate-limited one before its body is read, and the
// handler runs only on input its schema accepts. A completed idempotent request is replayed
// before anything else is asked of it (a network retry of a confirmed call gets its result,
// not a second challenge). A challenge is issued only to a request that is acceptable in every
// other way (authenticated, within its rate, its input valid), so that no malformed request
// can make the store hold anything; what is confirmed is still the proposal as sent — the
// binding is the fingerprint of the body's bytes, which validation reads and never changes.
func (a *API) pipeline() handler {
	stages := []stage{
		route,        // 404 not_found / 405 method_not_allowed
		authenticate, // 401 unauthorized / 403 forbidden
		rateLimit,    // 429 rate_limited
		readBody,     // 415 unsupported_media_type / 413 payload_too_large
		idempotency,  // replay; 400 idempotency_key_required/_invalid, 422 _reused, 409 idempotency_in_flight; 503 unavailable
		validate,     // 400 invalid_json / 400 invalid_parameter / 422 invalid_body
		confirm,      // 409 confirmation_required / confirmation_invalid; 503 unavailable
		async,        // Async operations: 202 accepted, the handler run in the background; 503 unavailable
	}
	h := invoke
	for i := len(stages) - 1; i >= 0; i-- {
		h = stages[i](h)
	}
	return h
}
