package client_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
)

// The elapsed budget's context is derived only once the call goes beyond its first attempt,
// and never past a sooner deadline of the caller's.
func TestLoopElapsedGuardScope(t *testing.T) {
	t.Parallel()
	unavailable, _ := remedy.Parse(503, nil, []byte(`{"error":{"code":"unavailable","message":"later","retryable":true,"retry_after_ms":1}}`))
	run := func(t *testing.T, ctx context.Context, limit time.Duration) (deadlines []time.Time) {
		tool := client.TransportFunc(func(ctx context.Context, req *client.Request) (*client.Response, error) {
			dl, _ := ctx.Deadline()
			deadlines = append(deadlines, dl)
			if req.Attempt == 1 {
				return &client.Response{Status: 503, Envelope: unavailable}, nil
			}
			return &client.Response{Status: 200, Body: []byte(`{}`)}, nil
		})
		loop := client.Loop{Transport: tool, Limits: client.Limits{MaxElapsed: limit}}
		_, err := loop.Do(ctx, client.Call{Operation: "get_order", Idempotent: true, Args: json.RawMessage(`{}`)})
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

// The elapsed budget's edges, exactly: time is faked (synctest) and the transport is in
// process, so how long each attempt takes is the test's choice, not the machine's. Every
// attempt gives up when its context ends. A later attempt that hangs is cut when the budget
// ends, to the nanosecond; a retry whose wait would end past the budget is not begun; a first
// attempt that alone spends the budget (what a busy machine does to a loopback test) ends the
// call after it, with no second attempt.
func TestLoopElapsedBudgetEdges(t *testing.T) {
	t.Parallel()
	const budget = 200 * time.Millisecond
	unavailable, _ := remedy.Parse(503, nil, []byte(`{"error":{"code":"unavailable","message":"later","retryable":true,"retry_after_ms":1}}`))
	// run makes a call whose first attempt takes first and gets a 503 asking for 1 ms, and
	// whose later attempts hang until their context ends. It returns the call's error, when
	// each attempt began and ended (from the call's start), and how long the call took.
	run := func(t *testing.T, first time.Duration) (ce *client.CallError, began, ended []time.Duration, took time.Duration) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			tool := client.TransportFunc(func(ctx context.Context, req *client.Request) (*client.Response, error) {
				began = append(began, time.Since(start))
				defer func() { ended = append(ended, time.Since(start)) }()
				if req.Attempt == 1 {
					select {
					case <-time.After(first):
						return &client.Response{Status: 503, Envelope: unavailable}, nil
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				<-ctx.Done()
				return nil, ctx.Err()
			})
			loop := client.Loop{Transport: tool, Limits: client.Limits{MaxElapsed: budget}}
			_, err := loop.Do(context.Background(), client.Call{Operation: "get_order", Idempotent: true, Args: json.RawMessage(`{}`)})
			took = time.Since(start)
			require.ErrorAs(t, err, &ce)
			require.ErrorIs(t, err, client.ErrElapsedBudget)
		})
		return ce, began, ended, took
	}

	t.Run("a hanging attempt is cut when the budget ends", func(t *testing.T) {
		ce, began, ended, took := run(t, 10*time.Millisecond)
		assert.Equal(t, []time.Duration{0, 11 * time.Millisecond}, began, "the second attempt after the 1 ms wait")
		assert.Equal(t, []time.Duration{10 * time.Millisecond, budget}, ended)
		assert.Equal(t, budget, took)
		require.Len(t, ce.Attempts, 2)
		assert.ErrorIs(t, ce.Attempts[1].Err, context.DeadlineExceeded)
		assert.Contains(t, ce.Detail, "during an attempt")
	})
	t.Run("a wait that would end past the budget is not begun", func(t *testing.T) {
		ce, began, _, took := run(t, budget-time.Millisecond/2)
		assert.Equal(t, []time.Duration{0}, began)
		assert.Equal(t, budget-time.Millisecond/2, took, "stopped at once, without waiting")
		require.Len(t, ce.Attempts, 1)
		assert.Equal(t, time.Millisecond, ce.Asked)
	})
	t.Run("a first attempt that spends the budget is the only one", func(t *testing.T) {
		ce, began, ended, took := run(t, budget+50*time.Millisecond)
		assert.Equal(t, []time.Duration{0}, began)
		assert.Equal(t, []time.Duration{budget + 50*time.Millisecond}, ended, "the first attempt runs under the caller's context, uncut")
		assert.Equal(t, budget+50*time.Millisecond, took)
		require.Len(t, ce.Attempts, 1)
	})
}
