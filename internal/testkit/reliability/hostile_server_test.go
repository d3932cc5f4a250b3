package reliability_test

// A catalogue of hostile requests against the reference server (the billing API over real
// HTTP on loopback): each case says what the server must answer, checks that the answer is
// the canonical envelope with the expected code and nothing of the server's insides, and
// that the server still serves a normal request afterwards.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileMeasure is an operation added to the billing API for the number cases: an integer
// with bounds, a float without, and a 64-bit integer without bounds.
type hostileMeasure struct {
	Count int     `json:"count" schema:"minimum=0;maximum=1000"`
	Ratio float64 `json:"ratio"`
	Total int64   `json:"total,omitempty"`
	Label string  `json:"label,omitempty" schema:"maxLength=64"`
}

// hostileLogs collects what the server logs at warning level or above, and what net/http
// logs (a panic that escaped a handler), so that a case can check that nothing went wrong
// inside.
type hostileLogs struct {
	mu    sync.Mutex
	lines []string
}

func (l *hostileLogs) Enabled(context.Context, slog.Level) bool { return true }
func (l *hostileLogs) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return nil
	}
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	l.add(b.String())
	return nil
}
func (l *hostileLogs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *hostileLogs) WithGroup(string) slog.Handler      { return l }
func (l *hostileLogs) Write(p []byte) (int, error)        { l.add(string(p)); return len(p), nil }

func (l *hostileLogs) add(s string) {
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
}

func (l *hostileLogs) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// hostileTarget is a running server under attack.
type hostileTarget struct {
	srv   *httptest.Server
	store *billing.Store
	logs  *hostileLogs
	read  atomic.Int64 // bytes of request bodies the API read, over all requests
	conns atomic.Int64 // connections accepted
	// from holds the remote address of every request that reached the API.
	fromMu sync.Mutex
	from   map[string]bool
	// closeNoWait: the test's cleanup does not wait for the server's connections to end.
	closeNoWait atomic.Bool
}

func (h *hostileTarget) addr() string { return h.srv.Listener.Addr().String() }

// reached reports whether a request from the client address addr reached the API.
func (h *hostileTarget) reached(addr string) bool {
	h.fromMu.Lock()
	defer h.fromMu.Unlock()
	return h.from[addr]
}

// closeWithoutWaiting makes the test's cleanup close the server without waiting for its
// connections to end. net/http sleeps 500 ms (its rstAvoidanceDelay) before it closes a
// connection whose request body it left unread, so that the client reads the answer before a
// reset, and httptest.Server.Close waits for that sleep: for a test that has read its answer,
// time spent on nothing.
func (h *hostileTarget) closeWithoutWaiting() { h.closeNoWait.Store(true) }

// hostileBodyCounter counts the bytes the API reads from a request body.
type hostileBodyCounter struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c hostileBodyCounter) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// hostileServer starts the billing API (with hostileMeasure at POST /v1/measure) on loopback,
// configured as a deployment should be: header and body reads bounded in time. configure, if
// not nil, adjusts the server (its http.Server, its listener) before it starts.
func hostileServer(t *testing.T, configure func(*httptest.Server), opts ...server.Option) *hostileTarget {
	t.Helper()
	h := &hostileTarget{logs: &hostileLogs{}, from: map[string]bool{}}
	opts = append([]server.Option{server.WithLogger(slog.New(h.logs))}, opts...)
	api, store, err := billing.New(opts...)
	require.NoError(t, err)
	h.store = store
	require.NoError(t, server.Post(api, "/v1/measure", func(_ context.Context, in hostileMeasure) (hostileMeasure, error) {
		return in, nil
	}, server.OperationID("measure")))
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.fromMu.Lock()
		h.from[r.RemoteAddr] = true
		h.fromMu.Unlock()
		if r.Body != nil {
			// On a copy: net/http decides what to do with an unread body by the original's type.
			r = r.WithContext(r.Context())
			r.Body = hostileBodyCounter{r.Body, &h.read}
		}
		api.ServeHTTP(w, r)
	}))
	h.srv.Config.ReadHeaderTimeout = 10 * time.Second
	h.srv.Config.ReadTimeout = 10 * time.Second
	h.srv.Config.ErrorLog = log.New(h.logs, "net/http: ", 0)
	h.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			h.conns.Add(1)
		}
	}
	if configure != nil {
		configure(h.srv)
	}
	h.srv.Start()
	t.Cleanup(func() {
		if h.closeNoWait.Load() {
			go h.srv.Close()
			return
		}
		h.srv.Close()
	})
	return h
}

// hostileReply is one response as received.
type hostileReply struct {
	status int
	header http.Header
	body   []byte
}

// hostileSend sends one request with Go's client (which refuses to send CR, LF or NUL in a
// header value: those go through hostileRaw).
func hostileSend(t *testing.T, h *hostileTarget, method, path string, header http.Header, body io.Reader) hostileReply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, h.srv.URL+path, body)
	require.NoError(t, err)
	for k, vs := range header {
		req.Header[k] = vs
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	require.NoError(t, err)
	return hostileReply{resp.StatusCode, resp.Header, b}
}

// hostileRaw writes raw on a new connection and reads up to n responses, until the server
// closes the connection. The connection is bounded by a deadline.
func hostileRaw(t *testing.T, addr, raw string, n int) ([]hostileReply, error) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(20*time.Second)))
	if _, err := io.WriteString(conn, raw); err != nil {
		return nil, err
	}
	return hostileReadReplies(conn, n)
}

func hostileReadReplies(conn net.Conn, n int) ([]hostileReply, error) {
	br := bufio.NewReader(conn)
	var out []hostileReply
	for len(out) < n {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return out, err
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		resp.Body.Close()
		out = append(out, hostileReply{resp.StatusCode, resp.Header, b})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// hostileLeaks are traces of the server's insides that no answer may carry: stack traces,
// source paths, Go decoder and runtime messages.
var hostileLeaks = []string{
	"goroutine ", ".go:", "panic", "runtime error", "runtime.", "json: ", "encoding/json",
	"jsonschema", "strconv.", "reflect", "invalid character", "cannot unmarshal", "big.",
	"/root/", "/home/", "/usr/local/go", "remedy-go/remedy/",
}

// hostileTraces are what no answer of any kind may carry, not even one net/http or the MCP SDK
// writes before the API runs: traces of a crash.
var hostileTraces = []string{"goroutine ", ".go:", "panic", "runtime error", "/root/", "/home/", "/usr/local/go"}

// hostileNoTrace checks that a body holds no trace of a crash.
func hostileNoTrace(t *testing.T, body []byte) {
	t.Helper()
	for _, s := range hostileTraces {
		assert.NotContains(t, string(body), s, "the answer holds %q: %.300s", s, body)
	}
}

// hostileNoLeak checks that a body says nothing of the server's insides.
func hostileNoLeak(t *testing.T, body []byte) {
	t.Helper()
	for _, s := range hostileLeaks {
		assert.NotContains(t, string(body), s, "the answer leaks %q: %.300s", s, body)
	}
}

// hostileEnvelope checks that r is the canonical envelope with the status and code wanted, and
// that it says nothing of the server's insides. It returns the envelope as remedy reads it.
func hostileEnvelope(t *testing.T, r hostileReply, wantStatus int, wantCode string) *remedy.Envelope {
	t.Helper()
	assert.Equal(t, wantStatus, r.status, "status; body: %.300s", r.body)
	assert.True(t, strings.HasPrefix(r.header.Get("Content-Type"), "application/json"),
		"content type %q", r.header.Get("Content-Type"))
	assert.True(t, utf8.Valid(r.body), "the answer is valid UTF-8")
	assert.Less(t, len(r.body), 64<<10, "the answer is bounded, whatever came in")
	var wire struct {
		Error *struct {
			StatusCode int    `json:"statusCode"`
			Code       string `json:"code"`
			Message    string `json:"message"`
		} `json:"error"`
	}
	if assert.NoError(t, json.Unmarshal(r.body, &wire), "the answer is JSON: %.300s", r.body) &&
		assert.NotNil(t, wire.Error, "the answer is {\"error\":{...}}: %.300s", r.body) {
		assert.Equal(t, wantCode, wire.Error.Code, "code; body: %.300s", r.body)
		assert.Equal(t, wantStatus, wire.Error.StatusCode)
		assert.NotEmpty(t, wire.Error.Message)
	}
	hostileNoLeak(t, r.body)
	env, ok := remedy.Parse(r.status, r.header, r.body)
	require.True(t, ok, "the client reads a failure")
	assert.Equal(t, remedy.DialectAgent, env.Dialect, "the client reads the canonical envelope")
	assert.Equal(t, wantCode, env.Code)
	hostileIssuesStated(t, env)
	var generic any
	if err := json.Unmarshal(r.body, &generic); err != nil {
		t.Errorf("a standard decoder cannot read the answer: %v", err)
	}
	return env
}

// hostileIssuesStated checks the registry's rule for the validation codes: they are
// retryable, and "always sent with issues, so the client rewrites the named fields" — without
// issues the reference client cannot act on them.
func hostileIssuesStated(t *testing.T, env *remedy.Envelope) {
	t.Helper()
	switch env.Code {
	case server.CodeInvalidJSON, server.CodeInvalidBody, server.CodeInvalidParameter, server.CodeInvalidInput:
		assert.NotEmpty(t, env.Issues, "%s is always sent with issues (server/registry.go): %q", env.Code, env.Message)
	}
}

// hostileServes checks that the server still serves a normal request, on a new connection.
func hostileServes(t *testing.T, h *hostileTarget) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := c.Post(h.srv.URL+"/v1/invoices", "application/json",
		strings.NewReader(`{"customer_id":"cus_ada","currency":"usd","amount":1200}`))
	require.NoError(t, err, "the server still answers")
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusCreated, resp.StatusCode, "a normal request still succeeds: %s", b)
}

// hostileQuiet checks that nothing went wrong inside: no internal error, no panic, logged.
func hostileQuiet(t *testing.T, h *hostileTarget) {
	t.Helper()
	assert.Empty(t, h.logs.text(), "the server logged a problem")
}

// hostileCase is a request and the answer it must get.
type hostileCase struct {
	name       string
	method     string // default POST
	path       string // default /v1/invoices
	header     http.Header
	body       string
	wantStatus int
	wantCode   string
	wantIssue  string // an issue code the answer must hold, if any
	// bug, when set, describes a known bug whose symptom is the status bugStatus: the case
	// is then skipped, saying so, until the bug is fixed (and runs in full from then on).
	bug       string
	bugStatus int
}

// hostileBugSeen skips t when the reply shows the known bug's symptom.
func hostileBugSeen(t *testing.T, bug string, bugStatus int, r hostileReply) {
	t.Helper()
	if bug != "" && r.status == bugStatus {
		t.Skipf("bug: %s (got %d: %.200s)", bug, r.status, r.body)
	}
}

func hostileRun(t *testing.T, cases []hostileCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := hostileServer(t, nil)
			method, path := tc.method, tc.path
			if method == "" {
				method = http.MethodPost
			}
			if path == "" {
				path = "/v1/invoices"
			}
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			r := hostileSend(t, h, method, path, tc.header, body)
			assert.Zero(t, h.store.Effects("charge"), "no hostile request executed a charge")
			assert.Zero(t, h.store.Effects("delete_customer"), "no hostile request deleted")
			hostileQuiet(t, h)
			hostileServes(t, h)
			hostileBugSeen(t, tc.bug, tc.bugStatus, r)
			env := hostileEnvelope(t, r, tc.wantStatus, tc.wantCode)
			if tc.wantIssue != "" {
				var codes []string
				for _, is := range env.Issues {
					codes = append(codes, is.Code)
				}
				assert.Contains(t, codes, tc.wantIssue, "issues %+v", env.Issues)
			}
		})
	}
}

func hostileInvoice(memo string) string {
	return `{"customer_id":"cus_ada","currency":"usd","amount":1200,"memo":` + memo + `}`
}

const hostileCharge = `{"customer_id":"cus_ada","amount":100,"currency":"usd"}`

func TestHostileServerNesting(t *testing.T) {
	t.Parallel()
	const n = 100_000
	hostileRun(t, []hostileCase{
		{name: "100,000 unclosed [", body: strings.Repeat("[", n),
			wantStatus: 400, wantCode: server.CodeInvalidJSON, wantIssue: "syntax"},
		{name: "100,000 [ closed", body: strings.Repeat("[", n) + strings.Repeat("]", n),
			wantStatus: 400, wantCode: server.CodeInvalidJSON, wantIssue: "syntax"},
		{name: `100,000 {"a": levels`, body: strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n),
			wantStatus: 400, wantCode: server.CodeInvalidJSON, wantIssue: "syntax"},
		{name: "100,000 [ in a field", body: hostileInvoice(strings.Repeat("[", n) + strings.Repeat("]", n)),
			wantStatus: 400, wantCode: server.CodeInvalidJSON, wantIssue: "syntax"},
		{name: "9,000 levels in a field (under the decoder's limit)",
			body:       hostileInvoice(strings.Repeat(`{"a":[`, 4500) + strings.Repeat("]}", 4500)),
			wantStatus: 422, wantCode: server.CodeInvalidBody, wantIssue: "type"},
		{name: "9,000 levels in an unknown member",
			body:       `{"customer_id":"cus_ada","currency":"usd","amount":1,"x":` + strings.Repeat(`[`, 9000) + strings.Repeat("]", 9000) + `}`,
			wantStatus: 422, wantCode: server.CodeInvalidBody},
	})
}

func TestHostileServerNumbers(t *testing.T) {
	t.Parallel()
	digits := "9" + strings.Repeat("0", 9999)
	measure := func(member, v string) string {
		m := map[string]string{"count": "1", "ratio": "0.5"}
		m[member] = v
		return `{"count":` + m["count"] + `,"ratio":` + m["ratio"] + `}`
	}
	cases := []hostileCase{}
	for _, v := range []struct{ name, text string }{
		{"1e999999", "1e999999"}, {"-1e999999", "-1e999999"}, {"a 10,000-digit integer", digits},
		{"1e-999999", "1e-999999"}, {"-0", "-0"}, {"-0.0", "-0.0"}, {"2^63", "9223372036854775808"},
		{"1e400", "1e400"}, {"a 10,000-digit fraction", "0." + strings.Repeat("1", 10000)},
	} {
		cases = append(cases, hostileCase{name: "amount (integer, 1..1000000) " + v.name,
			body:       `{"customer_id":"cus_ada","currency":"usd","amount":` + v.text + `}`,
			wantStatus: 422, wantCode: server.CodeInvalidBody})
	}
	for _, v := range []struct{ name, text string }{
		{"1e999999", "1e999999"}, {"-1e999999", "-1e999999"}, {"a 10,000-digit integer", digits},
		{"1e400", "1e400"},
	} {
		cases = append(cases,
			hostileCase{name: "count (integer, 0..1000) " + v.name, path: "/v1/measure",
				body: measure("count", v.text), wantStatus: 422, wantCode: server.CodeInvalidBody},
			hostileCase{name: "ratio (number, unbounded) " + v.name, path: "/v1/measure",
				body: measure("ratio", v.text), wantStatus: 422, wantCode: server.CodeInvalidBody},
		)
	}
	hostileRun(t, cases)
}

// TestHostileServerNumbersAccepted: numbers that are unusual but representable are accepted
// and bound as the value they denote.
func TestHostileServerNumbersAccepted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		want       hostileMeasure
	}{
		{"count -0", `{"count":-0,"ratio":1}`, hostileMeasure{Count: 0, Ratio: 1}},
		{"ratio -0", `{"count":1,"ratio":-0}`, hostileMeasure{Count: 1}},
		{"ratio 1e-999999 (underflows to 0)", `{"count":1,"ratio":1e-999999}`, hostileMeasure{Count: 1}},
		{"total 2^63-1", `{"count":1,"ratio":1,"total":9223372036854775807}`, hostileMeasure{Count: 1, Ratio: 1, Total: 1<<63 - 1}},
		// JSON Schema counts these as integers: they bind as the integer they denote.
		{"count 1e2 (an integer written as a float)", `{"count":1e2,"ratio":1}`, hostileMeasure{Count: 100, Ratio: 1}},
		{"count 100.0", `{"count":100.0,"ratio":1}`, hostileMeasure{Count: 100, Ratio: 1}},
		{"count 25e0 and a float written 2.0", `{"count":25e0,"ratio":2.0}`, hostileMeasure{Count: 25, Ratio: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := hostileServer(t, nil)
			r := hostileSend(t, h, "POST", "/v1/measure", nil, strings.NewReader(tc.body))
			require.Equal(t, 200, r.status, "%s", r.body)
			var got hostileMeasure
			require.NoError(t, json.Unmarshal(r.body, &got))
			assert.Equal(t, tc.want, got)
			hostileQuiet(t, h)
			hostileServes(t, h)
		})
	}
}

// TestHostileServerNumbersOverflow: an integer the schema calls valid but the Go type cannot
// hold must not be a 500.
func TestHostileServerNumbersOverflow(t *testing.T) {
	t.Parallel()
	hostileRun(t, []hostileCase{
		{name: "total 2^63 (int64 overflows)", path: "/v1/measure",
			body: `{"count":1,"ratio":1,"total":9223372036854775808}`, wantStatus: 422, wantCode: server.CodeInvalidBody},
		{name: "total 1e30", path: "/v1/measure",
			body: `{"count":1,"ratio":1,"total":1e30}`, wantStatus: 422, wantCode: server.CodeInvalidBody},
		{name: "total -2^63-1", path: "/v1/measure",
			body: `{"count":1,"ratio":1,"total":-9223372036854775809}`, wantStatus: 422, wantCode: server.CodeInvalidBody},
	})
}

func TestHostileServerUTF8(t *testing.T) {
	t.Parallel()
	hostileRun(t, []hostileCase{
		{name: "invalid UTF-8 in a string", body: hostileInvoice("\"caf\xe9 \xff\""),
			wantStatus: 400, wantCode: server.CodeInvalidJSON},
		{name: "invalid UTF-8 in a key", body: "{\"customer_id\":\"cus_ada\",\"currency\":\"usd\",\"amount\":1,\"me\xffmo\":\"x\"}",
			wantStatus: 400, wantCode: server.CodeInvalidJSON},
		{name: "a truncated UTF-8 sequence", body: hostileInvoice("\"\xe2\x82\""),
			wantStatus: 400, wantCode: server.CodeInvalidJSON},
		{name: "an overlong encoding of /", body: hostileInvoice("\"\xc0\xaf\""),
			wantStatus: 400, wantCode: server.CodeInvalidJSON},
		{name: "a UTF-16 surrogate encoded in UTF-8", body: hostileInvoice("\"\xed\xa0\x80\""),
			wantStatus: 400, wantCode: server.CodeInvalidJSON},
		{name: "invalid UTF-8 in the pattern-checked id", body: "{\"customer_id\":\"cus_\xff\",\"currency\":\"usd\",\"amount\":1}",
			wantStatus: 400, wantCode: server.CodeInvalidJSON},
		{name: "invalid UTF-8 hides a duplicate member",
			body:       "{\"memo\":\"\xff\",\"customer_id\":\"cus_ada\",\"currency\":\"usd\",\"amount\":999999999,\"amount\":1}",
			wantStatus: 400, wantCode: server.CodeInvalidJSON},
		{name: "invalid UTF-8 in the path", method: "GET", path: "/v1/invoices/in_%FF",
			wantStatus: 400, wantCode: server.CodeInvalidParameter},
	})
}

func TestHostileServerShapes(t *testing.T) {
	t.Parallel()
	hostileRun(t, []hostileCase{
		{name: "duplicate keys", body: `{"customer_id":"cus_ada","currency":"usd","amount":1,"amount":2}`,
			wantStatus: 400, wantCode: server.CodeInvalidJSON, wantIssue: "duplicate_member"},
		{name: "duplicate keys, one escaped", body: `{"customer_id":"cus_ada","currency":"usd","amount":1,"\u0061mount":2}`,
			wantStatus: 400, wantCode: server.CodeInvalidJSON, wantIssue: "duplicate_member"},
		{name: "duplicate keys, deep", body: hostileInvoice(`{"a":{"b":1,"b":2}}`),
			wantStatus: 400, wantCode: server.CodeInvalidJSON, wantIssue: "duplicate_member"},
		{name: "a JSON string", body: `"cus_ada"`, wantStatus: 422, wantCode: server.CodeInvalidBody},
		{name: "a JSON array", body: `[{"customer_id":"cus_ada","currency":"usd","amount":1}]`,
			wantStatus: 422, wantCode: server.CodeInvalidBody},
		{name: "null", body: `null`, wantStatus: 422, wantCode: server.CodeInvalidBody},
		{name: "a number", body: `42`, wantStatus: 422, wantCode: server.CodeInvalidBody},
		{name: "true", body: `true`, wantStatus: 422, wantCode: server.CodeInvalidBody},
		{name: "whitespace only", body: " \n\t ", wantStatus: 400, wantCode: server.CodeInvalidJSON},
		{name: "a raw NUL in a string", body: hostileInvoice("\"a\x00b\""),
			wantStatus: 400, wantCode: server.CodeInvalidJSON, wantIssue: "syntax"},
		{name: "a NUL between tokens", body: "{\"customer_id\":\"cus_ada\",\x00\"currency\":\"usd\",\"amount\":1}",
			wantStatus: 400, wantCode: server.CodeInvalidJSON, wantIssue: "syntax"},
		{name: "a NUL after the value", body: `{"customer_id":"cus_ada","currency":"usd","amount":1}` + "\x00",
			wantStatus: 400, wantCode: server.CodeInvalidJSON},
		{name: "an escaped NUL in a key", body: `{"customer_id":"cus_ada","currency":"usd","amount":1,"\u0000":1}`,
			wantStatus: 422, wantCode: server.CodeInvalidBody},
		{name: "an escaped NUL in the pattern-checked id", body: `{"customer_id":"cus_ada\u0000","currency":"usd","amount":1}`,
			wantStatus: 422, wantCode: server.CodeInvalidBody},
		{name: "a BOM before the object", body: "\xef\xbb\xbf" + `{"customer_id":"cus_ada","currency":"usd","amount":1}`,
			wantStatus: 400, wantCode: server.CodeInvalidJSON},
	})
}

func TestHostileServerHeaders(t *testing.T) {
	t.Parallel()
	key := func(v ...string) http.Header { return http.Header{"Idempotency-Key": v} }
	token := func(v string) http.Header { return http.Header{"X-Confirmation-Token": {v}} }
	hostileRun(t, []hostileCase{
		{name: "a 300-character key", path: "/v1/charges", header: key(strings.Repeat("k", 300)), body: hostileCharge,
			wantStatus: 400, wantCode: server.CodeIdempotencyKeyInvalid},
		{name: "a 10 KB key", path: "/v1/charges", header: key(strings.Repeat("k", 10<<10)), body: hostileCharge,
			wantStatus: 400, wantCode: server.CodeIdempotencyKeyInvalid},
		{name: "a key with a space", path: "/v1/charges", header: key("a b"), body: hostileCharge,
			wantStatus: 400, wantCode: server.CodeIdempotencyKeyInvalid},
		{name: "a key with an unbalanced quote", path: "/v1/charges", header: key(`"abc`), body: hostileCharge,
			wantStatus: 400, wantCode: server.CodeIdempotencyKeyInvalid},
		{name: "a quoted key with a bad escape", path: "/v1/charges", header: key(`"a\nb"`), body: hostileCharge,
			wantStatus: 400, wantCode: server.CodeIdempotencyKeyInvalid},
		{name: "a quoted empty key", path: "/v1/charges", header: key(`""`), body: hostileCharge,
			wantStatus: 400, wantCode: server.CodeIdempotencyKeyInvalid},
		{name: "an empty key", path: "/v1/charges", header: key(""), body: hostileCharge,
			wantStatus: 400, wantCode: server.CodeIdempotencyKeyInvalid},
		{name: "a key sent twice", path: "/v1/charges", header: key("a", "b"), body: hostileCharge,
			wantStatus: 400, wantCode: server.CodeIdempotencyKeyInvalid},
		{name: "a key of UTF-8", path: "/v1/charges", header: key("clé-ü"), body: hostileCharge,
			wantStatus: 400, wantCode: server.CodeIdempotencyKeyInvalid},
		{name: "a key with a tab inside", path: "/v1/charges", header: key("a\tb"), body: hostileCharge,
			wantStatus: 400, wantCode: server.CodeIdempotencyKeyInvalid},
		{name: "a 10 KB confirmation token", method: "DELETE", path: "/v1/customers/cus_ada",
			header: token(strings.Repeat("t", 10<<10)), wantStatus: 409, wantCode: server.CodeConfirmationInvalid},
		{name: "a non-ASCII confirmation token", method: "DELETE", path: "/v1/customers/cus_ada",
			header: token("jéton-✓"), wantStatus: 409, wantCode: server.CodeConfirmationInvalid},
		{name: "a confirmation token of quotes and spaces", method: "DELETE", path: "/v1/customers/cus_ada",
			header: token(`" a b "`), wantStatus: 409, wantCode: server.CodeConfirmationInvalid},
	})
}

// TestHostileServerKeysAccepted: keys that look odd but are valid run once and replay.
func TestHostileServerKeysAccepted(t *testing.T) {
	t.Parallel()
	for _, k := range []string{`"a b"`, `"say \"hi\""`, strings.Repeat("k", 255), `a"b`, "  padded  "} {
		t.Run(k[:min(len(k), 20)], func(t *testing.T) {
			t.Parallel()
			h := hostileServer(t, nil)
			for i, want := range []string{"", "true"} {
				r := hostileSend(t, h, "POST", "/v1/charges", http.Header{"Idempotency-Key": {k}}, strings.NewReader(hostileCharge))
				require.Equal(t, 201, r.status, "attempt %d: %s", i+1, r.body)
				assert.Equal(t, want, r.header.Get(remedy.HeaderReplayed))
			}
			assert.Equal(t, 1, h.store.Effects("charge"))
			hostileQuiet(t, h)
		})
	}
}

// hostileRequest is the text of a request for hostileRaw, with the headers given (each a full
// "Name: value" line, without its CRLF) and a body whose Content-Length is its length.
func hostileRequest(method, path string, headers []string, body string) string {
	var b strings.Builder
	b.WriteString(method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	if body != "" || method == "POST" {
		b.WriteString("Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n")
	}
	b.WriteString("\r\n" + body)
	return b.String()
}

// TestHostileServerHeaderInjection: header values Go's client refuses to send, written on the
// wire by hand. net/http refuses CR, NUL and other controls before the handler runs (400,
// not an envelope: the API never sees the request); what reaches the API is refused as an
// invalid key or token. In every case nothing is charged or deleted, and the server serves on.
func TestHostileServerHeaderInjection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		method   string
		path     string
		header   string
		body     string
		status   int
		code     string // "" when net/http answers before the API
		executes bool
	}{
		{"key with a bare CR", "POST", "/v1/charges", "Idempotency-Key: ab\rX-Injected: 1", hostileCharge, 400, "", false},
		{"key with a NUL", "POST", "/v1/charges", "Idempotency-Key: ab\x00cd", hostileCharge, 400, "", false},
		{"key with DEL", "POST", "/v1/charges", "Idempotency-Key: a\x7fb", hostileCharge, 400, "", false},
		{"key with a vertical tab", "POST", "/v1/charges", "Idempotency-Key: ab\vcd", hostileCharge, 400, "", false},
		{"key with a bare LF ending it early", "POST", "/v1/charges", "Idempotency-Key: ab\nX-Confirmation-Token: evil", hostileCharge, 201, "", true},
		{"key folded onto a second line", "POST", "/v1/charges", "Idempotency-Key: ab\r\n cd", hostileCharge, 400, "", false},
		{"key with obs-text bytes", "POST", "/v1/charges", "Idempotency-Key: ab\xff\xfe", hostileCharge, 400, server.CodeIdempotencyKeyInvalid, false},
		{"key with escaped CRLF text", "POST", "/v1/charges", `Idempotency-Key: ab%0d%0aX-Injected:%201`, hostileCharge, 201, "", true},
		{"token with a bare CR", "DELETE", "/v1/customers/cus_ada", "X-Confirmation-Token: t\rX-Injected: 1", "", 400, "", false},
		{"token with a NUL", "DELETE", "/v1/customers/cus_ada", "X-Confirmation-Token: t\x00", "", 400, "", false},
		{"token with obs-text bytes", "DELETE", "/v1/customers/cus_ada", "X-Confirmation-Token: t\xff\xfe", "", 409, server.CodeConfirmationInvalid, false},
		{"a header name with a space", "POST", "/v1/charges", "Idempotency Key: abc", hostileCharge, 400, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := hostileServer(t, nil)
			replies, err := hostileRaw(t, h.addr(), hostileRequest(tc.method, tc.path, []string{tc.header}, tc.body), 1)
			require.Len(t, replies, 1, "one answer (%v)", err)
			r := replies[0]
			switch {
			case tc.code != "":
				hostileEnvelope(t, r, tc.status, tc.code)
			case tc.executes:
				assert.Equal(t, tc.status, r.status, "%s", r.body)
			default:
				assert.Equal(t, tc.status, r.status, "%s", r.body)
				hostileNoLeak(t, r.body)
			}
			want := 0
			if tc.executes {
				want = 1
			}
			assert.Equal(t, want, h.store.Effects("charge"))
			assert.Zero(t, h.store.Effects("delete_customer"))
			hostileServes(t, h)
		})
	}
}

// hostileStream is a request body of total bytes, a JSON object with one long string, that
// stops after gateAt bytes until released: a server that waits for the whole body before
// answering would wait until the deadline.
type hostileStream struct {
	total, gateAt int64
	sent          atomic.Int64
	release       chan struct{}
	once          sync.Once
	waited        atomic.Bool // the gate opened by its deadline, not by release
}

func hostileNewStream(total, gateAt int64) *hostileStream {
	return &hostileStream{total: total, gateAt: gateAt, release: make(chan struct{})}
}

func (s *hostileStream) Read(p []byte) (int, error) {
	n := s.sent.Load()
	if n >= s.total {
		return 0, io.EOF
	}
	if n >= s.gateAt {
		select {
		case <-s.release:
			return 0, errors.New("hostile: the sender gave up")
		case <-time.After(10 * time.Second):
			s.waited.Store(true)
		}
	}
	end := s.total
	if n < s.gateAt {
		end = s.gateAt
	}
	m := min(int64(len(p)), end-n)
	const head = `{"memo":"`
	for i := range m {
		if at := n + i; at < int64(len(head)) {
			p[i] = head[at]
		} else {
			p[i] = 'x'
		}
	}
	s.sent.Add(m)
	return int(m), nil
}

func (s *hostileStream) Close() error {
	s.once.Do(func() { close(s.release) })
	return nil
}

// TestHostileServerHugeBody: 10 MB is refused with 413 while the sender is still sending,
// and the API reads at most about its limit of it (nothing at all when the length is
// declared).
func TestHostileServerHugeBody(t *testing.T) {
	t.Parallel()
	const total, gate = 10 << 20, 2 << 20
	for _, tc := range []struct {
		name     string
		declared bool
		maxRead  int64
	}{
		{"declared length", true, 0},
		{"chunked", false, 2*server.DefaultMaxBody + 64<<10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := hostileServer(t, nil)
			h.closeWithoutWaiting()
			body := hostileNewStream(total, gate)
			req, err := http.NewRequest("POST", h.srv.URL+"/v1/invoices", body)
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.ContentLength = -1
			if tc.declared {
				req.ContentLength = total
			}
			resp, err := h.srv.Client().Do(req)
			body.Close()
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Logf("answered %d while the client had sent %d of %d bytes; the API read %d", resp.StatusCode, body.sent.Load(), total, h.read.Load())
			assert.False(t, body.waited.Load(), "the answer came while the sender was held at %d of %d bytes", gate, total)
			assert.Less(t, body.sent.Load(), int64(total), "the client had not finished sending")
			assert.LessOrEqual(t, h.read.Load(), tc.maxRead, "bytes of the body the API read")
			hostileEnvelope(t, hostileReply{resp.StatusCode, resp.Header, b}, 413, server.CodePayloadTooLarge)
			hostileQuiet(t, h)
			hostileServes(t, h)
		})
	}
}

// TestHostileServerLyingLength: a body shorter or longer than its Content-Length.
func TestHostileServerLyingLength(t *testing.T) {
	t.Parallel()
	t.Run("shorter, then the sender closes its side", func(t *testing.T) {
		t.Parallel()
		h := hostileServer(t, nil)
		conn, err := net.Dial("tcp", h.addr())
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.SetDeadline(time.Now().Add(20*time.Second)))
		_, err = io.WriteString(conn, "POST /v1/invoices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"+
			`{"customer_id":"cus_ada","currency":"usd","amount":1}`)
		require.NoError(t, err)
		require.NoError(t, conn.(*net.TCPConn).CloseWrite())
		replies, err := hostileReadReplies(conn, 1)
		require.Len(t, replies, 1, "an answer (%v)", err)
		assert.Zero(t, h.store.Effects("create_invoice"), "a truncated body is not executed")
		hostileQuiet(t, h)
		hostileServes(t, h)
		hostileEnvelope(t, replies[0], 400, server.CodeInvalidJSON)
	})
	t.Run("longer: the rest is read as the next request", func(t *testing.T) {
		t.Parallel()
		h := hostileServer(t, nil)
		body := `{"customer_id":"cus_ada","currency":"usd","amount":1}`
		raw := "POST /v1/invoices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n" +
			body + "\r\n\r\n"
		replies, _ := hostileRaw(t, h.addr(), raw, 2)
		require.NotEmpty(t, replies)
		hostileEnvelope(t, replies[0], 400, server.CodeInvalidJSON)
		if len(replies) > 1 {
			assert.Equal(t, 400, replies[1].status, "the surplus is not a request")
			hostileNoLeak(t, replies[1].body)
		}
		assert.Zero(t, h.store.Effects("create_invoice"))
		hostileQuiet(t, h)
		hostileServes(t, h)
	})
	t.Run("two Content-Length headers that disagree", func(t *testing.T) {
		t.Parallel()
		h := hostileServer(t, nil)
		raw := "POST /v1/invoices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 60\r\n\r\n{}"
		replies, err := hostileRaw(t, h.addr(), raw, 1)
		require.Len(t, replies, 1, "an answer (%v)", err)
		assert.Equal(t, 400, replies[0].status, "net/http refuses it before the API")
		assert.Zero(t, h.store.Effects("create_invoice"))
		hostileServes(t, h)
	})
	t.Run("Content-Length and chunked together", func(t *testing.T) {
		t.Parallel()
		h := hostileServer(t, nil)
		raw := "POST /v1/invoices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"2\r\n{}\r\n0\r\n\r\n"
		replies, err := hostileRaw(t, h.addr(), raw, 1)
		require.Len(t, replies, 1, "an answer (%v)", err)
		// RFC 9112 §6.3: Transfer-Encoding overrides Content-Length; net/http reads the
		// chunked body ({}), which the API refuses.
		hostileEnvelope(t, replies[0], 422, server.CodeInvalidBody)
		assert.Zero(t, h.store.Effects("create_invoice"))
		hostileServes(t, h)
	})
	t.Run("a negative Content-Length", func(t *testing.T) {
		t.Parallel()
		h := hostileServer(t, nil)
		raw := "POST /v1/invoices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n{}"
		replies, err := hostileRaw(t, h.addr(), raw, 1)
		require.Len(t, replies, 1, "an answer (%v)", err)
		assert.Equal(t, 400, replies[0].status)
		hostileServes(t, h)
	})
	t.Run("a Content-Length of 2^63-1", func(t *testing.T) {
		t.Parallel()
		h := hostileServer(t, nil)
		h.closeWithoutWaiting()
		raw := "POST /v1/invoices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9223372036854775807\r\n\r\n{}"
		replies, err := hostileRaw(t, h.addr(), raw, 1)
		require.Len(t, replies, 1, "an answer (%v)", err)
		hostileEnvelope(t, replies[0], 413, server.CodePayloadTooLarge)
		assert.Zero(t, h.read.Load(), "nothing read")
		hostileServes(t, h)
	})
}

// hostileTrickle writes s on conn one byte every interval until it is written or a write
// fails; it returns when done.
func hostileTrickle(conn net.Conn, s string, interval time.Duration, stop <-chan struct{}) {
	for i := 0; i < len(s); i++ {
		select {
		case <-stop:
			return
		case <-time.After(interval):
		}
		if _, err := conn.Write([]byte{s[i]}); err != nil {
			return
		}
	}
}

// hostileSentListener hands the server each connection only once its client has sent
// something, so that the server's read timeouts run from the client's first bytes rather than
// from the accept — as net/http itself does between the requests of a kept-alive connection.
// A normal client that a busy machine holds up between connecting and writing is then not
// cut off as a slow sender; a slow sender, which sends its first bytes at once, still is.
type hostileSentListener struct {
	net.Listener
	conns   chan net.Conn
	done    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	waiting map[net.Conn]bool // accepted, not yet handed over
}

func hostileListenSent(l net.Listener) *hostileSentListener {
	s := &hostileSentListener{Listener: l, conns: make(chan net.Conn), done: make(chan struct{}),
		waiting: map[net.Conn]bool{}}
	go s.acceptLoop()
	return s
}

func (s *hostileSentListener) acceptLoop() {
	for {
		c, err := s.Listener.Accept()
		if err != nil {
			s.Close()
			return
		}
		s.mu.Lock()
		s.waiting[c] = true
		s.mu.Unlock()
		go s.handOver(c)
	}
}

// handOver waits for c's first bytes (closing it if none come), then hands it to Accept.
func (s *hostileSentListener) handOver(c net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.waiting, c)
		s.mu.Unlock()
	}()
	buf := make([]byte, 4096)
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, _ := c.Read(buf)
	c.SetReadDeadline(time.Time{})
	if n == 0 {
		c.Close()
		return
	}
	select {
	case s.conns <- &hostileSentConn{Conn: c, first: buf[:n]}:
	case <-s.done:
		c.Close()
	}
}

func (s *hostileSentListener) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.done:
		return nil, net.ErrClosed
	}
}

func (s *hostileSentListener) Close() error {
	s.once.Do(func() {
		close(s.done)
		s.mu.Lock()
		for c := range s.waiting {
			c.Close()
		}
		s.mu.Unlock()
	})
	return s.Listener.Close()
}

// hostileSentConn is a connection whose first bytes were already read.
type hostileSentConn struct {
	net.Conn
	first []byte
}

func (c *hostileSentConn) Read(p []byte) (int, error) {
	if len(c.first) > 0 {
		n := copy(p, c.first)
		c.first = c.first[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// CloseWrite lets net/http half-close the connection, as it does a *net.TCPConn.
func (c *hostileSentConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// TestHostileServerSlowSenders: a sender that trickles its headers or its body is cut off by
// the http.Server's ReadHeaderTimeout and ReadTimeout (the README says nothing about them:
// these are the values a deployment would choose, shortened), other requests are served
// meanwhile, and the server then closes the connection. Trickled headers never reach the API:
// net/http closes the connection without an answer, or, when the timeout cut a header line in
// two, answers its own plain-text 400. A trickled body reaches it, which answers 400
// invalid_json, unless the connection is closed first.
func TestHostileServerSlowSenders(t *testing.T) {
	t.Parallel()
	const (
		readHeaderTimeout = 100 * time.Millisecond
		readTimeout       = 200 * time.Millisecond
		interval          = 50 * time.Millisecond // between two trickled bytes
	)
	configure := func(s *httptest.Server) {
		s.Config.ReadHeaderTimeout = readHeaderTimeout
		s.Config.ReadTimeout = readTimeout
		// The timeouts run from each connection's first bytes: the normal requests made
		// meanwhile arrive whole, so that only the trickle meets them, however busy the machine.
		s.Listener = hostileListenSent(s.Listener)
	}
	for _, tc := range []struct {
		name       string
		head, tail string // head is written at once, tail trickled
		reachesAPI bool
	}{
		{"body trickled", "POST /v1/invoices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n",
			strings.Repeat(" ", 200), true},
		{"headers trickled", "POST /v1/invoices HTTP/1.1\r\n", "Host: x\r\nContent-Type: application/json\r\n" + strings.Repeat("X-Slow: 1\r\n", 20), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The trickle cannot end before the timeouts, on any machine: a busy one only
			// trickles more slowly.
			require.Greater(t, time.Duration(len(tc.tail))*interval, 20*readTimeout)
			h := hostileServer(t, configure)
			conn, err := net.Dial("tcp", h.addr())
			require.NoError(t, err)
			defer conn.Close()
			require.NoError(t, conn.SetDeadline(time.Now().Add(20*time.Second)))
			_, err = io.WriteString(conn, tc.head)
			require.NoError(t, err)
			stop := make(chan struct{})
			trickled := make(chan struct{})
			go func() {
				defer close(trickled)
				hostileTrickle(conn, tc.tail, interval, stop)
			}()
			// Served meanwhile.
			hostileServes(t, h)
			replies, err := hostileReadReplies(conn, 1)
			close(stop)
			<-trickled
			assert.Equal(t, 1, h.store.Effects("create_invoice"), "only the normal request executed")
			hostileQuiet(t, h)
			hostileServes(t, h)
			assert.Equal(t, tc.reachesAPI, h.reached(conn.LocalAddr().String()), "the trickled request reached the API")
			switch {
			case len(replies) == 0:
				t.Logf("the connection was closed without an answer: %v", err)
				assert.Error(t, err, "the connection was cut off")
				hostileNotOurDeadline(t, err)
			case tc.reachesAPI:
				t.Logf("the cut-off request was answered %d: %.200s", replies[0].status, replies[0].body)
				hostileEnvelope(t, replies[0], 400, server.CodeInvalidJSON)
			default:
				// net/http's own answer to a request it could not read: the API never saw it.
				r := replies[0]
				t.Logf("net/http answered the cut-off headers %d: %.200s", r.status, r.body)
				assert.Equal(t, 400, r.status)
				assert.Equal(t, "text/plain; charset=utf-8", r.header.Get("Content-Type"))
				assert.True(t, strings.HasPrefix(string(r.body), "400 Bad Request"), "%.200s", r.body)
				hostileNoLeak(t, r.body)
			}
			// Whatever the answer, the server closed the connection after it (net/http does not
			// read a request after one it could not read whole), before our deadline.
			rest, err := io.ReadAll(conn)
			assert.Empty(t, rest, "nothing after the answer")
			hostileNotOurDeadline(t, err)
		})
	}
}

// hostileNotOurDeadline checks that err, which ended a read, is not our own deadline passing:
// the server ended the connection.
func hostileNotOurDeadline(t *testing.T, err error) {
	t.Helper()
	var ne net.Error
	if errors.As(err, &ne) {
		assert.False(t, ne.Timeout(), "the server, not our deadline, ended it: %v", err)
	}
}

// TestHostileServerKeepAlive: many small requests, good and bad, on one connection: every one
// is answered, and the connection stays open throughout.
func TestHostileServerKeepAlive(t *testing.T) {
	t.Parallel()
	h := hostileServer(t, nil)
	c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}, Timeout: 10 * time.Second}
	defer c.CloseIdleConnections()
	type step struct {
		method, path, body string
		status             int
		code               string
	}
	steps := []step{
		{"POST", "/v1/invoices", `{"customer_id":"cus_ada","currency":"usd","amount":1}`, 201, ""},
		{"POST", "/v1/invoices", `{"customer_id":"cus_ada",`, 400, server.CodeInvalidJSON},
		{"POST", "/v1/invoices", `{"amount":1,"amount":2}`, 400, server.CodeInvalidJSON},
		{"POST", "/v1/invoices", `{"customer_id":"x","currency":"yen","amount":0}`, 422, server.CodeInvalidBody},
		{"GET", "/v1/nowhere", "", 404, server.CodeNotFound},
		{"GET", "/v1/reports/revenue?currency=usd", "", 200, ""},
		{"PUT", "/v1/invoices", `{}`, 405, server.CodeMethodNotAllowed},
	}
	const rounds = 60
	for i := range rounds * len(steps) {
		s := steps[i%len(steps)]
		var body io.Reader
		if s.body != "" {
			body = strings.NewReader(s.body)
		}
		req, err := http.NewRequest(s.method, h.srv.URL+s.path, body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		require.NoError(t, err, "request %d", i)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if s.code != "" {
			hostileEnvelope(t, hostileReply{resp.StatusCode, resp.Header, b}, s.status, s.code)
		} else {
			require.Equal(t, s.status, resp.StatusCode, "request %d: %s", i, b)
		}
	}
	assert.EqualValues(t, 1, h.conns.Load(), "one connection for every request")
	assert.Equal(t, rounds, h.store.Effects("create_invoice"))
	hostileQuiet(t, h)

	t.Run("pipelined", func(t *testing.T) {
		var raw strings.Builder
		const n = 200
		for i := range n {
			if i%2 == 0 {
				raw.WriteString(hostileRequest("POST", "/v1/invoices", nil, `{"amount":`))
			} else {
				raw.WriteString(hostileRequest("GET", "/v1/reports/revenue?currency=eur", nil, ""))
			}
		}
		replies, err := hostileRaw(t, h.addr(), raw.String(), n)
		require.NoError(t, err)
		require.Len(t, replies, n)
		for i, r := range replies {
			if i%2 == 0 {
				hostileEnvelope(t, r, 400, server.CodeInvalidJSON)
			} else {
				assert.Equal(t, 200, r.status)
			}
		}
		hostileServes(t, h)
	})
}

// hostileMCP is a raw MCP client: JSON-RPC messages posted to /mcp.
type hostileMCP struct {
	h       *hostileTarget
	session string
}

const hostileMCPVersion = "2025-06-18"

// post sends body to /mcp with the session and protocol headers (version "" sends none).
func (m *hostileMCP) post(t *testing.T, body, version string) hostileReply {
	t.Helper()
	header := http.Header{"Accept": {"application/json, text/event-stream"}}
	if m.session != "" {
		header.Set("Mcp-Session-Id", m.session)
	}
	if version != "" {
		header.Set("Mcp-Protocol-Version", version)
	}
	return hostileSend(t, m.h, "POST", "/mcp", header, strings.NewReader(body))
}

// hostileMCPInit opens an MCP session on h.
func hostileMCPInit(t *testing.T, h *hostileTarget) *hostileMCP {
	t.Helper()
	m := &hostileMCP{h: h}
	r := m.post(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+hostileMCPVersion+
		`","capabilities":{},"clientInfo":{"name":"hostile","version":"0"}}}`, "")
	require.Equal(t, 200, r.status, "%s", r.body)
	m.session = r.header.Get("Mcp-Session-Id")
	require.NotEmpty(t, m.session)
	r = m.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hostileMCPVersion)
	require.Less(t, r.status, 300, "%s", r.body)
	return m
}

// hostileMCPMessages reads the JSON-RPC messages of a reply, JSON or an event stream.
func hostileMCPMessages(t *testing.T, r hostileReply) []map[string]any {
	t.Helper()
	var out []map[string]any
	add := func(data []byte) {
		data = bytes.TrimSpace(data)
		if len(data) == 0 {
			return
		}
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber() // an envelope may echo a number no float64 holds (1e999999)
		if data[0] == '[' {
			var batch []map[string]any
			require.NoError(t, d.Decode(&batch), "%.300s", data)
			out = append(out, batch...)
			return
		}
		var msg map[string]any
		require.NoError(t, d.Decode(&msg), "%.300s", data)
		out = append(out, msg)
	}
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(r.body), "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				add([]byte(d))
			}
		}
		return out
	}
	add(r.body)
	return out
}

// hostileMCPServes checks that the session still answers a tool call, and that REST serves.
func hostileMCPServes(t *testing.T, m *hostileMCP) {
	t.Helper()
	r := m.post(t, `{"jsonrpc":"2.0","id":"ok","method":"tools/call","params":{"name":"revenue_report","arguments":{"currency":"usd"}}}`, hostileMCPVersion)
	require.Equal(t, 200, r.status, "%s", r.body)
	msgs := hostileMCPMessages(t, r)
	require.Len(t, msgs, 1)
	res, _ := msgs[0]["result"].(map[string]any)
	require.NotNil(t, res, "a result: %v", msgs[0])
	assert.NotEqual(t, true, res["isError"], "%v", res)
	hostileServes(t, m.h)
}

// hostileMCPCase is a message posted to /mcp and the answer it must get.
type hostileMCPCase struct {
	name    string
	body    string
	version string // the Mcp-Protocol-Version header; "" sends none
	// want: "4xx" an HTTP 4xx; "rpc" a JSON-RPC error; "tool:CODE" a tool result with
	// isError carrying the envelope with CODE; "ok" results only
	want string
}

// hostileMCPBugs are the known bugs of TestHostileServerMCP's cases, by name: the symptom is
// the tool result's code being code.
var hostileMCPBugs = map[string]struct{ bug, code string }{
	"invalid UTF-8 in arguments": {"the MCP SDK decodes the JSON-RPC message with encoding/json, which replaces " +
		"invalid UTF-8 with U+FFFD before the server sees the arguments (REST refuses it: 400 invalid_json); " +
		"here 422 for the pattern", server.CodeInvalidBody},
}

func hostileMCPCall(args string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"create_invoice","arguments":` + args + `}}`
}

func hostilePings(n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+10)
	}
	b.WriteString("]")
	return b.String()
}

// TestHostileServerMCP: garbage JSON-RPC on /mcp is answered with a JSON-RPC error or a 4xx,
// never a panic or a 5xx, and the server serves on. Answers the MCP SDK writes itself (plain
// text 4xx, JSON-RPC errors) are not envelopes; tool results are.
func TestHostileServerMCP(t *testing.T) {
	t.Parallel()
	v := hostileMCPVersion
	tests := []hostileMCPCase{
		{"invalid JSON", `{"jsonrpc":"2.0","id":1,`, v, "4xx"},
		{"not JSON-RPC", `{"hello":"world"}`, v, "4xx"},
		{"a JSON string", `"tools/call"`, v, "4xx"},
		{"null", `null`, v, "4xx"},
		{"an empty batch", `[]`, v, "4xx"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, v, "4xx"},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"no/such"}`, v, "4xx"},
		{"params a string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`, v, "rpc"},
		{"a batch of 10,000 (2025-06-18)", hostilePings(10_000), v, "4xx"},
		{"a batch of 10,000 (no version header)", hostilePings(10_000), "", "ok"},
		{"a 10,000-digit id", `{"jsonrpc":"2.0","id":1` + strings.Repeat("0", 9999) + `,"method":"ping"}`, v, "4xx"},
		{"id 1e999999", `{"jsonrpc":"2.0","id":1e999999,"method":"ping"}`, v, "4xx"},
		{"id -0", `{"jsonrpc":"2.0","id":-0,"method":"ping"}`, v, "ok"},
		{"a 100 KB string id", `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 100<<10) + `","method":"ping"}`, v, "ok"},
		{"an object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, v, "4xx"},
		{"100,000 [", strings.Repeat("[", 100_000), v, "4xx"},
		{"arguments nested 5,000 deep", hostileMCPCall(`{"memo":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`), v, "4xx"},
		{"arguments nested 500 deep", hostileMCPCall(`{"customer_id":"cus_ada","currency":"usd","amount":1,"memo":` +
			strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}`), v, "tool:" + server.CodeInvalidBody},
		{"amount 1e999999", hostileMCPCall(`{"customer_id":"cus_ada","currency":"usd","amount":1e999999}`), v, "tool:" + server.CodeInvalidBody},
		{"amount a 10,000-digit integer", hostileMCPCall(`{"customer_id":"cus_ada","currency":"usd","amount":9` + strings.Repeat("9", 9999) + `}`), v, "tool:" + server.CodeInvalidBody},
		{"arguments an array", hostileMCPCall(`[1,2]`), v, "tool:" + server.CodeInvalidBody},
		{"arguments a string", hostileMCPCall(`"x"`), v, "tool:" + server.CodeInvalidBody},
		{"invalid UTF-8 in arguments", hostileMCPCall("{\"customer_id\":\"cus_\xff\",\"currency\":\"usd\",\"amount\":1}"), v, "tool:" + server.CodeInvalidJSON},
		{"a duplicate argument", hostileMCPCall(`{"customer_id":"cus_ada","currency":"usd","amount":1,"amount":999999999}`), v, "tool:" + server.CodeInvalidJSON},
		{"a 10,000-character tool name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + strings.Repeat("x", 10000) + `"}}`, v, "rpc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := hostileServer(t, nil)
			m := hostileMCPInit(t, h)
			r := m.post(t, tc.body, tc.version)
			t.Logf("answered %d %s: %.150q", r.status, r.header.Get("Content-Type"), r.body)
			assert.Zero(t, h.store.Effects("create_invoice"))
			hostileQuiet(t, h)
			hostileMCPServes(t, m)
			hostileNoTrace(t, r.body)
			assert.Less(t, r.status, 500, "never a 5xx: %.300s", r.body)
			switch kind, code, _ := strings.Cut(tc.want, ":"); kind {
			case "4xx":
				assert.GreaterOrEqual(t, r.status, 400, "%.300s", r.body)
			case "rpc":
				require.Equal(t, 200, r.status, "%.300s", r.body)
				msgs := hostileMCPMessages(t, r)
				require.Len(t, msgs, 1)
				assert.NotNil(t, msgs[0]["error"], "a JSON-RPC error: %.300v", msgs[0])
			case "tool":
				require.Equal(t, 200, r.status, "%.300s", r.body)
				msgs := hostileMCPMessages(t, r)
				require.Len(t, msgs, 1)
				res, _ := msgs[0]["result"].(map[string]any)
				require.NotNil(t, res, "a tool result: %.300v", msgs[0])
				assert.Equal(t, true, res["isError"])
				sc, err := json.Marshal(res["structuredContent"])
				require.NoError(t, err)
				hostileNoLeak(t, sc)
				env, ok := remedy.Parse(0, nil, sc)
				require.True(t, ok, "%s", sc)
				if known, ok := hostileMCPBugs[tc.name]; ok && env.Code == known.code {
					t.Skipf("bug: %s", known.bug)
				}
				assert.Equal(t, code, env.Code)
				hostileIssuesStated(t, env)
			case "ok":
				require.Equal(t, 200, r.status, "%.300s", r.body)
				msgs := hostileMCPMessages(t, r)
				require.NotEmpty(t, msgs)
				for _, msg := range msgs {
					assert.Nil(t, msg["error"], "%.300v", msg)
				}
			}
		})
	}
}

// TestHostileServerMCPDecoderMessages: what /mcp answers to malformed JSON-RPC should not
// carry Go decoder messages and type names (the contract's "no internal message").
func TestHostileServerMCPDecoderMessages(t *testing.T) {
	t.Parallel()
	// The SDK's plain-text refusals are replaced by the server's envelope; a JSON-RPC error
	// the SDK writes inside a result stream still carries its decoder's words.
	const bug = "a JSON-RPC error written by the MCP SDK (-32602 for params that are not an object) carries " +
		"the Go decoder's message and the SDK's type names"
	for _, tc := range []struct{ name, body string }{
		{"a JSON string", `"tools/call"`},
		{"id 1e999999", `{"jsonrpc":"2.0","id":1e999999,"method":"ping"}`},
		{"params a string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`},
		{"100,000 [", strings.Repeat("[", 100_000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := hostileServer(t, nil)
			m := hostileMCPInit(t, h)
			r := m.post(t, tc.body, hostileMCPVersion)
			assert.Less(t, r.status, 500)
			if tc.name == "params a string" && bytes.Contains(r.body, []byte("json: ")) {
				t.Skipf("bug: %s: %d %.200s", bug, r.status, r.body)
			}
			hostileNoLeak(t, r.body)
		})
	}
}

// TestHostileServerMCPEchoedNumber: a failure that echoes what it received must stay
// decodable by a standard MCP client: a number like 1e999999, which no double holds, is not
// echoed in issues[].received, since the go-sdk client (encoding/json into any) could not
// decode the result and the agent would get a transport error instead of the envelope.
func TestHostileServerMCPEchoedNumber(t *testing.T) {
	t.Parallel()
	h := hostileServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "hostile", Version: "0"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: h.srv.URL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer cs.Close()
	for _, amount := range []string{"1e999999", "-1e400"} {
		t.Run(amount, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_invoice",
				Arguments: json.RawMessage(`{"customer_id":"cus_ada","currency":"usd","amount":` + amount + `}`)})
			require.NoError(t, err)
			require.True(t, res.IsError)
			sc, err := json.Marshal(res.StructuredContent)
			require.NoError(t, err)
			env, ok := remedy.Parse(0, nil, sc)
			require.True(t, ok)
			assert.Equal(t, server.CodeInvalidBody, env.Code)
		})
	}
	assert.Zero(t, h.store.Effects("create_invoice"))
}
