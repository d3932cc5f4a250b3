// Package redisstore keeps the confirmation challenges and idempotency records of a server.API
// in Redis. Use it when several instances of one API serve the same callers, so that a
// confirmation issued by one instance can be spent on another and a retried request is
// replayed by whichever instance it reaches.
package redisstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/remedy-go/remedy/server"
)

// Store keeps confirmation challenges, idempotency records and the jobs of background
// operations in Redis, so that several instances of one API share them. It implements
// server.ConfirmStore, server.IdempotencyStore and server.JobStore (see jobs.go).
//
// Each method of the two interfaces is one round trip to Redis: one Lua script, run by
// EVALSHA, which falls back to EVAL (a second round trip) the first time a Redis server meets
// the script (Load avoids that). Every key carries a TTL, so nothing outlives its purpose.
//
// Each scope (each principal) has a quota of live challenges and one of live idempotency
// records (Options.ScopeChallenges, Options.ScopeRecords). A scope's entries are counted in a
// sorted set per scope and kind, each member scored by when its entry expires; the script that
// adds an entry first drops the members that have expired, then refuses, with an error that
// is server.ErrStoreFull, when the count is at the quota. The count and the entry change in the
// same script, so that concurrent instances cannot together go past a quota. Nothing is ever
// evicted to make room.
//
// A challenge is a string key, Prefix+"c:{"+scope+"}:"+id, holding the binding, counted in
// Prefix+"cq:{"+scope+"}". An idempotency record is a hash, Prefix+"i:{"+scope+"}:"+key, with
// the fields "state" ("inflight" or "done"), "fp" (the fingerprint), "owner" and, once done,
// "result" (the response, encoded by this package), counted in Prefix+"iq:{"+scope+"}". The
// braces make the scope a Redis Cluster hash tag: an entry and its count are in one slot, so
// that no script spans slots (the scopes an API passes are non-empty and hold no braces).
//
// Redis bounds the whole by its memory. It must keep these keys until they expire: with a
// maxmemory-policy that evicts them early (allkeys-*, or volatile-* under memory pressure) an
// evicted claim lets a duplicate execute and an evicted challenge refuses its confirmation;
// noeviction makes a full Redis fail requests instead (503), which is the safe side.
//
// A Store is safe for concurrent use.
type Store struct {
	client          redis.UniversalClient
	prefix          string
	scopeChallenges int
	scopeRecords    int
	replicas        int           // Options.Replicas
	replicaTimeout  time.Duration // Options.ReplicaTimeout
	scopeJobs       int
}

// Options configure a Store.
type Options struct {
	// Prefix starts every key the Store writes (default "remedy:"). Give each API its own
	// prefix when several share one Redis database, and one prefix to all instances of one API.
	Prefix string
	// ScopeChallenges is how many live challenges one scope may hold (default
	// server.DefaultScopeChallenges).
	ScopeChallenges int
	// ScopeRecords is how many live idempotency records, in flight or completed, one scope may
	// hold (default server.DefaultScopeRecords).
	ScopeRecords int
	// Replicas is how many replicas must hold a claim, a completion or the take of a
	// challenge before the Store reports it (Redis WAIT, on the connection that wrote it, to
	// the key's master); 0 waits for none. Redis replicates asynchronously: without it, a
	// claim its master acknowledged and lost in a failover before a replica had it is gone
	// from the promoted replica, and a retry of the request runs again; a take lost so leaves
	// the challenge on the promoted replica, and the spent token runs the operation again.
	// With it, a claim not held by that many replicas within ReplicaTimeout is released and
	// Claim fails (the server answers 503, nothing run); a take not held so gives the
	// challenge back (best effort, so that the token is good once later) and TakeChallenge
	// fails (503, nothing run); a completion not held so is reported as an error (the server
	// keeps the key claimed until its lease ends). Issuing a challenge and storing a job do
	// not wait. The client must be a *redis.Client or a *redis.ClusterClient.
	Replicas int
	// ReplicaTimeout bounds the wait for Replicas (default DefaultReplicaTimeout). The wait is
	// also bounded by the client's ReadTimeout: a longer one fails as too few replicas.
	ReplicaTimeout time.Duration
	// ScopeJobs is how many live jobs of background operations one scope may hold (default
	// server.DefaultScopeJobs).
	ScopeJobs int
}

// DefaultReplicaTimeout is how long a Store with Options.Replicas waits for them by default.
const DefaultReplicaTimeout = time.Second

// ErrNotReplicated is wrapped by the error of a claim, a completion or a take of a challenge
// that fewer replicas than Options.Replicas acknowledged in time.
var ErrNotReplicated = errors.New("redisstore: not held by enough replicas")

// DefaultPrefix is the key prefix of a Store unless Options say otherwise.
const DefaultPrefix = "remedy:"

var (
	_ server.ConfirmStore     = (*Store)(nil)
	_ server.IdempotencyStore = (*Store)(nil)
	_ server.JobStore         = (*Store)(nil)
)

// New returns a Store that keeps its keys in client, which may be a single-node, failover or
// cluster client. The Store does not close client.
func New(client redis.UniversalClient, opts Options) *Store {
	s := &Store{client: client, prefix: opts.Prefix, scopeChallenges: opts.ScopeChallenges, scopeRecords: opts.ScopeRecords,
		scopeJobs: opts.ScopeJobs, replicas: max(opts.Replicas, 0), replicaTimeout: opts.ReplicaTimeout}
	if s.replicaTimeout <= 0 {
		s.replicaTimeout = DefaultReplicaTimeout
	}
	if s.prefix == "" {
		s.prefix = DefaultPrefix
	}
	if s.scopeChallenges <= 0 {
		s.scopeChallenges = server.DefaultScopeChallenges
	}
	if s.scopeRecords <= 0 {
		s.scopeRecords = server.DefaultScopeRecords
	}
	if s.scopeJobs <= 0 {
		s.scopeJobs = server.DefaultScopeJobs
	}
	return s
}

// keys are the key of an entry and of its scope's count: for kind "c", a challenge; "i", a
// record.
func (s *Store) keys(kind, scope, id string) []string {
	tag := "{" + scope + "}"
	return []string{s.prefix + kind + ":" + tag + ":" + id, s.prefix + kind + "q:" + tag}
}

// Load loads the Store's scripts into Redis (SCRIPT LOAD), so that the first call of each
// method on that server need not fall back from EVALSHA to EVAL. It is optional: calling it
// when an instance starts saves a round trip on each script's first run. A server that
// restarts or flushes its scripts is handled by the fallback.
func (s *Store) Load(ctx context.Context) error {
	for _, script := range []*redis.Script{putScript, putJobScript, takeScript, claimScript, completeScript, releaseScript} {
		if err := script.Load(ctx, s.client).Err(); err != nil {
			return fmt.Errorf("redisstore: load scripts: %w", err)
		}
	}
	return nil
}

// The scripts' common parts: now is Redis's clock in ms; count (KEYS[2], a sorted set)
// drops its expired members; counted adds member, expiring after ttl ms, and keeps the set as
// long as its longest-lived member.
const (
	luaNow = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`
	luaSweep   = "redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)\n"
	luaCounted = `local function counted(member, ttl)
	redis.call('ZADD', KEYS[2], now + ttl, member)
	if redis.call('PTTL', KEYS[2]) < ttl then
		redis.call('PEXPIRE', KEYS[2], ttl)
	end
end
`
)

// putScript stores the challenge KEYS[1] (binding ARGV[1]) for ARGV[2] ms, counted as ARGV[3]
// in KEYS[2], and returns 1; it returns 0, storing nothing, when KEYS[1] is new and the count
// is at the quota ARGV[4].
var putScript = redis.NewScript(luaNow + luaSweep + luaCounted + `
if not redis.call('ZSCORE', KEYS[2], ARGV[3]) and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
	return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
counted(ARGV[3], tonumber(ARGV[2]))
return 1
`)

// takeScript deletes the challenge KEYS[1] and its member ARGV[1] of KEYS[2], and returns
// its binding and what was left of its TTL in ms (nil when there is none).
var takeScript = redis.NewScript(`
local ttl = redis.call('PTTL', KEYS[1])
local binding = redis.call('GETDEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if not binding then
	return nil
end
return {binding, ttl}
`)

// PutChallenge implements server.ConfirmStore: one script, which counts the challenge in its
// scope and stores it with a TTL.
func (s *Store) PutChallenge(ctx context.Context, scope, id string, binding []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redisstore: put challenge: %w", err)
	}
	n, err := putScript.Run(ctx, s.client, s.keys("c", scope, id), binding, millis(ttl), id, s.scopeChallenges).Int64()
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: put challenge: %w", err)
	case n == 0:
		return fmt.Errorf("redisstore: put challenge: %w: %d challenges in one scope, its quota", server.ErrStoreFull, s.scopeChallenges)
	case n != 1:
		return fmt.Errorf("redisstore: put challenge: the script returned %d", n)
	}
	return nil
}

// TakeChallenge implements server.ConfirmStore: one script, which deletes the challenge as
// GETDEL does, so that of concurrent takes only one finds it, and uncounts it. With
// Options.Replicas, a take that found the challenge then waits for them, as a claim does.
func (s *Store) TakeChallenge(ctx context.Context, scope, id string) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, fmt.Errorf("redisstore: take challenge: %w", err)
	}
	keys := s.keys("c", scope, id)
	start := time.Now()
	cmd, replicated := s.written(ctx, keys[0], takeScript, keys, id)
	v, err := cmd.Result()
	if errors.Is(err, redis.Nil) {
		// Nothing taken, so nothing to wait for: a refusal stays safe whatever a failover undoes.
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("redisstore: take challenge: %w", err)
	}
	reply, _ := v.([]any)
	var binding string
	var ttl int64
	ok := len(reply) == 2
	if ok {
		binding, ok = reply[0].(string)
	}
	if ok {
		ttl, ok = reply[1].(int64)
	}
	if !ok {
		return nil, false, fmt.Errorf("redisstore: take challenge: the script returned a %T", v)
	}
	if replicated != nil {
		// A take no replica holds may be undone by a failover, and the token spent again on
		// the promoted replica: give the challenge back rather than let the operation run
		// on it, with what was left of its life, if its scope has room. (Best effort: a
		// challenge not given back is a token refused, the safe side.)
		if left := time.Duration(ttl)*time.Millisecond - time.Since(start); ttl > 0 && left > 0 {
			_ = putScript.Run(context.WithoutCancel(ctx), s.client, keys, binding, millis(left), id, s.scopeChallenges).Err()
		}
		return nil, false, fmt.Errorf("redisstore: take challenge: %w", replicated)
	}
	return []byte(binding), true, nil
}

// The record's states, in its "state" field.
const (
	stateInFlight = "inflight"
	stateDone     = "done"
)

// claimScript returns the record under KEYS[1] as HGETALL does, or, when there is none, stores
// an in-flight record (fingerprint ARGV[1], owner ARGV[2]) for ARGV[3] ms, counted as ARGV[4]
// in KEYS[2], and returns 1. It returns 0, storing nothing, when the count is at the quota
// ARGV[5].
var claimScript = redis.NewScript(`
local rec = redis.call('HGETALL', KEYS[1])
if #rec > 0 then
	return rec
end
` + luaNow + luaSweep + luaCounted + `
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then
	return 0
end
redis.call('HSET', KEYS[1], 'state', 'inflight', 'fp', ARGV[1], 'owner', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
counted(ARGV[4], tonumber(ARGV[3]))
return 1
`)

// completeScript replaces the in-flight record of owner ARGV[1] under KEYS[1] by the completed
// one, with the result ARGV[2], for ARGV[3] ms, counted as ARGV[4] in KEYS[2] for as long, and
// returns 1. It returns 0, changing nothing, when the record is not ARGV[1]'s in flight.
var completeScript = redis.NewScript(`
local rec = redis.call('HMGET', KEYS[1], 'state', 'owner')
if rec[1] ~= 'inflight' or rec[2] ~= ARGV[1] then
	return 0
end
` + luaNow + luaCounted + `
redis.call('HSET', KEYS[1], 'state', 'done', 'result', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
counted(ARGV[4], tonumber(ARGV[3]))
return 1
`)

// releaseScript deletes the in-flight record of owner ARGV[1] under KEYS[1], and its member
// ARGV[2] of KEYS[2], and returns 1. It returns 0, changing nothing, when the record is not
// ARGV[1]'s in flight.
var releaseScript = redis.NewScript(`
local rec = redis.call('HMGET', KEYS[1], 'state', 'owner')
if rec[1] ~= 'inflight' or rec[2] ~= ARGV[1] then
	return 0
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
return 1
`)

// Claim implements server.IdempotencyStore: one script, which returns the record under key or
// claims it, counted in its scope.
func (s *Store) Claim(ctx context.Context, scope, key string, fingerprint []byte, owner string, lease time.Duration) (server.IdempotencyRecord, bool, error) {
	if err := ctx.Err(); err != nil {
		return server.IdempotencyRecord{}, false, fmt.Errorf("redisstore: claim: %w", err)
	}
	keys := s.keys("i", scope, key)
	cmd, replicated := s.written(ctx, keys[0], claimScript, keys, fingerprint, owner, millis(lease), key, s.scopeRecords)
	v, err := cmd.Result()
	if err != nil {
		return server.IdempotencyRecord{}, false, fmt.Errorf("redisstore: claim: %w", err)
	}
	switch v := v.(type) {
	case int64:
		switch v {
		case 1:
			if replicated != nil {
				// The claim may not survive a failover: give it up rather than let the request
				// run on a claim a retry might not find. (Best effort: a release lost with the
				// master is a claim that expires with its lease.)
				_ = releaseScript.Run(context.WithoutCancel(ctx), s.client, keys, owner, key).Err()
				return server.IdempotencyRecord{}, false, fmt.Errorf("redisstore: claim: %w", replicated)
			}
			return server.IdempotencyRecord{Fingerprint: bytes.Clone(fingerprint), Owner: owner}, true, nil
		case 0:
			return server.IdempotencyRecord{}, false, fmt.Errorf("redisstore: claim: %w: %d records in one scope, its quota", server.ErrStoreFull, s.scopeRecords)
		}
		return server.IdempotencyRecord{}, false, fmt.Errorf("redisstore: claim: the script returned %d", v)
	case []any:
		rec, err := decodeRecord(v)
		if err != nil {
			return server.IdempotencyRecord{}, false, fmt.Errorf("redisstore: claim: the record under %q: %w", keys[0], err)
		}
		return rec, false, nil
	default:
		return server.IdempotencyRecord{}, false, fmt.Errorf("redisstore: claim: the script returned a %T", v)
	}
}

// Complete implements server.IdempotencyStore: one script, which replaces owner's in-flight
// record with the completed one.
func (s *Store) Complete(ctx context.Context, scope, key, owner string, result server.StoredResponse, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redisstore: complete: %w", err)
	}
	keys := s.keys("i", scope, key)
	cmd, replicated := s.written(ctx, keys[0], completeScript, keys, owner, encodeResult(result), millis(ttl), key)
	if err := owned("complete", cmd); err != nil {
		return err
	}
	if replicated != nil {
		return fmt.Errorf("redisstore: complete: %w", replicated)
	}
	return nil
}

// written runs script on keys, all in key's slot, and reports, with Options.Replicas, whether
// that many replicas hold what it wrote: WAIT follows the script in one pipeline to key's
// master, so on the connection that wrote, within Options.ReplicaTimeout. replicated wraps
// ErrNotReplicated when they did not, and means nothing when the script wrote nothing.
//
// A pipeline rather than a redis.Conn: go-redis's Conn shares its client's options under a
// lock of its own, and the two race when both open a connection at once.
func (s *Store) written(ctx context.Context, key string, script *redis.Script, keys []string, args ...any) (cmd *redis.Cmd, replicated error) {
	if s.replicas == 0 {
		return script.Run(ctx, s.client, keys, args...), nil
	}
	var master *redis.Client
	switch c := s.client.(type) {
	case *redis.ClusterClient:
		var err error
		if master, err = c.MasterForKey(ctx, key); err != nil {
			cmd = redis.NewCmd(ctx)
			cmd.SetErr(err)
			return cmd, nil
		}
	case *redis.Client:
		master = c
	default:
		cmd = redis.NewCmd(ctx)
		cmd.SetErr(fmt.Errorf("Options.Replicas needs a *redis.Client or a *redis.ClusterClient, not a %T", s.client))
		return cmd, nil
	}
	var wait *redis.Cmd
	pipe := func(eval func(redis.Pipeliner) *redis.Cmd) {
		// Each command's error is its own, read below.
		_, _ = master.Pipelined(ctx, func(p redis.Pipeliner) error {
			cmd = eval(p)
			wait = p.Do(ctx, "WAIT", s.replicas, millis(s.replicaTimeout))
			return nil
		})
	}
	pipe(func(p redis.Pipeliner) *redis.Cmd { return script.EvalSha(ctx, p, keys, args...) })
	if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		pipe(func(p redis.Pipeliner) *redis.Cmd { return script.Eval(ctx, p, keys, args...) })
	}
	switch n, err := wait.Int64(); {
	case err != nil:
		return cmd, fmt.Errorf("%w: %w", ErrNotReplicated, err)
	case n < int64(s.replicas):
		return cmd, fmt.Errorf("%w: %d of %d within %v", ErrNotReplicated, n, s.replicas, s.replicaTimeout)
	}
	return cmd, nil
}

// Release implements server.IdempotencyStore: one script, which deletes owner's in-flight
// record.
func (s *Store) Release(ctx context.Context, scope, key, owner string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redisstore: release: %w", err)
	}
	return owned("release", releaseScript.Run(ctx, s.client, s.keys("i", scope, key), owner, key))
}

// owned reads the reply of a script that acts on owner's in-flight record: 1 when it did, 0
// when the record was not owner's.
func owned(op string, cmd *redis.Cmd) error {
	n, err := cmd.Int64()
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: %s: %w", op, err)
	case n == 0:
		return server.ErrNotOwner
	case n != 1:
		return fmt.Errorf("redisstore: %s: the script returned %d", op, n)
	}
	return nil
}

// millis is d in whole milliseconds, rounded up, at least 1: PX and PEXPIRE refuse 0.
func millis(d time.Duration) int64 {
	if d < time.Millisecond {
		return 1
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// decodeRecord decodes a record from the reply of HGETALL: field, value, field, value...
func decodeRecord(reply []any) (server.IdempotencyRecord, error) {
	if len(reply)%2 != 0 {
		return server.IdempotencyRecord{}, fmt.Errorf("%d elements, not field-value pairs", len(reply))
	}
	fields := make(map[string]string, len(reply)/2)
	for i := 0; i < len(reply); i += 2 {
		name, ok1 := reply[i].(string)
		value, ok2 := reply[i+1].(string)
		if !ok1 || !ok2 {
			return server.IdempotencyRecord{}, fmt.Errorf("element %d or %d is a %T, %T, not a string", i, i+1, reply[i], reply[i+1])
		}
		fields[name] = value
	}
	fp, hasFP := fields["fp"]
	owner, hasOwner := fields["owner"]
	if !hasFP || !hasOwner {
		return server.IdempotencyRecord{}, errors.New(`malformed: no "fp" or no "owner" field`)
	}
	rec := server.IdempotencyRecord{Fingerprint: []byte(fp), Owner: owner}
	switch state := fields["state"]; state {
	case stateInFlight:
	case stateDone:
		encoded, ok := fields["result"]
		if !ok {
			return server.IdempotencyRecord{}, errors.New(`malformed: done without a "result" field`)
		}
		result, err := decodeResult([]byte(encoded))
		if err != nil {
			return server.IdempotencyRecord{}, fmt.Errorf("malformed result: %w", err)
		}
		rec.Completed, rec.Result = true, result
	default:
		return server.IdempotencyRecord{}, fmt.Errorf("malformed: state %q", state)
	}
	return rec, nil
}

// The encoding of a result, in the "result" field of a completed record:
//
//	version  byte (resultVersion)
//	flags    byte (flagNilHeader, flagNilBody)
//	status   varint
//	headers  uvarint count, then per name in sorted order: uvarint length, name, and
//	         uvarint count+1 of its values (0 for a nil slice), each a uvarint length and value
//	body     the rest
//
// It keeps every byte of names, values and body, and tells nil from empty, so that a replay
// is the response that was stored.
const (
	resultVersion = 1
	flagNilHeader = 1 << 0
	flagNilBody   = 1 << 1
)

// encodeResult encodes r as described above.
func encodeResult(r server.StoredResponse) []byte {
	size := 2 + binary.MaxVarintLen64 + len(r.Body) + binary.MaxVarintLen64
	for name, values := range r.Header {
		size += 2*binary.MaxVarintLen64 + len(name)
		for _, v := range values {
			size += binary.MaxVarintLen64 + len(v)
		}
	}
	b := make([]byte, 0, size)
	var flags byte
	if r.Header == nil {
		flags |= flagNilHeader
	}
	if r.Body == nil {
		flags |= flagNilBody
	}
	b = append(b, resultVersion, flags)
	b = binary.AppendVarint(b, int64(r.Status))
	b = binary.AppendUvarint(b, uint64(len(r.Header)))
	for _, name := range slices.Sorted(maps.Keys(r.Header)) { // one result, one encoding
		values := r.Header[name]
		b = appendString(b, name)
		if values == nil {
			b = binary.AppendUvarint(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(values))+1)
		for _, v := range values {
			b = appendString(b, v)
		}
	}
	return append(b, r.Body...)
}

// decodeResult decodes what encodeResult encoded; it returns an error, never panics, on
// anything else.
func decodeResult(b []byte) (server.StoredResponse, error) {
	d := decoder{b: b}
	version, flags := d.byte(), d.byte()
	if d.err == nil && version != resultVersion {
		return server.StoredResponse{}, fmt.Errorf("version %d, want %d", version, resultVersion)
	}
	var r server.StoredResponse
	status := d.varint()
	r.Status = int(status)
	if d.err == nil && int64(r.Status) != status {
		d.fail("status %d out of range", status)
	}
	names := d.count()
	if flags&flagNilHeader == 0 {
		r.Header = make(map[string][]string, names)
	} else if names != 0 && d.err == nil {
		d.fail("%d headers in a nil header", names)
	}
	for range names {
		if d.err != nil {
			break
		}
		name := d.string()
		n := d.count()
		if d.err != nil {
			break
		}
		if _, dup := r.Header[name]; dup {
			d.fail("header %q twice", name)
			break
		}
		if n == 0 {
			r.Header[name] = nil
			continue
		}
		values := make([]string, 0, n-1)
		for range n - 1 {
			values = append(values, d.string())
		}
		r.Header[name] = values
	}
	if d.err != nil {
		return server.StoredResponse{}, d.err
	}
	if flags&flagNilBody == 0 {
		r.Body = bytes.Clone(d.b)
		if r.Body == nil {
			r.Body = []byte{}
		}
	} else if len(d.b) != 0 {
		return server.StoredResponse{}, fmt.Errorf("%d bytes of a nil body", len(d.b))
	}
	return r, nil
}

// decoder reads what encodeResult wrote, remembering the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count of items that each take at least one byte, so that a corrupt count
// cannot make the decoder allocate more than the input.
func (d *decoder) count() int {
	v := d.uvarint()
	if d.err == nil && v > uint64(len(d.b))+1 {
		d.fail("count %d beyond the %d bytes left", v, len(d.b))
		return 0
	}
	return int(v)
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.fail("string of %d bytes, %d left", n, len(d.b))
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}
