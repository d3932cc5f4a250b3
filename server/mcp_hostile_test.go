package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/storetest"
)

// The requests of this file speak MCP's streamable HTTP transport by hand, as a hostile client
// does: the SDK's client would not send what they send.

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// mcpPost sends one JSON-RPC body to the MCP endpoint, with header pairs added.
func mcpPost(t testing.TB, c *http.Client, url, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

// openSession initializes a session by hand and returns its id.
func openSession(t testing.TB, url string, header ...string) string {
	t.Helper()
	status, h, body := mcpPost(t, nil, url, initializeBody, header...)
	require.Equal(t, 200, status, "%s", body)
	id := h.Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	status, _, body = mcpPost(t, nil, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		append([]string{"Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-06-18"}, header...)...)
	require.Equal(t, 202, status, "%s", body)
	return id
}

// rpcMessages are the JSON-RPC messages of an answer, as a JSON body or as event-stream data.
func rpcMessages(t testing.TB, body []byte) []map[string]json.RawMessage {
	t.Helper()
	var out []map[string]json.RawMessage
	text := string(body)
	if !strings.HasPrefix(strings.TrimSpace(text), "{") {
		var datas []string
		for line := range strings.SplitSeq(text, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				datas = append(datas, d)
			}
		}
		text = strings.Join(datas, "\n")
	}
	dec := json.NewDecoder(strings.NewReader(text))
	for dec.More() {
		var m map[string]json.RawMessage
		require.NoError(t, dec.Decode(&m), "%s", body)
		out = append(out, m)
	}
	return out
}

// noGoNames fails when text holds what only Go's decoder or the SDK's types say.
func noGoNames(t testing.TB, text string) {
	t.Helper()
	for _, s := range []string{"mcp.", "Go struct", "of type", "unmarshal", "interface {}", "json:", "Raw"} {
		assert.NotContains(t, text, s, "no Go type names or decoder text")
	}
}

// Issue 22, row 8: with an Authenticator, no JSON-RPC method of the MCP endpoint answers a
// caller without credentials — initialize and tools/list included, which the SDK answered
// before the tool's pipeline ever ran.
func TestMCPNeedsCredentialsForEveryMethod(t *testing.T) {
	t.Parallel()
	_, _, srv := billingServer(t, server.WithAuthenticator(byBearer))

	status, h, body := mcpPost(t, nil, srv.URL, initializeBody)
	require.Equal(t, 401, status, "initialize without credentials: %s", body)
	env := envelope(t, status, h, body)
	assert.Equal(t, "unauthorized", env.Code)
	assert.False(t, env.Retryable)
	assert.Equal(t, "Bearer", h.Get("WWW-Authenticate"))
	assert.Empty(t, h.Get("Mcp-Session-Id"), "no session opened")

	// A session opened with credentials: its id alone lists nothing.
	id := openSession(t, srv.URL, "Authorization", "Bearer ann")
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_invoice","arguments":{"id":"in_1"}}}`,
	} {
		status, h, body = mcpPost(t, nil, srv.URL, msg, "Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-06-18")
		require.Equal(t, 401, status, "%s: %s", msg, body)
		assert.Equal(t, "unauthorized", envelope(t, status, h, body).Code)
		assert.NotContains(t, string(body), "get_invoice", "nothing of the tools is told")
	}
	status, _, body = mcpPost(t, nil, srv.URL, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`,
		"Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-06-18", "Authorization", "Bearer ann")
	require.Equal(t, 200, status)
	assert.Contains(t, string(body), "get_invoice", "with credentials, the list")
}

// Issue 22, row 6: an event stream (a GET of the MCP path) without credentials is answered at
// once, under the http.Server's limits, instead of being held open past them.
func TestMCPStreamsOpenOnlyAfterAuthentication(t *testing.T) {
	t.Parallel()
	api, _, err := billing.New(server.WithAuthenticator(byBearer))
	require.NoError(t, err)
	const limit = 300 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: api, ReadTimeout: limit, WriteTimeout: limit}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	url := "http://" + ln.Addr().String()
	const streams = 20
	ids := make(chan string, streams)
	for range streams {
		ids <- openSession(t, url, "Authorization", "Bearer ann")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*limit)
	defer cancel()
	var wg sync.WaitGroup
	results := make(chan string, streams)
	for range streams {
		id := <-ids // a session of its own: a session has one event stream
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", url+"/mcp", nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				results <- "error: " + err.Error()
				return
			}
			defer resp.Body.Close()
			if _, err := io.ReadAll(resp.Body); err != nil {
				results <- fmt.Sprintf("%d, still open after %v: %v", resp.StatusCode, 20*limit, err)
				return
			}
			results <- fmt.Sprint(resp.StatusCode)
		})
	}
	wg.Wait()
	close(results)
	for r := range results {
		// 401, or 429 once the address has failed more often than the limit on failures allows.
		assert.Contains(t, []string{"401", "429"}, r, "an unauthenticated event stream is refused and closed")
	}
}

// Issue 22, row 9: a JSON-RPC message whose params have the wrong shape is answered in plain
// words, without the Go decoder's text or the SDK's type names, and with the invalid-params
// code.
func TestMCPDecodeErrorsInPlainWords(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name string
		conf server.MCPOptions
	}{{"event stream", server.MCPOptions{}}, {"JSON", server.MCPOptions{JSONResponse: true}}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			_, _, srv := billingServer(t, server.WithMCP(mode.conf))
			id := openSession(t, srv.URL)
			for _, c := range []struct {
				body, session, want string
			}{
				{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":{"a":1}}}`, id, "params.name must be a string, not an object"},
				{`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":7}}`, id, "params._meta must be an object, not a number"},
				{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":7,"name":"get_invoice"}}`, id, "params._meta must be an object"},
				{`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":7,"capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, "", "params.protocolVersion must be a string, not a number"},
			} {
				header := []string{"Mcp-Protocol-Version", "2025-06-18"}
				if c.session != "" {
					header = append(header, "Mcp-Session-Id", c.session)
				}
				status, _, body := mcpPost(t, nil, srv.URL, c.body, header...)
				require.Equal(t, 200, status, "%s", body)
				msgs := rpcMessages(t, body)
				require.Len(t, msgs, 1, "%s", body)
				var e struct {
					Code    int64  `json:"code"`
					Message string `json:"message"`
				}
				require.NoError(t, json.Unmarshal(msgs[0]["error"], &e), "%s", body)
				assert.Equal(t, int64(-32602), e.Code, "invalid params")
				assert.Contains(t, e.Message, c.want)
				noGoNames(t, e.Message)
				noGoNames(t, string(body))
			}
		})
	}
}

// countingAuth is byBearer counting its calls.
func countingAuth(calls *atomic.Int64) server.Authenticator {
	return server.AuthenticatorFunc(func(r *http.Request, op *server.Operation) (server.Principal, error) {
		calls.Add(1)
		return byBearer(r, op)
	})
}

// Issue 22, row 10: wrong credentials are limited by client address, on REST and on the MCP
// endpoint, before the Authenticator is asked; the principal's own rate limit could not see
// them (it is keyed by the principal, known only after authentication).
func TestAuthFailuresAreLimited(t *testing.T) {
	t.Parallel()
	for _, surface := range []string{"REST", "MCP"} {
		t.Run(surface, func(t *testing.T) {
			t.Parallel()
			clock := storetest.NewClock() // no bucket refills unless the test says so
			var calls atomic.Int64
			_, _, srv := billingServer(t, server.WithClock(clock.Now), server.WithAuthenticator(countingAuth(&calls)),
				server.WithRateLimit(server.RateLimitOptions{PerSecond: 1, Burst: 1}))
			send := func(token string) (int, http.Header, []byte) {
				if surface == "REST" {
					return do(t, "GET", srv.URL+"/v1/invoices/in_1", "", "", "Authorization", token)
				}
				return mcpPost(t, nil, srv.URL, initializeBody, "Authorization", token)
			}
			// Each guess is a credential byBearer refuses: not a bearer token.
			var refused, limited int
			for i := range 200 {
				status, h, body := send(fmt.Sprintf("guess%d", i))
				switch status {
				case 401:
					refused++
				case 429:
					limited++
					env := envelope(t, status, h, body)
					assert.Equal(t, "rate_limited", env.Code)
					assert.True(t, env.Retryable)
					assert.NotEmpty(t, h.Get("Retry-After"))
				default:
					t.Fatalf("answer %d: %s", status, body)
				}
			}
			assert.Equal(t, server.DefaultAuthFailureBurst, refused, "the burst of failures, then none")
			assert.Equal(t, 200-server.DefaultAuthFailureBurst, limited)
			assert.Equal(t, int64(server.DefaultAuthFailureBurst), calls.Load(), "a limited request never reaches the Authenticator")

			// Once a failure's worth of time has passed, the client may try once more.
			clock.Advance(time.Second)
			status, _, _ := send("Bearer ann")
			assert.NotEqual(t, 429, status, "the bucket refilled")
		})
	}
}

// TestAuthSuccessesNeverLimited: good credentials, many at once from one address, never spend
// the failure bucket, however small it is: only failures do.
func TestAuthSuccessesNeverLimited(t *testing.T) {
	t.Parallel()
	const n = 64
	// Good credentials wait inside the Authenticator until all n are there (or a while has
	// passed): the requests are in authentication at once, whatever the machine's speed.
	var arrived atomic.Int64
	all := make(chan struct{})
	auth := server.AuthenticatorFunc(func(r *http.Request, op *server.Operation) (server.Principal, error) {
		if op != nil && r.Header.Get("Authorization") == "Bearer ann" {
			if arrived.Add(1) == n {
				close(all)
			}
			select {
			case <-all:
			case <-time.After(10 * time.Second):
			}
		}
		return byBearer.Authenticate(r, op)
	})
	clock := storetest.NewClock()
	_, _, srv := billingServer(t, server.WithClock(clock.Now), server.WithAuthenticator(auth),
		server.WithAuthFailureLimit(server.AuthFailureLimitOptions{PerSecond: 1, Burst: 1}))
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range statuses {
		wg.Go(func() {
			statuses[i], _, _ = do(t, "GET", srv.URL+"/v1/invoices/in_1", "", "", "Authorization", "Bearer ann")
		})
	}
	wg.Wait()
	assert.Equal(t, int64(n), arrived.Load(), "every good request reached the Authenticator")
	for i, status := range statuses {
		assert.NotEqual(t, 429, status, "request %d", i)
		assert.NotEqual(t, 401, status, "request %d", i)
	}
	status, _, _ := do(t, "GET", srv.URL+"/v1/invoices/in_1", "", "")
	assert.Equal(t, 401, status, "the one failure the bucket holds")
	status, _, _ = do(t, "GET", srv.URL+"/v1/invoices/in_1", "", "", "Authorization", "Bearer ann")
	assert.Equal(t, 429, status, "then even good credentials wait")
}

// byClientHeader authenticates nobody and limits failures per X-Client header, to show a key
// function that tells clients apart.
func TestAuthFailureLimitKey(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock()
	_, _, srv := billingServer(t, server.WithClock(clock.Now), server.WithAuthenticator(byBearer),
		server.WithAuthFailureLimit(server.AuthFailureLimitOptions{PerSecond: 1, Burst: 2, Key: func(r *http.Request) string { return r.Header.Get("X-Client") }}))
	statuses := func(client string) []int {
		var out []int
		for range 3 {
			status, _, _ := do(t, "GET", srv.URL+"/v1/invoices/in_1", "", "", "X-Client", client)
			out = append(out, status)
		}
		return out
	}
	assert.Equal(t, []int{401, 401, 429}, statuses("a"))
	assert.Equal(t, []int{401, 401, 429}, statuses("b"), "another key has its own bucket")
	assert.Equal(t, []int{401, 401, 401}, statuses(""), "an empty key is not limited")
	status, _, _ := do(t, "GET", srv.URL+"/v1/invoices/in_1", "", "", "X-Client", "c", "Authorization", "Bearer ann")
	assert.NotEqual(t, 429, status)
}

// Issue 22, row 15: the SDK's refusals are answered with the envelope that says what is
// wrong: the right status and code, not retryable when sending the request again cannot
// help, the supported protocol versions, an Allow header its message agrees with.
func TestMCPRefusalsAreHonest(t *testing.T) {
	t.Parallel()
	_, _, stateful := billingServer(t)
	_, _, stateless := billingServer(t, server.WithMCP(server.MCPOptions{Stateless: true}))
	for _, c := range []struct {
		name, url, method, body string
		header                  []string
		status                  int
		code                    string
		says                    []string
	}{
		{name: "a Host that is not loopback on a loopback address", url: stateful.URL, method: "POST", body: initializeBody,
			header: []string{"Host", "evil.example"}, status: 403, code: "forbidden", says: []string{"Host"}},
		{name: "an unsupported protocol version", url: stateful.URL, method: "POST", body: initializeBody,
			header: []string{"Mcp-Protocol-Version", "1999-01-01"}, status: 400, code: "invalid_request", says: []string{"2025-11-25", "2025-06-18"}},
		{name: "a POST that does not accept an event stream", url: stateful.URL, method: "POST", body: initializeBody,
			header: []string{"Accept", "application/json"}, status: 400, code: "invalid_request", says: []string{"text/event-stream"}},
		{name: "a GET that does not accept an event stream", url: stateful.URL, method: "GET",
			header: []string{"Accept", "application/json", "Mcp-Session-Id", "x"}, status: 400, code: "invalid_request", says: []string{"text/event-stream"}},
		{name: "a GET without a session", url: stateful.URL, method: "GET",
			header: []string{"Accept", "text/event-stream"}, status: 400, code: "invalid_request", says: []string{"Mcp-Session-Id"}},
		{name: "an unknown session", url: stateful.URL, method: "POST", body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
			header: []string{"Mcp-Session-Id", "nope"}, status: 404, code: "not_found", says: []string{"initialize"}},
		{name: "a GET in stateless mode", url: stateless.URL, method: "GET",
			header: []string{"Accept", "text/event-stream"}, status: 405, code: "method_not_allowed", says: []string{"POST"}},
		{name: "a body that is not JSON", url: stateful.URL, method: "POST", body: "hello",
			header: []string{"Content-Type", "text/plain"}, status: 415, code: "unsupported_media_type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, c.url+"/mcp", strings.NewReader(c.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for i := 0; i+1 < len(c.header); i += 2 {
				if c.header[i] == "Host" {
					req.Host = c.header[i+1]
					continue
				}
				req.Header.Set(c.header[i], c.header[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			require.Equal(t, c.status, resp.StatusCode, "%s", body)
			env := envelope(t, resp.StatusCode, resp.Header, body)
			assert.Equal(t, c.code, env.Code, "%s", body)
			assert.False(t, env.Retryable, "sending it again unchanged cannot succeed")
			assert.NotContains(t, env.Message, "not a valid MCP message")
			for _, s := range c.says {
				assert.Contains(t, env.Message, s)
			}
			if c.status == 405 {
				assert.Equal(t, "POST", resp.Header.Get("Allow"))
				assert.NotContains(t, env.Message, "GET", "the message agrees with Allow")
			}
			assert.NotEmpty(t, env.TraceID)
			noGoNames(t, string(body))
		})
	}
}

// MCPOptions.AllowedHosts: the endpoint answers to the names listed, and to no other.
func TestMCPAllowedHosts(t *testing.T) {
	t.Parallel()
	_, _, srv := billingServer(t, server.WithMCP(server.MCPOptions{AllowedHosts: []string{"api.example.com"}}))
	for host, want := range map[string]int{"api.example.com": 200, "API.example.com:443": 200, "127.0.0.1": 403, "evil.example": 403} {
		req, err := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(initializeBody))
		require.NoError(t, err)
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, host)
	}
}

func TestHostAllowed(t *testing.T) {
	t.Parallel()
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	public := &net.TCPAddr{IP: net.IPv4(203, 0, 113, 7), Port: 443}
	for _, c := range []struct {
		host  string
		local net.Addr
		hosts []string
		want  bool
	}{
		{"localhost:8080", loopback, nil, true},
		{"127.0.0.1:8080", loopback, nil, true},
		{"[::1]:8080", loopback, nil, true},
		{"evil.example", loopback, nil, false},
		{"evil.example", public, nil, true},
		{"", public, nil, false},
		{"api.example.com", public, []string{"api.example.com"}, true},
		{"api.example.com:8443", public, []string{"api.example.com:443"}, false},
		{"api.example.com:443", public, []string{"api.example.com:443"}, true},
		{"other.example", public, []string{"api.example.com"}, false},
		{"other.example", public, []string{"*"}, true},
	} {
		r, _ := http.NewRequest("GET", "http://x/", nil)
		r.Host = c.host
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, c.local))
		assert.Equal(t, c.want, server.HostAllowed(r, c.hosts), "%s on %v with %v", c.host, c.local, c.hosts)
	}
}

func TestClientAddr(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"192.0.2.1:5000":             "192.0.2.1",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"":                           "",
	} {
		r := &http.Request{RemoteAddr: addr, Header: http.Header{"X-Forwarded-For": {"198.51.100.9"}}}
		assert.Equal(t, want, server.ClientAddr(r), addr)
	}
}

// heapAlloc is the heap's live bytes after two collections.
func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func liveSessions(api *server.API) int {
	n := 0
	for range api.MCPServer().Sessions() {
		n++
	}
	return n
}

// Issue 22, row 5: initialize calls without end never hold more sessions than
// MCPOptions.MaxSessions at once (the rest are refused 503 with Retry-After), and the sessions
// nobody uses are closed after the idle timeout, their memory freed: a second flood leaves the
// heap where the first left it. Not parallel: it measures the heap.
//
// What stays after the first flood is the runtime's: it keeps the descriptors of exited
// goroutines for reuse, as many as ran at once, which the cap bounds; the second flood reuses
// them.
func TestMCPSessionsCappedAndFreed(t *testing.T) {
	const maxSessions, attempts = 1000, 3000
	api, _, err := billing.New(server.WithMCP(server.MCPOptions{MaxSessions: maxSessions, SessionIdleTimeout: time.Second}))
	require.NoError(t, err)
	srv := newLocalServer(t, api)
	tr := &http.Transport{MaxIdleConnsPerHost: 8}
	client := &http.Client{Transport: tr}
	api.MCPServer() // built before the baseline
	base := heapAlloc()

	flood := func(round int) (held, left int64) {
		var opened, refused atomic.Int64
		var maxLive atomic.Int64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() { // the invariant, sampled while the flood lasts
			defer close(sampled)
			for {
				if n := int64(liveSessions(api)); n > maxLive.Load() {
					maxLive.Store(n)
				}
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
		var wg sync.WaitGroup
		work := make(chan struct{})
		for range 8 {
			wg.Go(func() {
				for range work {
					status, h, body := mcpPost(t, client, srv, initializeBody)
					switch status {
					case 200:
						opened.Add(1)
					case 503:
						refused.Add(1)
						env := envelope(t, status, h, body)
						assert.Equal(t, "unavailable", env.Code)
						assert.True(t, env.Retryable)
						assert.NotEmpty(t, h.Get("Retry-After"))
					default:
						t.Errorf("answer %d: %s", status, body)
					}
				}
			})
		}
		for range attempts {
			work <- struct{}{}
		}
		close(work)
		wg.Wait()
		close(stop)
		<-sampled
		tr.CloseIdleConnections()
		live := liveSessions(api)
		full := heapAlloc()
		held = full - base
		t.Logf("flood %d: %d initialize calls, %d sessions opened, %d refused, at most %d live; heap %d KiB, %d KiB over the baseline with %d sessions live",
			round, attempts, opened.Load(), refused.Load(), maxLive.Load(), full>>10, held>>10, live)
		require.LessOrEqual(t, maxLive.Load(), int64(maxSessions), "never more sessions than the cap")
		require.LessOrEqual(t, live, maxSessions)
		require.Equal(t, int64(attempts), opened.Load()+refused.Load())

		// Idle, every session is closed: poll for it, with room for a slow machine.
		deadline := time.Now().Add(30 * time.Second)
		for liveSessions(api) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		require.Zero(t, liveSessions(api), "idle sessions are closed")
		left = heapAlloc() - base
		t.Logf("flood %d, after the idle timeout: %d KiB over the baseline", round, left>>10)
		return held, left
	}
	held1, left1 := flood(1)
	held2, left2 := flood(2)
	require.Greater(t, held1, left1, "the closed sessions' memory is freed")
	require.Greater(t, held2, left2, "the closed sessions' memory is freed")
	assert.Less(t, left2-left1, min(held1, held2)/4, "a second flood leaves nothing more behind")

	// The places are free again.
	status, _, body := mcpPost(t, client, srv, initializeBody)
	assert.Equal(t, 200, status, "%s", body)
}

// newLocalServer serves h on 127.0.0.1 and returns its URL.
func newLocalServer(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// A session is its principal's: another caller who learned its id is refused it, on
// messages and on the event stream, and the session serves its own principal on.
func TestMCPSessionBoundToPrincipal(t *testing.T) {
	t.Parallel()
	_, _, srv := billingServer(t, server.WithAuthenticator(byBearer))
	id := openSession(t, srv.URL, "Authorization", "Bearer ann")
	session := []string{"Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-06-18"}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

	status, h, body := mcpPost(t, nil, srv.URL, list, append(session, "Authorization", "Bearer bob")...)
	require.Equal(t, 403, status, "%s", body)
	env := envelope(t, status, h, body)
	assert.Equal(t, "forbidden", env.Code)
	assert.False(t, env.Retryable)

	req, err := http.NewRequest("GET", srv.URL+"/mcp", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer bob")
	for i := 0; i < len(session); i += 2 {
		req.Header.Set(session[i], session[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 403, resp.StatusCode, "bob cannot listen on ann's stream")

	status, _, body = mcpPost(t, nil, srv.URL, list, append(session, "Authorization", "Bearer ann")...)
	require.Equal(t, 200, status, "%s", body)
	assert.Contains(t, string(body), "create_invoice", "ann's session serves ann")
}

// One principal holds at most MCPOptions.SessionsPerPrincipal sessions: past it, its
// initialize is refused (503, retryable, with Retry-After) and another's is not.
func TestMCPSessionsPerPrincipal(t *testing.T) {
	t.Parallel()
	_, _, srv := billingServer(t, server.WithAuthenticator(byBearer),
		server.WithMCP(server.MCPOptions{SessionsPerPrincipal: 3}))
	for range 3 {
		openSession(t, srv.URL, "Authorization", "Bearer ann")
	}
	status, h, body := mcpPost(t, nil, srv.URL, initializeBody, "Authorization", "Bearer ann")
	require.Equal(t, 503, status, "%s", body)
	env := envelope(t, status, h, body)
	assert.Equal(t, "unavailable", env.Code)
	assert.True(t, env.Retryable)
	assert.NotEmpty(t, h.Get("Retry-After"))
	assert.Contains(t, env.Message, "this caller")

	openSession(t, srv.URL, "Authorization", "Bearer bob")
}
