package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/internal/testkit/redistest"
	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/redisstore"
	"github.com/remedy-go/remedy/server/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	client := redistest.Client(t, redistest.Start(t))
	storetest.Run(t, func(t *testing.T, l storetest.Limits) (storetest.Stores, func(time.Duration)) {
		return redisstore.New(client, redisstore.Options{Prefix: redistest.Prefix(),
			ScopeChallenges: l.ScopeChallenges, ScopeRecords: l.ScopeRecords}), time.Sleep
	})
}

func TestJobs(t *testing.T) {
	t.Parallel()
	client := redistest.Client(t, redistest.Start(t))
	storetest.RunJobs(t, func(t *testing.T, scopeJobs int) (server.JobStore, func(time.Duration)) {
		return redisstore.New(client, redisstore.Options{Prefix: redistest.Prefix(), ScopeJobs: scopeJobs}), time.Sleep
	})
}

// counter is a redis.Hook that counts round trips: a command, or a pipeline of them; with
// record, it keeps their names too.
type counter struct {
	mu     sync.Mutex
	trips  int
	record bool
	names  []string
}

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.count(cmd.Name())
		return next(ctx, cmd)
	}
}

func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		names := make([]string, len(cmds))
		for i, cmd := range cmds {
			names[i] = cmd.Name()
		}
		c.count("pipeline(" + strings.Join(names, ",") + ")")
		return next(ctx, cmds)
	}
}

func (c *counter) count(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips++
	if c.record {
		c.names = append(c.names, name)
	}
}

// take returns the round trips counted since the last take, and the commands.
func (c *counter) take() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, names := c.trips, c.names
	c.trips, c.names = 0, nil
	return n, names
}

func TestRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := counter{record: true}
	client := redistest.Client(t, redistest.Start(t), &c)
	s := redisstore.New(client, redisstore.Options{Prefix: redistest.Prefix()})
	require.NoError(t, s.Load(ctx))
	c.take()

	for _, step := range []struct {
		name string
		max  int
		run  func() error
	}{
		{"first execution: Claim", 1, func() error {
			_, claimed, err := s.Claim(ctx, "sc", "k", []byte("fp"), "owner", time.Minute)
			if err == nil && !claimed {
				err = errors.New("not claimed")
			}
			return err
		}},
		{"first execution: Complete", 1, func() error {
			return s.Complete(ctx, "sc", "k", "owner", server.StoredResponse{Status: 200, Body: []byte("ok")}, time.Minute)
		}},
		{"replay: Claim of a completed key", 1, func() error {
			rec, claimed, err := s.Claim(ctx, "sc", "k", []byte("fp"), "other", time.Minute)
			if err == nil && (claimed || !rec.Completed) {
				err = fmt.Errorf("claimed %v, completed %v", claimed, rec.Completed)
			}
			return err
		}},
		{"Release", 1, func() error {
			if _, _, err := s.Claim(ctx, "sc", "r", []byte("fp"), "owner", time.Minute); err != nil {
				return err
			}
			c.take()
			return s.Release(ctx, "sc", "r", "owner")
		}},
		{"PutChallenge", 1, func() error { return s.PutChallenge(ctx, "sc", "c", []byte("binding"), time.Minute) }},
		{"TakeChallenge", 1, func() error {
			_, ok, err := s.TakeChallenge(ctx, "sc", "c")
			if err == nil && !ok {
				err = errors.New("not ok")
			}
			return err
		}},
	} {
		require.NoError(t, step.run(), step.name)
		n, names := c.take()
		t.Logf("%s: %d round trips %v", step.name, n, names)
		assert.LessOrEqual(t, n, step.max, "%s: round trips %v", step.name, names)
		assert.Positive(t, n, "%s: the hook counted nothing", step.name)
	}
}

// TestScriptFallback: on a server that has not met a script, its first run is EVALSHA, refused,
// then EVAL, two round trips; after that EVALSHA alone.
func TestScriptFallback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := counter{record: true}
	client := redistest.Client(t, redistest.Start(t), &c)
	s := redisstore.New(client, redisstore.Options{Prefix: redistest.Prefix()})
	require.NoError(t, client.ScriptFlush(ctx).Err())
	c.take()

	_, claimed, err := s.Claim(ctx, "sc", "k1", []byte("fp"), "owner", time.Minute)
	require.NoError(t, err)
	require.True(t, claimed)
	n, names := c.take()
	assert.Equal(t, []string{"evalsha", "eval"}, names, "the first claim on a server without the script")
	assert.Equal(t, 2, n)

	_, claimed, err = s.Claim(ctx, "sc", "k2", []byte("fp"), "owner", time.Minute)
	require.NoError(t, err)
	require.True(t, claimed)
	_, names = c.take()
	assert.Equal(t, []string{"evalsha"}, names, "the second claim")
}

func TestSharedBetweenClients(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr := redistest.Start(t)
	prefix := redistest.Prefix()
	a := redisstore.New(redistest.Client(t, addr), redisstore.Options{Prefix: prefix})
	b := redisstore.New(redistest.Client(t, addr), redisstore.Options{Prefix: prefix})

	_, claimed, err := a.Claim(ctx, "sc", "k", []byte("fp"), "on-a", time.Minute)
	require.NoError(t, err)
	require.True(t, claimed)

	rec, claimed, err := b.Claim(ctx, "sc", "k", []byte("fp"), "on-b", time.Minute)
	require.NoError(t, err)
	assert.False(t, claimed, "B claimed a key A holds")
	assert.Equal(t, server.IdempotencyRecord{Fingerprint: []byte("fp"), Owner: "on-a"}, rec)
	assert.ErrorIs(t, b.Complete(ctx, "sc", "k", "on-b", server.StoredResponse{Status: 500}, time.Minute), server.ErrNotOwner)

	result := server.StoredResponse{Status: 201, Header: http.Header{"Location": {"/x"}}, Body: []byte{0, 1}}
	require.NoError(t, a.Complete(ctx, "sc", "k", "on-a", result, time.Minute))
	rec, claimed, err = b.Claim(ctx, "sc", "k", []byte("fp"), "on-b", time.Minute)
	require.NoError(t, err)
	assert.False(t, claimed)
	assert.True(t, rec.Completed)
	assert.Equal(t, result, rec.Result, "the result A stored, replayed by B")

	require.NoError(t, a.PutChallenge(ctx, "sc", "c", []byte("binding"), time.Minute))
	got, ok, err := b.TakeChallenge(ctx, "sc", "c")
	require.NoError(t, err)
	assert.True(t, ok, "a challenge put by A, taken by B")
	assert.Equal(t, []byte("binding"), got)
	_, ok, err = a.TakeChallenge(ctx, "sc", "c")
	require.NoError(t, err)
	assert.False(t, ok, "a challenge B took, taken again by A")

	// Another prefix is another key space.
	other := redisstore.New(redistest.Client(t, addr), redisstore.Options{Prefix: redistest.Prefix()})
	_, claimed, err = other.Claim(ctx, "sc", "k", []byte("fp"), "other", time.Minute)
	require.NoError(t, err)
	assert.True(t, claimed, "a key of another prefix")
}

func TestKeysAndTTLs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Client(t, redistest.Start(t))
	s := redisstore.New(client, redisstore.Options{})

	// A TTL read back is what was set less the time since: at least what was set less all the
	// time the test has taken up to the read (and a millisecond, for Redis's rounding).
	start := time.Now()
	require.NoError(t, s.PutChallenge(ctx, "sc", "c", []byte("b"), 90*time.Second))
	_, _, err := s.Claim(ctx, "sc", "inflight", []byte("fp"), "owner", 30*time.Second)
	require.NoError(t, err)
	_, _, err = s.Claim(ctx, "sc", "done", []byte("fp"), "owner", 30*time.Second)
	require.NoError(t, err)
	require.NoError(t, s.Complete(ctx, "sc", "done", "owner", server.StoredResponse{Status: 200}, time.Hour))

	keys, err := client.Keys(ctx, "*").Result()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		"remedy:c:{sc}:c", "remedy:i:{sc}:inflight", "remedy:i:{sc}:done",
		"remedy:cq:{sc}", "remedy:iq:{sc}",
	}, keys, "the keys, with the default prefix")
	for key, want := range map[string]time.Duration{
		"remedy:c:{sc}:c":        90 * time.Second,
		"remedy:i:{sc}:inflight": 30 * time.Second,
		"remedy:i:{sc}:done":     time.Hour, // the retention replaced the lease
		"remedy:cq:{sc}":         90 * time.Second,
		"remedy:iq:{sc}":         time.Hour, // its longest-lived member's
	} {
		ttl, err := client.PTTL(ctx, key).Result()
		require.NoError(t, err)
		least := want - time.Since(start) - time.Millisecond
		assert.True(t, ttl >= least && ttl <= want, "PTTL %s = %v, want %v to %v", key, ttl, least, want)
	}
	// Each entry is counted in its scope, until it expires.
	for key, want := range map[string][]string{"remedy:cq:{sc}": {"c"}, "remedy:iq:{sc}": {"done", "inflight"}} {
		members, err := client.ZRange(ctx, key, 0, -1).Result()
		require.NoError(t, err)
		assert.ElementsMatch(t, want, members, "the members of %s", key)
	}

	// A nil binding is an empty one.
	require.NoError(t, s.PutChallenge(ctx, "sc", "nil", nil, time.Minute))
	got, ok, err := s.TakeChallenge(ctx, "sc", "nil")
	require.NoError(t, err)
	assert.True(t, ok, "a nil binding")
	assert.Empty(t, got)

	// Durations below a millisecond are a millisecond, not an error and not forever.
	require.NoError(t, s.PutChallenge(ctx, "sc", "zero", []byte("b"), 0))
	require.NoError(t, s.PutChallenge(ctx, "sc", "tiny", []byte("b"), time.Nanosecond))
	_, _, err = s.Claim(ctx, "sc", "tiny", []byte("fp"), "owner", -time.Second)
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)
	for _, key := range []string{"remedy:c:{sc}:zero", "remedy:c:{sc}:tiny", "remedy:i:{sc}:tiny"} {
		n, err := client.Exists(ctx, key).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "%s, stored for less than 1ms, after 20ms", key)
	}
}

func TestMalformed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Client(t, redistest.Start(t))
	prefix := redistest.Prefix()
	s := redisstore.New(client, redisstore.Options{Prefix: prefix})

	set := func(key string, fields ...any) {
		t.Helper()
		require.NoError(t, client.Del(ctx, prefix+key).Err())
		if len(fields) > 0 {
			require.NoError(t, client.HSet(ctx, prefix+key, fields...).Err())
		}
	}
	set("i:{sc}:state", "state", "weird", "fp", "x", "owner", "o")
	set("i:{sc}:nofp", "state", "inflight", "owner", "o")
	set("i:{sc}:noresult", "state", "done", "fp", "x", "owner", "o")
	set("i:{sc}:badresult", "state", "done", "fp", "x", "owner", "o", "result", "\x01\x00\x80")
	set("i:{sc}:badversion", "state", "done", "fp", "x", "owner", "o", "result", "\x09\x00\x00\x00")
	for _, key := range []string{"state", "nofp", "noresult", "badresult", "badversion"} {
		_, claimed, err := s.Claim(ctx, "sc", key, []byte("fp"), "owner", time.Minute)
		assert.ErrorContains(t, err, "redisstore: claim:", "Claim of the malformed record %q", key)
		assert.False(t, claimed, "Claim of the malformed record %q", key)
	}

	// A key of another type: every method fails, with Redis's error, wrapped.
	require.NoError(t, client.Set(ctx, prefix+"i:{sc}:string", "x", time.Minute).Err())
	require.NoError(t, client.HSet(ctx, prefix+"c:{sc}:hash", "f", "v").Err())
	_, _, err := s.Claim(ctx, "sc", "string", []byte("fp"), "owner", time.Minute)
	assert.ErrorContains(t, err, "redisstore: claim:")
	assert.ErrorContains(t, err, "WRONGTYPE")
	err = s.Complete(ctx, "sc", "string", "owner", server.StoredResponse{}, time.Minute)
	assert.ErrorContains(t, err, "redisstore: complete:")
	assert.NotErrorIs(t, err, server.ErrNotOwner)
	err = s.Release(ctx, "sc", "string", "owner")
	assert.ErrorContains(t, err, "redisstore: release:")
	assert.NotErrorIs(t, err, server.ErrNotOwner)
	_, ok, err := s.TakeChallenge(ctx, "sc", "hash")
	assert.ErrorContains(t, err, "redisstore: take challenge:")
	assert.False(t, ok)
}

func TestUnavailable(t *testing.T) {
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second, DialerRetries: 1, DialerRetryTimeout: time.Millisecond})
	defer client.Close()
	s := redisstore.New(client, redisstore.Options{})

	ctx := context.Background()
	var errs []error
	errs = append(errs, s.PutChallenge(ctx, "sc", "c", nil, time.Minute))
	_, _, err = s.TakeChallenge(ctx, "sc", "c")
	errs = append(errs, err)
	_, _, err = s.Claim(ctx, "sc", "k", nil, "owner", time.Minute)
	errs = append(errs, err)
	errs = append(errs, s.Complete(ctx, "sc", "k", "owner", server.StoredResponse{}, time.Minute))
	errs = append(errs, s.Release(ctx, "sc", "k", "owner"))
	errs = append(errs, s.Load(ctx))
	for i, err := range errs {
		if assert.Error(t, err, "call %d with Redis down", i) {
			assert.True(t, strings.HasPrefix(err.Error(), "redisstore: "), "call %d: %v", i, err)
			assert.NotErrorIs(t, err, server.ErrNotOwner, "call %d", i)
		}
	}
}

// BenchmarkStore measures each operation against a local redis-server; roundtrips/op counts
// commands sent, as a go-redis hook sees them.
func BenchmarkStore(b *testing.B) {
	ctx := context.Background()
	var c counter
	client := redistest.Client(b, redistest.Start(b), &c)
	// Room for every key of the run: the cost measured is of a scope under its quota.
	s := redisstore.New(client, redisstore.Options{Prefix: redistest.Prefix(), ScopeChallenges: 1 << 30, ScopeRecords: 1 << 30})
	if err := s.Load(ctx); err != nil {
		b.Fatal(err)
	}
	result := server.StoredResponse{
		Status: 201,
		Header: http.Header{"Content-Type": {"application/json"}, "Location": {"/orders/42"}},
		Body:   []byte(`{"id":42,"status":"accepted","items":[{"sku":"A-1","qty":2}]}`),
	}
	fingerprint := make([]byte, 32)
	const ttl = 10 * time.Second

	var seq atomic.Int64 // a fresh key for each operation, across runs
	run := func(b *testing.B, op func(i int64) error) {
		c.take()
		b.ReportAllocs()
		ops := 0
		for b.Loop() {
			if err := op(seq.Add(1)); err != nil {
				b.Fatal(err)
			}
			ops++
		}
		n, _ := c.take()
		b.ReportMetric(float64(n)/float64(ops), "roundtrips/op")
	}

	b.Run("Claim+Complete", func(b *testing.B) {
		run(b, func(i int64) error {
			key := fmt.Sprint("first-", i)
			if _, claimed, err := s.Claim(ctx, "sc", key, fingerprint, "owner", ttl); err != nil || !claimed {
				return fmt.Errorf("claim: %v, claimed %v", err, claimed)
			}
			return s.Complete(ctx, "sc", key, "owner", result, ttl)
		})
	})
	b.Run("Claim/replay", func(b *testing.B) {
		if _, _, err := s.Claim(ctx, "sc", "replay", fingerprint, "owner", time.Hour); err != nil {
			b.Fatal(err)
		}
		if err := s.Complete(ctx, "sc", "replay", "owner", result, time.Hour); err != nil && !errors.Is(err, server.ErrNotOwner) {
			b.Fatal(err)
		}
		run(b, func(int64) error {
			rec, claimed, err := s.Claim(ctx, "sc", "replay", fingerprint, "other", ttl)
			if err == nil && (claimed || !rec.Completed) {
				err = errors.New("not a replay")
			}
			return err
		})
	})
	b.Run("Put+Take", func(b *testing.B) {
		run(b, func(i int64) error {
			id := fmt.Sprint("challenge-", i)
			if err := s.PutChallenge(ctx, "sc", id, fingerprint, ttl); err != nil {
				return err
			}
			_, ok, err := s.TakeChallenge(ctx, "sc", id)
			if err == nil && !ok {
				err = errors.New("not taken")
			}
			return err
		})
	})
}
