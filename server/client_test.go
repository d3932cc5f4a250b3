package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/rewrite"
	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/storetest"
)

// orderOps are the order API's operations as the client registers them.
var orderOps = []client.Operation{
	{Name: "create_order", Method: "POST", Path: "/v1/orders"},
	{Name: "get_order", Method: "GET", Path: "/v1/orders/{id}"},
	{Name: "list_orders", Method: "GET", Path: "/v1/orders"},
	{Name: "ship_order", Method: "POST", Path: "/v1/orders/{id}/ship"},
	{Name: "pay_order", Method: "POST", Path: "/v1/orders/{id}/pay"},
}

func orderClient(t *testing.T, url string, opts ...client.Option) *client.Client {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	c, err := client.New(append([]client.Option{
		client.WithBaseURL(url), client.WithHTTPClient(&http.Client{Transport: tr}),
		client.WithOperations(orderOps...),
		client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(time.Millisecond) }),
	}, opts...)...)
	require.NoError(t, err)
	return c
}

// The reference client repairs its calls against the reference server from the envelope alone.
func TestClientRepairsAgainstServer(t *testing.T) {
	t.Parallel()
	srv, _ := newOrderAPI(t)
	c := orderClient(t, srv.URL)
	// The server suggests no value for a number out of range: moving it onto the bound it
	// violated is the client's proposal, sent only because this policy approves it.
	clamps := orderClient(t, srv.URL, client.WithRewritePolicy(rewrite.All))
	ctx := context.Background()

	t.Run("validation, repaired from the allowed value and, approved, the bound", func(t *testing.T) {
		resp, err := clamps.Call(ctx, "create_order", json.RawMessage(`{"customer_id":"cus_1","currency":"USD","items":[{"sku":"a","quantity":500}]}`))
		require.NoError(t, err)
		require.Len(t, resp.Attempts, 2)
		assert.Equal(t, 422, resp.Attempts[0].Status)
		assert.Equal(t, client.ActRewrite, resp.Attempts[0].Decision.Action)
		var o Order
		require.NoError(t, json.Unmarshal(resp.Body, &o))
		assert.Equal(t, "usd", o.Currency)
		assert.Equal(t, 100, o.Items[0].Quantity)
	})
	t.Run("precondition, repaired by the next operation", func(t *testing.T) {
		resp, err := c.Call(ctx, "create_order", map[string]any{"customer_id": "cus_1", "currency": "eur", "items": []Item{{"b", 1}}})
		require.NoError(t, err)
		var o Order
		require.NoError(t, json.Unmarshal(resp.Body, &o))
		resp, err = c.Call(ctx, "ship_order", map[string]any{"id": o.ID})
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(resp.Body, &o))
		assert.Equal(t, "shipped", o.Status)
		var ops []string
		for _, a := range resp.Attempts {
			ops = append(ops, a.Operation)
		}
		assert.Equal(t, []string{"ship_order", "pay_order", "ship_order"}, ops)
	})
	t.Run("a parameter out of range, moved onto the bound as approved", func(t *testing.T) {
		resp, err := clamps.Call(ctx, "list_orders", map[string]any{"limit": 80})
		require.NoError(t, err)
		require.Len(t, resp.Attempts, 2)
		assert.Equal(t, 400, resp.Attempts[0].Status)
		assert.Equal(t, "invalid_parameter", resp.Attempts[0].Envelope.Code)
		var l OrderList
		require.NoError(t, json.Unmarshal(resp.Body, &l))
		assert.Equal(t, 50, l.Limit)
	})
	t.Run("not found is not retried", func(t *testing.T) {
		_, err := c.Call(ctx, "get_order", map[string]any{"id": "ord_zzz"})
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		assert.Len(t, ce.Attempts, 1)
		assert.Equal(t, "not_found", ce.Envelope.Code)
	})
}

// A rate-limited call waits what the server asked and then succeeds.
func TestClientWaitsOutRateLimit(t *testing.T) {
	t.Parallel()
	// The limiter's clock moves only when the client waits, and by what the client waits: the
	// second call finds the bucket empty however long the machine takes between the calls, and
	// its retry finds a token only if the client waited all the server asked.
	clock := storetest.NewClock()
	srv, _ := newOrderAPI(t, server.WithClock(clock.Now), server.WithRateLimit(server.RateLimitOptions{PerSecond: 20, Burst: 1}))
	c := orderClient(t, srv.URL, client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) {
		if a.Decision.Action == client.ActRetry {
			clock.Advance(a.Decision.Wait)
		}
	}}))
	ctx := context.Background()
	_, err := c.Call(ctx, "list_orders", nil)
	require.NoError(t, err)
	resp, err := c.Call(ctx, "list_orders", nil)
	require.NoError(t, err)
	require.Len(t, resp.Attempts, 2)
	first := resp.Attempts[0]
	assert.Equal(t, 429, first.Status)
	assert.Equal(t, client.ActRetry, first.Decision.Action)
	assert.Equal(t, 50*time.Millisecond, first.Decision.Asked, "one token at 20 a second")
	assert.Equal(t, 50*time.Millisecond, first.Decision.Wait, "what the server asked")
}
