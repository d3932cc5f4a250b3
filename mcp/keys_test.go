package mcp_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/nettest"
	"github.com/remedy-go/remedy/mcp"
)

// A tool that declares the idempotencyKey argument honours it: its attempts say so
// (KeysHonoured), so that the loop sends a call whose answer was lost again with its key. A
// tool that does not declare it gets no key, and is not counted on.
func TestKeysHonouredByTheToolsThatDeclareThem(t *testing.T) {
	t.Parallel()
	_, cs := connectForeign(t)
	ctx := context.Background()
	tr := mcp.NewTransport(cs)
	honoured := map[string][]bool{}
	loop := client.Loop{Transport: client.TransportFunc(func(ctx context.Context, req *client.Request) (*client.Response, error) {
		resp, err := tr.RoundTrip(ctx, req)
		honoured[req.Operation] = append(honoured[req.Operation], req.KeysHonoured)
		return resp, err
	}), Backoff: func() backoff.BackOff { return backoff.NewConstantBackOff(time.Millisecond) }}
	_, err := loop.Do(ctx, client.Call{Operation: "flaky", Args: json.RawMessage(`{}`)})
	require.NoError(t, err)
	_, err = loop.Do(ctx, client.Call{Operation: "boom", Args: json.RawMessage(`{}`)})
	require.Error(t, err)
	assert.Equal(t, map[string][]bool{"flaky": {true, true}, "boom": {false}}, honoured)
}

// smsTools is a foreign MCP server over streamable HTTP on loopback: send_sms takes no key;
// send_sms_keyed declares idempotencyKey and honours it (a repeated key is answered from the
// record, marked replayed). Both count the SMS they send.
type smsTools struct {
	mu     sync.Mutex
	sent   map[string]int
	stored map[string]bool
}

func (s *smsTools) server() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "sms", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "send_sms", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			s.mu.Lock()
			s.sent["send_sms"]++
			s.mu.Unlock()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "sent"}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "send_sms_keyed", InputSchema: json.RawMessage(`{"type":"object","properties":{"idempotencyKey":{"type":"string"}}}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct {
				Key string `json:"idempotencyKey"`
			}
			json.Unmarshal(req.Params.Arguments, &args)
			s.mu.Lock()
			replay := args.Key != "" && s.stored[args.Key]
			if !replay {
				s.sent["send_sms_keyed"]++
				s.stored[args.Key] = args.Key != ""
			}
			s.mu.Unlock()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "sent"}},
				Meta: sdk.Meta{remedy.MetaReplayed: replay}}, nil
		})
	return srv
}

func (s *smsTools) count(tool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent[tool]
}

// toolCall selects an HTTP request that carries a tools/call.
func toolCall(r *http.Request, body []byte) bool {
	return r.Method == http.MethodPost && bytes.Contains(body, []byte(`"method":"tools/call"`))
}

// Over streamable HTTP, a tool call whose answer is lost after the tool ran is sent again
// only to a tool that declares idempotencyKey (which then replays it); any other stops the
// call, saying it may have executed.
func TestKeysLostAnswerOverMCP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tool    string
		retried bool
	}{{"send_sms", false}, {"send_sms_keyed", true}} {
		t.Run(tc.tool, func(t *testing.T) {
			t.Parallel()
			tools := &smsTools{sent: map[string]int{}, stored: map[string]bool{}}
			srv := tools.server()
			hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
				&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
			t.Cleanup(hs.Close)
			// The HTTP client loses the answer of the first tool call: the tool ran, the client
			// gets an unexpected EOF.
			var lost atomic.Bool
			base := http.DefaultTransport.(*http.Transport).Clone()
			t.Cleanup(base.CloseIdleConnections)
			hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
				var body []byte
				if r.Body != nil {
					body, _ = io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
				}
				resp, err := base.RoundTrip(r)
				if err == nil && toolCall(r, body) && lost.CompareAndSwap(false, true) {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					return nil, io.ErrUnexpectedEOF
				}
				return resp, err
			})}
			ctx := context.Background()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
				&sdk.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
			require.NoError(t, err)
			t.Cleanup(func() { cs.Close() })
			c, err := mcp.NewClient(ctx, cs, client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(time.Millisecond) }))
			require.NoError(t, err)

			resp, err := c.Call(ctx, tc.tool, map[string]any{"to": "+15550100"})
			assert.Equal(t, 1, tools.count(tc.tool), "the SMS is sent once")
			if !tc.retried {
				var ce *client.CallError
				require.ErrorAs(t, err, &ce)
				assert.ErrorIs(t, err, remedy.ErrOutcomeUnknown)
				assert.Len(t, ce.Attempts, 1)
				return
			}
			require.NoError(t, err)
			assert.True(t, resp.Replayed)
			assert.Len(t, resp.Attempts, 2)
		})
	}
}

// A tool call whose HTTP request failed before it was written — here the TLS handshake of
// its connection is cut — is sent again even to a tool that takes no key: the trace of the
// call shows that nothing reached the server.
func TestKeysNotSentOverMCP(t *testing.T) {
	t.Parallel()
	tools := &smsTools{sent: map[string]int{}, stored: map[string]bool{}}
	srv := tools.server()
	hs := httptest.NewTLSServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	t.Cleanup(hs.Close)
	// Once cut is set, every new connection goes to a listener that closes it at once.
	cutter, accepted := nettest.Hangup(t)
	var cut atomic.Bool
	d := &net.Dialer{}
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if cut.Load() {
				addr = cutter
			}
			return d.DialContext(ctx, network, addr)
		}}
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: tr}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	c, err := mcp.NewClient(ctx, cs, client.WithLimits(client.Limits{MaxAttempts: 3}), client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(time.Millisecond) }))
	require.NoError(t, err)

	cut.Store(true)
	_, err = c.Call(ctx, "send_sms", map[string]any{"to": "+15550100"})
	var ce *client.CallError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, client.ErrAttemptsExhausted, "%v", err)
	require.Len(t, ce.Attempts, 3)
	for _, a := range ce.Attempts[:2] {
		assert.Equal(t, client.ActRetry, a.Decision.Action, "%v: %s", a.Err, a.Decision.Why)
	}
	assert.EqualValues(t, 3, accepted.Load())
	assert.Zero(t, tools.count("send_sms"))
}

// A tool whose annotations say idempotentHint is as safe to send again as an idempotent HTTP
// method: a call whose answer was lost after the tool ran is sent once more (the tool runs
// twice, to the same effect). The same tool without the hint stops the call, saying it may
// have executed.
func TestIdempotentHintMakesALostAnswerSafeToRetry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		hint    bool
		retried bool
	}{{hint: true, retried: true}, {hint: false}} {
		t.Run(fmt.Sprintf("idempotentHint=%v", tc.hint), func(t *testing.T) {
			t.Parallel()
			var runs atomic.Int32
			srv := sdk.NewServer(&sdk.Implementation{Name: "status", Version: "1"}, nil)
			srv.AddTool(&sdk.Tool{Name: "set_status", InputSchema: json.RawMessage(`{"type":"object"}`),
				Annotations: &sdk.ToolAnnotations{IdempotentHint: tc.hint}},
				func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					runs.Add(1)
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "away"}}}, nil
				})
			hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
				&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
			t.Cleanup(hs.Close)
			ctx := context.Background()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
				&sdk.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: dropping(toolCallBody), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
			require.NoError(t, err)
			t.Cleanup(func() { cs.Close() })
			c, err := mcp.NewClient(ctx, cs, client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(time.Millisecond) }))
			require.NoError(t, err)

			resp, err := c.Call(ctx, "set_status", map[string]any{"status": "away"})
			if !tc.retried {
				var ce *client.CallError
				require.ErrorAs(t, err, &ce)
				assert.ErrorIs(t, err, remedy.ErrOutcomeUnknown)
				assert.Len(t, ce.Attempts, 1)
				assert.EqualValues(t, 1, runs.Load())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "away", string(resp.Body))
			require.Len(t, resp.Attempts, 2, "retried once")
			assert.Empty(t, resp.Attempts[0].IdempotencyKey, "no key: the tool takes none")
			assert.Equal(t, client.ActRetry, resp.Attempts[0].Decision.Action, "%v", resp.Attempts[0].Err)
			assert.EqualValues(t, 2, runs.Load(), "the answer was lost after the tool ran")
		})
	}
}

// toolCallBody selects an HTTP request that carries a tools/call, for dropping.
func toolCallBody(r *http.Request) bool {
	body, _ := io.ReadAll(r.Body)
	return toolCall(r, body)
}
