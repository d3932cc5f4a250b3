package redispacer_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/pacertest"
	"github.com/remedy-go/remedy/internal/testkit/redistest"
	"github.com/remedy-go/remedy/redispacer"
)

// newClient returns a client of the server on addr, closed when tb ends.
func newClient(tb testing.TB, addr string) *redis.Client {
	tb.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr})
	tb.Cleanup(func() { client.Close() })
	return client
}

// prefixes makes each Pacer of a test its own key space.
var prefixes atomic.Int64

func newPrefix() string {
	return fmt.Sprintf("test%d:", prefixes.Add(1))
}

func TestPacer(t *testing.T) {
	t.Parallel()
	client := newClient(t, redistest.Start(t))
	pacertest.Run(t, func(t *testing.T) remedy.Pacer {
		return redispacer.New(client, redispacer.Options{Prefix: newPrefix()})
	})
}

func TestClusterPacer(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 0)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() { client.Close() })
	pacertest.Run(t, func(t *testing.T) remedy.Pacer {
		return redispacer.New(client, redispacer.Options{Prefix: newPrefix()})
	})

	// The keys of many origins (random: CRC16 of names that differ in one digit can share a
	// master) spread over the masters, each on the master serving its slot.
	ctx := context.Background()
	prefix := newPrefix()
	p := redispacer.New(client, redispacer.Options{Prefix: prefix})
	for range 64 {
		require.NoError(t, p.Hold(ctx, "https://"+rand.Text()+".example.com", time.Now().Add(time.Hour)))
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
	client := newClient(t, redistest.Start(t))
	prefix := newPrefix()
	p := redispacer.New(client, redispacer.Options{Prefix: prefix})

	const origin = "https://api.example.com"
	require.NoError(t, p.Hold(ctx, origin, time.Now().Add(time.Hour)))
	ttl, err := client.PTTL(ctx, prefix+origin).Result()
	require.NoError(t, err)
	assert.InDelta(t, time.Hour.Seconds(), ttl.Seconds(), pacertest.Slack.Seconds(), "the key expires when the hold ends")
	v, err := client.Get(ctx, prefix+origin).Int64()
	require.NoError(t, err)
	assert.InDelta(t, time.Now().Add(time.Hour).UnixMilli(), v, float64(pacertest.Slack.Milliseconds()), "the end of the hold, in Unix ms")
	u, err := p.Until(ctx, origin)
	require.NoError(t, err)
	assert.InDelta(t, v, u.UnixMilli(), float64(pacertest.Slack.Milliseconds()), "Until reads the value")

	for _, key := range []string{"a\x00b", "{tag}", "#x", "a b", strings.Repeat("x", 300), "é"} {
		require.NoError(t, p.Hold(ctx, key, time.Now().Add(time.Hour)))
	}
	keys, err := client.Keys(ctx, prefix+"*").Result()
	require.NoError(t, err)
	assert.Len(t, keys, 7)
	for _, k := range keys {
		if k == prefix+origin {
			continue
		}
		assert.Regexp(t, "^"+prefix+"#[0-9a-f]{64}$", k, "an odd key is hashed")
		ttl, err := client.PTTL(ctx, k).Result()
		require.NoError(t, err)
		assert.Greater(t, ttl, time.Hour-pacertest.Slack, "%s expires", k)
	}

	// A hold that has passed writes nothing.
	require.NoError(t, p.Hold(ctx, "passed", time.Now().Add(-time.Second)))
	n, err := client.Exists(ctx, prefix+"passed").Result()
	require.NoError(t, err)
	assert.Zero(t, n)
}

// A server's absurd wait is held for MaxAhead at most, in what Until says and in the key's
// life; so is a value far ahead written under the prefix by something else.
func TestMaxAhead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := newClient(t, redistest.Start(t))
	prefix := newPrefix()
	p := redispacer.New(client, redispacer.Options{Prefix: prefix})
	capped := func(key string) {
		t.Helper()
		u, err := p.Until(ctx, key)
		require.NoError(t, err)
		assert.WithinDuration(t, time.Now().Add(redispacer.MaxAhead), u, pacertest.Slack, "Until of %q", key)
	}

	for _, ahead := range []time.Duration{redispacer.MaxAhead + time.Minute, 10 * 365 * 24 * time.Hour, time.Duration(1<<63 - 1)} {
		key := "held-" + ahead.String()
		require.NoError(t, p.Hold(ctx, key, time.Now().Add(ahead)))
		capped(key)
		ttl, err := client.PTTL(ctx, prefix+key).Result()
		require.NoError(t, err)
		assert.LessOrEqual(t, ttl, redispacer.MaxAhead, "the key of %q lives at most MaxAhead", key)
	}
	require.NoError(t, p.Hold(ctx, "far", time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)))
	capped("far")

	// Values written by something else, without a TTL.
	for i, v := range []string{"99999999999999999999", "1e400", "inf", "9e15"} {
		key := fmt.Sprintf("written%d", i)
		require.NoError(t, client.Set(ctx, prefix+key, v, 0).Err())
		u, err := p.Until(ctx, key)
		if err != nil {
			assert.ErrorIs(t, err, redispacer.ErrMalformed, "%q", v)
			continue
		}
		assert.WithinDuration(t, time.Now().Add(redispacer.MaxAhead), u, pacertest.Slack, "Until of the value %q", v)
	}
}

// A value under the key that is not a number reads as none, with an error; a Hold replaces it.
func TestMalformed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := newClient(t, redistest.Start(t))
	prefix := newPrefix()
	p := redispacer.New(client, redispacer.Options{Prefix: prefix})

	for i, v := range []string{"", "soon", "nan", "-nan", "0x", "12abc", "\xff"} {
		key := fmt.Sprintf("bad%d", i)
		require.NoError(t, client.Set(ctx, prefix+key, v, 0).Err())
		u, err := p.Until(ctx, key)
		assert.ErrorIs(t, err, redispacer.ErrMalformed, "the value %q", v)
		assert.True(t, u.IsZero(), "the value %q reads as none: %v", v, u)

		at := time.Now().Add(time.Hour)
		require.NoError(t, p.Hold(ctx, key, at), "a hold over the value %q", v)
		u, err = p.Until(ctx, key)
		require.NoError(t, err)
		assert.WithinDuration(t, at, u, pacertest.Slack, "the hold that replaced %q", v)
		assert.False(t, u.Before(at))
	}

	// A passed time reads as none, without an error.
	require.NoError(t, client.Set(ctx, prefix+"old", "1000", 0).Err())
	u, err := p.Until(ctx, "old")
	require.NoError(t, err)
	assert.True(t, u.IsZero())

	// A key of another type: Redis's error, wrapped.
	require.NoError(t, client.HSet(ctx, prefix+"hash", "f", "v").Err())
	_, err = p.Until(ctx, "hash")
	assert.ErrorContains(t, err, "redispacer: until:")
	assert.ErrorContains(t, err, "WRONGTYPE")
	err = p.Hold(ctx, "hash", time.Now().Add(time.Hour))
	assert.ErrorContains(t, err, "redispacer: hold:")
	assert.ErrorContains(t, err, "WRONGTYPE")
}

// A Redis that is down, or that accepts connections and answers nothing: each method fails
// within the Pacer's timeout (the context bounds it: without it, the client would dial and
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
			client := redis.NewClient(&tc.opts)
			defer client.Close()
			for name, op := range map[string]func(p *redispacer.Pacer) error{
				"Until": func(p *redispacer.Pacer) error { _, err := p.Until(context.Background(), "k"); return err },
				"Hold":  func(p *redispacer.Pacer) error { return p.Hold(context.Background(), "k", time.Now().Add(time.Hour)) },
			} {
				p := redispacer.New(client, redispacer.Options{Timeout: timeout})
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
					_, err := p.Until(context.Background(), "k")
					assert.ErrorIs(t, err, redispacer.ErrUnavailable, "%s: Until in the pause", name)
					err = p.Hold(context.Background(), "k", time.Now().Add(time.Hour))
					assert.ErrorIs(t, err, redispacer.ErrUnavailable, "%s: Hold in the pause", name)
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
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1,
		Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
			if down.Load() {
				return nil, errors.New("down")
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}})
	t.Cleanup(func() { client.Close() })
	p := redispacer.New(client, redispacer.Options{Prefix: newPrefix()})
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	redispacer.SetClock(p, func() time.Time { return time.Unix(0, clock.Load()) })
	ctx := context.Background()

	// The caller's context: canceled before, or during, the call. No pause.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := p.Until(canceled, "k")
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, p.Hold(canceled, "k", time.Now().Add(time.Hour)), context.Canceled)
	require.NoError(t, p.Hold(ctx, "k", time.Now().Add(time.Hour)), "no pause after the caller's context")

	// Redis goes down: one failure, then the pause.
	down.Store(true)
	client.Do(ctx, "client", "kill", "type", "normal", "skipme", "no") // drop the pool's connections: a new dial for the next call
	_, err = p.Until(ctx, "k")
	require.Error(t, err)
	assert.NotErrorIs(t, err, redispacer.ErrUnavailable)
	_, err = p.Until(ctx, "k")
	assert.ErrorIs(t, err, redispacer.ErrUnavailable)

	// Back up: still paused until the pause ends, then paced as before.
	down.Store(false)
	clock.Add(int64(redispacer.Pause - time.Millisecond))
	_, err = p.Until(ctx, "k")
	assert.ErrorIs(t, err, redispacer.ErrUnavailable)
	clock.Add(int64(time.Millisecond))
	u, err := p.Until(ctx, "k")
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(time.Hour), u, pacertest.Slack)
}

// BenchmarkPacer measures what pacing adds to an attempt against a local redis-server: an
// Until before each attempt, and a Hold after a refusal.
func BenchmarkPacer(b *testing.B) {
	ctx := context.Background()
	client := newClient(b, redistest.Start(b))
	p := redispacer.New(client, redispacer.Options{Prefix: newPrefix()})
	if err := p.Load(ctx); err != nil {
		b.Fatal(err)
	}
	const origin = "https://api.example.com"
	b.Run("Until", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Until(ctx, origin); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Hold", func(b *testing.B) {
		at := time.Now().Add(time.Hour)
		b.ReportAllocs()
		for b.Loop() {
			if err := p.Hold(ctx, origin, at); err != nil {
				b.Fatal(err)
			}
		}
	})
}
