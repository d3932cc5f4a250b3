package agentback_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/interop"
	"github.com/remedy-go/remedy/mcp"
)

// longWindow is the rate limits' window of TestLongWait's app, in seconds: longer than the
// loop's MaxWait (30 s), and than the test, so that every quote after the first is refused.
const longWindow = 300

// TestLongWait runs a call into a rate limit whose wait is longer than the loop will spend.
// The loop's rule: no early retry, the call stops at once saying when it can succeed.
func TestLongWait(t *testing.T) {
	requireNode(t)
	t.Parallel()
	a := startApp(t, longWindow)
	rest := interop.Record(t, row(t, "@agentback/rest", "server", transportREST, "a wait past MaxWait stops the call"))
	overMCP := interop.Record(t, row(t, "@agentback/mcp", "server", transportMCP, "a wait past MaxWait stops the call"))
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()

	rest.Run(t, "REST: stops at once with RetryLater", func(t *testing.T) {
		a.raw(t, http.MethodGet, "/v1/quotes?currency=eur", "") // takes the window's one quote
		_, err := restClient(t, a.url).Call(ctx, opQuote, map[string]any{"currency": "eur"})
		require.ErrorIs(t, err, client.ErrWaitTooLong)
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		assert.Len(t, ce.Attempts, 1, "no early retry")
		var later *client.RetryLater
		require.ErrorAs(t, err, &later)
		// Retry-After counts down from the window's start: whole seconds, at most the window.
		assert.Greater(t, later.After, client.DefaultMaxWait)
		assert.LessOrEqual(t, later.After, longWindow*time.Second)
	})

	overMCP.Run(t, "MCP: stops at once with RetryLater", func(t *testing.T) {
		cs := connect(t, a)
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_quote", Arguments: map[string]any{"currency": "eur"}})
		require.NoError(t, err) // takes the window's one quote
		cl, err := mcp.NewClient(ctx, cs)
		require.NoError(t, err)
		_, err = cl.Call(ctx, "get_quote", map[string]any{"currency": "eur"})
		// mcp-http answers 429 with Retry-After and a JSON-RPC error (-32029); the session's
		// HTTPClient gives both to the loop, which the go-sdk alone would not.
		require.ErrorIs(t, err, client.ErrWaitTooLong)
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		require.NotNil(t, ce.Envelope)
		assert.Equal(t, http.StatusTooManyRequests, ce.Envelope.Status)
		assert.Equal(t, remedy.DialectJSONRPC, ce.Envelope.Dialect)
		assert.Equal(t, "-32029", ce.Envelope.Code)
		assert.Len(t, ce.Attempts, 1, "no early retry")
		var later *client.RetryLater
		require.ErrorAs(t, err, &later)
		assert.Greater(t, later.After, client.DefaultMaxWait)
		assert.LessOrEqual(t, later.After, longWindow*time.Second)
	})
}
