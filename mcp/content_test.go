package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/mcp"
)

// A success's Body keeps what the tool returned: its text when all its content is text (a
// single item's exactly as sent), its structuredContent when it has one, and otherwise the
// JSON array of every content item — an image or a resource is not dropped.
func TestResultBody(t *testing.T) {
	t.Parallel()
	png := []byte{0x89, 'P', 'N', 'G'}
	results := map[string]*sdk.CallToolResult{
		"text":  {Content: []sdk.Content{&sdk.TextContent{Text: "  plain, as sent\n"}}},
		"texts": {Content: []sdk.Content{&sdk.TextContent{Text: "one"}, &sdk.TextContent{Text: "two"}}},
		"empty": {Content: []sdk.Content{}},
		"structured": {Content: []sdk.Content{&sdk.TextContent{Text: `{"b":1,"a":2}`}},
			StructuredContent: json.RawMessage(`{"b":1,"a":2}`)},
		"structured_and_image": {Content: []sdk.Content{&sdk.TextContent{Text: "a chart"}, &sdk.ImageContent{Data: png, MIMEType: "image/png"}},
			StructuredContent: json.RawMessage(`{"points":3}`)},
		"mixed": {Content: []sdk.Content{
			&sdk.TextContent{Text: "the chart"},
			&sdk.ImageContent{Data: png, MIMEType: "image/png"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///data.csv", MIMEType: "text/csv", Text: "x,y\n1,2\n"}},
			&sdk.ResourceLink{URI: "file:///big.csv", Name: "big.csv"},
		}},
		"image": {Content: []sdk.Content{&sdk.ImageContent{Data: png, MIMEType: "image/png"}}},
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "content", Version: "1"}, nil)
	for name, res := range results {
		srv.AddTool(&sdk.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return res, nil })
	}
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: hs.URL, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	c, err := mcp.NewClient(ctx, cs)
	require.NoError(t, err)

	body := func(tool string) string {
		resp, err := c.Call(ctx, tool, nil)
		require.NoError(t, err, tool)
		return string(resp.Body)
	}
	assert.Equal(t, "  plain, as sent\n", body("text"))
	assert.Equal(t, "one\ntwo", body("texts"))
	assert.Equal(t, "", body("empty"))
	assert.Equal(t, `{"b":1,"a":2}`, body("structured"), "the server's bytes")
	assert.JSONEq(t, `{"points":3}`, body("structured_and_image"))
	assert.JSONEq(t, `[
		{"type":"text","text":"the chart"},
		{"type":"image","data":"iVBORw==","mimeType":"image/png"},
		{"type":"resource","resource":{"uri":"file:///data.csv","mimeType":"text/csv","text":"x,y\n1,2\n"}},
		{"type":"resource_link","uri":"file:///big.csv","name":"big.csv"}
	]`, body("mixed"))
	assert.JSONEq(t, `[{"type":"image","data":"iVBORw==","mimeType":"image/png"}]`, body("image"))
}
