package mcp_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/mcp"
)

// A rate-limited tool call's stated wait holds the client's other calls to that server: once
// the server said "not for 60 s", a call of any tool stops at once with RetryLater, and the
// server receives nothing more — from this client, and from another client sharing its pacer.
// client.Unpaced turns it off: the call is sent (and refused again).
func TestRateLimitedToolCallHoldsTheOthers(t *testing.T) {
	t.Parallel()
	var seen atomic.Int32
	url, _ := quoteServer(t, func(_ map[string]any, n int) refusal {
		seen.Store(int32(n))
		return rateLimited("60")
	})
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	shared := client.NewPacer()
	c, err := mcp.NewClient(ctx, connectWith(t, url, mcp.HTTPClient(nil)), client.WithPacer(shared))
	require.NoError(t, err)

	_, err = c.Call(ctx, "quote", map[string]any{"currency": "eur"})
	require.ErrorIs(t, err, client.ErrWaitTooLong)
	require.EqualValues(t, 1, seen.Load())

	other, err := mcp.NewClient(ctx, connectWith(t, url, mcp.HTTPClient(nil)), client.WithPacer(shared))
	require.NoError(t, err)
	for _, cl := range []struct {
		name string
		c    *mcp.Client
	}{
		{"the same client", c},
		{"another client sharing the pacer", other},
	} {
		_, err = cl.c.Call(ctx, "quote", map[string]any{"currency": "usd"})
		require.ErrorIs(t, err, client.ErrWaitTooLong, cl.name)
		var later *client.RetryLater
		require.ErrorAs(t, err, &later, cl.name)
		assert.Greater(t, later.After, client.DefaultMaxWait, cl.name)
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		assert.Empty(t, ce.Attempts, "%s: nothing was sent", cl.name)
		assert.EqualValues(t, 1, seen.Load(), "%s: the server received nothing more", cl.name)
	}

	unpaced, err := mcp.NewClient(ctx, connectWith(t, url, mcp.HTTPClient(nil)), client.WithPacer(client.Unpaced))
	require.NoError(t, err)
	_, err = unpaced.Call(ctx, "quote", map[string]any{"currency": "usd"})
	require.ErrorIs(t, err, client.ErrWaitTooLong)
	assert.EqualValues(t, 2, seen.Load(), "unpaced, the call is sent")
}
