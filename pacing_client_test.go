package remedy_test

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

	"github.com/remedy-go/remedy"
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
		opts  []remedy.Option
		paced bool
	}{
		{"default", nil, true},
		{"WithPacer(nil)", []remedy.Option{remedy.WithPacer(nil)}, false},
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
			opts := append([]remedy.Option{
				remedy.WithBaseURL(srv.URL),
				remedy.WithOperations(remedy.Operation{Name: "read", Method: http.MethodGet, Path: "/things"}),
				remedy.WithHooks(remedy.Hooks{AttemptEnd: func(_ context.Context, a *remedy.Attempt) {
					if a.Status == http.StatusTooManyRequests {
						once.Do(func() { close(refused) })
					}
				}}),
			}, tc.opts...)
			c, err := remedy.NewClient(opts...)
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
