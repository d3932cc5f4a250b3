package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/storetest"
)

type Charge struct {
	Amount   int    `json:"amount" schema:"minimum=1"`
	Currency string `json:"currency" schema:"enum=usd,eur"`
}

type Receipt struct {
	ID     string `json:"id"`
	Amount int    `json:"amount"`
	Run    int64  `json:"run"` // which execution produced it
}

// payments is an API whose create_charge executes through a hook the test controls.
type payments struct {
	srv  *httptest.Server
	runs atomic.Int64
	// hook runs inside the handler with the execution's number; it may block or fail.
	hook func(ctx context.Context, run int64) error
}

func newPayments(t *testing.T, mode server.OpOption, opts ...server.Option) *payments {
	t.Helper()
	p := &payments{}
	api, err := server.New(append([]server.Option{server.WithAuthenticator(byBearer)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	charge := func(ctx context.Context, in Charge) (Receipt, error) {
		run := p.runs.Add(1)
		if p.hook != nil {
			if err := p.hook(ctx, run); err != nil {
				return Receipt{}, err
			}
		}
		return Receipt{ID: fmt.Sprintf("ch_%d", run), Amount: in.Amount, Run: run}, nil
	}
	require.NoError(t, server.Post(api, "/v1/charges", charge, server.OperationID("create_charge"),
		server.SuccessStatus(201), mode))
	require.NoError(t, server.Post(api, "/v1/refunds", charge, server.OperationID("create_refund"), mode))
	p.srv = httptest.NewServer(api)
	t.Cleanup(p.srv.Close)
	return p
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

// post sends a charge as principal with the given Idempotency-Key header values.
func (p *payments) post(t testing.TB, path, body, principal string, keys ...string) reply {
	t.Helper()
	req, err := http.NewRequest("POST", p.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+principal)
	for _, k := range keys {
		req.Header.Add("Idempotency-Key", k)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{resp.StatusCode, resp.Header, b}
}

func (r reply) code(t testing.TB) string {
	t.Helper()
	return envelope(t, r.status, r.header, r.body).Code
}

const chargeBody = `{"amount":500,"currency":"usd"}`

func TestIdempotentReplay(t *testing.T) {
	t.Parallel()
	p := newPayments(t, server.Idempotent())
	first := p.post(t, "/v1/charges", chargeBody, "ann", "key-1")
	require.Equal(t, 201, first.status, "%s", first.body)
	assert.Empty(t, first.header.Get("Idempotency-Replayed"))

	// The same payload, spelled differently, with the same key: replayed, not executed.
	again := p.post(t, "/v1/charges", `{ "currency":"usd", "amount":5e2 }`, "ann", "key-1")
	assert.Equal(t, 201, again.status)
	assert.Equal(t, "true", again.header.Get("Idempotency-Replayed"))
	assert.Equal(t, "application/json", again.header.Get("Content-Type"))
	assert.Equal(t, string(first.body), string(again.body))
	assert.EqualValues(t, 1, p.runs.Load())

	// A quoted key is the same key (RFC 8941).
	quoted := p.post(t, "/v1/charges", chargeBody, "ann", `"key-1"`)
	assert.Equal(t, "true", quoted.header.Get("Idempotency-Replayed"))

	// Another payload under the key is refused; another key executes.
	reused := p.post(t, "/v1/charges", `{"amount":501,"currency":"usd"}`, "ann", "key-1")
	assert.Equal(t, 422, reused.status)
	assert.Equal(t, "idempotency_key_reused", reused.code(t))
	fresh := p.post(t, "/v1/charges", `{"amount":501,"currency":"usd"}`, "ann", "key-2")
	assert.Equal(t, 201, fresh.status)

	// Keys are scoped by principal and by operation.
	bob := p.post(t, "/v1/charges", chargeBody, "bob", "key-1")
	assert.Equal(t, 201, bob.status)
	assert.Empty(t, bob.header.Get("Idempotency-Replayed"))
	refund := p.post(t, "/v1/refunds", chargeBody, "ann", "key-1")
	assert.Equal(t, 200, refund.status)
	assert.Empty(t, refund.header.Get("Idempotency-Replayed"))
	assert.EqualValues(t, 4, p.runs.Load())

	// Without a key, an optional-key operation executes every time.
	p.post(t, "/v1/charges", chargeBody, "ann")
	p.post(t, "/v1/charges", chargeBody, "ann")
	assert.EqualValues(t, 6, p.runs.Load())
}

func TestIdempotencyKeyHeader(t *testing.T) {
	t.Parallel()
	p := newPayments(t, server.RequireIdempotencyKey())
	missing := p.post(t, "/v1/charges", chargeBody, "ann")
	assert.Equal(t, 400, missing.status)
	assert.Equal(t, "idempotency_key_required", missing.code(t))
	env := envelope(t, missing.status, missing.header, missing.body)
	assert.False(t, env.Retryable)

	for name, keys := range map[string][]string{
		"empty":                 {""},
		"only spaces":           {"   "},
		"too long":              {strings.Repeat("k", 256)},
		"a space in a bare key": {"two words"},
		"sent twice":            {"a", "b"},
		"an unclosed quote":     {`"abc`},
		"a bad escape":          {`"a\nb"`},
		"an empty string":       {`""`},
	} {
		r := p.post(t, "/v1/charges", chargeBody, "ann", keys...)
		assert.Equal(t, 400, r.status, name)
		assert.Equal(t, "idempotency_key_invalid", r.code(t), name)
	}
	for name, key := range map[string]string{
		"255 characters":            strings.Repeat("k", 255),
		"a quoted key with a space": `"two words"`,
		"escapes in a quoted key":   `"say \"hi\" \\ bye"`,
		"printable punctuation":     `a:b/c=d+e~f`,
	} {
		r := p.post(t, "/v1/charges", chargeBody, "ann", key)
		assert.Equal(t, 201, r.status, "%s: %s", name, r.body)
	}
	assert.EqualValues(t, 4, p.runs.Load())
}

// A failure is never stored: the retry with the same key executes again, and its success is
// what is replayed from then on. A panic releases the key too.
func TestIdempotencyFailuresAreNotStored(t *testing.T) {
	t.Parallel()
	p := newPayments(t, server.Idempotent(), server.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	p.hook = func(ctx context.Context, run int64) error {
		switch run {
		case 1:
			return server.Error(server.CodeUnavailable, "the card network is down")
		case 2:
			panic("boom")
		}
		return nil
	}
	assert.Equal(t, 503, p.post(t, "/v1/charges", chargeBody, "ann", "k").status)
	assert.Equal(t, 500, p.post(t, "/v1/charges", chargeBody, "ann", "k").status)
	ok := p.post(t, "/v1/charges", chargeBody, "ann", "k")
	require.Equal(t, 201, ok.status, "%s", ok.body)
	replay := p.post(t, "/v1/charges", chargeBody, "ann", "k")
	assert.Equal(t, "true", replay.header.Get("Idempotency-Replayed"))
	assert.JSONEq(t, string(ok.body), string(replay.body))
	assert.EqualValues(t, 3, p.runs.Load())
}

// A duplicate of a request in flight waits for it and gets its result; past the wait it is
// told to come back.
func TestIdempotencyInFlight(t *testing.T) {
	t.Parallel()
	t.Run("duplicates share the one execution", func(t *testing.T) {
		t.Parallel()
		w := &storetest.Waiters{}
		p := newPayments(t, server.Idempotent(), server.WithIdempotency(server.IdempotencyOptions{
			Store: w.Watch(server.NewMemoryStore(server.MemoryOptions{})), Wait: time.Minute}))
		var wg sync.WaitGroup
		t.Cleanup(wg.Wait)         // the requests end before the server closes,
		release, finish := gate(t) // once the gate is open (cleanups run last first)
		p.hook = func(ctx context.Context, run int64) error {
			<-release
			return nil
		}
		const n = 200
		replies := make([]reply, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				replies[i] = p.post(t, "/v1/charges", chargeBody, "ann", "same-key")
			}()
		}
		// Every duplicate has found the key in flight before the execution may finish: they all
		// wait for it, none comes late to a completed key.
		if !assert.Eventually(t, func() bool { return p.runs.Load() >= 1 && w.Count() >= n-1 }, 20*time.Second, time.Millisecond) {
			t.Fatalf("%d executions, %d of %d duplicates waiting", p.runs.Load(), w.Count(), n-1)
		}
		finish()
		wg.Wait()
		assert.EqualValues(t, 1, p.runs.Load(), "one execution")
		replayed := 0
		for _, r := range replies {
			require.Equal(t, 201, r.status, "%s", r.body)
			assert.JSONEq(t, string(replies[0].body), string(r.body))
			if r.header.Get("Idempotency-Replayed") == "true" {
				replayed++
			}
		}
		assert.Equal(t, n-1, replayed)
	})
	t.Run("past the wait", func(t *testing.T) {
		t.Parallel()
		p := newPayments(t, server.Idempotent(), server.WithIdempotency(server.IdempotencyOptions{Wait: -1}))
		release, open := gate(t)
		p.hook = func(ctx context.Context, run int64) error {
			<-release
			return nil
		}
		done := make(chan reply)
		go func() { done <- p.post(t, "/v1/charges", chargeBody, "ann", "k") }()
		require.Eventually(t, func() bool { return p.runs.Load() == 1 }, 10*time.Second, time.Millisecond)
		dup := p.post(t, "/v1/charges", chargeBody, "ann", "k")
		env := envelope(t, dup.status, dup.header, dup.body)
		assert.Equal(t, 409, dup.status)
		assert.Equal(t, "idempotency_in_flight", env.Code)
		assert.True(t, env.Retryable)
		assert.Equal(t, time.Second, env.RetryAfter)
		assert.Equal(t, "1", dup.header.Get("Retry-After"))
		other := p.post(t, "/v1/charges", `{"amount":1,"currency":"usd"}`, "ann", "k")
		assert.Equal(t, "idempotency_key_reused", other.code(t), "another payload is refused even in flight")
		open()
		assert.Equal(t, 201, (<-done).status)
		assert.Equal(t, "true", p.post(t, "/v1/charges", chargeBody, "ann", "k").header.Get("Idempotency-Replayed"))
	})
}

// gate returns a channel for a handler to block on and the function that opens it, once. The
// gate also opens when the test ends: a test stopped early (a failed require) must not leave a
// handler blocked, and the server's Close, which runs after, waiting on it forever. Call it
// after the server is made, so that its cleanup runs first.
func gate(t *testing.T) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(ch) }) }
	t.Cleanup(open)
	return ch, open
}

// A claim is a lease: a request that outlives it loses the key to a retry, and its late
// result does not overwrite the retry's.
func TestIdempotencyLeaseTakeover(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock()
	logs := &logSink{}
	p := newPayments(t, server.Idempotent(), server.WithClock(clock.Now),
		server.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))),
		server.WithIdempotency(server.IdempotencyOptions{Lease: time.Minute, Wait: -1}))
	release, open := gate(t)
	p.hook = func(ctx context.Context, run int64) error {
		if run == 1 {
			<-release
		}
		return nil
	}
	done := make(chan reply)
	go func() { done <- p.post(t, "/v1/charges", chargeBody, "ann", "k") }()
	require.Eventually(t, func() bool { return p.runs.Load() == 1 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, "idempotency_in_flight", p.post(t, "/v1/charges", chargeBody, "ann", "k").code(t))

	clock.Advance(time.Minute + time.Second) // the first request's instance is presumed dead
	second := p.post(t, "/v1/charges", chargeBody, "ann", "k")
	require.Equal(t, 201, second.status, "%s", second.body)
	open()
	late := <-done
	assert.Equal(t, 201, late.status, "the late request still answers its own caller")

	replay := p.post(t, "/v1/charges", chargeBody, "ann", "k")
	assert.Equal(t, "true", replay.header.Get("Idempotency-Replayed"))
	assert.JSONEq(t, string(second.body), string(replay.body), "the takeover's result stands")
	assert.Contains(t, logs.String(), "outlived its lease")
}

// A confirmed, idempotent operation: once it has run, a network retry with the same key and
// the spent token gets the result, not confirmation_invalid.
func TestConfirmedIdempotentRetry(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	api, err := server.New(server.WithAuthenticator(byBearer))
	if err != nil {
		t.Fatal(err)
	}
	require.NoError(t, server.Post(api, "/v1/accounts/{id}/delete", func(ctx context.Context, in DeleteAccount) (Deleted, error) {
		runs.Add(1)
		return Deleted{ID: in.ID, Deleted: true}, nil
	}, server.OperationID("delete_account"), server.Confirm(), server.Idempotent()))
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	path := "/v1/accounts/acct_1/delete"
	token := challenge(t, srv, path, deleteBody, "ann")
	for i := range 3 {
		status, h, b := do(t, "POST", srv.URL+path, "application/json", deleteBody,
			"Authorization", "Bearer ann", "X-Confirmation-Token", token, "Idempotency-Key", "del-1")
		require.Equal(t, 200, status, "attempt %d: %s", i, b)
		assert.Equal(t, i > 0, h.Get("Idempotency-Replayed") == "true")
	}
	assert.EqualValues(t, 1, runs.Load())
}

// The remedy client against it: an approved confirmation and an idempotency key, one
// execution.
func TestClientConfirmsOnce(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	api, err := server.New()
	if err != nil {
		t.Fatal(err)
	}
	require.NoError(t, server.Post(api, "/v1/accounts/{id}/delete", func(ctx context.Context, in DeleteAccount) (Deleted, error) {
		runs.Add(1)
		return Deleted{ID: in.ID, Deleted: true}, nil
	}, server.OperationID("delete_account"), server.Confirm(), server.RequireIdempotencyKey()))
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	approved := 0
	c, err := client.New(client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "delete_account", Method: "POST", Path: "/v1/accounts/{id}/delete"}),
		client.WithConfirmPolicy(client.ConfirmFunc(func(ctx context.Context, ch *client.Challenge) (bool, error) {
			approved++
			return true, nil
		})))
	require.NoError(t, err)
	resp, err := c.Call(context.Background(), "delete_account", map[string]any{"id": "acct_9", "reason": "user asked"})
	require.NoError(t, err)
	var d Deleted
	require.NoError(t, json.Unmarshal(resp.Body, &d))
	assert.Equal(t, Deleted{ID: "acct_9", Deleted: true}, d)
	assert.EqualValues(t, 1, runs.Load())
	assert.Equal(t, 1, approved)
	require.Len(t, resp.Attempts, 2)
	assert.Equal(t, client.ActConfirm, resp.Attempts[0].Decision.Action)
}

// brokenStore is a store whose backend cannot be reached.
type brokenStore struct{}

var errBackend = errors.New("dial tcp 10.0.0.7:6379: connection refused")

func (brokenStore) PutChallenge(context.Context, string, string, []byte, time.Duration) error {
	return errBackend
}
func (brokenStore) TakeChallenge(context.Context, string, string) ([]byte, bool, error) {
	return nil, false, errBackend
}
func (brokenStore) Claim(context.Context, string, string, []byte, string, time.Duration) (server.IdempotencyRecord, bool, error) {
	return server.IdempotencyRecord{}, false, errBackend
}
func (brokenStore) Complete(context.Context, string, string, string, server.StoredResponse, time.Duration) error {
	return errBackend
}
func (brokenStore) Release(context.Context, string, string, string) error { return errBackend }

// A store that cannot answer fails the request as unavailable: nothing runs unguarded, and
// the cause goes to the log, not to the caller.
func TestStoreFailureIsUnavailable(t *testing.T) {
	t.Parallel()
	logs := &logSink{}
	p := newPayments(t, server.Idempotent(), server.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))),
		server.WithIdempotency(server.IdempotencyOptions{Store: brokenStore{}}))
	r := p.post(t, "/v1/charges", chargeBody, "ann", "k")
	env := envelope(t, r.status, r.header, r.body)
	assert.Equal(t, 503, r.status)
	assert.Equal(t, "unavailable", env.Code)
	assert.True(t, env.Retryable)
	assert.NotContains(t, string(r.body), "10.0.0.7")
	assert.Contains(t, logs.String(), "10.0.0.7")
	assert.Zero(t, p.runs.Load())

	srv, runs := confirmAPI(t, server.WithLogger(slog.New(slog.NewJSONHandler(io.Discard, nil))),
		server.WithConfirmation(server.ConfirmationOptions{Store: brokenStore{}}))
	status, h, b := do(t, "POST", srv.URL+"/v1/accounts/acct_1/delete", "application/json", deleteBody, "Authorization", "Bearer ann")
	assert.Equal(t, 503, status)
	assert.Equal(t, "unavailable", envelope(t, status, h, b).Code)
	status, _, _ = do(t, "POST", srv.URL+"/v1/accounts/acct_1/delete", "application/json", deleteBody, "Authorization", "Bearer ann", "X-Confirmation-Token", "AAAAAAAAAAAAAAAAAAAAAA")
	assert.Equal(t, 503, status)
	assert.Zero(t, runs.Load())
}
