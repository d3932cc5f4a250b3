package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/mcp"
	"github.com/remedy-go/remedy/server"
)

// restartable serves the billing API's stateful MCP endpoint on loopback, and restarts it: a
// new instance that knows none of the old sessions answers their calls with 404.
type restartable struct {
	url     string
	current atomic.Pointer[billing.Store]
	handler atomic.Pointer[http.Handler]
}

func newRestartable(t *testing.T) *restartable {
	t.Helper()
	r := &restartable{}
	r.restart(t)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		(*r.handler.Load()).ServeHTTP(w, req)
	}))
	t.Cleanup(hs.Close)
	r.url = hs.URL + "/mcp"
	return r
}

func (r *restartable) restart(t *testing.T) *billing.Store {
	api, store, err := billing.New(server.WithMCP(server.MCPOptions{}))
	require.NoError(t, err)
	var h http.Handler = api
	r.handler.Store(&h)
	r.current.Store(store)
	return store
}

// connect opens a session over HTTPClient, which sees the 404 of a session that is gone: the
// session's end still takes precedence over the answer. (TestSessionReconnectsAfterExpiry
// runs over the go-sdk's own client too.)
func (r *restartable) connect(ctx context.Context) (*sdk.ClientSession, error) {
	return sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: r.url, HTTPClient: mcp.HTTPClient(nil), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
}

// A session the server no longer has is gone: the call fails with ErrSessionClosed (no
// envelope: no answer to read), and so does every later call — nothing reconnects by itself.
func TestSessionGoneIsErrSessionClosed(t *testing.T) {
	t.Parallel()
	srv := newRestartable(t)
	ctx := context.Background()
	cs, err := srv.connect(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	c, err := mcp.NewClient(ctx, cs)
	require.NoError(t, err)
	_, err = c.Call(ctx, "revenue_report", map[string]any{"currency": "usd"})
	require.NoError(t, err)

	store := srv.restart(t)
	for range 2 {
		_, err = c.Call(ctx, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "usd", "amount": 900})
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		assert.ErrorIs(t, err, mcp.ErrSessionClosed)
		assert.ErrorIs(t, err, client.ErrNotRetryable)
		assert.Nil(t, ce.Envelope)
		assert.Len(t, ce.Attempts, 1)
	}
	assert.Zero(t, store.Effects("create_invoice"))
}

// With SetReconnect, a call the server refused for a session it no longer has is sent on a
// new session — it ran nowhere — and the calls after it use the new session.
func TestSessionReconnects(t *testing.T) {
	t.Parallel()
	srv := newRestartable(t)
	ctx := context.Background()
	cs, err := srv.connect(ctx)
	require.NoError(t, err)
	c, err := mcp.NewClient(ctx, cs)
	require.NoError(t, err)
	var dials atomic.Int32
	c.Transport().SetReconnect(func(ctx context.Context) (*sdk.ClientSession, error) {
		dials.Add(1)
		return srv.connect(ctx)
	})
	t.Cleanup(func() { c.Transport().Session().Close() })
	_, err = c.Call(ctx, "revenue_report", map[string]any{"currency": "usd"})
	require.NoError(t, err)
	first := srv.current.Load()

	second := srv.restart(t)
	_, err = c.Call(ctx, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "usd", "amount": 900})
	require.NoError(t, err)
	resp, err := c.Call(ctx, "revenue_report", map[string]any{"currency": "usd"})
	require.NoError(t, err)
	assert.Len(t, resp.Attempts, 1)
	assert.EqualValues(t, 1, dials.Load())
	assert.Zero(t, first.Effects("create_invoice"))
	assert.Equal(t, 1, second.Effects("create_invoice"))
	assert.NotSame(t, cs, c.Transport().Session())
}

// A session the server ended after its idle timeout: a call of a tool that neither reads only
// nor takes a key is sent on a new session because the server refused it (404), not because
// it is safe to repeat; it runs once. Only HTTPClient's client lets the transport see that the
// 404 answered the call's own request: the go-sdk's error for it would be the same had the 404
// answered another request while the call was in flight (and possibly ran). Over the go-sdk's
// own client, the call stops with ErrOutcomeUnknown instead — the safe side — and the next
// call opens a new session.
func TestSessionReconnectsAfterExpiry(t *testing.T) {
	t.Parallel()
	for _, hc := range sessionClients {
		t.Run(hc.name, func(t *testing.T) {
			t.Parallel()
			api, store, err := billing.New(server.WithMCP(server.MCPOptions{SessionIdleTimeout: 500 * time.Millisecond}))
			require.NoError(t, err)
			hs := httptest.NewServer(api)
			t.Cleanup(hs.Close)
			connect := func(ctx context.Context) (*sdk.ClientSession, error) {
				return sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
					&sdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: hc.client(), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
			}
			ctx := context.Background()
			cs, err := connect(ctx)
			require.NoError(t, err)
			c, err := mcp.NewClient(ctx, cs)
			require.NoError(t, err)
			c.Transport().SetReconnect(connect)
			t.Cleanup(func() { c.Transport().Session().Close() })
			_, err = c.Call(ctx, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "usd", "amount": 900})
			require.NoError(t, err)

			// Any request on the session would keep it: the test watches the server's side until the
			// idle timeout has closed it, however late a busy machine fires the timer.
			deadline := time.Now().Add(30 * time.Second)
			for {
				n := 0
				for range api.MCPServer().Sessions() {
					n++
				}
				if n == 0 {
					break
				}
				require.True(t, time.Now().Before(deadline), "the idle session was never closed")
				time.Sleep(50 * time.Millisecond)
			}
			resp, err := c.Call(ctx, "finalize_invoice", map[string]any{"id": "in_1"})
			if hc.name == "go-sdk client" {
				assert.ErrorIs(t, err, remedy.ErrOutcomeUnknown)
				assert.Zero(t, store.Effects("finalize_invoice"))
				resp, err = c.Call(ctx, "finalize_invoice", map[string]any{"id": "in_1"})
			}
			require.NoError(t, err)
			assert.Contains(t, string(resp.Body), `"status":"open"`)
			assert.Len(t, resp.Attempts, 1)
			assert.Equal(t, 1, store.Effects("finalize_invoice"))
			assert.NotSame(t, cs, c.Transport().Session())
		})
	}
}
