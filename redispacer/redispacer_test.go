package redispacer_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/pacertest"
	"github.com/remedy-go/remedy/internal/testkit/redistest"
	"github.com/remedy-go/remedy/redispacer"
)

func TestPacer(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t, redistest.Start(t))
	pacertest.Run(t, func(t *testing.T) client.Pacer {
		return redispacer.New(rdb, redispacer.Options{Prefix: redistest.Prefix()})
	})
}

func TestClusterPacer(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 0)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() { rdb.Close() })
	pacertest.Run(t, func(t *testing.T) client.Pacer {
		return redispacer.New(rdb, redispacer.Options{Prefix: redistest.Prefix()})
	})

	// The keys of many origins (random: CRC16 of names that differ in one digit can share a
	// master) spread over the masters, each on the master serving its slot.
	ctx := context.Background()
	prefix := redistest.Prefix()
	p := redispacer.New(rdb, redispacer.Options{Prefix: prefix})
	for range 64 {
		require.NoError(t, p.Learn(ctx, "https://"+rand.Text()+".example.com", client.Limit{Until: time.Now().Add(time.Hour)}))
	}
	masters := 0
	for _, addr := range c.Masters() {
		keys, err := c.Node(addr).Keys(ctx, prefix+"*").Result()
		require.NoError(t, err)
		if len(keys) > 0 {
			masters++
		}
	}
	assert.Equal(t, 3, masters, "64 origins spread over the 3 masters")
}

// The key a Pacer writes: the caller's key after the prefix, expiring at the time held; a key
// that is long or holds odd bytes, hashed; none for a hold that has passed.
func TestKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Client(t, redistest.Start(t))
	prefix := redistest.Prefix()
	p := redispacer.New(rdb, redispacer.Options{Prefix: prefix})

	const origin = "https://api.example.com"
	require.NoError(t, p.Learn(ctx, origin, client.Limit{Until: time.Now().Add(time.Hour)}))
	ttl, err := rdb.PTTL(ctx, prefix+origin).Result()
	require.NoError(t, err)
	assert.InDelta(t, time.Hour.Seconds(), ttl.Seconds(), pacertest.Slack.Seconds(), "the key expires when the hold ends")
	v, err := rdb.HGet(ctx, prefix+origin, "h").Int64()
	require.NoError(t, err)
	assert.InDelta(t, time.Now().Add(time.Hour).UnixMilli(), v, float64(pacertest.Slack.Milliseconds()), "the end of the hold, in Unix ms")
	u, err := p.Take(ctx, origin)
	require.NoError(t, err)
	assert.InDelta(t, v, u.UnixMilli(), float64(pacertest.Slack.Milliseconds()), "Take reads the value")

	// A count: its reset and what is left, expiring at the reset.
	require.NoError(t, p.Learn(ctx, "counted", client.Limit{Remaining: 5, Reset: time.Now().Add(time.Minute)}))
	fields, err := rdb.HGetAll(ctx, prefix+"counted").Result()
	require.NoError(t, err)
	assert.Equal(t, "5", fields["n"])
	r, err := strconv.ParseInt(fields["r"], 10, 64)
	require.NoError(t, err)
	assert.InDelta(t, time.Now().Add(time.Minute).UnixMilli(), r, float64(pacertest.Slack.Milliseconds()), "the reset, in Unix ms")
	ttl, err = rdb.PTTL(ctx, prefix+"counted").Result()
	require.NoError(t, err)
	assert.InDelta(t, time.Minute.Seconds(), ttl.Seconds(), pacertest.Slack.Seconds(), "the key expires at the reset")
	require.NoError(t, rdb.Del(ctx, prefix+"counted").Err())

	for _, key := range []string{"a\x00b", "{tag}", "#x", "a b", strings.Repeat("x", 300), "é"} {
		require.NoError(t, p.Learn(ctx, key, client.Limit{Until: time.Now().Add(time.Hour)}))
	}
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	require.NoError(t, err)
	assert.Len(t, keys, 7)
	for _, k := range keys {
		if k == prefix+origin {
			continue
		}
		assert.Regexp(t, "^"+prefix+"#[0-9a-f]{64}$", k, "an odd key is hashed")
		ttl, err := rdb.PTTL(ctx, k).Result()
		require.NoError(t, err)
		assert.Greater(t, ttl, time.Hour-pacertest.Slack, "%s expires", k)
	}

	// A hold that has passed writes nothing.
	require.NoError(t, p.Learn(ctx, "passed", client.Limit{Until: time.Now().Add(-time.Second)}))
	n, err := rdb.Exists(ctx, prefix+"passed").Result()
	require.NoError(t, err)
	assert.Zero(t, n)
}

// A server's absurd wait is held for MaxAhead at most, in what Take says and in the key's
// life; so is a value far ahead written under the prefix by something else.
func TestMaxAhead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Client(t, redistest.Start(t))
	prefix := redistest.Prefix()
	p := redispacer.New(rdb, redispacer.Options{Prefix: prefix})
	capped := func(key string) {
		t.Helper()
		u, err := p.Take(ctx, key)
		require.NoError(t, err)
		assert.WithinDuration(t, time.Now().Add(redispacer.MaxAhead), u, pacertest.Slack, "Take of %q", key)
	}

	for _, ahead := range []time.Duration{redispacer.MaxAhead + time.Minute, 10 * 365 * 24 * time.Hour, time.Duration(1<<63 - 1)} {
		key := "held-" + ahead.String()
		require.NoError(t, p.Learn(ctx, key, client.Limit{Until: time.Now().Add(ahead)}))
		capped(key)
		ttl, err := rdb.PTTL(ctx, prefix+key).Result()
		require.NoError(t, err)
		assert.LessOrEqual(t, ttl, redispacer.MaxAhead, "the key of %q lives at most MaxAhead", key)
	}
	require.NoError(t, p.Learn(ctx, "far", client.Limit{Until: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}))
	capped("far")

	// Values written by something else, without a TTL.
	for i, v := range []string{"99999999999999999999", "1e400", "inf", "9e15"} {
		key := fmt.Sprintf("written%d", i)
		require.NoError(t, rdb.HSet(ctx, prefix+key, "h", v).Err())
		u, err := p.Take(ctx, key)
		if err != nil {
			assert.ErrorIs(t, err, redispacer.ErrMalformed, "%q", v)
			continue
		}
		assert.WithinDuration(t, time.Now().Add(redispacer.MaxAhead), u, pacertest.Slack, "Take of the value %q", v)
	}
}

// A value under the key that is not a pacer's hash reads as none, with an error; a Learn
// replaces it. A hash whose fields are not numbers holds nothing.
func TestMalformed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Client(t, redistest.Start(t))
	prefix := redistest.Prefix()
	p := redispacer.New(rdb, redispacer.Options{Prefix: prefix})

	write := map[string]func(key string) error{
		"a string": func(key string) error { return rdb.Set(ctx, key, "1000", 0).Err() },
		"a list":   func(key string) error { return rdb.RPush(ctx, key, "x").Err() },
		"a set":    func(key string) error { return rdb.SAdd(ctx, key, "x").Err() },
	}
	for name, w := range write {
		key := "bad-" + strings.ReplaceAll(name, " ", "-")
		require.NoError(t, w(prefix+key))
		u, err := p.Take(ctx, key)
		assert.ErrorIs(t, err, redispacer.ErrMalformed, "%s under the key", name)
		assert.True(t, u.IsZero(), "%s reads as none: %v", name, u)

		at := time.Now().Add(time.Hour)
		require.NoError(t, p.Learn(ctx, key, client.Limit{Until: at}), "a hold over %s", name)
		u, err = p.Take(ctx, key)
		require.NoError(t, err)
		assert.WithinDuration(t, at, u, pacertest.Slack, "the hold that replaced %s", name)
		assert.False(t, u.Before(at))
	}

	for i, v := range []string{"", "soon", "nan", "-nan", "0x", "12abc", "\xff"} {
		key := fmt.Sprintf("fields%d", i)
		require.NoError(t, rdb.HSet(ctx, prefix+key, "h", v, "r", v, "n", v).Err())
		for range 3 {
			u, err := p.Take(ctx, key)
			require.NoError(t, err, "the fields %q", v)
			assert.True(t, u.IsZero(), "the fields %q hold nothing: %v", v, u)
		}
	}

	// A passed time holds nothing.
	require.NoError(t, rdb.HSet(ctx, prefix+"old", "h", "1000", "r", "1000", "n", "0").Err())
	u, err := p.Take(ctx, "old")
	require.NoError(t, err)
	assert.True(t, u.IsZero())
}

// A Redis that is down, or that accepts connections and answers nothing: each method fails
// within the Pacer's timeout (the context bounds it: without it, the rdb would dial and
// retry for seconds), and then fails at once, without a dial, until the pause ends.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := l.Addr().String()
	require.NoError(t, l.Close())
	hung := hungServer(t)

	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		name string
		opts redis.Options
	}{
		{"down, default options", redis.Options{Addr: down}},
		{"hung, ContextTimeoutEnabled", redis.Options{Addr: hung, ContextTimeoutEnabled: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dials atomic.Int64
			tc.opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			}
			rdb := redis.NewClient(&tc.opts)
			defer rdb.Close()
			for name, op := range map[string]func(p *redispacer.Pacer) error{
				"Take": func(p *redispacer.Pacer) error { _, err := p.Take(context.Background(), "k"); return err },
				"Learn": func(p *redispacer.Pacer) error {
					return p.Learn(context.Background(), "k", client.Limit{Until: time.Now().Add(time.Hour)})
				},
			} {
				p := redispacer.New(rdb, redispacer.Options{Timeout: timeout})
				start := time.Now()
				err := op(p)
				took := time.Since(start)
				if assert.Error(t, err, name) {
					assert.True(t, strings.HasPrefix(err.Error(), "redispacer: "), "%s: %v", name, err)
					assert.NotErrorIs(t, err, redispacer.ErrUnavailable, "%s: the first failure is Redis's", name)
				}
				// Not a measure of speed: the bound is the timeout's, with room for a busy
				// machine; without it, a call would take seconds.
				assert.Less(t, took, timeout+time.Second, "%s took %v: the timeout was not honoured", name, took)
				t.Logf("%s: %v after %v", name, err, took)

				dialed := dials.Load()
				for range 10 {
					_, err := p.Take(context.Background(), "k")
					assert.ErrorIs(t, err, redispacer.ErrUnavailable, "%s: Take in the pause", name)
					err = p.Learn(context.Background(), "k", client.Limit{Until: time.Now().Add(time.Hour)})
					assert.ErrorIs(t, err, redispacer.ErrUnavailable, "%s: Learn in the pause", name)
				}
				assert.Equal(t, dialed, dials.Load(), "%s: dials in the pause", name)
			}
		})
	}
}

// hungServer returns the address of a server that accepts connections and never answers.
func hungServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// After a failure, the Pacer asks Redis again once the pause has ended, and a Redis that is
// back paces again; a caller's own context that ends starts no pause, nor does an error
// Redis answers.
func TestUnavailableRecovers(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	var down atomic.Bool
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1,
		Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
			if down.Load() {
				return nil, errors.New("down")
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}})
	t.Cleanup(func() { rdb.Close() })
	p := redispacer.New(rdb, redispacer.Options{Prefix: redistest.Prefix()})
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	redispacer.SetClock(p, func() time.Time { return time.Unix(0, clock.Load()) })
	ctx := context.Background()

	// The caller's context: canceled before, or during, the call. No pause.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := p.Take(canceled, "k")
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, p.Learn(canceled, "k", client.Limit{Until: time.Now().Add(time.Hour)}), context.Canceled)
	require.NoError(t, p.Learn(ctx, "k", client.Limit{Until: time.Now().Add(time.Hour)}), "no pause after the caller's context")

	// Redis goes down: one failure, then the pause.
	down.Store(true)
	rdb.Do(ctx, "client", "kill", "type", "normal", "skipme", "no") // drop the pool's connections: a new dial for the next call
	_, err = p.Take(ctx, "k")
	require.Error(t, err)
	assert.NotErrorIs(t, err, redispacer.ErrUnavailable)
	_, err = p.Take(ctx, "k")
	assert.ErrorIs(t, err, redispacer.ErrUnavailable)

	// Back up: still paused until the pause ends, then paced as before.
	down.Store(false)
	clock.Add(int64(redispacer.Pause - time.Millisecond))
	_, err = p.Take(ctx, "k")
	assert.ErrorIs(t, err, redispacer.ErrUnavailable)
	clock.Add(int64(time.Millisecond))
	u, err := p.Take(ctx, "k")
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(time.Hour), u, pacertest.Slack)
}

// BenchmarkPacer measures what pacing adds to an attempt against a local redis-server: a Take
// before each attempt, and a Learn after an answer that states a limit.
func BenchmarkPacer(b *testing.B) {
	ctx := context.Background()
	rdb := redistest.Client(b, redistest.Start(b))
	p := redispacer.New(rdb, redispacer.Options{Prefix: redistest.Prefix()})
	if err := p.Load(ctx); err != nil {
		b.Fatal(err)
	}
	const origin = "https://api.example.com"
	b.Run("Take", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Take(ctx, origin); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Learn", func(b *testing.B) {
		l := client.Limit{Remaining: 1 << 30, Reset: time.Now().Add(time.Hour)}
		b.ReportAllocs()
		for b.Loop() {
			if err := p.Learn(ctx, origin, l); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The count of what remains is the fleet's: what one process learned, every process takes
// from, and together they take no more than it; an answer's count is lowered by the fleet's
// requests still in flight, every process's, but not by those of a process that has not asked
// for a minute (it ended).
func TestCountShared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr := redistest.Start(t)
	rdb := redistest.Client(t, addr)
	prefix := redistest.Prefix()
	a := redispacer.New(rdb, redispacer.Options{Prefix: prefix})
	b := redispacer.New(redistest.Client(t, addr), redispacer.Options{Prefix: prefix})
	const key = "https://api.example.com"
	reset := time.Now().Add(time.Hour)
	take := func(p *redispacer.Pacer) bool {
		t.Helper()
		u, err := p.Take(ctx, key)
		require.NoError(t, err)
		return u.IsZero()
	}

	// A process that ended long ago with requests in flight.
	old := strconv.FormatInt(time.Now().Add(-2*time.Minute).UnixMilli(), 10)
	require.NoError(t, rdb.HSet(ctx, prefix+key, "f:ghost", "40", "s:ghost", old).Err())
	// a and b have two requests each in flight when the first answer says 6 remain: 3 may go,
	// fleet-wide.
	for _, p := range []*redispacer.Pacer{a, a, b, b} {
		require.True(t, take(p))
	}
	require.NoError(t, a.Learn(ctx, key, client.Limit{Remaining: 6, Reset: reset}))
	went := 0
	for i := range 10 {
		if take([]*redispacer.Pacer{a, b}[i%2]) {
			went++
		}
	}
	assert.Equal(t, 3, went, "requests the fleet sent of the 6 that remained, 3 in flight")
	u, err := b.Take(ctx, key)
	require.NoError(t, err)
	assert.WithinDuration(t, reset, u, pacertest.Slack, "held until the reset")
	assert.False(t, u.Before(reset))
	ghost, err := rdb.HExists(ctx, prefix+key, "f:ghost").Result()
	require.NoError(t, err)
	assert.False(t, ghost, "the ended process's count is forgotten")

	// b's answers say more remain than the count: nothing is raised.
	require.NoError(t, b.Learn(ctx, key, client.Limit{Remaining: 50, Reset: reset}))
	assert.False(t, take(a), "a count is only ever lowered before its reset")
}
