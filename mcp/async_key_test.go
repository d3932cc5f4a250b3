package mcp_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/mcp"
	"github.com/remedy-go/remedy/server"
)

type exportIn struct {
	Format string `json:"format"`
}

type exportOut struct {
	URL string `json:"url"`
}

// Through remedy's MCP client, an Async and Idempotent operation of the reference server whose
// handler fails, transiently, within ToolWait runs once (issue 35, row 4): the loop sends its
// retries with the call's idempotency key, and the server answers them with the failure the
// key's job ended with, marked replayed, as over REST it answers them with the same job.
func TestLoopAsyncFailureRunsOnceOverMCP(t *testing.T) {
	t.Parallel()
	api, err := server.New(server.WithAsync(server.AsyncOptions{ToolWait: time.Minute}))
	require.NoError(t, err)
	var runs atomic.Int32
	require.NoError(t, server.Post(api, "/v1/exports", func(ctx context.Context, in exportIn) (exportOut, error) {
		runs.Add(1)
		return exportOut{}, server.Error(server.CodeUnavailable, "the ledger is busy")
	}, server.OperationID("export_invoices"), server.Async(), server.Idempotent()))
	srv := httptest.NewServer(api)
	defer srv.Close()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		api.Shutdown(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "async-key", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	c, err := mcp.NewClient(ctx, cs, client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(time.Millisecond) }))
	require.NoError(t, err)

	_, err = c.Call(ctx, "export_invoices", map[string]any{"format": "csv"})
	var ce *client.CallError
	require.True(t, errors.As(err, &ce), "%v", err)
	require.NotNil(t, ce.Envelope)
	assert.Equal(t, server.CodeUnavailable, ce.Envelope.Code)
	assert.Equal(t, int32(1), runs.Load(), "one call, one key, one run")
	// The transient failure is retried once with the key; its replay ends the call, for the
	// same key would be answered with it again.
	require.Len(t, ce.Attempts, 2, "the loop retried the transient failure once")
	assert.ErrorIs(t, err, client.ErrNotRetryable)
	assert.True(t, ce.Attempts[1].Replayed, "the retry was answered from the key's job")
	assert.Equal(t, ce.Attempts[0].IdempotencyKey, ce.Attempts[1].IdempotencyKey)
}
