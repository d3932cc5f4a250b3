package bench

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/remedy-go/remedy/internal/testkit/redistest"
	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/redisstore"
)

// keySeq makes Idempotency-Keys new to the store in every benchmark of a run.
var keySeq atomic.Int64

func freshKey() string {
	return strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatInt(keySeq.Add(1), 36)
}

// BenchmarkIdempotency is the validated POST of BenchmarkServer made Idempotent on remedy's
// reference server, with the memory store and with Redis (a throwaway local redis-server;
// skipped when redis-server is not installed, unless REMEDY_REQUIRE_REDIS=1), through
// handler.ServeHTTP: without a key (the baseline: no store is touched), a first execution (a
// new key each time: claim, run, store the result) and a replay (one key: the stored result
// is answered with Idempotency-Replayed: true and nothing runs). The Redis rows also report
// the round trips to Redis per request (roundtrips/op).
func BenchmarkIdempotency(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		// Room for every key of the runs: a full store would refuse them (503).
		store := server.NewMemoryStore(server.MemoryOptions{MaxRecords: 1 << 30, ScopeRecords: 1 << 30})
		benchIdempotency(b, remedyIdempotent(b, store), nil)
	})
	b.Run("redis", func(b *testing.B) {
		var trips roundTrips
		client := redis.NewClient(&redis.Options{Addr: redistest.Start(b)})
		client.AddHook(&trips)
		b.Cleanup(func() { client.Close() })
		store := redisstore.New(client, redisstore.Options{Prefix: "bench:" + freshKey() + ":", ScopeRecords: 1 << 30})
		if err := store.Load(context.Background()); err != nil {
			b.Fatal(err)
		}
		benchIdempotency(b, remedyIdempotent(b, store), &trips)
	})
}

// roundTripsUnit is the metric of the Redis round trips per request; the report reads it by
// this name.
const roundTripsUnit = "roundtrips/op"

// roundTrips is a redis.Hook that counts round trips to Redis: a command, or a pipeline of
// them, each one exchange on the connection.
type roundTrips struct{ n atomic.Int64 }

func (c *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}

// remedyIdempotent is remedyServer's operation, Idempotent, keeping its records in store.
func remedyIdempotent(tb testing.TB, store server.IdempotencyStore) http.Handler {
	tb.Helper()
	api, err := server.New(server.WithIdempotency(server.IdempotencyOptions{Store: store}))
	if err != nil {
		tb.Fatal(err)
	}
	if err := server.Post(api, "/v1/orders", func(ctx context.Context, in order) (created, error) {
		return answer, nil
	}, server.OperationID("create_order"), server.Idempotent()); err != nil {
		tb.Fatal(err)
	}
	return api
}

// benchIdempotency runs the three cases on h; with trips, each reports the round trips it
// counted per request.
func benchIdempotency(b *testing.B, h http.Handler, trips *roundTrips) {
	check := func(b *testing.B, key string, replayed bool) {
		w := serve(h, validOrder, key)
		if w.Code != 200 || (w.Header().Get("Idempotency-Replayed") == "true") != replayed {
			b.Fatalf("status %d, Idempotency-Replayed %q, want 200 and replayed %v: %s",
				w.Code, w.Header().Get("Idempotency-Replayed"), replayed, w.Body)
		}
	}
	loop := func(b *testing.B, key func() string, replayed bool) {
		b.ReportAllocs()
		var before int64
		if trips != nil {
			before = trips.n.Load()
		}
		report := measureCPU(b)
		for b.Loop() {
			check(b, key(), replayed)
		}
		report()
		if trips != nil {
			b.ReportMetric(float64(trips.n.Load()-before)/float64(b.N), roundTripsUnit)
		}
	}
	b.Run("nokey", func(b *testing.B) {
		loop(b, func() string { return "" }, false)
	})
	b.Run("first", func(b *testing.B) {
		loop(b, freshKey, false)
	})
	b.Run("replay", func(b *testing.B) {
		key := freshKey()
		check(b, key, false)
		loop(b, func() string { return key }, true)
	})
}
