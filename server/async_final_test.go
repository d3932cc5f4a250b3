package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/redistest"
	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/redisstore"
	"github.com/remedy-go/remedy/server/storetest"
)

// A job's end is final (issue 35, row 3). A handler that ignores its context runs past
// Timeout; a poll past the job's deadline reads it failed, with an outcome the server cannot
// know (internal_error, not retryable, saying it may still take effect); the handler then
// succeeds, and the status still reads the same failure: the late end is dropped, and logged.
// With the memory store and with the Redis store.
func TestAsyncEndIsFinal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) server.JobStore // nil: the API's default, a MemoryStore
	}{
		{"memory", nil},
		{"redis", func(t *testing.T) server.JobStore {
			client := redis.NewClient(&redis.Options{Addr: redistest.Start(t)})
			t.Cleanup(func() { client.Close() })
			return redisstore.New(client, redisstore.Options{Prefix: "final-test:"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := storetest.NewClock()
			logs := &logSink{}
			opts := server.AsyncOptions{Timeout: time.Millisecond}
			if tc.store != nil {
				opts.Store = tc.store(t)
			}
			api, err := server.New(server.WithClock(clock.Now), server.WithAsync(opts),
				server.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
			require.NoError(t, err)
			overran, release := make(chan struct{}), make(chan struct{})
			var runs atomic.Int32
			require.NoError(t, server.Post(api, "/v1/exports", func(ctx context.Context, in ExportIn) (ExportOut, error) {
				runs.Add(1)
				<-ctx.Done() // its time is up...
				close(overran)
				<-release // ...and it goes on all the same
				return ExportOut{URL: "/files/late." + in.Format, Rows: 1}, nil
			}, server.OperationID("export_invoices"), server.Async()))
			srv := httptest.NewServer(api)
			defer srv.Close()
			released := false
			t.Cleanup(func() {
				if !released {
					close(release)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				api.Shutdown(ctx)
			})

			status, h, body := post(t, "POST", srv.URL+"/v1/exports", `{"format":"csv"}`, nil)
			require.Equal(t, 202, status, "%s", body)
			loc := h.Get("Location")
			<-overran
			clock.Advance(time.Minute) // past the job's deadline (Timeout and the grace to store its end)

			status, h, first := post(t, "GET", srv.URL+loc, "", nil)
			require.Equal(t, 200, status, "%s", first)
			assert.Empty(t, h.Get("Retry-After"), "a final status asks for no further poll")
			var st struct {
				Status string
				Error  json.RawMessage
			}
			require.NoError(t, json.Unmarshal(first, &st))
			require.Equal(t, "failed", st.Status, "%s", first)
			env, ok := remedy.Parse(0, nil, []byte(`{"error":`+string(st.Error)+`}`))
			require.True(t, ok, "%s", st.Error)
			assert.Equal(t, server.CodeInternalError, env.Code)
			assert.False(t, env.Retryable, "a job that may still take effect does not invite a resubmission")
			assert.Contains(t, env.Message, "may still take effect")
			assert.Contains(t, env.Message, "outcome is unknown")
			assert.Contains(t, env.Hint, "before")

			close(release)
			released = true
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, api.Shutdown(ctx)) // the handler has ended, its end stored or dropped

			status, _, again := post(t, "GET", srv.URL+loc, "", nil)
			require.Equal(t, 200, status)
			assert.JSONEq(t, string(first), string(again), "a final status never changes")
			assert.Contains(t, logs.String(), "dropped", "the late end is logged")
			assert.Equal(t, int32(1), runs.Load())
		})
	}
}
