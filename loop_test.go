package remedy_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
)

// The elapsed budget's context is derived only once the call goes beyond its first attempt,
// and never past a sooner deadline of the caller's.
func TestLoopElapsedGuardScope(t *testing.T) {
	t.Parallel()
	unavailable, _ := remedy.Parse(503, nil, []byte(`{"error":{"code":"unavailable","message":"later","retryable":true,"retry_after_ms":1}}`))
	run := func(t *testing.T, ctx context.Context, limit time.Duration) (deadlines []time.Time) {
		tool := remedy.TransportFunc(func(ctx context.Context, req *remedy.Request) (*remedy.Response, error) {
			dl, _ := ctx.Deadline()
			deadlines = append(deadlines, dl)
			if req.Attempt == 1 {
				return &remedy.Response{Status: 503, Envelope: unavailable}, nil
			}
			return &remedy.Response{Status: 200, Body: []byte(`{}`)}, nil
		})
		loop := remedy.Loop{Transport: tool, Limits: remedy.Limits{MaxElapsed: limit}}
		_, err := loop.Do(ctx, remedy.Call{Operation: "get_order", Idempotent: true, Args: json.RawMessage(`{}`)})
		require.NoError(t, err)
		require.Len(t, deadlines, 2)
		return deadlines
	}

	t.Run("no caller deadline", func(t *testing.T) {
		start := time.Now()
		dls := run(t, context.Background(), time.Hour)
		assert.True(t, dls[0].IsZero(), "the first attempt runs under the caller's context")
		assert.WithinRange(t, dls[1], start.Add(time.Hour), time.Now().Add(time.Hour))
	})
	t.Run("caller deadline sooner", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		want, _ := ctx.Deadline()
		dls := run(t, ctx, time.Hour)
		assert.Equal(t, []time.Time{want, want}, dls)
	})
}
