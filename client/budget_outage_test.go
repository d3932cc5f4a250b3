package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
)

// budgetServer answers POST /v1/sms: fail(n) decides whether the n-th request (from 1) gets a
// retryable 503 instead of a 201. It counts every request.
func budgetServer(t *testing.T, fail func(n int64) bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if fail(n.Add(1)) {
			w.WriteHeader(503)
			w.Write([]byte(`{"error":{"code":"unavailable","message":"down","retryable":true}}`))
			return
		}
		w.WriteHeader(201)
		w.Write([]byte(`{"id":"sms_1"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func budgetClient(t *testing.T, url string) *client.Client {
	t.Helper()
	c, err := client.New(client.WithBaseURL(url),
		client.WithOperations(client.Operation{Name: "send_sms", Method: "POST", Path: "/v1/sms"}),
		client.WithBackoff(func() backoff.BackOff { return &backoff.ZeroBackOff{} }))
	require.NoError(t, err)
	return c
}

// An outage that hits 50 concurrent calls costs at most 60 requests with the default budget:
// the retries it adds are bounded by the budget, not by the calls times their attempts.
func TestDefaultRetryBudgetProtectsAnOutage(t *testing.T) {
	t.Parallel()
	srv, requests := budgetServer(t, func(int64) bool { return true })
	c := budgetClient(t, srv.URL)
	var wg sync.WaitGroup
	var budget atomic.Int64
	for range 50 {
		wg.Go(func() {
			_, err := c.Call(context.Background(), "send_sms", json.RawMessage(`{"to":"+1"}`))
			assert.Error(t, err)
			if assert.IsType(t, &client.CallError{}, err) && err.(*client.CallError).Cause == client.ErrRetryBudget {
				budget.Add(1)
			}
		})
	}
	wg.Wait()
	got := requests.Load()
	t.Logf("50 calls into an outage: %d requests, %d calls stopped by the retry budget", got, budget.Load())
	assert.GreaterOrEqual(t, got, int64(50), "every call is tried once")
	assert.LessOrEqual(t, got, int64(60), "at most 20%% more requests than calls")
	assert.Positive(t, budget.Load())
}

// A 5% transient fault rate recovers every call: the budget earns back more than the faults
// spend. Every 20th request fails, so that the test is the same on every run.
func TestDefaultRetryBudgetRecoversTransientFaults(t *testing.T) {
	t.Parallel()
	srv, requests := budgetServer(t, func(n int64) bool { return n%20 == 0 })
	c := budgetClient(t, srv.URL)
	const calls = 1000
	var wg sync.WaitGroup
	var failed atomic.Int64
	work := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			for range work {
				if _, err := c.Call(context.Background(), "send_sms", json.RawMessage(`{"to":"+1"}`)); err != nil {
					failed.Add(1)
					t.Log(err)
				}
			}
		})
	}
	for range calls {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	assert.Zero(t, failed.Load(), "every call recovers")
	assert.Greater(t, requests.Load(), int64(calls), "some calls were retried")
}
