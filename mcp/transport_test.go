package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/mcp"
	"github.com/remedy-go/remedy/server"
)

// foreignServer is an MCP server that is not ours: plain go-sdk tools, failing the way tools
// commonly do. It records the arguments each tool received.
type foreignServer struct {
	mu   sync.Mutex
	seen map[string][]json.RawMessage
	runs map[string]int
}

type noteIn struct {
	Text string `json:"text"`
}

func (f *foreignServer) record(name string, args json.RawMessage) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen[name] = append(f.seen[name], args)
	f.runs[name]++
	return f.runs[name]
}

// connectForeign serves the foreign tools in memory and returns a client session to them.
func connectForeign(t *testing.T) (*foreignServer, *sdk.ClientSession) {
	t.Helper()
	f := &foreignServer{seen: map[string][]json.RawMessage{}, runs: map[string]int{}}
	s := sdk.NewServer(&sdk.Implementation{Name: "foreign", Version: "1"}, nil)
	// A typed tool: the SDK validates the input, and refuses unknown arguments.
	sdk.AddTool(s, &sdk.Tool{Name: "note", Description: "Write a note."},
		func(ctx context.Context, req *sdk.CallToolRequest, in noteIn) (*sdk.CallToolResult, map[string]any, error) {
			f.record("note", req.Params.Arguments)
			return nil, map[string]any{"saved": in.Text}, nil
		})
	raw := func(name string, schema string, h func(n int) *sdk.CallToolResult) {
		s.AddTool(&sdk.Tool{Name: name, InputSchema: json.RawMessage(schema)},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return h(f.record(name, req.Params.Arguments)), nil
			})
	}
	// Fails with plain text, the way most tools report errors.
	raw("boom", `{"type":"object"}`, func(int) *sdk.CallToolResult {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "disk full"}}}
	})
	// Takes a key, and fails once with a retryable envelope in its text only.
	raw("flaky", `{"type":"object","properties":{"idempotencyKey":{"type":"string"}}}`, func(n int) *sdk.CallToolResult {
		if n == 1 {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{
				Text: `{"error":{"statusCode":503,"code":"unavailable","message":"try again","retryable":true,"retry_after_ms":1}}`}}}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}},
			Meta: sdk.Meta{remedy.MetaReplayed: n > 2}}
	})
	// Names a prerequisite the caller never allowed.
	raw("migrate", `{"type":"object"}`, func(int) *sdk.CallToolResult {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "{}"}},
			StructuredContent: json.RawMessage(`{"error":{"statusCode":409,"code":"precondition_failed","message":"back up first","retryable":true,"next_operation":"drop_everything"}}`)}
	})
	raw("drop_everything", `{"type":"object"}`, func(int) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "dropped"}}}
	})
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return f, cs
}

func TestForeignToolFailures(t *testing.T) {
	t.Parallel()
	f, cs := connectForeign(t)
	ctx := context.Background()
	c, err := mcp.NewClient(ctx, cs, client.WithNextOperations(mcp.Only("note", "boom", "flaky", "migrate")))
	require.NoError(t, err)

	_, err = c.Call(ctx, "boom", nil)
	var ce *client.CallError
	require.ErrorAs(t, err, &ce)
	require.NotNil(t, ce.Envelope)
	assert.Equal(t, "tool_error", ce.Envelope.Code)
	assert.Equal(t, "disk full", ce.Envelope.Message)
	assert.Len(t, ce.Attempts, 1, "a failure nobody called retryable is not retried")

	resp, err := c.Call(ctx, "flaky", map[string]any{"n": 1})
	require.NoError(t, err)
	assert.Equal(t, "done", string(resp.Body))
	require.Len(t, resp.Attempts, 2, "the envelope in the text said retryable")
	keys := f.seen["flaky"]
	require.Len(t, keys, 2)
	var first, second map[string]any
	require.NoError(t, json.Unmarshal(keys[0], &first))
	require.NoError(t, json.Unmarshal(keys[1], &second))
	assert.NotEmpty(t, first["idempotencyKey"], "the tool advertises a key: it gets one")
	assert.Equal(t, first["idempotencyKey"], second["idempotencyKey"], "the same key for an unchanged retry")
	assert.Equal(t, 1.0, first["n"])

	resp, err = c.Call(ctx, "note", map[string]any{"text": "hi"})
	require.NoError(t, err, "no key is sent to a tool that does not take one (its schema refuses unknown arguments)")
	assert.JSONEq(t, `{"saved":"hi"}`, string(resp.Body))
	assert.Empty(t, resp.Attempts[0].IdempotencyKey, "and the loop does not count on one")

	_, err = c.Call(ctx, "migrate", nil)
	require.ErrorAs(t, err, &ce)
	assert.True(t, errors.Is(err, client.ErrNextOperation), "%v", err)
	assert.Zero(t, f.runs["drop_everything"], "next_operation runs only what the caller allows")
	assert.Equal(t, 1, f.runs["migrate"])
}

func TestForeignToolsRegisteredWhenAllowed(t *testing.T) {
	t.Parallel()
	f, cs := connectForeign(t)
	ctx := context.Background()
	tr := mcp.NewTransport(cs)
	ok, _ := tr.Registered("note")
	assert.False(t, ok, "nothing is registered before the tools are listed")
	names, err := tr.Load(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"note", "boom", "flaky", "migrate", "drop_everything"}, names)
	loop := client.Loop{Transport: tr, Registered: tr.Registered}
	_, err = loop.Do(ctx, client.Call{Operation: "migrate"})
	require.Error(t, err)
	assert.Positive(t, f.runs["drop_everything"], "every listed tool is allowed when the caller says so")
}

// A JSON-RPC error is the server's answer, read as an envelope, however it came: in memory,
// in a 200 (protocol 2025-11-25), or in the 400 a stateless server of protocol 2026-07-28
// answers it with — never as a transport failure. Against the reference server over loopback
// HTTP, stateless and stateful, with the go-sdk client asking for either protocol: a stateful
// go-sdk server refuses 2026-07-28, and the client falls back to initialize at 2025-11-25. The
// same over HTTPClient, which reads the 400 itself: the same envelope.
func TestProtocolErrorsAreEnvelopes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stateless bool
		ask, got  string
		status    int // the HTTP status the JSON-RPC error came with, when not 200
	}{
		{stateless: true, ask: "2026-07-28", got: "2026-07-28", status: http.StatusBadRequest},
		{stateless: true, ask: "2025-11-25", got: "2025-11-25"},
		{stateless: false, ask: "2026-07-28", got: "2025-11-25"},
		{stateless: false, ask: "2025-11-25", got: "2025-11-25"},
	} {
		mode := "stateful"
		if tc.stateless {
			mode = "stateless"
		}
		for _, hc := range []*http.Client{nil, mcp.HTTPClient(nil)} {
			cl := "go-sdk's HTTP client"
			if hc != nil {
				cl = "HTTPClient" // the answer is read from the HTTP response itself
			}
			t.Run(mode+"/"+tc.ask+"/"+cl, func(t *testing.T) {
				t.Parallel()
				api, _, err := billing.New(server.WithMCP(server.MCPOptions{Stateless: tc.stateless}))
				require.NoError(t, err)
				hs := httptest.NewServer(api)
				t.Cleanup(hs.Close)
				ctx := context.Background()
				cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
					&sdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1},
					&sdk.ClientSessionOptions{ProtocolVersion: tc.ask})
				require.NoError(t, err)
				t.Cleanup(func() { cs.Close() })
				require.Equal(t, tc.got, cs.InitializeResult().ProtocolVersion)
				c, err := mcp.NewClient(ctx, cs)
				require.NoError(t, err)

				_, err = c.Call(ctx, "no_such_tool", map[string]any{})
				var ce *client.CallError
				require.ErrorAs(t, err, &ce)
				require.NotNil(t, ce.Envelope, "a JSON-RPC error is an envelope, not a transport failure: %v", err)
				assert.ErrorIs(t, err, client.ErrNotRetryable)
				assert.Nil(t, ce.Attempts[0].Err, "a response came")
				assert.Equal(t, remedy.DialectJSONRPC, ce.Envelope.Dialect)
				assert.Equal(t, "-32602", ce.Envelope.Code)
				assert.Equal(t, tc.status, ce.Envelope.Status)
				assert.False(t, ce.Envelope.Retryable, "the same call would fail the same way")
				assert.Contains(t, ce.Envelope.Message, "no_such_tool")
				assert.Len(t, ce.Attempts, 1)

				resp, err := c.Call(ctx, "revenue_report", map[string]any{"currency": "usd"})
				require.NoError(t, err, "the session still works")
				assert.JSONEq(t, `{"currency":"usd","invoiced":0,"charged":0}`, string(resp.Body))
			})
		}
	}

	_, cs := connectForeign(t)
	ctx := context.Background()
	// Unchecked, so that the SDK's own validation answers (the check before sending would
	// repair the text from the tool's schema).
	c, err := mcp.NewClient(ctx, cs, client.WithSchemaCheck(client.CheckOff))
	require.NoError(t, err)
	_, err = c.Call(ctx, "no_such_tool", map[string]any{})
	var ce *client.CallError
	require.ErrorAs(t, err, &ce)
	require.NotNil(t, ce.Envelope, "a JSON-RPC error is an envelope")
	assert.Equal(t, remedy.DialectJSONRPC, ce.Envelope.Dialect)
	assert.Equal(t, "-32602", ce.Envelope.Code)
	assert.Contains(t, ce.Envelope.Message, "no_such_tool")
	assert.Len(t, ce.Attempts, 1)

	_, err = c.Call(ctx, "note", map[string]any{"text": 5})
	require.ErrorAs(t, err, &ce)
	require.NotNil(t, ce.Envelope, "the SDK's own input validation answers isError: an envelope too")
	assert.Equal(t, "tool_error", ce.Envelope.Code)
	assert.Contains(t, ce.Envelope.Message, "text")

	_, err = c.Call(ctx, "note", "not an object")
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, client.ErrInvalidArguments)
	assert.Nil(t, ce.Envelope, "refused before sending")
}
