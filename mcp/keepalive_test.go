package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/mcp"
)

// chargeServer is a go-sdk MCP server on loopback (streamable HTTP, stateful) with a tool that
// is not safe to run twice: charge, which neither reads only nor takes an idempotency key. It
// counts every run, by its argument n, and the session each ran on. restart puts a new
// handler in front of the same server: it knows none of the old sessions, and answers their
// requests 404.
type chargeServer struct {
	url     string
	handler atomic.Pointer[http.Handler]
	srv     *sdk.Server

	mu   sync.Mutex
	runs map[int][]string // n → the session id of each run

	// closing, when set, is the message the next tools/call is answered with, as a JSON-RPC
	// error of the go-sdk's code for "server is closing", instead of reaching the server.
	closing atomic.Pointer[string]

	// cut, when set, is where the next request is given a cancel func that ends it, as a
	// proxy's timeout would: the server's handler returns and the response ends there.
	cut atomic.Pointer[chan context.CancelFunc]

	// hold, when set, makes charge wait until release is closed, after saying on started
	// that it runs.
	hold    atomic.Bool
	started chan struct{}
	release chan struct{}
}

type chargeArgs struct {
	N int `json:"n"`
}

func newChargeServer(t *testing.T) *chargeServer {
	t.Helper()
	cs := &chargeServer{runs: map[int][]string{}, started: make(chan struct{}, 1), release: make(chan struct{})}
	cs.srv = sdk.NewServer(&sdk.Implementation{Name: "charges", Version: "1"}, nil)
	sdk.AddTool(cs.srv, &sdk.Tool{Name: "charge"}, func(ctx context.Context, req *sdk.CallToolRequest, in chargeArgs) (*sdk.CallToolResult, any, error) {
		cs.mu.Lock()
		cs.runs[in.N] = append(cs.runs[in.N], req.Session.ID())
		cs.mu.Unlock()
		if cs.hold.Load() {
			cs.started <- struct{}{}
			<-cs.release
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("charged %d", in.N)}}}, nil, nil
	})
	sdk.AddTool(cs.srv, &sdk.Tool{Name: "balance", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "0"}}}, nil, nil
		})
	cs.restart()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := cs.cut.Swap(nil); c != nil && r.Method == http.MethodPost {
			ctx, cancel := context.WithCancel(r.Context())
			*c <- cancel
			r = r.WithContext(ctx)
		}
		if r.Method == http.MethodPost && cs.closing.Load() != nil {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
				if text := cs.closing.Swap(nil); text != nil {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32004,"message":%q}}`, msg.ID, *text)
					return
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		(*cs.handler.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	cs.url = hs.URL
	return cs
}

func (cs *chargeServer) restart() {
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return cs.srv }, nil)
	cs.handler.Store(&h)
}

// ranOn is the sessions charge ran on for n, one per run.
func (cs *chargeServer) ranOn(n int) []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append([]string(nil), cs.runs[n]...)
}

// connect opens a session; with keepAlive, the go-sdk pings the server at that interval and
// closes the session when the server no longer has it. A ping that merely takes long is
// tolerated (KeepAliveFailureThreshold): a busy machine does not close a live session.
// httpClient is the session's HTTP client (nil: the go-sdk's default).
func (cs *chargeServer) connect(ctx context.Context, keepAlive time.Duration, httpClient *http.Client) (*sdk.ClientSession, error) {
	opts := &sdk.ClientOptions{KeepAlive: keepAlive, KeepAliveFailureThreshold: 5}
	return sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, opts).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: cs.url, HTTPClient: httpClient, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
}

// sessionClients are the HTTP clients a session can have: the go-sdk's own, and HTTPClient's,
// which lets the transport read the answer to a call's own request.
var sessionClients = []struct {
	name   string
	client func() *http.Client
}{
	{"go-sdk client", func() *http.Client { return nil }},
	{"HTTPClient", func() *http.Client { return mcp.HTTPClient(nil) }},
}

// keepAliveClient is remedy's client on a session with a short keepalive, whose transport
// reconnects (without keepalive) through dial, counting the reconnections in dials.
func keepAliveClient(t *testing.T, srv *chargeServer, httpClient func() *http.Client, dials *atomic.Int32) (*mcp.Client, *sdk.ClientSession) {
	t.Helper()
	ctx := context.Background()
	cs, err := srv.connect(ctx, 50*time.Millisecond, httpClient())
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	c, err := mcp.NewClient(ctx, cs)
	require.NoError(t, err)
	c.Transport().SetReconnect(func(ctx context.Context) (*sdk.ClientSession, error) {
		dials.Add(1)
		return srv.connect(ctx, 0, httpClient())
	})
	t.Cleanup(func() { c.Transport().Session().Close() })
	return c, cs
}

// The go-sdk's keepalive found the session gone (the server restarted) and closed it; a call
// of a tool that is not safe to run twice, made after that, was never written: it runs once,
// on a new session (issue 35, row 6).
func TestKeepaliveClosedSessionReconnects(t *testing.T) {
	t.Parallel()
	for _, hc := range sessionClients {
		t.Run(hc.name, func(t *testing.T) {
			t.Parallel()
			srv := newChargeServer(t)
			var dials atomic.Int32
			c, old := keepAliveClient(t, srv, hc.client, &dials)
			ctx := context.Background()

			srv.restart()
			// Wait returns once the session's connection is closed: the keepalive's ping was
			// answered 404 for it.
			require.Error(t, old.Wait())

			resp, err := c.Call(ctx, "charge", map[string]any{"n": 1})
			require.NoError(t, err)
			assert.Equal(t, "charged 1", string(resp.Body))
			assert.Len(t, resp.Attempts, 1)
			assert.EqualValues(t, 1, dials.Load())
			now := c.Transport().Session()
			assert.NotSame(t, old, now)
			assert.Equal(t, []string{now.ID()}, srv.ranOn(1), "charge ran once, on the new session")
		})
	}
}

// The same with calls made at once after the keepalive closed the session: each runs once,
// on the one new session, which a single reconnection opened (issue 35, row 6).
func TestKeepaliveClosedSessionConcurrentCalls(t *testing.T) {
	t.Parallel()
	for _, hc := range sessionClients {
		t.Run(hc.name, func(t *testing.T) {
			t.Parallel()
			srv := newChargeServer(t)
			var dials atomic.Int32
			c, old := keepAliveClient(t, srv, hc.client, &dials)
			ctx := context.Background()

			srv.restart()
			require.Error(t, old.Wait())

			const n = 8
			start := make(chan struct{})
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					<-start
					_, errs[i] = c.Call(ctx, "charge", map[string]any{"n": i})
				})
			}
			close(start)
			wg.Wait()

			now := c.Transport().Session()
			assert.NotSame(t, old, now)
			assert.EqualValues(t, 1, dials.Load(), "one reconnection for every call waiting")
			for i := range n {
				assert.NoError(t, errs[i], "call %d", i)
				assert.Equal(t, []string{now.ID()}, srv.ranOn(i), "call %d ran once, on the new session", i)
			}
		})
	}
}

// A call in flight when the session died may have run: the server ran it, and the go-sdk
// then failed it with the 404 its keepalive got for the session. It is not sent again on a
// new session; it stops with ErrOutcomeUnknown, and the next call reconnects (issue 35,
// row 6).
func TestKeepaliveSessionDiesMidCall(t *testing.T) {
	t.Parallel()
	for _, hc := range sessionClients {
		t.Run(hc.name, func(t *testing.T) {
			t.Parallel()
			srv := newChargeServer(t)
			var dials atomic.Int32
			c, old := keepAliveClient(t, srv, hc.client, &dials)
			ctx := context.Background()

			srv.hold.Store(true)
			type result struct {
				resp *client.Response
				err  error
			}
			done := make(chan result, 1)
			go func() {
				resp, err := c.Call(ctx, "charge", map[string]any{"n": 1})
				done <- result{resp, err}
			}()
			<-srv.started // the server runs the call
			srv.restart()
			require.Error(t, old.Wait()) // the keepalive found the session gone
			srv.hold.Store(false)
			close(srv.release)
			r := <-done

			var ce *client.CallError
			require.ErrorAs(t, r.err, &ce, "the call succeeded: %v; charge ran on the sessions %v", r.resp, srv.ranOn(1))
			assert.ErrorIs(t, r.err, remedy.ErrOutcomeUnknown)
			assert.ErrorIs(t, r.err, mcp.ErrSessionClosed)
			assert.Len(t, ce.Attempts, 1)
			assert.Equal(t, []string{old.ID()}, srv.ranOn(1), "charge ran once, on the old session, and was not sent again")
			assert.Zero(t, dials.Load())

			resp, err := c.Call(ctx, "charge", map[string]any{"n": 2})
			require.NoError(t, err)
			assert.Equal(t, "charged 2", string(resp.Body))
			assert.EqualValues(t, 1, dials.Load())
			assert.Equal(t, []string{c.Transport().Session().ID()}, srv.ranOn(2))
		})
	}
}

// The go-sdk reports a server's JSON-RPC answer with its code for "server is closing" as it
// reports a call it refused to write on a closed connection (ErrConnectionClosed, with the
// server's message in place of its own words). Said in the go-sdk's own words, which a go-sdk
// server answers a call it refused before running it, the call ran nothing: it runs on a new
// session. In any other words, the answer is the server's, and says nothing certain of
// whether the call ran: it is not sent again (issue 35, row 6).
func TestServerClosingAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		message string
		ran     bool
	}{
		{"server is closing", false},
		{"shutting down", true},
	} {
		t.Run(tc.message, func(t *testing.T) {
			t.Parallel()
			srv := newChargeServer(t)
			var dials atomic.Int32
			c, old := keepAliveClient(t, srv, sessionClients[0].client, &dials)
			ctx := context.Background()

			srv.closing.Store(&tc.message)
			resp, err := c.Call(ctx, "charge", map[string]any{"n": 1})
			if tc.ran {
				assert.ErrorIs(t, err, remedy.ErrOutcomeUnknown)
				assert.ErrorIs(t, err, mcp.ErrSessionClosed)
				assert.Empty(t, srv.ranOn(1), "not sent again")
				assert.Zero(t, dials.Load())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "charged 1", string(resp.Body))
			assert.EqualValues(t, 1, dials.Load())
			now := c.Transport().Session()
			assert.NotSame(t, old, now)
			assert.Equal(t, []string{now.ID()}, srv.ranOn(1))
		})
	}
}

// A call's event stream that the server ends before its answer (a proxy's timeout, the
// server's handler gone) leaves a call that arrived and may have run: one that is not safe to
// run twice stops with ErrOutcomeUnknown, and is not sent again.
func TestCallStreamEndedBeforeItsAnswer(t *testing.T) {
	t.Parallel()
	srv := newChargeServer(t)
	srv.hold.Store(true)
	ctx := context.Background()
	cs, err := srv.connect(ctx, 0, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	c, err := mcp.NewClient(ctx, cs)
	require.NoError(t, err)

	cuts := make(chan context.CancelFunc, 1)
	srv.cut.Store(&cuts)
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "charge", map[string]any{"n": 1})
		done <- err
	}()
	<-srv.started
	(<-cuts)()
	err = <-done
	close(srv.release)
	assert.ErrorIs(t, err, remedy.ErrOutcomeUnknown, "%v", err)
	assert.Len(t, srv.ranOn(1), 1, "charge ran once, and was not sent again")
}
