package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/mcp"
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
	c, err := mcp.NewClient(ctx, cs, remedy.Loop{Rewriter: remedy.DefaultRewriter,
		Registered: mcp.Only("note", "boom", "flaky", "migrate")})
	require.NoError(t, err)

	_, err = c.Call(ctx, "boom", nil)
	var ce *remedy.CallError
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
	assert.True(t, errors.Is(err, remedy.ErrNextOperation), "%v", err)
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
	loop := remedy.Loop{Transport: tr, Registered: tr.Registered}
	_, err = loop.Do(ctx, remedy.Call{Operation: "migrate"})
	require.Error(t, err)
	assert.Positive(t, f.runs["drop_everything"], "every listed tool is allowed when the caller says so")
}

func TestProtocolErrorsAreEnvelopes(t *testing.T) {
	t.Parallel()
	_, cs := connectForeign(t)
	ctx := context.Background()
	c, err := mcp.NewClient(ctx, cs, remedy.Loop{Rewriter: remedy.DefaultRewriter})
	require.NoError(t, err)
	_, err = c.Call(ctx, "no_such_tool", map[string]any{})
	var ce *remedy.CallError
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
	assert.ErrorIs(t, err, remedy.ErrNotRetryable)
	assert.Nil(t, ce.Envelope, "refused before sending")
}
