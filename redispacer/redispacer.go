// Package redispacer keeps a client.Pacer in Redis, so that every process of a fleet sharing
// one API key waits for what the API said to any of them. Give each Client the same Redis and
// prefix (client.WithPacer): a 429 answered to one agent then holds the calls of all.
package redispacer

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/remedy-go/remedy/client"
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

// ErrMalformed is wrapped by the error of Take when the value under the key is not one this
// package wrote (something else wrote under the prefix). The request goes unpaced, and the
// next Learn that holds anything replaces the value.
var ErrMalformed = errors.New("redispacer: the value under the key is not a pacer's")

// Pacer is a client.Pacer whose holds and counts are in Redis, shared by every process that
// uses the same Redis and prefix. It is safe for concurrent use.
//
// Each key is one Redis hash, Prefix+key (or Prefix+"#"+the SHA-256 of key in hex, when key is
// longer than 256 bytes or holds a byte outside printable ASCII, '#', '{' or '}': any string
// is a safe key, and two keys never share a Redis key). Its fields are the end of the hold
// (h), the reset of the count of requests the server said remain (r), in Unix milliseconds
// of Redis's clock, and that count less the requests taken since (n); the requests each
// window admits (q) and the window's length in ms (w), when the server stated them; and each
// process's requests in flight (see below). It expires when the later of the two times ends
// (a window later when q and w are known; a minute after a process last asked, while it has
// requests in flight), PEXPIREAT, so that nothing accumulates. Each method is one round trip,
// a single-key Lua script, so that a Pacer works on Redis Cluster, a hold is raised
// atomically, only ever to a later time, and requests asking at once never take more than the
// count.
//
// The requests in flight — let go by Take, their answers not yet learned — are the fleet's:
// each process keeps its count in the hash (f:<name>, with v:<name> and s:<name>, named by a
// random name per Pacer), one more for each request Take lets go, one fewer for each Learn,
// and an answer's count of what remains is lowered by all of them (the server had not counted
// them). A process with nothing in flight clears its count, which mends a change lost to a
// call that failed; one that has not asked for a minute no longer counts (it ended).
//
// Times cross the wire as durations from now: Learn sends how far ahead its times are, by
// the local clock, and Redis adds that to its own; Take gets back how long is left and adds
// it to the local clock. The clocks of the fleet need not agree, and the round trip only ever
// makes a hold end later, never earlier.
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

	name     string // this Pacer's, among the fleet's in Redis
	mu       sync.Mutex
	inflight map[string]int // by caller's key: requests taken, their answers not learned
	seq      int64          // the number of the last change made to this process's counts in Redis
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

var _ client.Pacer = (*Pacer)(nil)

// New returns a Pacer that keeps its holds in client, which may be a single-node, failover or
// cluster client. The Pacer does not close client.
func New(c redis.UniversalClient, opts Options) *Pacer {
	p := &Pacer{client: c, prefix: opts.Prefix, timeout: opts.Timeout, now: time.Now, inflight: map[string]int{}, name: rand.Text()}
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
	for _, script := range []*redis.Script{learnScript, takeScript} {
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

// live is how long a process's count of requests in flight counts for the fleet after the
// process last asked Redis anything: a process that ended with requests in flight lowers the
// fleet's counts no longer than that.
const live = time.Minute

// inflightFields is the part of the scripts that keeps each process's count of its requests
// in flight that were counted against a count of Redis's: ARGV[2] is the process's name, and
// its fields are f:<name> (the count), v:<name> (the number of the last change made, in the
// process's sequence) and s:<name> (when it last asked). fly adds to the count; sync removes
// the fields, when the process has nothing in flight, unless a change made after that was
// applied first. flying is the fleet's count, every live process's (and it forgets the others);
// expire makes the key expire at ends, or as late as it was to.
var inflightFields = `
local function fly(now, d, seq)
	local f = tonumber(redis.call('HGET', KEYS[1], 'f:' .. ARGV[2]) or '') or 0
	local v = tonumber(redis.call('HGET', KEYS[1], 'v:' .. ARGV[2]) or '') or -1
	f = math.max(f + d, 0)
	redis.call('HSET', KEYS[1], 'f:' .. ARGV[2], string.format('%d', f), 'v:' .. ARGV[2], string.format('%d', math.max(v, seq)),
		's:' .. ARGV[2], string.format('%d', now))
	return f
end
local function sync(now, seq)
	local v = tonumber(redis.call('HGET', KEYS[1], 'v:' .. ARGV[2]) or '') or -1
	if seq > v then
		redis.call('HDEL', KEYS[1], 'f:' .. ARGV[2], 'v:' .. ARGV[2], 's:' .. ARGV[2])
		return true
	end
	return false
end
local function flying(now)
	local total = 0
	local fields = redis.call('HGETALL', KEYS[1])
	for i = 1, #fields, 2 do
		local name = fields[i]
		if string.sub(name, 1, 2) == 'f:' then
			local who = string.sub(name, 3)
			local seen = tonumber(redis.call('HGET', KEYS[1], 's:' .. who))
			if seen and seen > now - ` + liveMs + ` then
				total = total + (tonumber(fields[i + 1]) or 0)
			else
				redis.call('HDEL', KEYS[1], name, 's:' .. who, 'v:' .. who)
			end
		end
	end
	return total
end
local function expire(now, ends)
	local ttl = redis.call('PTTL', KEYS[1])
	if ttl > 0 then
		ends = math.max(ends, now + ttl)
	end
	if ends > now and redis.call('EXISTS', KEYS[1]) == 1 then
		redis.call('PEXPIREAT', KEYS[1], string.format('%d', ends))
	end
end
`

// takeScript lets one request go under KEYS[1] (0), counted against what remains and as in
// flight (ARGV[3] the number of the change), or returns how many ms are left (at most
// ARGV[1]) of its hold or of the count's reset when nothing remains; -2 when the value is not a
// pacer's.
var takeScript = redis.NewScript(luaNow + inflightFields + `
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind ~= 'none' and kind ~= 'hash' then
	return -2
end
local v = redis.call('HMGET', KEYS[1], 'h', 'r', 'n', 'q', 'w')
local h, r, n = tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(v[3])
local q, w = tonumber(v[4]) or 0, tonumber(v[5]) or 0
local cap = tonumber(ARGV[1])
if h > now then
	return math.min(h - now, cap)
end
if r > 0 and r <= now and q > 0 and w > 0 then
	-- The window counted has passed, and the server said how many each window admits: the
	-- new one starts with them, less the fleet's requests in flight, until its end.
	r = r + w * (math.floor((now - r) / w) + 1)
	n = q - flying(now)
	redis.call('HSET', KEYS[1], 'r', string.format('%d', r), 'n', string.format('%d', n))
end
if r > now then
	if not n or n <= 0 then
		return math.min(r - now, cap)
	end
	redis.call('HINCRBY', KEYS[1], 'n', -1)
end
fly(now, 1, tonumber(ARGV[3]))
local ends = math.max(h, r, now + ` + liveMs + `)
if q > 0 and w > 0 then
	ends = math.max(ends, r + w)
end
expire(now, ends)
return 0
`)

// learnScript raises the hold of KEYS[1] to ARGV[3] ms from now, and counts the ARGV[5]
// requests the server said remain until ARGV[4] ms from now, less the fleet's requests in
// flight (0: no hold, no count; each at most ARGV[1] ms): a count whose reset is ahead is only
// ever lowered, and its reset is the earliest learned (see remedy's MemoryPacer). ARGV[6]
// requests per ARGV[7] ms are what each window admits, when both are positive. The request
// learned of is no longer in flight; ARGV[9] is 1 when the process ARGV[2] has nothing in
// flight under the key any more (its count is removed, which mends a change lost to a failed
// call); ARGV[8] is the number of the change. A value that is not a pacer's is
// replaced; a process that has not asked for a minute no longer counts.
var learnScript = redis.NewScript(luaNow + inflightFields + `
if redis.call('TYPE', KEYS[1])['ok'] ~= 'hash' then
	redis.call('DEL', KEYS[1])
end
local cap = tonumber(ARGV[1])
local hold, reset, remaining = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local seq = tonumber(ARGV[8])
local ends = 0
if not (ARGV[9] == '1' and sync(now, seq)) then
	fly(now, -1, seq)
	ends = now + ` + liveMs + `
end
local v = redis.call('HMGET', KEYS[1], 'h', 'r', 'n')
local h, r, n = tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(v[3]) or 0
if hold > 0 then
	local at = now + math.min(hold, cap)
	if at > h then
		h = at
		redis.call('HSET', KEYS[1], 'h', string.format('%d', h))
	end
end
if reset > 0 then
	local left = math.max(remaining - flying(now), 0)
	local at = now + math.min(reset, cap)
	if r <= now then
		r, n = at, left
	else
		n = math.min(n, left)
		r = math.min(r, at)
	end
	redis.call('HSET', KEYS[1], 'r', string.format('%d', r), 'n', string.format('%d', n))
	if tonumber(ARGV[6]) > 0 and tonumber(ARGV[7]) > 0 then
		redis.call('HSET', KEYS[1], 'q', ARGV[6], 'w', ARGV[7])
	end
end
local q, w = tonumber(redis.call('HGET', KEYS[1], 'q') or '') or 0, tonumber(redis.call('HGET', KEYS[1], 'w') or '') or 0
if q > 0 and w > 0 then
	ends = math.max(ends, r + w) -- what each window admits is kept a window past the count
end
expire(now, math.max(ends, h, r))
return 0
`)

// liveMs is live in ms, as the scripts read it.
var liveMs = strconv.FormatInt(live.Milliseconds(), 10)

// Take lets a request go under key (the zero time), counted against what the server said
// remains and as in flight, or returns the time to ask again: the end of a hold, or the reset
// of a count with nothing left. The time is never earlier than the one held, and at most
// MaxAhead from now.
func (p *Pacer) Take(ctx context.Context, key string) (time.Time, error) {
	seq := p.next()
	var left int64
	err := p.run(ctx, func(ctx context.Context) (err error) {
		left, err = takeScript.Run(ctx, p.client, []string{p.key(key)}, MaxAhead.Milliseconds(), p.name, seq).Int64()
		return err
	})
	switch {
	case err != nil:
		return time.Time{}, fmt.Errorf("redispacer: take: %w", err)
	case left == -2:
		return time.Time{}, fmt.Errorf("redispacer: take %q: %w", key, ErrMalformed)
	case left > 0:
		return time.Now().Add(time.Duration(left) * time.Millisecond), nil
	}
	p.mu.Lock()
	p.inflight[key]++
	p.mu.Unlock()
	return time.Time{}, nil
}

// Learn ends a request's time in flight, and records what its answer said: a hold (at most
// MaxAhead from now) and a count of requests until a reset, less the fleet's requests still in
// flight. It is one round trip, whatever the answer said: the fleet's count of requests in
// flight is kept in Redis.
func (p *Pacer) Learn(ctx context.Context, key string, l client.Limit) error {
	p.mu.Lock()
	n := p.inflight[key] - 1
	idle := n <= 0
	if idle {
		delete(p.inflight, key)
	} else {
		p.inflight[key] = n
	}
	p.seq++
	seq := p.seq
	p.mu.Unlock()
	// Up to the next ms, and one more for Redis's clock, which TIME gives to the ms rounded
	// down: a hold never ends before the time learned.
	var hold, reset int64
	if ahead := time.Until(l.Until); ahead > 0 {
		hold = min(ahead, MaxAhead).Milliseconds() + 2
	}
	if ahead := time.Until(l.Reset); ahead > 0 {
		reset = min(ahead, MaxAhead).Milliseconds() + 2
	}
	var window int64
	if l.Quota > 0 && l.Window > 0 {
		// Whole ms, rounded up: a window never ends earlier in Redis than the server said.
		window = min(int64((l.Window+time.Millisecond-1)/time.Millisecond), MaxAhead.Milliseconds())
	}
	err := p.run(ctx, func(ctx context.Context) error {
		return learnScript.Run(ctx, p.client, []string{p.key(key)}, MaxAhead.Milliseconds(), p.name, hold, reset,
			max(l.Remaining, 0), max(l.Quota, 0), window, seq, flag(idle)).Err()
	})
	if err != nil {
		return fmt.Errorf("redispacer: learn: %w", err)
	}
	return nil
}

// next is the number of the next change this process makes to its counts in Redis.
func (p *Pacer) next() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	return p.seq
}

// flag is a bool as the scripts read it.
func flag(b bool) int {
	if b {
		return 1
	}
	return 0
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
