package client

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/cenkalti/backoff/v4"
	"github.com/remedy-go/remedy/rewrite"
)

// Option configures remedy's entry points — New, NewRoundTripper, NewLoop (and package
// mcp's NewClient, built on it) — and one call: Client.Call, Loop.Do and mcp's Client.Call take
// the options that say so. Every entry point starts from the same defaults, and an option
// changes only what it names:
//
//   - Rewriter: rewrite.Default, which makes only the repairs that change nothing the call
//     means (WithRewriter; nil: a failure that names a fix stops the call).
//   - Rewrite policy: rewrite.Safe, which sends no lossy repair (WithRewritePolicy).
//   - Confirm policy: RefuseAll, which approves no confirmation (WithConfirmPolicy).
//   - Retry budget: DefaultRetryBudget, one per entry point (WithRetryBudget).
//   - Pacer: a MemoryPacer, one per entry point (WithPacer).
//   - Limits: DefaultMaxAttempts, DefaultMaxElapsed, DefaultMaxWait, DefaultMaxDepth,
//     DefaultMaxBody, DefaultMaxPolls (WithLimits).
//   - Schema check: CheckRepair (WithSchemaCheck).
//   - Backoff: exponential with jitter from 100 ms (WithBackoff).
//   - Next operations: the registered operations (or the tools the server lists), and no
//     other (WithNextOperations narrows them).
//
// An option given where it means nothing — WithBaseURL for one call, WithIdempotencyKey for a
// client — is an error that names it, from the constructor or the call (nothing is sent).
type Option func(*config) error

// scope is where options are applied: an entry point, or one call.
type scope uint8

const (
	scopeClient       scope = iota + 1 // New
	scopeRoundTripper                  // NewRoundTripper
	scopeLoop                          // NewLoop, mcp.NewClient
	scopeCall                          // one call
)

var scopeNames = [...]string{"", "client.New", "client.NewRoundTripper", "client.NewLoop", "one call"}

type config struct {
	scope scope
	loop  Loop

	// An entry point's.
	hc        *http.Client
	base      string
	ops       []Operation
	maxResult int64
	keys      KeySupport
	next      func(name string) (ok, idempotent bool)

	// One call's.
	key, token string
	noPoll     bool
}

// only refuses an option applied where it means nothing.
func (c *config) only(option string, scopes ...scope) error {
	for _, s := range scopes {
		if c.scope == s {
			return nil
		}
	}
	var where string
	for i, s := range scopes {
		if i > 0 {
			where += ", "
		}
		where += scopeNames[s]
	}
	return fmt.Errorf("%s configures %s, not %s", option, where, scopeNames[c.scope])
}

// entry is every entry point.
var entry = []scope{scopeClient, scopeRoundTripper, scopeLoop}

// configure applies opts to the defaults of an entry point.
func configure(s scope, opts []Option) (*config, error) {
	cfg := &config{scope: s, loop: defaultLoop(), maxResult: DefaultMaxResult}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("remedy: a nil Option")
		}
		if err := o(cfg); err != nil {
			return nil, fmt.Errorf("remedy: %w", err)
		}
	}
	return cfg, nil
}

// defaultLoop is every entry point's loop before its options, its Transport and its next
// operations.
func defaultLoop() Loop {
	return Loop{Rewriter: rewrite.Default, Rewrites: rewrite.Safe, Confirm: RefuseAll, Budget: DefaultRetryBudget(), Pacer: NewPacer()}
}

// NewLoop returns a loop over t — any transport: package mcp's, or one of your own — with
// the defaults every entry point has (see Option), changed by opts. The operations a failure's
// next_operation may run are those WithNextOperations approves; none without it.
func NewLoop(t Transport, opts ...Option) (*Loop, error) {
	if t == nil {
		return nil, errors.New("remedy: NewLoop: nil Transport")
	}
	cfg, err := configure(scopeLoop, opts)
	if err != nil {
		return nil, err
	}
	l := cfg.loop
	l.Transport, l.Registered = t, cfg.next
	return &l, nil
}

// with applies one call's options to a copy of l and to c, or says which was given where it
// means nothing (a *CallError: nothing was sent).
func (l *Loop) with(c *Call, opts []Option) (*Loop, error) {
	cfg := config{scope: scopeCall, loop: *l}
	for _, o := range opts {
		err := errors.New("a nil Option")
		if o != nil {
			err = o(&cfg)
		}
		if err != nil {
			return nil, &CallError{Operation: c.Operation, Cause: ErrNotRetryable, Detail: err.Error() + "; nothing was sent"}
		}
	}
	if cfg.key != "" {
		c.IdempotencyKey = cfg.key
	}
	if cfg.token != "" {
		c.ConfirmationToken = cfg.token
	}
	c.NoPoll = c.NoPoll || cfg.noPoll
	return &cfg.loop, nil
}

// WithHTTPClient sends through hc (default http.DefaultClient). The client is copied, not
// changed: its redirect policy is wrapped so that idempotency keys and confirmation tokens
// never follow a redirect to another host.
//
// A request that is not safe to send twice — its method is not idempotent, and its key is not
// known honoured (see WithIdempotencyKeys) — carries its key in the Header map as
// "idempotency-key", the same header on the wire, so that hc's Transport does not resend it
// on its own; a RoundTripper or CheckRedirect of hc that reads the key should look it up in
// any case (Header.Get does not find it).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) error {
		if err := c.only("WithHTTPClient", scopeClient); err != nil {
			return err
		}
		if hc == nil {
			return errors.New("WithHTTPClient: nil client")
		}
		c.hc = hc
		return nil
	}
}

// WithBaseURL is the URL registered operations' paths are under.
func WithBaseURL(u string) Option {
	return func(c *config) error {
		c.base = u
		return c.only("WithBaseURL", scopeClient)
	}
}

// WithOperations registers operations, as Register does. Two operations of one name, in one
// WithOperations or several, make New fail (Register, later, replaces one by name).
func WithOperations(ops ...Operation) Option {
	return func(c *config) error {
		c.ops = append(c.ops, ops...)
		return c.only("WithOperations", scopeClient)
	}
}

// WithNextOperations narrows the operations a failure's next_operation may run to those allow
// approves (ok), among those the entry point knows: a Client's registered operations, the
// tools an MCP server lists. For NewLoop, allow is the whole list, and also says whether each
// operation is idempotent. The loop runs nothing that is not approved.
func WithNextOperations(allow func(name string) (ok, idempotent bool)) Option {
	return func(c *config) error {
		c.next = allow
		return c.only("WithNextOperations", scopeClient, scopeLoop)
	}
}

// WithRewriter repairs arguments when a failure names the fix (default rewrite.Default, which
// makes only lossless repairs; Chain adds others). nil makes no repair: a failure that names
// a fix stops the call with ErrRewriteGaveUp.
func WithRewriter(r rewrite.Rewriter) Option {
	return func(c *config) error { c.loop.Rewriter = r; return nil }
}

// WithRewritePolicy decides the repairs that change what a call means (default, and nil,
// rewrite.Safe: none is sent; the call stops with ErrRewriteRefused and the proposal).
func WithRewritePolicy(p rewrite.Policy) Option {
	return func(c *config) error {
		if p == nil {
			p = rewrite.Safe
		}
		c.loop.Rewrites = p
		return nil
	}
}

// WithConfirmPolicy decides confirmation challenges (default, and nil, RefuseAll).
func WithConfirmPolicy(p ConfirmPolicy) Option {
	return func(c *config) error {
		if p == nil {
			p = RefuseAll
		}
		c.loop.Confirm = p
		return nil
	}
}

// WithLimits bounds every call, or one (zero fields keep their defaults). A negative limit is
// an error: it would bound nothing, or everything.
func WithLimits(l Limits) Option {
	return func(c *config) error {
		if l.MaxAttempts < 0 || l.MaxElapsed < 0 || l.MaxWait < 0 || l.MaxDepth < 0 || l.MaxBody < 0 || l.MaxPolls < 0 {
			return fmt.Errorf("WithLimits: a negative limit in %+v (zero takes the default)", l)
		}
		c.loop.Limits = l
		return nil
	}
}

// WithBackoff makes each call's backoff between transient retries.
func WithBackoff(f func() backoff.BackOff) Option {
	return func(c *config) error { c.loop.Backoff = f; return nil }
}

// WithRetryBudget shares b among the entry point's calls (default DefaultRetryBudget: 10
// tokens, 0.1 refunded per success; one per entry point). nil turns the budget off.
func WithRetryBudget(b *RetryBudget) Option {
	return func(c *config) error {
		c.loop.Budget = b
		return c.only("WithRetryBudget", entry...)
	}
}

// WithPacer paces the entry point's calls with p (see Pacer): a MemoryPacer of its own by
// default; one shared with other clients (NewPacer()) or with other processes (package
// redispacer) paces them together. nil, like Unpaced, turns pacing off: every call is sent at
// once, whatever a server said to another.
func WithPacer(p Pacer) Option {
	return func(c *config) error {
		if p == nil {
			p = Unpaced
		}
		c.loop.Pacer = p
		return c.only("WithPacer", entry...)
	}
}

// WithLogger logs every attempt at debug level.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error { c.loop.Logger = l; return nil }
}

// WithHooks observes every call and attempt with h (see Hooks).
func WithHooks(h Hooks) Option {
	return func(c *config) error { c.loop.Hooks = h; return nil }
}

// WithIdempotencyKeys says what is known of the server's support for idempotency keys, for
// every operation whose own Operation.Keys is KeysUnknown and for the raw requests of Do and
// NewRoundTripper (default KeysUnknown: keys are sent, and counted on only for the
// operations that declare them or show them honoured).
//
// KeysHonoured declares that the whole server honours keys: a non-idempotent request whose
// answer was lost after it was written is sent again with its key. Declare it only for a
// server that replays a repeated key (most APIs ignore the header, and then the repeat is a
// second execution). KeysOff sends no key at all, for a server that refuses the header.
// Whatever the support, a request that failed before any of it was written is sent again,
// and one that is not safe to repeat is never sent twice by net/http on its own.
func WithIdempotencyKeys(k KeySupport) Option {
	return func(c *config) error {
		if err := c.only("WithIdempotencyKeys", scopeClient, scopeRoundTripper); err != nil {
			return err
		}
		if k > KeysOff {
			return fmt.Errorf("WithIdempotencyKeys: %v is not a KeySupport", k)
		}
		c.keys = k
		return nil
	}
}

// WithSchemaCheck says what a call does, before its first request, with arguments that break
// its operation's schema (Operation.Parameters): CheckRepair (the default) repairs them when
// nothing the call means changes and sends them either way, CheckStrict stops the call with
// ErrInvalidArguments instead of sending them unrepaired, CheckOff sends them unchecked. See
// SchemaCheck.
func WithSchemaCheck(s SchemaCheck) Option {
	return func(c *config) error {
		if s > CheckOff {
			return fmt.Errorf("WithSchemaCheck: %v is not a SchemaCheck", s)
		}
		c.loop.Check = s
		return nil
	}
}

// WithMaxResult bounds the success body Call reads (default DefaultMaxResult; zero takes it).
func WithMaxResult(n int64) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("WithMaxResult: %d is negative", n)
		}
		if n == 0 {
			n = DefaultMaxResult
		}
		c.maxResult = n
		return c.only("WithMaxResult", scopeClient)
	}
}

// WithIdempotencyKey sends key, as is, instead of a minted one: an option of one call.
func WithIdempotencyKey(key string) Option {
	return func(c *config) error {
		c.key = key
		return c.only("WithIdempotencyKey", scopeCall)
	}
}

// WithConfirmationToken sends a token the caller approved (CallError.Challenge.Token) with
// the call's first attempt: an option of one call. The arguments must be the ones the
// challenge was for.
func WithConfirmationToken(token string) Option {
	return func(c *config) error {
		c.token = token
		return c.only("WithConfirmationToken", scopeCall)
	}
}

// WithoutPolling returns an accepted answer (202) as the call's result, as is, instead of
// polling the operation's status (see Operation.NoPoll): an option of one call.
func WithoutPolling() Option {
	return func(c *config) error {
		c.noPoll = true
		return c.only("WithoutPolling", scopeCall)
	}
}
