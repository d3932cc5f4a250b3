package mcpgo

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/server"
)

// refPeer is how mcp-go's client reaches the reference server.
type refPeer struct {
	name      string // the subtest's
	transport string // the row's Transport, without the protocol version
	version   string // the protocol version the connection must settle on
	pin       string // the version mcp-go's client is told to use (client.WithProtocolVersion); "" for its default
	session   bool   // the connection keeps a session
	// start returns the transport to the server and, when the server runs in this process,
	// its store.
	start func(t *testing.T) (transport.Interface, *billing.Store)
}

// TestMCPGoClientAgainstReferenceServer runs mcp-go's client against the billing API that
// remedy serve serves: over streamable HTTP, stateful (the default) and stateless, and over
// stdio (remedy serve --stdio, built from this repository), at each protocol version the
// client can be told to use, and with its default, which probes 2026-07-28 with
// server/discover and falls back to initialize where the server does not speak it.
func TestMCPGoClientAgainstReferenceServer(t *testing.T) {
	t.Parallel()
	httpStart := func(opts ...server.Option) func(t *testing.T) (transport.Interface, *billing.Store) {
		return func(t *testing.T) (transport.Interface, *billing.Store) {
			api, store, err := billing.NewDemo(opts...)
			require.NoError(t, err)
			srv := httptest.NewServer(api) // on 127.0.0.1
			t.Cleanup(srv.Close)
			tr, err := transport.NewStreamableHTTP(srv.URL + server.DefaultMCPPath)
			require.NoError(t, err)
			return tr, store
		}
	}
	stdio := func(t *testing.T) (transport.Interface, *billing.Store) {
		return transport.NewStdio(remedyBinary(t), nil, "serve", "--stdio"), nil
	}
	stateless := server.WithMCP(server.MCPOptions{Stateless: true})
	const stateful, statelessHTTP = "MCP streamable HTTP (stateful)", "MCP streamable HTTP (stateless)"
	peers := []refPeer{
		// The default /mcp keeps sessions, which 2026-07-28 has none of: mcp-go's default
		// client asks for it, is told the versions the endpoint speaks, and initializes.
		{"stateful, default client", stateful, "2025-11-25", "", true, httpStart()},
		{"stateful, asks 2026-07-28", stateful, "2025-11-25", "2026-07-28", true, httpStart()},
		{"stateful, 2025-11-25", stateful, "2025-11-25", "2025-11-25", true, httpStart()},
		{"stateless, default client", statelessHTTP, "2026-07-28", "", false, httpStart(stateless)},
		{"stateless, 2025-11-25", statelessHTTP, "2025-11-25", "2025-11-25", false, httpStart(stateless)},
		{"stdio, default client", "MCP stdio", "2026-07-28", "", false, stdio},
		{"stdio, 2025-11-25", "MCP stdio", "2025-11-25", "2025-11-25", false, stdio},
	}
	for _, p := range peers {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			testMCPGoClient(t, p)
		})
	}
}

func testMCPGoClient(t *testing.T, p refPeer) {
	c := row(t, "client", p.transport+", "+p.version, "initialize", "tools/list (schemas, annotations)",
		"successful call", "invalid call: the envelope", "confirmation token round trip", "idempotent replay runs once")
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()

	tr, store := p.start(t)
	var opts []client.ClientOption
	if p.pin != "" {
		opts = append(opts, client.WithProtocolVersion(p.pin))
	}
	mc := client.NewClient(tr, opts...)
	// The transport lives until Close (a stdio transport's process ends with the context it
	// was started with), not with ctx.
	require.NoError(t, mc.Start(context.Background()))
	t.Cleanup(func() { mc.Close() })
	api, _, err := billing.NewDemo() // what the server serves, to compare the tools with
	require.NoError(t, err)

	call := func(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := mc.CallTool(ctx, req)
		require.NoError(t, err)
		return res
	}

	ok := c.Run(t, "initialize", func(t *testing.T) {
		req := mcp.InitializeRequest{}
		req.Params.ClientInfo = mcp.Implementation{Name: "mcp-go-interop", Version: "1"}
		res, err := mc.Initialize(ctx, req)
		require.NoError(t, err)
		assert.Equal(t, p.version, res.ProtocolVersion)
		assert.Equal(t, p.version, mc.ProtocolVersion())
		assert.Equal(t, "billing", res.ServerInfo.Name)
		assert.NotNil(t, res.Capabilities.Tools)
		if _, overHTTP := tr.(*transport.StreamableHTTP); overHTTP {
			assert.Equal(t, p.session, mc.GetSessionId() != "", "a session: %q", mc.GetSessionId())
		}
	})
	if !ok {
		return // nothing else can run
	}

	c.Run(t, "tools/list", func(t *testing.T) {
		res, err := mc.ListTools(ctx, mcp.ListToolsRequest{})
		require.NoError(t, err)
		require.Len(t, res.Tools, len(api.Operations()))
		tools := map[string]mcp.Tool{}
		for _, tool := range res.Tools {
			tools[tool.Name] = tool
		}
		for _, op := range api.Operations() {
			tool, found := tools[op.ID]
			require.True(t, found, "%s is a tool", op.ID)
			props := tool.InputSchema.Properties
			assert.Equal(t, "object", tool.InputSchema.Type, op.ID)
			_, hasToken := props[remedy.ArgConfirmationToken]
			_, hasKey := props[remedy.ArgIdempotencyKey]
			assert.Equal(t, op.Confirm, hasToken, "%s: confirmationToken where it applies", op.ID)
			assert.Equal(t, op.Idempotency != server.IdempotencyOff, hasKey, "%s: idempotencyKey where it applies", op.ID)
			assert.Equal(t, op.Idempotency == server.IdempotencyRequired, slices.Contains(tool.InputSchema.Required, remedy.ArgIdempotencyKey), op.ID)
			assert.Contains(t, tool.Description, "## Errors", "%s: the description lists its errors", op.ID)
			ann := tool.Annotations
			assert.Equal(t, op.Method == "GET", ann.ReadOnlyHint != nil && *ann.ReadOnlyHint, "%s: readOnlyHint", op.ID)
			if op.ID == "delete_customer" || op.ID == "archive_customer" {
				require.NotNil(t, ann.DestructiveHint, op.ID)
				assert.True(t, *ann.DestructiveHint, "%s is destructive", op.ID)
			}
			if op.ID == "charge" {
				require.NotNil(t, ann.IdempotentHint)
				assert.True(t, *ann.IdempotentHint, "charge requires a key: idempotent")
			}
		}
		// The schema's constraints come through: create_invoice's currency is an enum.
		currency, _ := tools["create_invoice"].InputSchema.Properties["currency"].(map[string]any)
		assert.Equal(t, []any{"usd", "eur", "gbp"}, currency["enum"])
	})

	c.Run(t, "successful call", func(t *testing.T) {
		res := call(t, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "usd", "amount": 1200})
		require.False(t, res.IsError, "%v", res.Content)
		var inv billing.Invoice
		require.NoError(t, json.Unmarshal(structuredOf(t, res), &inv))
		assert.Equal(t, "draft", inv.Status)
		assert.Equal(t, 1200, inv.Amount)
		assert.JSONEq(t, textOf(t, res), string(structuredOf(t, res)), "the text is the structured result")
	})

	c.Run(t, "invalid call", func(t *testing.T) {
		res := call(t, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "EUR", "amount": 0})
		env := envelopeOf(t, res)
		assert.Equal(t, "invalid_body", env.Code)
		assert.Equal(t, remedy.DialectAgent, env.Dialect, "the canonical envelope")
		var paths []string
		for _, is := range env.Issues {
			paths = append(paths, is.Path)
		}
		assert.ElementsMatch(t, []string{"/currency", "/amount"}, paths)
	})

	// Before the deletion below, which removes the customer charged.
	c.Run(t, "idempotent replay", func(t *testing.T) {
		args := map[string]any{"customer_id": "cus_ada", "amount": 500, "currency": "usd", "idempotencyKey": "mcp-go-key-1"}
		first, second := call(t, "charge", args), call(t, "charge", args)
		require.False(t, first.IsError, "%v", first.Content)
		require.False(t, second.IsError, "%v", second.Content)
		assert.JSONEq(t, string(structuredOf(t, first)), string(structuredOf(t, second)), "the same charge")
		assert.False(t, replayed(first), "the first call is not a replay")
		assert.True(t, replayed(second), "the second is, in _meta")
		if store != nil {
			assert.Equal(t, 1, store.Effects("charge"), "one execution for two calls")
		}
		// Over stdio the store is in the other process: the report says what was charged. It
		// is rebuilt once after a change (billing.NewDemo): the first call may say so.
		var rep billing.Report
		for range 3 {
			res := call(t, "revenue_report", map[string]any{"currency": "usd"})
			if !res.IsError {
				require.NoError(t, json.Unmarshal(structuredOf(t, res), &rep))
				break
			}
			assert.Equal(t, "unavailable", envelopeOf(t, res).Code)
		}
		assert.Equal(t, 500, rep.Charged, "charged once")
	})

	c.Run(t, "confirmation", func(t *testing.T) {
		ask := envelopeOf(t, call(t, "delete_customer", map[string]any{"id": "cus_ada"}))
		require.Equal(t, "confirmation_required", ask.Code)
		require.NotEmpty(t, ask.ConfirmationToken)
		args := map[string]any{"id": "cus_ada", remedy.ArgConfirmationToken: ask.ConfirmationToken}
		done := call(t, "delete_customer", args)
		require.False(t, done.IsError, "%v", done.Content)
		var del billing.Deleted
		require.NoError(t, json.Unmarshal(structuredOf(t, done), &del))
		assert.Equal(t, billing.Deleted{ID: "cus_ada", Deleted: true}, del)
		again := envelopeOf(t, call(t, "delete_customer", args))
		assert.Equal(t, "confirmation_invalid", again.Code, "a token confirms one call")
		if store != nil {
			assert.Equal(t, 1, store.Effects("delete_customer"))
		}
	})
}

// textOf is the text of a result's single text content.
func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1)
	tc, ok := mcp.AsTextContent(res.Content[0])
	require.True(t, ok, "a text content: %T", res.Content[0])
	return tc.Text
}

// structuredOf is a result's structuredContent, as sent.
func structuredOf(t *testing.T, res *mcp.CallToolResult) []byte {
	t.Helper()
	if len(res.RawStructuredContent) > 0 {
		return res.RawStructuredContent
	}
	require.NotNil(t, res.StructuredContent, "structuredContent")
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	return b
}

// envelopeOf reads a failed result as any remedy client reads a tool failure: its text is the
// canonical envelope, and its structuredContent the same JSON.
func envelopeOf(t *testing.T, res *mcp.CallToolResult) *remedy.Envelope {
	t.Helper()
	require.True(t, res.IsError, "not a failure: %v", res.Content)
	text := textOf(t, res)
	assert.JSONEq(t, text, string(structuredOf(t, res)), "structuredContent is the text's envelope")
	env, ok := remedy.Parse(0, nil, []byte(text))
	require.True(t, ok, "%s", text)
	return env
}

// replayed reports whether a result's _meta says it is a stored result, replayed.
func replayed(res *mcp.CallToolResult) bool {
	if res.Meta == nil {
		return false
	}
	v, _ := res.Meta.AdditionalFields[remedy.MetaReplayed].(bool)
	return v
}
