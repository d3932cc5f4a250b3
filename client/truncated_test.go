package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/corpus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientTruncatedNotRetryable: a 503 whose 2 MiB body begins by saying the failure is not
// retryable is not retried, over a real HTTP server on loopback: the loop reads the bound and
// decides from the prefix.
func TestClientTruncatedNotRetryable(t *testing.T) {
	t.Parallel()
	body := corpus.HugeAgentEnvelope(`"code":"account_closed","retryable":false`, 2<<20)
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		reply(w, 503, body)
	})
	c := newClient(t, srv, client.WithOperations(opCreateOrder))

	_, err := c.Call(context.Background(), "create_order", json.RawMessage(`{"sku":"a"}`))
	ce := callError(t, err, client.ErrNotRetryable)
	assert.True(t, errors.Is(err, client.ErrNotRetryable))
	assert.Len(t, srv.Requests(), 1, "exactly one request reaches the server")
	require.NotNil(t, ce.Envelope)
	assert.Equal(t, remedy.DialectTruncated, ce.Envelope.Dialect)
	assert.Equal(t, "account_closed", ce.Envelope.Code)
	assert.False(t, ce.Envelope.Retryable)
	assert.Equal(t, remedy.RetryFromBody, ce.Envelope.RetrySource)
}

// TestClientTruncatedRetryable: a 503 whose 2 MiB body begins by saying retry, at once, is
// retried, and the retry succeeds.
func TestClientTruncatedRetryable(t *testing.T) {
	t.Parallel()
	body := corpus.HugeAgentEnvelope(`"code":"unavailable","retryable":true,"retry_after_ms":0`, 2<<20)
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			reply(w, 503, body)
			return
		}
		reply(w, 201, bodyOK)
	})
	c := newClient(t, srv, client.WithOperations(opCreateOrder))

	res, err := c.Call(context.Background(), "create_order", json.RawMessage(`{"sku":"a"}`))
	require.NoError(t, err)
	require.NotNil(t, res)
	assert.Len(t, srv.Requests(), 2, "the 503 was retried once")
}
