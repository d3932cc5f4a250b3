package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/corpus"
)

// arrivals is a server's record of the requests it received, by its own clock.
type arrivals struct {
	mu       sync.Mutex
	refused  time.Time // when the refusal was answered
	requests []time.Time
}

// A Client paces its calls by default: once the server has refused one call with a stated
// wait, another call of the client is not sent before that time — judged by the server's own
// clock. With WithPacer(nil) the other call goes at once, as before pacing.
func TestClientPacesByDefault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		opts  []client.Option
		paced bool
	}{
		{"default", nil, true},
		{"WithPacer(nil)", []client.Option{client.WithPacer(nil)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var rec arrivals
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec.mu.Lock()
				rec.requests = append(rec.requests, time.Now())
				first := len(rec.requests) == 1
				rec.mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				if first {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(http.StatusTooManyRequests)
					_, _ = w.Write([]byte(`{"error":{"code":"rate_limited","message":"slow down"}}`))
					rec.mu.Lock()
					rec.refused = time.Now()
					rec.mu.Unlock()
					return
				}
				_, _ = w.Write([]byte(`{"ok":true}`))
			}))
			t.Cleanup(srv.Close)
			refused := make(chan struct{})
			var once sync.Once
			opts := append([]client.Option{
				client.WithBaseURL(srv.URL),
				client.WithOperations(client.Operation{Name: "read", Method: http.MethodGet, Path: "/things"}),
				client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) {
					if a.Status == http.StatusTooManyRequests {
						once.Do(func() { close(refused) })
					}
				}}),
			}, tc.opts...)
			c, err := client.New(opts...)
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			wg.Go(func() {
				_, err := c.Call(ctx, "read", nil)
				assert.NoError(t, err)
			})
			<-refused // the client knows the server's wait
			resp, err := c.Call(ctx, "read", json.RawMessage(`{}`))
			require.NoError(t, err)
			wg.Wait()

			rec.mu.Lock()
			defer rec.mu.Unlock()
			require.Len(t, rec.requests, 3)
			reset := rec.refused.Add(time.Second)
			early := 0
			for _, at := range rec.requests[1:] {
				if at.Before(reset) {
					early++
				}
			}
			if tc.paced {
				assert.Zero(t, early, "a request arrived before the reset the server announced")
				assert.Positive(t, resp.Attempts[0].Paced)
			} else {
				assert.Equal(t, 1, early, "without pacing, the other call goes at once")
				assert.Zero(t, resp.Attempts[0].Paced)
			}
		})
	}
}

// GitHub counts its rate limits apart (core, search, graphql…) and names, on every answer, the
// one the request counted against (X-RateLimit-Resource). Its primary limit exhausted, as
// recorded from its API, holds the core operations only: the call that learnt it and the next
// call of the operation are not sent again before the reset, while an operation whose answers
// name another limit goes at once; one never answered yet is held too (it may count against
// core). GitHub's answers are served as recorded, from a loopback server; the search answer is
// its recorded 404 with the limit it names changed to search (no answer of GitHub's search API
// is recorded).
func TestClientPacesGitHubLimitsApart(t *testing.T) {
	t.Parallel()
	recorded := map[string]corpus.Sample{}
	for _, s := range loadCorpus(t) {
		if s.Dialect == "github" {
			recorded[s.Name] = s
		}
	}
	exhausted, ok := recorded["primary-rate-limit-exceeded"]
	require.True(t, ok)
	found, ok := recorded["not-found-repository"]
	require.True(t, ok)
	search := found.Header.Clone()
	search.Set("X-Ratelimit-Resource", "search")
	require.Equal(t, "core", exhausted.Header.Get("X-Ratelimit-Resource"))

	var mu sync.Mutex
	sent := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent[r.URL.Path]++
		mu.Unlock()
		s, h := exhausted, exhausted.Header
		if r.URL.Path == "/search/issues" {
			s, h = found, search
		}
		for k, v := range h {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(s.Status)
		_, _ = w.Write(s.Body)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithOperations(
		client.Operation{Name: "search_issues", Method: http.MethodGet, Path: "/search/issues"},
		client.Operation{Name: "list_issues", Method: http.MethodGet, Path: "/repos/o/r/issues"},
		client.Operation{Name: "list_pulls", Method: http.MethodGet, Path: "/repos/o/r/pulls"},
	))
	require.NoError(t, err)
	ctx := context.Background()
	call := func(op string) error {
		_, err := c.Call(ctx, op, nil)
		require.Error(t, err)
		return err
	}

	call("search_issues") // 404: the client learns search_issues counts against search
	err = call("list_issues")
	require.ErrorIs(t, err, client.ErrWaitTooLong, "the reset is minutes away")
	err = call("list_issues")
	require.ErrorIs(t, err, client.ErrWaitTooLong)
	var ce *client.CallError
	require.ErrorAs(t, err, &ce)
	assert.Empty(t, ce.Attempts, "the second list_issues call is not sent")
	assert.Contains(t, err.Error(), "(its core limit)")
	err = call("list_pulls")
	require.ErrorAs(t, err, &ce)
	assert.Empty(t, ce.Attempts, "an operation never answered is held with the origin")
	err = call("search_issues")
	require.ErrorAs(t, err, &ce)
	assert.Len(t, ce.Attempts, 1, "search_issues counts against another limit: it goes")

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[string]int{"/search/issues": 2, "/repos/o/r/issues": 1}, sent)
}
