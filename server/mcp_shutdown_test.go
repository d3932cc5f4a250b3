package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/internal/testkit/nettest"
	"github.com/remedy-go/remedy/server"
)

// shutdownDeadline is the deadline the shutdown tests give API.Shutdown and
// http.Server.Shutdown together: a hang guard, far beyond what a shutdown takes, so that a
// test fails only when something holds the shutdown (it then ends with DeadlineExceeded).
const shutdownDeadline = 30 * time.Second

// serveLoopback serves api with an http.Server of its own on 127.0.0.1, and returns the
// server and its base URL.
func serveLoopback(t *testing.T, api *server.API) (*http.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: api}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		<-served
	})
	return srv, "http://" + ln.Addr().String()
}

// stopServing stops api and then srv, as API.Shutdown's documentation says, within one
// deadline, and fails the test when either does not return nil.
func stopServing(t *testing.T, api *server.API, srv *http.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), shutdownDeadline)
	defer cancel()
	require.NoError(t, api.Shutdown(ctx), "API.Shutdown")
	require.NoError(t, srv.Shutdown(ctx), "http.Server.Shutdown with an MCP client connected")
}

// eventStream watches a client's first event stream (a session's GET, or a stateless
// subscriptions/listen, answered 200): open is closed once it is answered, and ended receives
// the error that ended its body (io.EOF when the server ended the response properly).
type eventStream struct {
	base  http.RoundTripper
	once  sync.Once
	open  chan struct{}
	ended chan error
}

func newEventStream() *eventStream {
	return &eventStream{base: http.DefaultTransport, open: make(chan struct{}), ended: make(chan error, 1)}
}

func (s *eventStream) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(r)
	stream := r.Method == http.MethodGet || r.Header.Get("Mcp-Method") == "subscriptions/listen"
	if err != nil || !stream || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	s.once.Do(func() {
		resp.Body = &nettest.EndingBody{ReadCloser: resp.Body, Ended: s.ended}
		close(s.open)
	})
	return resp, err
}

// receive waits for c, or fails the test when the hang guard ends first.
func receive[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), shutdownDeadline)
	defer cancel()
	select {
	case v := <-c:
		return v
	case <-ctx.Done():
		t.Fatalf("%s: nothing within %s", what, shutdownDeadline)
	}
	var zero T
	return zero
}

// connectStreaming opens a go-sdk client session with the endpoint at base, with its event
// stream (standalone, or subscriptions/listen at protocol 2026-07-28), and waits until that
// stream is open.
func connectStreaming(t *testing.T, base string, opts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions) (*mcp.ClientSession, *eventStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), shutdownDeadline)
	defer cancel()
	es := newEventStream()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + server.DefaultMCPPath, HTTPClient: &http.Client{Transport: es}}, sopts)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	select {
	case <-es.open:
	case <-ctx.Done():
		t.Fatal("the go-sdk client opened no event stream")
	}
	return cs, es
}

// initialize is an MCP initialize request, which opens a session.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`

// TestShutdownEndsMCPSessions (issue 35, row 13): with a go-sdk client connected to the
// API's MCP endpoint, its standalone event stream open, API.Shutdown and then
// http.Server.Shutdown both return nil: the API ends the session and its stream (properly, so
// that the client reads its end rather than a cut), and opens no session once it shuts down.
func TestShutdownEndsMCPSessions(t *testing.T) {
	t.Parallel()
	api, _, err := billing.New()
	require.NoError(t, err)
	srv, base := serveLoopback(t, api)
	_, es := connectStreaming(t, base, nil, nil)

	ctx, cancel := context.WithTimeout(context.Background(), shutdownDeadline)
	defer cancel()
	require.NoError(t, api.Shutdown(ctx), "API.Shutdown")
	assert.Equal(t, io.EOF, receive(t, es.ended, "the end of the event stream"),
		"the event stream ends properly")

	status, h, body := do(t, http.MethodPost, base+server.DefaultMCPPath, "application/json", initialize,
		"Accept", "application/json, text/event-stream")
	assert.Equal(t, http.StatusServiceUnavailable, status, "%s", body)
	env := envelope(t, status, h, body)
	assert.Equal(t, server.CodeUnavailable, env.Code)
	assert.True(t, env.Retryable, "another instance, or this one restarted, may answer")

	require.NoError(t, srv.Shutdown(ctx), "http.Server.Shutdown with an MCP client connected")
}

// TestShutdownEndsListenStreams: the same on a stateless endpoint, whose event stream is a
// go-sdk client's subscriptions/listen (protocol 2026-07-28, a client that handles tool list
// changes): API.Shutdown ends it properly, and http.Server.Shutdown returns nil.
func TestShutdownEndsListenStreams(t *testing.T) {
	t.Parallel()
	api, _, err := billing.New(server.WithMCP(server.MCPOptions{Stateless: true}))
	require.NoError(t, err)
	srv, base := serveLoopback(t, api)
	_, es := connectStreaming(t, base, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})

	ctx, cancel := context.WithTimeout(context.Background(), shutdownDeadline)
	defer cancel()
	require.NoError(t, api.Shutdown(ctx), "API.Shutdown")
	assert.Equal(t, io.EOF, receive(t, es.ended, "the end of the event stream"),
		"the event stream ends properly")
	require.NoError(t, srv.Shutdown(ctx), "http.Server.Shutdown with an MCP client connected")
}

// TestShutdownLetsCallsInFlightFinish: a tool call running when API.Shutdown is called gets
// its answer (as a REST request does under http.Server.Shutdown: the session is closed only
// once it is answered, for the go-sdk drops the answers a closing session has not written),
// a call sent once the shutdown has begun is refused without running, and Shutdown returns
// nil once the call in flight is answered.
func TestShutdownLetsCallsInFlightFinish(t *testing.T) {
	t.Parallel()
	api, err := server.New()
	require.NoError(t, err)
	var runs atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	require.NoError(t, server.Post(api, "/v1/pings", func(_ context.Context, in pingIn) (pingIn, error) {
		if runs.Add(1) == 1 {
			close(entered)
			<-release
		}
		return in, nil
	}, server.OperationID("ping")))
	srv, base := serveLoopback(t, api)
	cs, _ := connectStreaming(t, base, nil, nil)
	free := sync.OnceFunc(func() { close(release) })
	t.Cleanup(free) // before the session's close, which waits for the call

	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	called := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{"note": "hello"}})
		called <- answer{res, err}
	}()
	receive(t, entered, "the call reaching its handler")

	ctx, cancel := context.WithTimeout(context.Background(), shutdownDeadline)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- api.Shutdown(ctx) }()
	// The shutdown has begun once the endpoint refuses a new session (until then, each
	// initialize opens one, which the shutdown closes in turn).
	for {
		status, h, body := do(t, http.MethodPost, base+server.DefaultMCPPath, "application/json", initialize,
			"Accept", "application/json, text/event-stream")
		if status == http.StatusOK {
			continue
		}
		require.Equal(t, http.StatusServiceUnavailable, status, "%s", body)
		require.Contains(t, envelope(t, status, h, body).Message, "shutting down")
		break
	}
	status, h, body := do(t, http.MethodPost, base+server.DefaultMCPPath, "application/json",
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ping","arguments":{"note":"late"}}}`,
		"Accept", "application/json, text/event-stream", "Mcp-Session-Id", cs.ID(), "Mcp-Protocol-Version", "2025-11-25")
	require.Equal(t, http.StatusServiceUnavailable, status, "a call once the shutdown began: %s", body)
	env := envelope(t, status, h, body)
	assert.Equal(t, server.CodeUnavailable, env.Code)
	assert.True(t, env.Retryable, "nothing was done: the call can be sent again, elsewhere or later")
	select {
	case err := <-stopped:
		t.Fatalf("API.Shutdown returned %v while a call was in flight", err)
	default:
	}

	free()
	got := receive(t, called, "the call's answer")
	require.NoError(t, got.err, "the call in flight is answered")
	assert.False(t, got.res.IsError, "the call in flight succeeds: %v", got.res.Content)
	assert.Equal(t, int32(1), runs.Load(), "the call sent during the shutdown did not run")
	require.NoError(t, receive(t, stopped, "API.Shutdown"), "API.Shutdown")
	require.NoError(t, srv.Shutdown(ctx), "http.Server.Shutdown")
}

// pingIn is the input and the result of a call that waits for the test.
type pingIn struct {
	Note string `json:"note"`
}

// TestShutdownWithdrawsPendingQuestion: a call waiting for the client's user to confirm it
// (elicitation, which may wait for the confirmation's whole lifetime) does not hold the
// shutdown: the question is withdrawn, the call is answered unavailable (retryable: nothing
// was done), and the operation does not run.
func TestShutdownWithdrawsPendingQuestion(t *testing.T) {
	t.Parallel()
	api, store, err := billing.New()
	require.NoError(t, err)
	srv, base := serveLoopback(t, api)
	asked, gone := make(chan struct{}), make(chan struct{})
	var once sync.Once
	cs, _ := connectStreaming(t, base, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			once.Do(func() { close(asked) })
			select { // a person who never answers
			case <-ctx.Done():
			case <-gone:
			}
			return &mcp.ElicitResult{Action: "cancel"}, nil
		},
	}, nil)
	t.Cleanup(func() { close(gone) }) // before the session's close, which waits for the handler

	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	called := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_customer", Arguments: map[string]any{"id": "cus_ada"}})
		called <- answer{res, err}
	}()
	receive(t, asked, "the question reaching the client")

	stopServing(t, api, srv)
	got := receive(t, called, "the call's answer")
	require.NoError(t, got.err)
	env := toolEnvelope(t, got.res)
	assert.Equal(t, server.CodeUnavailable, env.Code, "%s", env.Message)
	assert.True(t, env.Retryable)
	assert.Zero(t, store.Effects("delete_customer"), "nothing was deleted")
}

// TestShutdownWithTypeScriptClient: the same with the official TypeScript SDK's clients (v1
// and v2) connected, each with its standalone event stream open: API.Shutdown and then
// http.Server.Shutdown return nil, and the client reads the stream's proper end.
func TestShutdownWithTypeScriptClient(t *testing.T) {
	requireNode(t)
	t.Parallel()
	for _, sdk := range []string{"v1", "v2"} {
		t.Run(sdk, func(t *testing.T) {
			t.Parallel()
			api, _, err := billing.New()
			require.NoError(t, err)
			srv, base := serveLoopback(t, api)

			ctx, cancel := context.WithTimeout(context.Background(), 2*shutdownDeadline) // a hang guard
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", "shutdown.mjs", sdk, base+server.DefaultMCPPath)
			cmd.Dir = tsClientDir
			cmd.WaitDelay = 5 * time.Second
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			var stderr lockedBuffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			lines := bufio.NewScanner(stdout)
			require.True(t, lines.Scan(), "shutdown.mjs ended before its event stream opened:\n%s", stderr.String())
			require.Equal(t, "open", lines.Text(), "stderr:\n%s", stderr.String())

			stopServing(t, api, srv)

			stdin.Close()
			require.True(t, lines.Scan(), "shutdown.mjs printed no report:\n%s", stderr.String())
			var rep struct {
				SessionID string `json:"sessionId"`
				Stream    string `json:"stream"`
			}
			require.NoError(t, json.Unmarshal(lines.Bytes(), &rep), "%s", lines.Text())
			require.NoError(t, cmd.Wait(), "shutdown.mjs:\n%s", stderr.String())
			assert.NotEmpty(t, rep.SessionID, "a stateful session")
			assert.Equal(t, "end", rep.Stream, "the event stream ends properly")
		})
	}
}

// lockedBuffer is a bytes.Buffer-like sink for a process's output, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}
