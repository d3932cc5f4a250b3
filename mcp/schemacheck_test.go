package mcp_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/mcp"
)

// paintTool serves one tool, paint, over a go-sdk session: its input schema allows a color
// of two, in lower case, refuses unknown arguments, and requires the idempotencyKey the
// loop sends. A call it does not accept is refused with "bad request" and nothing else. It
// returns the arguments each tools/call carried.
func paintTool(t *testing.T, opts ...client.Option) (*mcp.Client, func() []map[string]any) {
	t.Helper()
	var mu sync.Mutex
	var calls []map[string]any
	s := sdk.NewServer(&sdk.Implementation{Name: "paint", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "paint", InputSchema: json.RawMessage(`{"type":"object",
		"properties":{"color":{"type":"string","enum":["red","green"]},"idempotencyKey":{"type":"string"}},
		"required":["color","idempotencyKey"],"additionalProperties":false}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &in)
			mu.Lock()
			calls = append(calls, in)
			mu.Unlock()
			if c := in["color"]; c != "red" && c != "green" {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "bad request"}}}, nil
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "painted"}}}, nil
		})
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	c, err := mcp.NewClient(ctx, cs, opts...)
	require.NoError(t, err)
	return c, func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return append([]map[string]any(nil), calls...)
	}
}

// The MCP client checks the caller's arguments against the tool's input schema from
// tools/list before calling: a color in the wrong case is repaired, and the tool is called
// once. The schema's idempotencyKey — required, in a schema that refuses unknown members —
// is the loop's to send, not the caller's: the caller's arguments are checked without it.
func TestSchemaCheckOverMCP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		check client.SchemaCheck
		calls int
		color string
		err   error
	}{
		{"repair", client.CheckRepair, 1, "red", nil},
		{"strict", client.CheckStrict, 1, "red", nil},
		{"off", client.CheckOff, 1, "RED", client.ErrNotRetryable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, calls := paintTool(t, client.WithSchemaCheck(tc.check))
			resp, err := c.Call(context.Background(), "paint", map[string]any{"color": "RED"})
			got := calls()
			require.Len(t, got, tc.calls)
			assert.Equal(t, tc.color, got[0]["color"])
			assert.NotEmpty(t, got[0]["idempotencyKey"], "the loop sends the key the tool takes")
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Len(t, resp.Attempts, 1)
			require.Len(t, resp.Attempts[0].Checked, 1)
			assert.Equal(t, "enum_match", resp.Attempts[0].Checked[0].Rule)
		})
	}
	t.Run("valid arguments go as given", func(t *testing.T) {
		t.Parallel()
		c, calls := paintTool(t, client.WithSchemaCheck(client.CheckStrict))
		resp, err := c.Call(context.Background(), "paint", map[string]any{"color": "green"})
		require.NoError(t, err)
		require.Len(t, calls(), 1)
		assert.Empty(t, resp.Attempts[0].Checked)
	})
	t.Run("an unknown argument under strict", func(t *testing.T) {
		t.Parallel()
		c, calls := paintTool(t, client.WithSchemaCheck(client.CheckStrict))
		_, err := c.Call(context.Background(), "paint", map[string]any{"color": "red", "size": 3})
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		assert.ErrorIs(t, err, client.ErrInvalidArguments)
		assert.Empty(t, calls())
		require.NotNil(t, ce.Proposal)
		assert.Equal(t, "drop_unknown", ce.Proposal.Changes[0].Rule)
	})
}
