package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	rmcp "github.com/remedy-go/remedy/mcp"
)

// hangGuard bounds what one check may take, so that a hang fails the test instead of holding
// it: far beyond what any check needs, on any machine.
const hangGuard = time.Minute

// mcpgoPeer is how remedy's client reaches the mcp-go app.
type mcpgoPeer struct {
	transport string // the row's Transport, without the protocol version
	version   string // the protocol version the client asks for
	session   bool   // the negotiated protocol keeps a session
	http      bool   // over streamable HTTP, where a test can lose an answer
	connect   func(t *testing.T) sdk.Transport
}

// TestRemedyClientAgainstMCPGoServer runs remedy's MCP client (the go-sdk's client session
// under remedy's loop) against an mcp-go server: over streamable HTTP, stateful
// (server.WithStateful) and stateless (server.WithStateLess), and over stdio (this test
// binary, re-executed, serving the app), at each protocol version the go-sdk's client can be
// told to use.
func TestRemedyClientAgainstMCPGoServer(t *testing.T) {
	t.Parallel()
	httpPeer := func(opts ...server.StreamableHTTPOption) func(t *testing.T) sdk.Transport {
		return func(t *testing.T) sdk.Transport {
			s, _ := newApp()
			srv := httptest.NewServer(losing(server.NewStreamableHTTPServer(s, opts...), "quote", "transfer"))
			t.Cleanup(srv.Close)
			return &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}
		}
	}
	stdio := func(t *testing.T) sdk.Transport {
		exe, err := os.Executable()
		require.NoError(t, err)
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), stdioServerEnv+"=1")
		cmd.Stderr = io.Discard
		return &sdk.CommandTransport{Command: cmd}
	}
	const stateful, stateless = "MCP streamable HTTP (stateful)", "MCP streamable HTTP (stateless)"
	peers := []mcpgoPeer{
		{stateful, "2025-11-25", true, true, httpPeer(server.WithStateful(true))},
		// mcp-go serves 2026-07-28 on a stateful endpoint too: the era is decided per request.
		{stateful, "2026-07-28", false, true, httpPeer(server.WithStateful(true))},
		{stateless, "2025-11-25", false, true, httpPeer(server.WithStateLess(true))},
		{stateless, "2026-07-28", false, true, httpPeer(server.WithStateLess(true))},
		{"MCP stdio", "2025-11-25", false, false, stdio},
		{"MCP stdio", "2026-07-28", false, false, stdio},
	}
	for _, p := range peers {
		t.Run(p.transport+", "+p.version, func(t *testing.T) {
			t.Parallel()
			testRemedyClient(t, p)
		})
	}
}

func testRemedyClient(t *testing.T, p mcpgoPeer) {
	tested := []string{"protocol negotiation", "tools/list", "schema validation repaired (enum, type)",
		"schema validation that cannot be repaired stops", "typed handler binding repaired",
		"missing argument stops", "tool error text", "JSON-RPC error", "transient failure then success (idempotentHint)"}
	if p.http {
		tested = append(tested, "lost answer: sent again (idempotentHint), outcome unknown (no hint)")
	}
	c := row(t, "server", p.transport+", "+p.version, tested...)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "remedy-interop", Version: "1"}, nil).
		Connect(ctx, p.connect(t), &sdk.ClientSessionOptions{ProtocolVersion: p.version})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	cl, err := rmcp.NewClient(ctx, cs, // The check before sending off: what is tested is what the client makes of mcp-go's
		// refusals (the check itself: "schema validation repaired").
		client.WithSchemaCheck(client.CheckOff), // A lost answer's retry waits this, not the default backoff: the test needs no more.
		client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(time.Millisecond) }))
	require.NoError(t, err)
	runs := func(t *testing.T, tool string) int {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "runs"})
		require.NoError(t, err)
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		var m map[string]int
		require.NoError(t, json.Unmarshal(b, &m), "%s", b)
		return m[tool]
	}
	// stopped checks a call's error: its cause, its last envelope, its attempts.
	stopped := func(t *testing.T, err error, cause error, attempts int) *remedy.Envelope {
		t.Helper()
		require.Error(t, err)
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		assert.ErrorIs(t, err, cause, "%v", err)
		assert.Len(t, ce.Attempts, attempts, "%v", err)
		require.NotNil(t, ce.Envelope, "%v", err)
		return ce.Envelope
	}
	paths := func(env *remedy.Envelope) []string {
		var out []string
		for _, is := range env.Issues {
			out = append(out, is.Path)
		}
		return out
	}

	c.Run(t, "protocol negotiation", func(t *testing.T) {
		res := cs.InitializeResult()
		require.NotNil(t, res)
		assert.Equal(t, p.version, res.ProtocolVersion)
		assert.Equal(t, p.session, cs.ID() != "", "a session id: %q", cs.ID())
	})

	c.Run(t, "tools/list", func(t *testing.T) {
		names, err := cl.Transport().Load(ctx)
		require.NoError(t, err)
		for _, n := range []string{"create_invoice", "legacy_charge", "send_invoice", "lookup_customer", "close_books",
			"exchange_rate", "quote", "transfer", "runs"} {
			assert.Contains(t, names, n)
		}
		ok, idempotent := cl.Transport().Registered("exchange_rate")
		assert.True(t, ok && idempotent, "readOnlyHint and idempotentHint: safe to send again")
		ok, idempotent = cl.Transport().Registered("transfer")
		assert.True(t, ok && !idempotent, "mcp-go's default annotations: not idempotent")
	})

	c.Run(t, "schema validation repaired", func(t *testing.T) {
		before := runs(t, "create_invoice")
		resp, err := cl.Call(ctx, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "EUR", "amount": "1200"})
		require.NoError(t, err)
		require.Len(t, resp.Attempts, 2)
		first := resp.Attempts[0].Envelope
		require.NotNil(t, first)
		assert.Equal(t, "invalid_arguments", first.Code)
		assert.Equal(t, remedy.CategoryValidation, first.Category)
		assert.ElementsMatch(t, []string{"/amount", "/currency"}, paths(first), "%s", first.Message)
		var inv struct {
			Currency string `json:"currency"`
			Amount   int    `json:"amount"`
		}
		require.NoError(t, json.Unmarshal(resp.Body, &inv), "%s", resp.Body)
		assert.Equal(t, "eur", inv.Currency, "the enum value, matched")
		assert.Equal(t, 1200, inv.Amount, "the number, from its text")
		assert.Equal(t, before+1, runs(t, "create_invoice"), "the refused call never reached the handler")

		// By default the tool's input schema repairs the call before it is sent: one request.
		checked, err := rmcp.NewClient(ctx, cs)
		require.NoError(t, err)
		resp, err = checked.Call(ctx, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "EUR", "amount": "1200"})
		require.NoError(t, err)
		require.Len(t, resp.Attempts, 1)
		assert.Len(t, resp.Attempts[0].Checked, 2)
		assert.Equal(t, before+2, runs(t, "create_invoice"))
	})

	c.Run(t, "schema validation that cannot be repaired stops", func(t *testing.T) {
		// mcp-go's message states no bound; the tool's input schema does: the clamp is
		// proposed, not made.
		_, err := cl.Call(ctx, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "eur", "amount": 0})
		env := stopped(t, err, client.ErrRewriteRefused, 1)
		assert.Equal(t, []string{"/amount"}, paths(env), "%s", env.Message)
		var clamp *client.CallError
		require.ErrorAs(t, err, &clamp)
		require.NotNil(t, clamp.Proposal)
		require.Len(t, clamp.Proposal.Changes, 1)
		assert.Equal(t, "clamp", clamp.Proposal.Changes[0].Rule)
		assert.JSONEq(t, "1", string(clamp.Proposal.Changes[0].New), "the schema's minimum")

		// An unknown member: dropping it changes the call, so it is proposed, not done.
		_, err = cl.Call(ctx, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "eur", "amount": 5, "note": "hi"})
		env = stopped(t, err, client.ErrRewriteRefused, 1)
		assert.Equal(t, []string{"/note"}, paths(env), "%s", env.Message)
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		require.NotNil(t, ce.Proposal)
		assert.NotContains(t, string(ce.Proposal.New), "note", "the proposal drops it")
	})

	c.Run(t, "typed handler binding repaired", func(t *testing.T) {
		resp, err := cl.Call(ctx, "legacy_charge", map[string]any{"customer_id": "cus_ada", "amount": "1200", "currency": "usd"})
		require.NoError(t, err)
		require.Len(t, resp.Attempts, 2)
		assert.Equal(t, []string{"/amount"}, paths(resp.Attempts[0].Envelope))
		assert.JSONEq(t, `{"id":"ch_1","customer_id":"cus_ada","amount":1200}`, string(resp.Body))
	})

	c.Run(t, "missing argument stops", func(t *testing.T) {
		_, err := cl.Call(ctx, "send_invoice", map[string]any{"id": "in_1"})
		env := stopped(t, err, client.ErrRewriteGaveUp, 1)
		assert.Equal(t, "invalid_arguments", env.Code)
		require.Len(t, env.Issues, 1)
		assert.Equal(t, "/invoice_id", env.Issues[0].Path)
		assert.Equal(t, "required", env.Issues[0].Code)
	})

	c.Run(t, "tool error text", func(t *testing.T) {
		_, err := cl.Call(ctx, "lookup_customer", map[string]any{"id": "cus_nobody"})
		env := stopped(t, err, client.ErrNotRetryable, 1)
		assert.Equal(t, remedy.DialectMCP, env.Dialect)
		assert.Equal(t, "tool_error", env.Code)
		assert.Equal(t, "customer cus_nobody not found", env.Message)
	})

	c.Run(t, "JSON-RPC error", func(t *testing.T) {
		before := runs(t, "close_books")
		_, err := cl.Call(ctx, "close_books", nil)
		env := stopped(t, err, client.ErrNotRetryable, 1)
		assert.Equal(t, remedy.DialectJSONRPC, env.Dialect)
		assert.Equal(t, "-32603", env.Code)
		assert.Equal(t, "the ledger is locked by another close", env.Message)
		assert.Equal(t, before+1, runs(t, "close_books"), "not sent again")
	})

	c.Run(t, "transient failure then success", func(t *testing.T) {
		resp, err := cl.Call(ctx, "exchange_rate", map[string]any{"base": "eur"})
		require.NoError(t, err)
		require.Len(t, resp.Attempts, 2)
		assert.Equal(t, "unavailable", resp.Attempts[0].Envelope.Code)
		assert.JSONEq(t, `{"base":"eur","rate":1.25}`, string(resp.Body))
		assert.Equal(t, 2, runs(t, "exchange_rate"))
	})

	if !p.http {
		return
	}
	c.Run(t, "lost answer", func(t *testing.T) {
		resp, err := cl.Call(ctx, "quote", map[string]any{"quantity": 2})
		require.NoError(t, err, "idempotentHint: sent again")
		assert.Len(t, resp.Attempts, 2)
		assert.JSONEq(t, `{"total":500}`, string(resp.Body))
		assert.Equal(t, 2, runs(t, "quote"))

		_, err = cl.Call(ctx, "transfer", map[string]any{"amount": 5})
		require.ErrorIs(t, err, remedy.ErrOutcomeUnknown, "no hint: not sent again")
		assert.Equal(t, 1, runs(t, "transfer"))
	})
}

// losing stands in front of h and loses the answer to the first call of each named tool: h
// runs the call, then the connection closes before any byte of the answer is written, as when
// a proxy or the network drops it.
func losing(h http.Handler, tools ...string) http.Handler {
	var mu sync.Mutex
	lost := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" && slices.Contains(tools, msg.Params.Name) {
				mu.Lock()
				first := !lost[msg.Params.Name]
				lost[msg.Params.Name] = true
				mu.Unlock()
				if first {
					h.ServeHTTP(&discard{h: http.Header{}}, r)
					panic(http.ErrAbortHandler) // net/http closes the connection, logging nothing
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// discard is a ResponseWriter whose answer goes nowhere.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Flush()                      {}
