// Package redispacer keeps a remedy.Pacer in Redis, so that every process of a fleet sharing
// one API key waits for what the API said to any of them. Give each Client the same Redis and
// prefix (remedy.WithPacer): a 429 answered to one agent then holds the calls of all.
package redispacer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/remedy-go/remedy"
)

// DefaultPrefix starts every key of a Pacer unless Options say otherwise.
const DefaultPrefix = "remedy:pace:"

// MaxAhead bounds how far ahead of now a Pacer holds a key, whatever it is asked to hold and
// whatever it reads: a server that answers Retry-After of a year (by mistake, or a hostile
// one) would otherwise park every agent of the fleet on that origin for a year, and a value
// written under the prefix by something else would park it for ever. A day is beyond any wait
// a call accepts (the loop refuses a wait past its MaxWait at once, RetryLater), so the cap
// changes no call's outcome: it only bounds how long the key stays in Redis.
const MaxAhead = 24 * time.Hour

// maxPlainKey is the longest caller's key used as it is in a Redis key; a longer one, or one
// with bytes outside printable ASCII, is hashed.
const maxPlainKey = 256

// DefaultTimeout bounds each call of a Pacer to Redis unless Options say otherwise.
const DefaultTimeout = 500 * time.Millisecond

// pause is how long a Pacer leaves Redis alone after it did not answer: meanwhile each call
// fails at once with ErrUnavailable, so that a Redis that is down costs a call nothing (the
// loop paces nothing then), instead of the client's dials and retries on every attempt.
const pause = time.Second

// ErrUnavailable is wrapped by the error of every call within a second after Redis did not
// answer one (it was down, or slower than Options.Timeout): the Pacer does not ask it again
// until then.
var ErrUnavailable = errors.New("redispacer: Redis did not answer; not asked again for a second")

// ErrMalformed is wrapped by the error of Until when the value under the key is not a time
// this package wrote (something else wrote under the prefix). The key reads as not held, and
// the next Hold replaces the value.
var ErrMalformed = errors.New("redispacer: the value held is not a number")

// Pacer is a remedy.Pacer whose holds are in Redis, shared by every process that uses the same
// Redis and prefix. It is safe for concurrent use.
//
// Each key held is one Redis string, Prefix+key (or Prefix+"#"+the SHA-256 of key in hex, when
// key is longer than 256 bytes or holds a byte outside printable ASCII, '#', '{' or '}': any
// string is a safe key, and two keys never share a Redis key). It holds the end of the hold,
// in Unix milliseconds of Redis's clock, and expires at that moment (PEXPIREAT), so that
// nothing accumulates. Each method is one round trip, a single-key Lua script, so that a
// Pacer works on Redis Cluster and a hold is raised atomically, only ever to a later time.
//
// Times cross the wire as durations from now: Hold sends how far ahead its time is, by the
// local clock, and Redis adds that to its own; Until gets back how long is left and adds it to
// the local clock. The clocks of the fleet need not agree, and the round trip only ever makes
// a hold end later, never earlier.
//
// A Redis that does not answer makes each method fail (the loop then paces nothing: the call
// goes as it would without a pacer), within Options.Timeout or the caller's context, whichever
// ends first; for a second after that, every call fails at once with ErrUnavailable. go-redis
// honours a context while it dials and between its retries, and while it waits for a reply
// only with its option ContextTimeoutEnabled: set it (see the Example), or a Redis that
// accepts connections and answers nothing holds each call for the client's ReadTimeout.
type Pacer struct {
	client  redis.UniversalClient
	prefix  string
	timeout time.Duration
	now     func() time.Time // the clock of the pause after a failure
	// resume is when the pause after Redis last failed to answer ends, in Unix ns.
	resume atomic.Int64
}

// Options configure a Pacer.
type Options struct {
	// Prefix starts every key the Pacer writes (default DefaultPrefix). Give the same prefix
	// to every process that is to pace together, those sharing one API key, and another
	// prefix to another key (a name for it, never the key itself: Redis keys are not secret).
	Prefix string
	// Timeout bounds each call to Redis (default DefaultTimeout): a call of the loop waits no
	// longer than that for its pacer before it goes unpaced.
	Timeout time.Duration
}

var _ remedy.Pacer = (*Pacer)(nil)

// New returns a Pacer that keeps its holds in client, which may be a single-node, failover or
// cluster client. The Pacer does not close client.
func New(client redis.UniversalClient, opts Options) *Pacer {
	p := &Pacer{client: client, prefix: opts.Prefix, timeout: opts.Timeout, now: time.Now}
	if p.prefix == "" {
		p.prefix = DefaultPrefix
	}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	return p
}

// Load loads the Pacer's scripts into Redis (SCRIPT LOAD), so that the first call of each
// method need not fall back from EVALSHA to EVAL. It is optional.
func (p *Pacer) Load(ctx context.Context) error {
	for _, script := range []*redis.Script{holdScript, untilScript} {
		if err := script.Load(ctx, p.client).Err(); err != nil {
			return fmt.Errorf("redispacer: load scripts: %w", err)
		}
	}
	return nil
}

// luaNow is Redis's clock in ms.
const luaNow = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// holdScript raises KEYS[1] to ARGV[1] ms from now (at most ARGV[2] ms), expiring then, unless
// it holds a later time already; a value that is not a number is replaced. It returns 1 when
// it raised the hold.
var holdScript = redis.NewScript(luaNow + `
local ahead = math.min(tonumber(ARGV[1]), tonumber(ARGV[2]))
if ahead <= 0 then
	return 0
end
local at = now + ahead
local held = tonumber(redis.call('GET', KEYS[1]) or '')
if held and held == held and held >= at then
	return 0
end
local v = string.format('%d', at)
redis.call('SET', KEYS[1], v)
redis.call('PEXPIREAT', KEYS[1], v)
return 1
`)

// untilScript returns how many ms are left of the hold of KEYS[1], at most ARGV[1]: -1 when
// none is held (or it has ended), -2 when the value is not a number.
var untilScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then
	return -1
end
local at = tonumber(v)
if not at or at ~= at then
	return -2
end
` + luaNow + `
local left = at - now
if left <= 0 then
	return -1
end
return math.ceil(math.min(left, tonumber(ARGV[1])))
`)

// Until returns the time held for key, or the zero time when none is held. The time is never
// earlier than the one held, and at most MaxAhead from now.
func (p *Pacer) Until(ctx context.Context, key string) (time.Time, error) {
	var left int64
	err := p.run(ctx, func(ctx context.Context) (err error) {
		left, err = untilScript.Run(ctx, p.client, []string{p.key(key)}, MaxAhead.Milliseconds()).Int64()
		return err
	})
	switch {
	case err != nil:
		return time.Time{}, fmt.Errorf("redispacer: until: %w", err)
	case left == -2:
		return time.Time{}, fmt.Errorf("redispacer: until %q: %w", key, ErrMalformed)
	case left < 0:
		return time.Time{}, nil
	}
	return time.Now().Add(time.Duration(left) * time.Millisecond), nil
}

// Hold raises the hold of key to t, or to MaxAhead from now when t is later than that; a time
// no later than the one held, or already passed, changes nothing.
func (p *Pacer) Hold(ctx context.Context, key string, t time.Time) error {
	ahead := time.Until(t)
	if ahead <= 0 {
		return nil // nothing to hold: not even a round trip
	}
	// Up to the next ms, and one more for Redis's clock, which TIME gives to the ms rounded
	// down: the hold never ends before t.
	ms := min(ahead, MaxAhead).Milliseconds() + 2
	err := p.run(ctx, func(ctx context.Context) error {
		return holdScript.Run(ctx, p.client, []string{p.key(key)}, ms, MaxAhead.Milliseconds()).Err()
	})
	if err != nil {
		return fmt.Errorf("redispacer: hold: %w", err)
	}
	return nil
}

// run runs op within the Pacer's timeout, unless Redis failed to answer less than a second
// ago; when op fails to reach Redis (any error but Redis's own reply, or the caller's context
// ending), the pause starts.
func (p *Pacer) run(ctx context.Context, op func(context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.now().UnixNano() < p.resume.Load() {
		return ErrUnavailable
	}
	opCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	err := op(opCtx)
	var reply redis.Error
	if err != nil && ctx.Err() == nil && !errors.As(err, &reply) {
		p.resume.Store(p.now().Add(pause).UnixNano())
	}
	return err
}

// key is the Redis key of the caller's key.
func (p *Pacer) key(key string) string {
	if plain(key) {
		return p.prefix + key
	}
	sum := sha256.Sum256([]byte(key))
	return p.prefix + "#" + hex.EncodeToString(sum[:])
}

// plain reports whether key can be used as it is: short, printable ASCII, with no '#' (which
// marks a hashed key) and no braces (a Redis Cluster hash tag).
func plain(key string) bool {
	if len(key) > maxPlainKey {
		return false
	}
	for i := range len(key) {
		if c := key[i]; c <= ' ' || c > '~' || c == '#' || c == '{' || c == '}' {
			return false
		}
	}
	return true
}
