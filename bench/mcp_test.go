package bench

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bareMCPServer is the validated POST's operation as a tool of a bare go-sdk server: the input
// schema inferred from order, the constraints checked by hand (checkOrder, as the bare net/http
// handler does), a violation answered as a tool error listing them. Its output is typed any, so
// that, like remedy's tool, it declares no output schema and the SDK validates no answer
// against one (a created output would add both). It is served as remedy's server serves /mcp:
// streamable HTTP, sessions, answers as event streams.
func bareMCPServer() http.Handler {
	s := sdk.NewServer(&sdk.Implementation{Name: "orders", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "create_order"}, func(ctx context.Context, req *sdk.CallToolRequest, in order) (*sdk.CallToolResult, any, error) {
		if bad := checkOrder(&in); len(bad) > 0 {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(bad, "; ")}}}, nil, nil
		}
		return nil, answer, nil
	})
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
		&sdk.StreamableHTTPOptions{DisableLocalhostProtection: true})
}

// mcpContenders are the two MCP servers of the tool call, each on loopback, with the path its
// endpoint is at.
func mcpContenders(tb testing.TB) []struct{ name, url string } {
	remedy := httptest.NewServer(remedyServer(tb))
	bare := httptest.NewServer(bareMCPServer())
	tb.Cleanup(remedy.Close)
	tb.Cleanup(bare.Close)
	return []struct{ name, url string }{{"remedy", remedy.URL + "/mcp"}, {"go-sdk", bare.URL}}
}

// mcpSession connects a go-sdk client to url.
func mcpSession(tb testing.TB, url string) *sdk.ClientSession {
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// callOrder calls create_order with body's arguments; it returns the result's text, and an
// error for a tool error.
func callOrder(ctx context.Context, cs *sdk.ClientSession, args map[string]any) (string, error) {
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_order", Arguments: args})
	if err != nil {
		return "", err
	}
	var text string
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*sdk.TextContent); ok {
			text = tc.Text
		}
	}
	if res.IsError {
		return text, errors.New("tool error: " + text)
	}
	return text, nil
}

func toolArgs(tb testing.TB, body []byte) map[string]any {
	var args map[string]any
	if err := json.Unmarshal(body, &args); err != nil {
		tb.Fatal(err)
	}
	return args
}

// BenchmarkMCP is the validated POST's operation called as an MCP tool — tools/call over
// streamable HTTP on loopback, through one go-sdk client session — on remedy's reference server
// (the operation's /mcp tool) and on a bare go-sdk server with the same tool.
func BenchmarkMCP(b *testing.B) {
	args := toolArgs(b, validOrder)
	ctx := context.Background()
	for _, c := range mcpContenders(b) {
		b.Run("valid/"+c.name, func(b *testing.B) {
			cs := mcpSession(b, c.url)
			b.ReportAllocs()
			report := measureCPU(b)
			for b.Loop() {
				if _, err := callOrder(ctx, cs, args); err != nil {
					b.Fatal(err)
				}
			}
			report()
		})
	}
}

// TestMCPServersAgree holds BenchmarkMCP's two servers to the same answers: the valid order
// gets the same result, and the invalid one a tool error from each.
func TestMCPServersAgree(t *testing.T) {
	ctx := context.Background()
	var results []map[string]any
	for _, c := range mcpContenders(t) {
		cs := mcpSession(t, c.url)
		text, err := callOrder(ctx, cs, toolArgs(t, validOrder))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(text), &got); err != nil {
			t.Fatalf("%s: %q: %v", c.name, text, err)
		}
		results = append(results, got)
		if _, err := callOrder(ctx, cs, toolArgs(t, invalidOrder)); err == nil {
			t.Errorf("%s accepted the invalid order", c.name)
		}
	}
	want, _ := json.Marshal(answer)
	for i, r := range results {
		got, _ := json.Marshal(r)
		if string(got) != string(want) {
			t.Errorf("contender %d answered %s, want %s", i, got, want)
		}
	}
}
