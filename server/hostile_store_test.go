package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/server"
)

// The store under hostile clients: nothing another principal sends makes the store forget a
// completed charge, and a result the store would not take never lets the charge run twice.

// ledger is an API with a charge (idempotent) and an account deletion (confirmed), behind
// byBearer, on 127.0.0.1, counting charges.
type ledger struct {
	srv     *httptest.Server
	url     string
	charges atomic.Int64
}

func newLedger(t *testing.T, opts ...server.Option) *ledger {
	t.Helper()
	l := &ledger{}
	api, err := server.New(append([]server.Option{server.WithAuthenticator(byBearer)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	require.NoError(t, server.Post(api, "/v1/charges", func(ctx context.Context, in Charge) (Receipt, error) {
		run := l.charges.Add(1)
		return Receipt{ID: fmt.Sprint("ch_", run), Amount: in.Amount, Run: run}, nil
	}, server.OperationID("create_charge"), server.SuccessStatus(201), server.Idempotent()))
	require.NoError(t, server.Post(api, "/v1/accounts/{id}/delete", func(ctx context.Context, in DeleteAccount) (Deleted, error) {
		return Deleted{ID: in.ID, Deleted: true}, nil
	}, server.OperationID("delete_account"), server.Confirm()))
	l.srv = httptest.NewServer(api) // on 127.0.0.1
	t.Cleanup(l.srv.Close)
	l.url = l.srv.URL
	return l
}

// flood sends n POSTs of body to path as principal, from workers connections kept alive, and
// counts the answers by status.
func flood(t *testing.T, url, body, principal string, n, workers int) map[int]int {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	t.Cleanup(client.CloseIdleConnections)
	var (
		next     atomic.Int64
		mu       sync.Mutex
		statuses = map[int]int{}
		wg       sync.WaitGroup
		failed   atomic.Value
	)
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				req, err := http.NewRequest("POST", url, strings.NewReader(body))
				if err == nil {
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+principal)
					var resp *http.Response
					if resp, err = client.Do(req); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						mu.Lock()
						statuses[resp.StatusCode]++
						mu.Unlock()
						continue
					}
				}
				failed.CompareAndSwap(nil, err)
				return
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("flood: %v", err)
	}
	return statuses
}

// Issue 22, row 3: another principal's 100,000 bodyless POSTs to a confirmed operation made
// challenges that evicted ann's completed charge from the one store of 100,000 entries they
// shared, and ann's retry charged her twice. Now a request that is not valid gets no
// challenge, challenges and records are kept apart, and a principal over its quota is
// refused, not given room. The store here holds 1,000 of each, so that twice as many requests
// as it holds stay quick under the race detector on a busy machine.
func TestFloodOfChallengesKeepsAnotherPrincipalsCharge(t *testing.T) {
	t.Parallel()
	const size = 1000
	store := server.NewMemoryStore(server.MemoryOptions{MaxChallenges: size, MaxRecords: size})
	l := newLedger(t, server.WithConfirmation(server.ConfirmationOptions{Store: store}),
		server.WithIdempotency(server.IdempotencyOptions{Store: store}))
	const charge = `{"amount":1200,"currency":"usd"}`
	status, _, b := do(t, "POST", l.url+"/v1/charges", "application/json", charge, "Authorization", "Bearer ann", "Idempotency-Key", "charge-1")
	require.Equal(t, 201, status, "%s", b)

	statuses := flood(t, l.url+"/v1/accounts/acct_1/delete", "", "mallory", 2*size, 8)
	assert.Zero(t, statuses[409], "challenges issued to bodyless requests (answers %v)", statuses)

	status, h, b := do(t, "POST", l.url+"/v1/charges", "application/json", charge, "Authorization", "Bearer ann", "Idempotency-Key", "charge-1")
	assert.Equal(t, 201, status, "%s", b)
	assert.Equal(t, "true", h.Get("Idempotency-Replayed"), "ann's retry, after the flood: %s", b)
	assert.EqualValues(t, 1, l.charges.Load(), "ann's charge executions")
}

// Valid proposals fill mallory's quota of challenges: the rest are refused 503 with
// Retry-After, and neither ann's charge nor ann's own challenges are touched.
func TestChallengeQuotaIsPerPrincipal(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	const charge = `{"amount":1200,"currency":"usd"}`
	status, _, b := do(t, "POST", l.url+"/v1/charges", "application/json", charge, "Authorization", "Bearer ann", "Idempotency-Key", "charge-1")
	require.Equal(t, 201, status, "%s", b)

	statuses := flood(t, l.url+"/v1/accounts/acct_1/delete", deleteBody, "mallory", server.DefaultScopeChallenges+200, 8)
	assert.Equal(t, map[int]int{409: server.DefaultScopeChallenges, 503: 200}, statuses)
	status, h, b := do(t, "POST", l.url+"/v1/accounts/acct_1/delete", "application/json", deleteBody, "Authorization", "Bearer mallory")
	env := envelope(t, status, h, b)
	assert.Equal(t, 503, status)
	assert.Equal(t, "unavailable", env.Code)
	assert.True(t, env.Retryable)
	assert.NotEmpty(t, h.Get("Retry-After"))
	assert.Positive(t, env.RetryAfter)

	token := challenge(t, l.srv, "/v1/accounts/acct_1/delete", deleteBody, "ann")
	status, _, b = do(t, "POST", l.url+"/v1/accounts/acct_1/delete", "application/json", deleteBody, "Authorization", "Bearer ann", "X-Confirmation-Token", token)
	assert.Equal(t, 200, status, "ann's confirmation, with mallory over quota: %s", b)
	status, h, _ = do(t, "POST", l.url+"/v1/charges", "application/json", charge, "Authorization", "Bearer ann", "Idempotency-Key", "charge-1")
	assert.Equal(t, 201, status)
	assert.Equal(t, "true", h.Get("Idempotency-Replayed"))
	assert.EqualValues(t, 1, l.charges.Load())
}

// failingComplete is a MemoryStore whose Complete fails, the first fails times (all of them
// when fails is negative), as a store that lost its connection after the handler ran.
type failingComplete struct {
	*server.MemoryStore
	fails     int64
	completes atomic.Int64
	releases  atomic.Int64
}

var errLost = errors.New("connection reset by peer")

func (s *failingComplete) Complete(ctx context.Context, scope, key, owner string, result server.StoredResponse, ttl time.Duration) error {
	if n := s.completes.Add(1); s.fails < 0 || n <= s.fails {
		return errLost
	}
	return s.MemoryStore.Complete(ctx, scope, key, owner, result, ttl)
}

func (s *failingComplete) Release(ctx context.Context, scope, key, owner string) error {
	s.releases.Add(1)
	return s.MemoryStore.Release(ctx, scope, key, owner)
}

// Issue 22, row 4: the store's Complete failed once after the charge succeeded, the deferred
// Release freed the key, and a retry charged again. Now the completion is tried again, and
// when it never succeeds the claim is kept until its lease ends: concurrent retries wait or
// are answered 409 idempotency_in_flight; the charge runs once.
func TestFailedCompletionNeverExecutesTwice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fails int64
		wait  time.Duration // how long a retry waits for the request in flight
	}{
		{"fails once", 1, time.Minute}, // a retry that arrives early waits for the result
		{"fails always", -1, 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := &failingComplete{MemoryStore: server.NewMemoryStore(server.MemoryOptions{}), fails: tc.fails}
			l := newLedger(t, server.WithIdempotency(server.IdempotencyOptions{Store: store, Wait: tc.wait}))
			const charge = `{"amount":1200,"currency":"usd"}`
			status, _, b := do(t, "POST", l.url+"/v1/charges", "application/json", charge, "Authorization", "Bearer ann", "Idempotency-Key", "charge-1")
			require.Equal(t, 201, status, "%s", b)

			const retries = 32
			var wg sync.WaitGroup
			var mu sync.Mutex
			answers := map[string]int{}
			for range retries {
				wg.Go(func() {
					status, h, b := do(t, "POST", l.url+"/v1/charges", "application/json", charge, "Authorization", "Bearer ann", "Idempotency-Key", "charge-1")
					answer := fmt.Sprint(status)
					switch {
					case status == 201 && h.Get("Idempotency-Replayed") == "true":
						answer = "replayed"
					case status == 409:
						answer = envelope(t, status, h, b).Code
					}
					mu.Lock()
					answers[answer]++
					mu.Unlock()
				})
			}
			wg.Wait()
			assert.EqualValues(t, 1, l.charges.Load(), "charge executions (retries answered %v)", answers)
			assert.Zero(t, store.releases.Load(), "releases of the charge's key")
			if tc.fails < 0 {
				assert.Equal(t, map[string]int{"idempotency_in_flight": retries}, answers)
				assert.EqualValues(t, 3, store.completes.Load(), "tries to store the result")
			} else {
				assert.Equal(t, map[string]int{"replayed": retries}, answers)
				assert.EqualValues(t, 2, store.completes.Load(), "tries to store the result")
			}
		})
	}
}
