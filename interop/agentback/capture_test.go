package agentback_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/corpus"
	"github.com/remedy-go/remedy/internal/testkit/interop"
)

var capture = flag.Bool("capture", false, "rewrite testdata/ with the failures of a live AgentBack app")

// A capture is one of AgentBack's failures, recorded in testdata/<dialect>/<name>.http in the
// format of remedy's envelope corpus (testdata/envelopes at the root), so that it can join the
// corpus as it is: the dialect directory is the one remedy.Parse names.
type captureCase struct {
	dialect, name string
	code          string // the code remedy reads
	provoke       func(t *testing.T) (status int, header http.Header, body []byte)
}

// recordedHeaders are the headers a capture keeps: the rest (Date, ETag, X-Powered-By,
// Connection, Keep-Alive, Content-Length) says nothing about the failure.
var recordedHeaders = []string{"Content-Type", "Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Idempotency-Replayed"}

// volatile are the parts of a capture that differ from run to run: confirmation tokens
// (UUIDs), and waits counted from a window's start.
var volatile = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|` +
	`(?m)^(Retry-After|RateLimit-Reset): \d+$`)

func mask(b []byte) string {
	return volatile.ReplaceAllStringFunc(string(b), func(s string) string {
		if name, _, ok := strings.Cut(s, ": "); ok {
			return name + ": <seconds>"
		}
		return "<uuid>"
	})
}

// record is a response in the corpus's format: status line, the recorded headers, a blank
// line, the body.
func record(status int, header http.Header, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\n", status, http.StatusText(status))
	for _, name := range recordedHeaders {
		if v := header.Get(name); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", name, v)
		}
	}
	b.WriteString("\n")
	b.Write(body)
	if !bytes.HasSuffix(body, []byte("\n")) {
		b.WriteString("\n")
	}
	return b.Bytes()
}

// runCaptures provokes each failure, then rewrites its file (-capture) or checks that the live
// failure is still the recorded one; and checks that remedy reads every recorded file as the
// dialect its directory names, with the code the case says.
func runCaptures(t *testing.T, c *interop.Counter, cases []captureCase) {
	for _, cc := range cases {
		c.Run(t, cc.dialect+"/"+cc.name, func(t *testing.T) {
			path := filepath.Join("testdata", cc.dialect, cc.name+".http")
			status, header, body := cc.provoke(t)
			live := record(status, header, body)
			if *capture {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, live, 0o644))
			}
			saved, err := os.ReadFile(path)
			require.NoError(t, err, "run `go test -run Capture -capture` in interop/agentback")
			assert.Equal(t, mask(saved), mask(live), "AgentBack's answer changed; rerun with -capture and review the diff")

			s, err := corpus.ParseHTTP(saved)
			require.NoError(t, err)
			// As the corpus is read: the file's trailing newline is not part of a JSON body.
			env, ok := remedy.Parse(s.Status, s.Header, bytes.TrimSuffix(s.Body, []byte("\n")))
			require.True(t, ok, "%s is a failure", path)
			assert.Equal(t, cc.dialect, string(env.Dialect))
			assert.Equal(t, cc.code, env.Code)
		})
	}
}

// rawREST provokes a failure with one plain request.
func rawREST(a *app, method, path, body string, header ...string) func(t *testing.T) (int, http.Header, []byte) {
	return func(t *testing.T) (int, http.Header, []byte) {
		resp, b := a.raw(t, method, path, body, header...)
		return resp.StatusCode, resp.Header, b
	}
}

// TestCaptureREST records AgentBack's REST failures. Its app's rate-limit window is long, so
// that the second quote is refused whatever the machine's speed.
func TestCaptureREST(t *testing.T) {
	requireNode(t)
	t.Parallel()
	a := startApp(t, 300)
	c := interop.Record(t, row(t, "@agentback/rest", "server", transportREST, "failure bodies captured and read"))
	order := `{"customer_id":"ada","currency":"EUR","amount":"1200"}`
	runCaptures(t, c, []captureCase{
		{"agent", "agentback-rest-invalid-body-pattern-enum-type", "invalid_body", rawREST(a, "POST", "/v1/orders", order)},
		{"agent", "agentback-rest-invalid-body-too-big", "invalid_body",
			rawREST(a, "POST", "/v1/orders", `{"customer_id":"cus_ada","currency":"eur","amount":99999999}`)},
		{"agent", "agentback-rest-invalid-body-missing", "invalid_body", rawREST(a, "POST", "/v1/orders", `{"customer_id":"cus_ada"}`)},
		{"agent", "agentback-rest-malformed-json", "invalid_parameter", rawREST(a, "POST", "/v1/orders", `{"customer_id":`)},
		{"agent", "agentback-rest-invalid-parameter-query", "invalid_parameter", rawREST(a, "GET", "/v1/quotes?currency=EUR", "")},
		{"agent", "agentback-rest-rate-limited", "too_many_requests", rawREST(a, "GET", "/v1/quotes?currency=eur", "")},
		{"agent", "agentback-rest-confirmation-required", "confirmation_required",
			rawREST(a, "POST", "/v1/accounts/close", `{"account_id":"acct_1","reason":"fraud"}`)},
		{"agent", "agentback-rest-confirmation-invalid", "confirmation_invalid",
			rawREST(a, "POST", "/v1/accounts/close", `{"account_id":"acct_1","reason":"fraud"}`, "X-Confirmation-Token", "not-a-token")},
		{"agent", "agentback-rest-idempotency-key-required", "idempotency_key_required",
			rawREST(a, "POST", "/v1/charges", `{"customer_id":"cus_ada","amount":4200,"currency":"usd"}`)},
		{"agent", "agentback-rest-unavailable-retry-after", "unavailable", func(t *testing.T) (int, http.Header, []byte) {
			a.busy(t, 1)
			return rawREST(a, "GET", "/v1/reports/daily", "")(t)
		}},
		{"unstructured", "agentback-rest-unknown-route-html", "not_found", rawREST(a, "GET", "/v1/no/such/route", "")},
	})
}

// mcpSession is a bare streamable HTTP session with the app's /mcp: the JSON-RPC messages as
// the server sends them, which the go-sdk's client does not show.
type mcpSession struct {
	url, id string
}

func newMCPSession(t *testing.T, a *app) *mcpSession {
	t.Helper()
	s := &mcpSession{url: a.url + "/mcp"}
	status, header, _ := s.post(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",`+
		`"capabilities":{},"clientInfo":{"name":"remedy-capture","version":"1"}}}`)
	require.Equal(t, http.StatusOK, status)
	s.id = header.Get("Mcp-Session-Id")
	require.NotEmpty(t, s.id)
	status, _, _ = s.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, status)
	return s
}

// post sends one JSON-RPC message and returns the answer, the message out of its event
// stream when it came as one.
func (s *mcpSession) post(t *testing.T, msg string) (int, http.Header, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(msg))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header, b
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			// The message travelled as an event; it is recorded as the JSON it is.
			h := resp.Header.Clone()
			h.Set("Content-Type", "application/json")
			return resp.StatusCode, h, []byte(data)
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("no message in the event stream")
	return 0, nil, nil
}

func (s *mcpSession) call(id int, tool, args string) func(t *testing.T) (int, http.Header, []byte) {
	return func(t *testing.T) (int, http.Header, []byte) {
		return s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
	}
}

// TestCaptureMCP records AgentBack's MCP failures: isError results, and mcp-http's 429.
func TestCaptureMCP(t *testing.T) {
	requireNode(t)
	t.Parallel()
	a := startApp(t, 300)
	c := interop.Record(t, row(t, "@agentback/mcp", "server", transportMCP, "failure bodies captured and read"))
	s := newMCPSession(t, a)
	runCaptures(t, c, []captureCase{
		{"mcp", "agentback-mcp-invalid-input", "invalid_input",
			s.call(1, "create_order", `{"customer_id":"ada","currency":"EUR","amount":"1200"}`)},
		{"mcp", "agentback-mcp-confirmation-required", "confirmation_required",
			s.call(2, "close_account", `{"account_id":"acct_1","reason":"fraud"}`)},
		{"mcp", "agentback-mcp-unavailable", "unavailable", func(t *testing.T) (int, http.Header, []byte) {
			a.busy(t, 1)
			return s.call(3, "daily_report", `{}`)(t)
		}},
		// An unknown tool: the SDK's McpError goes through AgentBack's envelope builder, and its
		// JSON-RPC code (-32602) lands in code, as a number, beside a 500's message.
		{"mcp", "agentback-mcp-unknown-tool", "-32602", s.call(4, "no_such_tool", `{}`)},
		{"jsonrpc", "agentback-mcp-http-rate-limited", "-32029", func(t *testing.T) (int, http.Header, []byte) {
			status, _, body := s.call(5, "get_quote", `{"currency":"eur"}`)(t)
			require.Equal(t, http.StatusOK, status, "%s", body)
			return s.call(6, "get_quote", `{"currency":"eur"}`)(t)
		}},
	})
}
