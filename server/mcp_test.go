package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/server"
)

// headerTransport adds headers to every request of the MCP client.
type headerTransport struct {
	base http.RoundTripper
	h    http.Header
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

// connect opens a session of the go-sdk's own client with the API's MCP endpoint, sending
// header with every HTTP request.
func connect(t *testing.T, url string, header http.Header) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	hc := &http.Client{Transport: headerTransport{base: http.DefaultTransport, h: header}}
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns the result, failing on a protocol error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	return res
}

// toolEnvelope reads a failed result: its structuredContent and its text are the same
// canonical envelope.
func toolEnvelope(t *testing.T, res *mcp.CallToolResult) *remedy.Envelope {
	t.Helper()
	require.True(t, res.IsError, "not a failure: %v", res.StructuredContent)
	require.Len(t, res.Content, 1)
	text := res.Content[0].(*mcp.TextContent).Text
	structured, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	assert.JSONEq(t, text, string(structured), "structuredContent is the text's envelope")
	env, ok := remedy.Parse(0, nil, []byte(text))
	require.True(t, ok, "%s", text)
	assert.Equal(t, remedy.DialectAgent, env.Dialect, "the canonical envelope")
	return env
}

// result decodes a successful result's structuredContent.
func result[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	require.False(t, res.IsError, "%v", res.Content)
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &v))
	text := res.Content[0].(*mcp.TextContent).Text
	assert.JSONEq(t, string(b), text)
	return v
}

func TestMCPToolsList(t *testing.T) {
	t.Parallel()
	api, _, srv := billingServer(t)
	cs := connect(t, srv.URL, nil)
	ctx := context.Background()
	res, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	require.Len(t, tools, len(api.Operations()))
	for _, op := range api.Operations() {
		tool := tools[op.ID]
		require.NotNil(t, tool, op.ID)
		assert.Equal(t, op.Summary, tool.Title, "%s: the tool's title is the operation's summary", op.ID)
		require.NotEmpty(t, op.Summary, op.ID)
		schema := tool.InputSchema.(map[string]any)
		props := schema["properties"].(map[string]any)
		_, hasToken := props["confirmationToken"]
		_, hasKey := props["idempotencyKey"]
		assert.Equal(t, op.Confirm, hasToken, "%s: confirmationToken advertised where it applies", op.ID)
		assert.Equal(t, op.Idempotency != server.IdempotencyOff, hasKey, "%s: idempotencyKey advertised where it applies", op.ID)
		for name := range op.InputSchema().Properties {
			assert.Contains(t, props, name, "%s: every input member and parameter is an argument", op.ID)
		}
		required, _ := schema["required"].([]any)
		assert.Equal(t, op.Idempotency == server.IdempotencyRequired, slices.Contains(required, any("idempotencyKey")), op.ID)

		ann := tool.Annotations
		require.NotNil(t, ann, op.ID)
		assert.Equal(t, op.Method == "GET", ann.ReadOnlyHint, op.ID)
		if op.Confirm {
			require.NotNil(t, ann.DestructiveHint)
			assert.True(t, *ann.DestructiveHint, "%s is destructive", op.ID)
		}
		if op.ID == "create_invoice" || op.ID == "charge" {
			// charge requires a key, so every call is replayed; create_invoice only takes one,
			// and a call without it runs again.
			assert.Equal(t, op.ID == "charge", ann.IdempotentHint, op.ID)
			assert.False(t, *ann.DestructiveHint, op.ID)
		}
		if op.ID == "send_invoice" {
			assert.False(t, ann.IdempotentHint, "a plain POST is not idempotent")
		}

		head, errors, found := strings.Cut(tool.Description, "\n## Errors\n")
		require.True(t, found, "%s: the description ends with an Errors block", op.ID)
		assert.Contains(t, head, op.Summary)
		for _, c := range api.Emits(op) {
			if remedy.HTTPOnly(c.Code) {
				// Issue 40: one rule with the Toolset's definitions: a tool call cannot meet a
				// failure of HTTP's framing, and its caller cannot act on one.
				assert.NotContains(t, errors, "`"+c.Code+"`", op.ID)
				continue
			}
			assert.Contains(t, errors, "`"+c.Code+"`", op.ID)
		}
		assert.NotContains(t, errors, "Content-Type", op.ID)
		if op.Confirm {
			assert.Contains(t, head, "confirmationToken argument")
		}
		if op.Idempotency != server.IdempotencyOff {
			assert.Contains(t, head, "idempotencyKey argument")
		}
	}
}

func TestMCPFailuresAreEnvelopes(t *testing.T) {
	t.Parallel()
	_, _, srv := billingServer(t)
	cs := connect(t, srv.URL, nil)

	env := toolEnvelope(t, call(t, cs, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "EUR", "amount": 0}))
	assert.Equal(t, 422, env.Status)
	assert.Equal(t, "invalid_body", env.Code)
	assert.False(t, env.Retryable, "sent again unchanged, it fails the same way")
	paths := map[string]remedy.Issue{}
	for _, is := range env.Issues {
		paths[is.Path] = is
	}
	require.Contains(t, paths, "/currency")
	assert.Equal(t, []json.RawMessage{json.RawMessage(`"usd"`), json.RawMessage(`"eur"`), json.RawMessage(`"gbp"`)}, paths["/currency"].AllowedValues)
	assert.Contains(t, paths, "/amount")
	assert.NotEmpty(t, env.Schema, "the violated schema inline")
	assert.NotEmpty(t, env.TraceID)

	// A parameter is an argument like any other: its issue points at it.
	env = toolEnvelope(t, call(t, cs, "get_invoice", map[string]any{"id": "inv-1"}))
	assert.Equal(t, "invalid_parameter", env.Code)
	require.NotEmpty(t, env.Issues)
	assert.Equal(t, "/id", env.Issues[0].Path)

	env = toolEnvelope(t, call(t, cs, "get_invoice", map[string]any{}))
	assert.Equal(t, "invalid_parameter", env.Code, "a missing path parameter")
	require.NotEmpty(t, env.Issues)
	assert.Equal(t, "/id", env.Issues[0].Path)
	assert.Equal(t, "required", env.Issues[0].Code)

	env = toolEnvelope(t, call(t, cs, "get_invoice", map[string]any{"id": map[string]any{"x": 1}}))
	assert.Equal(t, "invalid_parameter", env.Code, "an object cannot be a path segment")

	env = toolEnvelope(t, call(t, cs, "get_invoice", map[string]any{"id": "in_404"}))
	assert.Equal(t, "not_found", env.Code)
	assert.Equal(t, 404, env.Status)

	env = toolEnvelope(t, call(t, cs, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "eur", "amount": 5, "confirmationToken": "x"}))
	assert.Equal(t, "invalid_body", env.Code, "an argument the tool does not advertise is refused")
	assert.Equal(t, "/confirmationToken", env.Issues[0].Path)

	env = toolEnvelope(t, call(t, cs, "send_invoice", map[string]any{"id": result[billing.Invoice](t,
		call(t, cs, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "eur", "amount": 5})).ID}))
	assert.Equal(t, "precondition_failed", env.Code)
	assert.Equal(t, "finalize_invoice", env.NextOperation)
	assert.JSONEq(t, `{"id":"in_1"}`, string(env.NextOperationArgs))

	// A tool that does not exist is a protocol error, from the SDK.
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}})
	require.Error(t, err)
}

func TestMCPSuccess(t *testing.T) {
	t.Parallel()
	_, store, srv := billingServer(t)
	cs := connect(t, srv.URL, nil)
	inv := result[billing.Invoice](t, call(t, cs, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "gbp", "amount": 1200}))
	assert.Equal(t, billing.Invoice{ID: "in_1", CustomerID: "cus_ada", Currency: "gbp", Amount: 1200, Status: "draft"}, inv)
	got := result[billing.Invoice](t, call(t, cs, "get_invoice", map[string]any{"id": "in_1"}))
	assert.Equal(t, inv, got)
	rep := result[billing.Report](t, call(t, cs, "revenue_report", map[string]any{"currency": "gbp"}))
	assert.Equal(t, billing.Report{Currency: "gbp", Invoiced: 1200}, rep, "a query parameter")
	assert.Equal(t, 1, store.Effects("create_invoice"))
}

// TestMCPConfirmationAcrossSurfaces: the handshake over MCP, and the same tokens and stores as
// REST — a token obtained over MCP confirms the same call over REST, once.
func TestMCPConfirmationAcrossSurfaces(t *testing.T) {
	t.Parallel()
	_, store, srv := billingServer(t, server.WithAuthenticator(byBearer))
	store.AddCustomer("cus_bob", "Bob", "bob@example.com")
	store.AddCustomer("cus_cy", "Cy", "cy@example.com")
	ann := connect(t, srv.URL, http.Header{"Authorization": {"Bearer ann"}})

	env := toolEnvelope(t, call(t, ann, "delete_customer", map[string]any{"id": "cus_bob"}))
	assert.Equal(t, "confirmation_required", env.Code)
	require.NotEmpty(t, env.ConfirmationToken)
	assert.Contains(t, env.Hint, "confirmationToken argument", "the hint speaks of the MCP argument")
	assert.NotContains(t, env.Message, "confirmationToken", "the message says what waits; how to confirm is the program's, in the hint")
	assert.Zero(t, store.Effects("delete_customer"))

	// Another payload with the token: refused, and the token is spent.
	env2 := toolEnvelope(t, call(t, ann, "delete_customer", map[string]any{"id": "cus_cy", "confirmationToken": env.ConfirmationToken}))
	assert.Equal(t, "confirmation_invalid", env2.Code)

	env = toolEnvelope(t, call(t, ann, "delete_customer", map[string]any{"id": "cus_bob"}))
	del := result[billing.Deleted](t, call(t, ann, "delete_customer", map[string]any{"id": "cus_bob", "confirmationToken": env.ConfirmationToken}))
	assert.Equal(t, billing.Deleted{ID: "cus_bob", Deleted: true}, del)
	assert.Equal(t, 1, store.Effects("delete_customer"))

	// A token from MCP, used over REST by the same caller for the same call.
	env = toolEnvelope(t, call(t, ann, "delete_customer", map[string]any{"id": "cus_cy"}))
	status, _, body := do(t, "DELETE", srv.URL+"/v1/customers/cus_cy", "", "", "Authorization", "Bearer eve", "X-Confirmation-Token", env.ConfirmationToken)
	assert.Equal(t, 409, status, "another caller cannot use it: %s", body)
	env = toolEnvelope(t, call(t, ann, "delete_customer", map[string]any{"id": "cus_cy"}))
	status, _, body = do(t, "DELETE", srv.URL+"/v1/customers/cus_cy", "", "", "Authorization", "Bearer ann", "X-Confirmation-Token", env.ConfirmationToken)
	assert.Equal(t, 200, status, "%s", body)
	assert.Equal(t, 2, store.Effects("delete_customer"))

	// Without credentials, the MCP endpoint refuses even to open a session.
	_, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	require.ErrorContains(t, err, "Unauthorized")
}

// TestMCPIdempotencyAcrossSurfaces: a key replays over MCP, marked in _meta, and over REST
// (same scope: principal and operation), and the handler runs once.
func TestMCPIdempotencyAcrossSurfaces(t *testing.T) {
	t.Parallel()
	_, store, srv := billingServer(t)
	cs := connect(t, srv.URL, nil)
	args := map[string]any{"customer_id": "cus_ada", "amount": 500, "currency": "usd", "idempotencyKey": "k-1"}

	env := toolEnvelope(t, call(t, cs, "charge", map[string]any{"customer_id": "cus_ada", "amount": 500, "currency": "usd"}))
	assert.Equal(t, "idempotency_key_required", env.Code)
	assert.Contains(t, env.Message, "idempotencyKey argument")

	first := call(t, cs, "charge", args)
	ch := result[billing.Charge](t, first)
	assert.Nil(t, first.Meta[remedy.MetaReplayed])
	again := call(t, cs, "charge", args)
	assert.Equal(t, ch, result[billing.Charge](t, again))
	assert.Equal(t, true, again.Meta[remedy.MetaReplayed], "marked as a replay")

	status, h, body := do(t, "POST", srv.URL+"/v1/charges", "application/json", `{"currency":"usd","amount":500,"customer_id":"cus_ada"}`, "Idempotency-Key", "k-1")
	require.Equal(t, 201, status, "%s", body)
	assert.Equal(t, "true", h.Get("Idempotency-Replayed"))
	assert.Equal(t, 1, store.Effects("charge"), "one execution for three calls")

	args["amount"] = 600
	env = toolEnvelope(t, call(t, cs, "charge", args))
	assert.Equal(t, "idempotency_key_reused", env.Code)

	// A key with spaces and quotes means the same as the RFC 8941 string over REST.
	spaced := map[string]any{"customer_id": "cus_ada", "amount": 800, "currency": "usd", "idempotencyKey": `order 7 "b"`}
	ch = result[billing.Charge](t, call(t, cs, "charge", spaced))
	status, h, body = do(t, "POST", srv.URL+"/v1/charges", "application/json", `{"currency":"usd","amount":800,"customer_id":"cus_ada"}`, "Idempotency-Key", `"order 7 \"b\""`)
	require.Equal(t, 201, status, "%s", body)
	assert.Equal(t, "true", h.Get("Idempotency-Replayed"))
	assert.Equal(t, 2, store.Effects("charge"))
	var replayed billing.Charge
	require.NoError(t, json.Unmarshal(body, &replayed))
	assert.Equal(t, ch, replayed)

	env = toolEnvelope(t, call(t, cs, "charge", map[string]any{"customer_id": "cus_ada", "amount": 500, "currency": "usd", "idempotencyKey": 7}))
	assert.Equal(t, "invalid_parameter", env.Code, "a key must be a string")

	// A key that is not one is described as the argument it came in, and pointed at.
	for _, key := range []string{"", "clé-7", "tab\there"} {
		env = toolEnvelope(t, call(t, cs, "charge", map[string]any{"customer_id": "cus_ada", "amount": 500, "currency": "usd", "idempotencyKey": key}))
		assert.Equal(t, "idempotency_key_invalid", env.Code, "%q", key)
		assert.Contains(t, env.Message, "idempotencyKey argument", "%q", key)
		assert.NotContains(t, env.Message, "header", "%q", key)
		assert.NotContains(t, env.Message, "quote", "%q: quoting is not the caller's business over MCP", key)
		require.Len(t, env.Issues, 1, "%q", key)
		assert.Equal(t, "/idempotencyKey", env.Issues[0].Path, "%q", key)
	}
	status, h, body = do(t, "POST", srv.URL+"/v1/charges", "application/json", `{"currency":"usd","amount":500,"customer_id":"cus_ada"}`, "Idempotency-Key", "clé")
	env = envelope(t, status, h, body)
	assert.Equal(t, "idempotency_key_invalid", env.Code)
	assert.Contains(t, env.Message, "Idempotency-Key header", "REST speaks of the header")
}

func TestMCPStateless(t *testing.T) {
	t.Parallel()
	_, store, srv := billingServer(t, server.WithMCP(server.MCPOptions{Stateless: true, JSONResponse: true}))
	cs := connect(t, srv.URL, nil)
	assert.Empty(t, cs.ID(), "no session")
	inv := result[billing.Invoice](t, call(t, cs, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "usd", "amount": 10}))
	assert.Equal(t, "draft", inv.Status)
	env := toolEnvelope(t, call(t, cs, "send_invoice", map[string]any{"id": inv.ID}))
	assert.Equal(t, "precondition_failed", env.Code)
	assert.Equal(t, 1, store.Effects("create_invoice"))
}

func TestMCPServerInMemory(t *testing.T) {
	t.Parallel()
	api, _, err := billing.New()
	require.NoError(t, err)
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := api.MCPServer().Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	env := toolEnvelope(t, call(t, cs, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "usd"}))
	assert.Equal(t, "invalid_body", env.Code)
	assert.Equal(t, "/amount", env.Issues[0].Path)
}

// The MCP SDK's own refusals — a body that is not JSON-RPC, an unknown session — reach the
// caller as the API's envelope, not as the Go decoder's text.
func TestMCPRefusalsAreEnvelopes(t *testing.T) {
	t.Parallel()
	_, _, srv := billingServer(t)
	for _, c := range []struct {
		name, body, session string
		status              int
		code                string
	}{
		{name: "not JSON", body: `{"jsonrpc":`, status: 400, code: server.CodeInvalidJSON},
		{name: "a JSON string", body: `"tools/call"`, status: 400, code: server.CodeInvalidJSON},
		{name: "an unknown session", body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, session: "nope", status: 404, code: server.CodeNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(c.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if c.session != "" {
				req.Header.Set("Mcp-Session-Id", c.session)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			assert.Equal(t, c.status, resp.StatusCode, "%s", body)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			env, ok := remedy.Parse(resp.StatusCode, resp.Header, body)
			require.True(t, ok)
			assert.Equal(t, c.code, env.Code, "%s", body)
			assert.NotEmpty(t, env.TraceID)
			assert.NotContains(t, string(body), "json:", "no decoder message")
		})
	}
}
