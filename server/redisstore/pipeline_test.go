package redisstore_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/redistest"
	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/redisstore"
	"github.com/remedy-go/remedy/server/storetest"
)

type charge struct {
	Amount int `json:"amount" schema:"minimum=1"`
}

type receipt struct {
	ID  string `json:"id"`
	Run int64  `json:"run"`
}

// instance is one server instance of the payments API on the shared Redis at addr; w, when
// not nil, watches its idempotency store.
func instance(t testing.TB, addr, prefix string, runs *atomic.Int64, gate <-chan struct{}, w *storetest.Waiters) *httptest.Server {
	t.Helper()
	s := redisstore.New(redistest.Client(t, addr), redisstore.Options{Prefix: prefix})
	var idem server.IdempotencyStore = s
	if w != nil {
		idem = w.Watch(s)
	}
	api, err := server.New(server.WithConfirmation(server.ConfirmationOptions{Store: s}),
		server.WithIdempotency(server.IdempotencyOptions{Store: idem, Wait: time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	handler := func(ctx context.Context, in charge) (receipt, error) {
		run := runs.Add(1)
		if gate != nil {
			<-gate
		}
		return receipt{ID: "ch_" + strconv.FormatInt(run, 10), Run: run}, nil
	}
	require.NoError(t, server.Post(api, "/v1/charges", handler, server.OperationID("create_charge"), server.Idempotent()))
	require.NoError(t, server.Post(api, "/v1/payouts", handler, server.OperationID("create_payout"), server.Confirm(), server.Idempotent()))
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return srv
}

func post(t testing.TB, url, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

// 200 concurrent identical requests with one key, spread over two instances sharing one
// Redis: one execution, and every caller gets its result.
func TestTwoInstancesExecuteOnce(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	var runs atomic.Int64
	gate := make(chan struct{})
	w := &storetest.Waiters{}
	a := instance(t, addr, "once:", &runs, gate, w)
	b := instance(t, addr, "once:", &runs, gate, w)
	const n = 200
	type result struct {
		status   int
		replayed bool
		body     string
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	// Should the test stop early, the gate opens and the requests end before the servers
	// close, which would wait on the handler forever.
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	t.Cleanup(func() {
		open()
		wg.Wait()
	})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv := a
			if i%2 == 1 {
				srv = b
			}
			status, h, body := post(t, srv.URL+"/v1/charges", `{"amount":500}`, "Idempotency-Key", "one-key")
			results[i] = result{status, h.Get("Idempotency-Replayed") == "true", string(body)}
		}()
	}
	// Every duplicate has found the key in flight, on one instance or the other, before the
	// execution may finish: they all wait, none comes late to a completed key.
	if !assert.Eventually(t, func() bool { return runs.Load() >= 1 && w.Count() >= n-1 }, 20*time.Second, time.Millisecond) {
		t.Fatalf("%d executions, %d of %d duplicates waiting", runs.Load(), w.Count(), n-1)
	}
	open()
	wg.Wait()
	assert.EqualValues(t, 1, runs.Load(), "one execution across both instances")
	replayed := 0
	for i, r := range results {
		require.Equal(t, 200, r.status, "request %d: %s", i, r.body)
		assert.JSONEq(t, results[0].body, r.body)
		if r.replayed {
			replayed++
		}
	}
	assert.Equal(t, n-1, replayed)
}

// A challenge issued by one instance is confirmed on the other, once; the confirmed call's
// network retry with its key is replayed by either.
func TestTwoInstancesShareConfirmations(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	var runs atomic.Int64
	a := instance(t, addr, "confirm:", &runs, nil, nil)
	b := instance(t, addr, "confirm:", &runs, nil, nil)
	status, h, body := post(t, a.URL+"/v1/payouts", `{"amount":900}`)
	env, ok := remedy.Parse(status, h, body)
	require.True(t, ok)
	require.Equal(t, "confirmation_required", env.Code)
	token := env.ConfirmationToken

	status, _, body = post(t, b.URL+"/v1/payouts", `{"amount":900}`, "X-Confirmation-Token", token, "Idempotency-Key", "p-1")
	require.Equal(t, 200, status, "%s", body)
	status, h, _ = post(t, a.URL+"/v1/payouts", `{"amount":900}`, "X-Confirmation-Token", token, "Idempotency-Key", "p-1")
	assert.Equal(t, 200, status)
	assert.Equal(t, "true", h.Get("Idempotency-Replayed"))
	status, h, body = post(t, a.URL+"/v1/payouts", `{"amount":900}`, "X-Confirmation-Token", token, "Idempotency-Key", "p-2")
	env, _ = remedy.Parse(status, h, body)
	assert.Equal(t, "confirmation_invalid", env.Code, "spent on the other instance")
	assert.EqualValues(t, 1, runs.Load())
}

// BenchmarkPipeline is an idempotent POST through the server pipeline with the Redis store: a
// first execution (a new key each time) and a replay, with the Redis round trips per request.
func BenchmarkPipeline(b *testing.B) {
	addr := redistest.Start(b)
	var hook counter
	client := redistest.Client(b, addr, &hook)
	// Room for every key of the run (the one principal's quota would refuse them past 10,000).
	s := redisstore.New(client, redisstore.Options{Prefix: fmt.Sprintf("bench%d:", time.Now().UnixNano()),
		ScopeRecords: 1 << 30})
	api, err := server.New(server.WithIdempotency(server.IdempotencyOptions{Store: s}))
	if err != nil {
		b.Fatal(err)
	}
	require.NoError(b, server.Post(api, "/v1/charges", func(ctx context.Context, in charge) (receipt, error) {
		return receipt{ID: "ch_1", Run: 1}, nil
	}, server.OperationID("create_charge"), server.Idempotent()))
	serve := func(b *testing.B, key string, replayed bool) {
		req := httptest.NewRequest("POST", "/v1/charges", bytes.NewReader([]byte(`{"amount":500}`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, req)
		if w.Code != 200 || (w.Header().Get("Idempotency-Replayed") == "true") != replayed {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	serve(b, "warm-up", false) // loads the scripts
	run := func(b *testing.B, key func(i int) string, replayed bool) {
		b.ReportAllocs()
		hook.take()
		i := 0
		for b.Loop() {
			i++
			serve(b, key(i), replayed)
		}
		trips, _ := hook.take()
		b.ReportMetric(float64(trips)/float64(b.N), "roundtrips/op")
	}
	b.Run("First", func(b *testing.B) {
		prefix := strconv.FormatInt(time.Now().UnixNano(), 36)
		run(b, func(i int) string { return prefix + strconv.Itoa(i) }, false)
	})
	b.Run("Replay", func(b *testing.B) {
		run(b, func(int) string { return "warm-up" }, true)
	})
}
