package reliability_test

// A catalogue of hostile responses against the client side: remedy.Parse, ParseResponse and
// Classify on bodies and headers built to break them, and Client.Call against servers on
// loopback that answer with such bodies, lie about lengths, stall, or ask for absurd waits.
// Every case checks that nothing panics, that what is read stays within its bound, and that
// every wait the loop takes lies within Limits.MaxWait and is never negative.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/margin"
	"github.com/remedy-go/remedy/retryable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileMaxDuration is what a wait too large for a Duration saturates at.
const hostileMaxDuration = time.Duration(math.MaxInt64)

// hostileCatch runs f and returns what it panicked with, if it did, so that a panic fails
// the case instead of killing the test binary.
func hostileCatch(f func()) (panicked any) {
	defer func() { panicked = recover() }()
	f()
	return nil
}

// hostileParseCase is a response and what Parse must make of it.
type hostileParseCase struct {
	name    string
	status  int
	header  http.Header
	body    string
	ok      bool
	dialect remedy.Dialect
	code    string
	after   time.Duration // the RetryAfter wanted; -1: whatever it is, as long as it is >= 0
	bug     string        // a known bug: the case is skipped while its symptom shows
}

func hostileParseCases() []hostileParseCase {
	const n = 100_000
	tenK := "1" + strings.Repeat("0", 9999)
	return []hostileParseCase{
		// Nesting.
		{name: "100,000 unclosed [ in a 500", status: 500, body: strings.Repeat("[", n),
			ok: true, dialect: remedy.DialectUnstructured, code: "internal_server_error"},
		{name: "100,000 [ closed in a 200", status: 200, body: strings.Repeat("[", n) + strings.Repeat("]", n), ok: false},
		{name: `100,000 {"a": levels without a status`, status: 0,
			body: strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n), ok: false},
		{name: `100,000 {"a": levels in a 503`, status: 503,
			body: strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n),
			ok:   true, dialect: remedy.DialectUnstructured, code: "service_unavailable"},
		{name: "100,000 [ inside the error object", status: 429,
			body: `{"error":{"code":"slow_down","schema":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`,
			ok:   true, dialect: remedy.DialectUnstructured, code: "too_many_requests"},
		// Numbers.
		{name: "retry_after_ms 1e999999", status: 503, body: `{"error":{"code":"x","retry_after_ms":1e999999}}`,
			ok: true, dialect: remedy.DialectAgentSpec, code: "x", after: hostileMaxDuration},
		{name: "retry_after_ms 1e300", status: 503, body: `{"error":{"code":"x","retry_after_ms":1e300}}`,
			ok: true, dialect: remedy.DialectAgentSpec, code: "x", after: hostileMaxDuration},
		{name: "retry_after_ms -1e999999", status: 503, body: `{"error":{"code":"x","retry_after_ms":-1e999999}}`,
			ok: true, dialect: remedy.DialectAgentSpec, code: "x", after: 0},
		{name: "retry_after_ms -0", status: 503, body: `{"error":{"code":"x","retry_after_ms":-0}}`,
			ok: true, dialect: remedy.DialectAgentSpec, code: "x", after: 0},
		{name: "retry_after_ms 1e-999999", status: 503, body: `{"error":{"code":"x","retry_after_ms":1e-999999}}`,
			ok: true, dialect: remedy.DialectAgentSpec, code: "x", after: 0},
		{name: "retry_after_ms a 10,000-digit integer", status: 503, body: `{"error":{"code":"x","retry_after_ms":` + tenK + `}}`,
			ok: true, dialect: remedy.DialectUnstructured, code: "service_unavailable"},
		{name: "statusCode 1e999999 without a status", status: 0, body: `{"error":{"statusCode":1e999999,"code":"x"}}`,
			ok: true, dialect: remedy.DialectAgent, code: "x"},
		{name: "statusCode 2^32+400 without a status (no wrap to 400)", status: 0,
			body: `{"error":{"statusCode":4294967696,"code":"x"}}`, ok: true, dialect: remedy.DialectAgent, code: "x"},
		{name: "statusCode -0 without a status", status: 0, body: `{"error":{"statusCode":-0,"code":"x"}}`,
			ok: true, dialect: remedy.DialectAgent, code: "x"},
		{name: "JSON-RPC error code 1e999999", status: 0, body: `{"jsonrpc":"2.0","id":1,"error":{"code":1e999999,"message":"m"}}`,
			ok: true, dialect: remedy.DialectJSONRPC, code: "1e999999"},
		{name: "Kubernetes retryAfterSeconds 1e999999", status: 503,
			body: `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503,"details":{"retryAfterSeconds":1e999999}}`,
			ok:   true, dialect: remedy.DialectKubernetes, code: "ServiceUnavailable", after: hostileMaxDuration},
		{name: `Google retryDelay "1e999999s"`, status: 503,
			body: `{"error":{"code":503,"status":"UNAVAILABLE","message":"d","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1e999999s"}]}}`,
			ok:   true, dialect: remedy.DialectGoogle, code: "UNAVAILABLE", after: hostileMaxDuration},
		{name: "Google retryDelay {seconds: 2^63-1, nanos: 999999999}", status: 503,
			body: `{"error":{"code":503,"status":"UNAVAILABLE","message":"d","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{"seconds":9223372036854775807,"nanos":999999999}}]}}`,
			ok:   true, dialect: remedy.DialectGoogle, code: "UNAVAILABLE", after: hostileMaxDuration},
		{name: "Google retryDelay {seconds: 9223372036, nanos: 999999999}", status: 503,
			body: `{"error":{"code":503,"status":"UNAVAILABLE","message":"d","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{"seconds":9223372036,"nanos":999999999}}]}}`,
			ok:   true, dialect: remedy.DialectGoogle, code: "UNAVAILABLE", after: hostileMaxDuration},
		// Invalid UTF-8.
		{name: "invalid UTF-8 in the message", status: 400, body: "{\"error\":{\"code\":\"x\",\"message\":\"caf\xe9\"}}",
			ok: true, dialect: remedy.DialectUnstructured, code: "bad_request"},
		{name: "invalid UTF-8 in the code", status: 409, body: "{\"error\":{\"code\":\"\xff\xfe\"}}",
			ok: true, dialect: remedy.DialectUnstructured, code: "conflict"},
		{name: "invalid UTF-8 in a key", status: 422, body: "{\"error\":{\"co\xc0de\":\"x\",\"message\":\"m\"}}",
			ok: true, dialect: remedy.DialectUnstructured, code: "unprocessable_entity"},
		{name: "a UTF-16 surrogate in UTF-8 in a 200", status: 200, body: "{\"errors\":[{\"message\":\"\xed\xa0\x80\"}]}", ok: false},
		// A byte order mark: RFC 8259 §8.1 lets a parser ignore it.
		{name: "a BOM before the envelope", status: 400, body: "\xef\xbb\xbf" + `{"error":{"code":"bom","message":"m"}}`,
			ok: true, dialect: remedy.DialectAgentSpec, code: "bom"},
		{name: "two BOMs", status: 400, body: "\xef\xbb\xbf\xef\xbb\xbf" + `{"error":{"code":"bom","message":"m"}}`,
			ok: true, dialect: remedy.DialectUnstructured, code: "bad_request"},
	}
}

// TestHostileClientParse: Parse and Classify on bodies built to break them never panic,
// classify what they cannot read by status, and agree with each other.
func TestHostileClientParse(t *testing.T) {
	t.Parallel()
	for _, tc := range hostileParseCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := []byte(tc.body)
			var e *remedy.Envelope
			var ok bool
			var v remedy.Verdict
			require.Nil(t, hostileCatch(func() {
				e, ok = remedy.Parse(tc.status, tc.header, body)
				v = remedy.Classify(tc.status, tc.header, body)
			}), "no panic")
			require.Equal(t, tc.ok, ok, "a failure")
			assert.Equal(t, tc.ok, v.Failure, "Classify: a failure")
			if !ok {
				return
			}
			if tc.bug != "" && e.RetryAfter < 0 {
				t.Skipf("bug: %s (RetryAfter %v)", tc.bug, e.RetryAfter)
			}
			assert.Equal(t, tc.dialect, e.Dialect)
			assert.Equal(t, tc.code, e.Code)
			assert.GreaterOrEqual(t, e.RetryAfter, time.Duration(0), "never a negative wait")
			if tc.after >= 0 {
				assert.Equal(t, tc.after, e.RetryAfter)
			}
			assert.Equal(t, e.Dialect, v.Dialect, "Classify: dialect")
			assert.Equal(t, e.Retryable, v.Retryable, "Classify: retryable")
			assert.Equal(t, e.RetryAfter, v.RetryAfter, "Classify: retry after")
			assert.LessOrEqual(t, len(e.Prompt()), 1024, "the prompt is bounded")
			if e.Dialect == remedy.DialectUnstructured && (tc.body[0] == '{' || tc.body[0] == '[') {
				assert.Empty(t, e.Message, "no unreadable JSON becomes a message")
			}
			out, err := json.Marshal(e)
			require.NoError(t, err)
			assert.True(t, json.Valid(out), "the canonical encoding is JSON")
		})
	}
}

// hostileCountingBody counts the bytes read through it.
type hostileCountingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c hostileCountingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// hostileEndless is a body without end: the JSON text {"error":{"message":"xxxx... forever.
type hostileEndless struct{ off int64 }

func (e *hostileEndless) Read(p []byte) (int, error) {
	const head = `{"error":{"message":"`
	for i := range p {
		if e.off < int64(len(head)) {
			p[i] = head[e.off]
		} else {
			p[i] = 'x'
		}
		e.off++
	}
	return len(p), nil
}

func (e *hostileEndless) Close() error { return nil }

// TestHostileClientParseResponseBounded: ParseResponse reads at most its bound of a 10 MB or
// an endless body, classifies the failure from that prefix, and leaves the body readable from
// its start.
func TestHostileClientParseResponseBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		body  func() io.ReadCloser
		size  int64 // Content-Length, -1 unknown
		bound int64 // MaxBody; 0 the default
	}{
		{"10 MB, declared", func() io.ReadCloser { return io.NopCloser(io.LimitReader(&hostileEndless{}, 10<<20)) }, 10 << 20, 0},
		{"10 MB, undeclared", func() io.ReadCloser { return io.NopCloser(io.LimitReader(&hostileEndless{}, 10<<20)) }, -1, 0},
		{"endless", func() io.ReadCloser { return &hostileEndless{} }, -1, 0},
		{"endless, MaxBody 4 KiB", func() io.ReadCloser { return &hostileEndless{} }, -1, 4 << 10},
		{"endless, declaring 1 byte", func() io.ReadCloser { return &hostileEndless{} }, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var read atomic.Int64
			resp := &http.Response{StatusCode: 503, Header: http.Header{"Content-Type": {"application/json"}},
				ContentLength: tc.size, Body: hostileCountingBody{tc.body(), &read}}
			bound := tc.bound
			var opts []remedy.ParseOption
			if bound > 0 {
				opts = append(opts, remedy.WithMaxBody(bound))
			} else {
				bound = remedy.DefaultMaxBody
			}
			var e *remedy.Envelope
			var ok bool
			require.Nil(t, hostileCatch(func() { e, ok = remedy.ParseResponse(resp, opts...) }))
			require.True(t, ok)
			assert.LessOrEqual(t, read.Load(), bound+1, "bytes read")
			assert.Equal(t, remedy.DialectUnstructured, e.Dialect, "a truncated body is not guessed at")
			assert.Equal(t, "service_unavailable", e.Code)
			head := make([]byte, 21)
			_, err := io.ReadFull(resp.Body, head)
			require.NoError(t, err)
			assert.Equal(t, `{"error":{"message":"`, string(head), "the body is readable from its start")
			require.NoError(t, resp.Body.Close())
		})
	}
}

// TestHostileClientParseResponseHugeLength: a Content-Length of 2^63-1 (which net/http
// accepts from a server) must not make ParseResponse size a buffer from it.
func TestHostileClientParseResponseHugeLength(t *testing.T) {
	t.Parallel()
	for _, cl := range []int64{math.MaxInt64, math.MaxInt64 - 1, 1 << 62} {
		t.Run(strconv.FormatInt(cl, 10), func(t *testing.T) {
			t.Parallel()
			resp := &http.Response{StatusCode: 500, Header: http.Header{}, ContentLength: cl,
				Body: io.NopCloser(strings.NewReader(`{"error":{"code":"oops","message":"m"}}`))}
			var e *remedy.Envelope
			var ok bool
			if p := hostileCatch(func() { e, ok = remedy.ParseResponse(resp) }); p != nil {
				t.Fatalf("panicked: %v", p)
			}
			require.True(t, ok)
			assert.Equal(t, "oops", e.Code)
		})
	}
}

// hostileServe starts a hostile HTTP server on loopback. The handler gets the request with
// its body read (so that net/http notices when the client goes away) and a context that also
// ends with the test, so that a stalling handler cannot hold the server's Close.
func hostileServe(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-done:
				cancel()
			case <-ctx.Done():
			}
		}()
		h(w, r.WithContext(ctx))
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv
}

// hostileRawServe starts a server that answers every request with raw bytes on the
// connection, then holds it open until the test ends (or closes it, when hold is false). It
// counts in written the answers it wrote whole.
func hostileRawServe(t *testing.T, raw func(r *http.Request) string, hold bool) (srv *httptest.Server, written *atomic.Int64) {
	t.Helper()
	done := make(chan struct{})
	written = new(atomic.Int64)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString(raw(r))
		if buf.Flush() == nil {
			written.Add(1)
		}
		if hold {
			<-done
		}
	}))
	srv.Start()
	t.Cleanup(func() { close(done); srv.Close() })
	return srv, written
}

// hostileTransport counts the bytes the client reads from response bodies (after net/http has
// decompressed them).
type hostileTransport struct {
	base http.RoundTripper
	read atomic.Int64
}

func (c *hostileTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if resp != nil {
		resp.Body = hostileCountingBody{resp.Body, &c.read}
	}
	return resp, err
}

// hostileAttempts records the attempts of a client's calls.
type hostileAttempts struct {
	mu   sync.Mutex
	list []client.Attempt
}

func (a *hostileAttempts) add(at *client.Attempt) {
	a.mu.Lock()
	a.list = append(a.list, *at)
	a.mu.Unlock()
}

func (a *hostileAttempts) all() []client.Attempt {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]client.Attempt(nil), a.list...)
}

// hostileClient is a client of base with a POST operation "create" and a GET "read", both at
// /op, a constant 5 ms backoff and no client-wide budget.
func hostileClient(t *testing.T, base string, lim client.Limits, opts ...client.Option) (*client.Client, *hostileAttempts, *hostileTransport) {
	t.Helper()
	tr := &hostileTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(tr.base.(*http.Transport).CloseIdleConnections)
	at := &hostileAttempts{}
	c, err := client.New(append([]client.Option{
		client.WithBaseURL(base),
		client.WithHTTPClient(&http.Client{Transport: tr}),
		client.WithOperations(client.Operation{Name: "create", Method: "POST", Path: "/op"},
			client.Operation{Name: "read", Method: "GET", Path: "/op"}),
		client.WithLimits(lim),
		client.WithRetryBudget(nil),
		client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(5 * time.Millisecond) }),
		client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) { at.add(a) }}),
	}, opts...)...)
	require.NoError(t, err)
	return c, at, tr
}

// hostileCall runs c.Call with a deadline, and fails the test if it does not return by then
// plus a margin, or panics.
func hostileCall(t *testing.T, c *client.Client, op string, deadline time.Duration) (*client.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	type result struct {
		resp     *client.Response
		err      error
		panicked any
	}
	ch := make(chan result, 1)
	go func() {
		var r result
		r.panicked = hostileCatch(func() { r.resp, r.err = c.Call(ctx, op, map[string]any{"n": 1}) })
		ch <- r
	}()
	select {
	case r := <-ch:
		if r.panicked != nil {
			panic(r.panicked) // re-raised in the test's goroutine, where the case can catch it
		}
		return r.resp, r.err
	case <-time.After(deadline + 10*time.Second):
		t.Fatalf("Call did not return %v after its deadline", 10*time.Second)
		return nil, nil
	}
}

// hostileWaitsBounded checks that every wait the loop decided lies in [0, max].
func hostileWaitsBounded(t *testing.T, attempts []client.Attempt, max time.Duration) {
	t.Helper()
	for _, a := range attempts {
		assert.GreaterOrEqual(t, a.Decision.Wait, time.Duration(0), "attempt %d: never a negative wait", a.Number)
		assert.LessOrEqual(t, a.Decision.Wait, max, "attempt %d: the wait is within MaxWait (asked %v)", a.Number, a.Decision.Asked)
	}
}

func hostileCallError(t *testing.T, err error) *client.CallError {
	t.Helper()
	var ce *client.CallError
	require.ErrorAs(t, err, &ce)
	return ce
}

// hostileRetryCase is a 503 whose wait is hostile: in Retry-After (or its relatives) or in
// the body.
type hostileRetryCase struct {
	name   string
	header http.Header
	body   string
	after  time.Duration // the RetryAfter Parse gives; -1: not pinned (lenient parsing), only bounded
	bug    string
}

func hostileRetryCases() []hostileRetryCase {
	ra := func(v ...string) http.Header { return http.Header{"Retry-After": v} }
	return []hostileRetryCase{
		{name: "Retry-After -5", header: ra("-5"), after: 0},
		{name: "Retry-After NaN", header: ra("NaN"), after: 0},
		{name: "Retry-After Inf", header: ra("Inf"), after: 0},
		{name: "Retry-After -Inf", header: ra("-Inf"), after: 0},
		{name: "Retry-After -0", header: ra("-0"), after: 0},
		{name: "Retry-After 10^30", header: ra("1" + strings.Repeat("0", 30)), after: hostileMaxDuration},
		{name: "Retry-After 1e999999", header: ra("1e999999"), after: hostileMaxDuration},
		{name: "Retry-After an HTTP-date in year 9999", header: ra("Fri, 31 Dec 9999 23:59:59 GMT"), after: hostileMaxDuration},
		{name: "Retry-After year 9999, Date year 1", header: http.Header{"Retry-After": {"Fri, 31 Dec 9999 23:59:59 GMT"},
			"Date": {"Mon, 01 Jan 0001 00:00:00 GMT"}}, after: hostileMaxDuration},
		{name: "Retry-After a date in the past", header: ra("Thu, 01 Jan 1970 00:00:00 GMT"), after: 0},
		{name: "Retry-After year 1, Date year 9999", header: http.Header{"Retry-After": {"Mon, 01 Jan 0001 00:00:00 GMT"},
			"Date": {"Fri, 31 Dec 9999 23:59:59 GMT"}}, after: 0},
		{name: "Retry-After not a date", header: ra("tomorrow"), after: 0},
		{name: "Retry-After 1e9", header: ra("1e9"), after: -1},
		{name: "Retry-After 5, 10", header: ra("5, 10"), after: -1},
		{name: "Retry-After +5", header: ra("+5"), after: -1},
		{name: "Retry-After 1_000", header: ra("1_000"), after: -1},
		{name: "Retry-After 0x1p4", header: ra("0x1p4"), after: -1},
		{name: "Retry-After twice: 1 then 100000", header: ra("1", "100000"), after: -1},
		{name: "Retry-After twice: 100000 then 1", header: ra("100000", "1"), after: -1},
		{name: "Retry-After-Ms 1e300", header: http.Header{"Retry-After-Ms": {"1e300"}}, after: hostileMaxDuration},
		{name: "Retry-After-Ms -1 and Retry-After 10^30", header: http.Header{"Retry-After-Ms": {"-1"},
			"Retry-After": {"1" + strings.Repeat("0", 30)}}, after: hostileMaxDuration},
		{name: "retry_after_ms 1e300 in the body", body: `{"error":{"code":"busy","retry_after_ms":1e300}}`, after: hostileMaxDuration},
		{name: "retry_after_ms 1e999999 in the body", body: `{"error":{"code":"busy","retry_after_ms":1e999999}}`, after: hostileMaxDuration},
		{name: "retry_after_ms -1e300 in the body", body: `{"error":{"code":"busy","retry_after_ms":-1e300}}`, after: 0},
		{name: "retry_after_seconds \"NaN\" in the body", body: `{"error":{"code":"busy","retry_after_seconds":"NaN"}}`, after: 0},
		{name: "Google retryDelay overflowing", body: `{"error":{"code":503,"status":"UNAVAILABLE","message":"d","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{"seconds":9223372036,"nanos":999999999}}]}}`,
			after: hostileMaxDuration},
	}
}

// TestHostileClientRetryAfterDecide: whatever wait a 503 asks for, Parse gives a wait that is
// never negative, and Decide waits within MaxWait — or, when even the clamp would end past the
// elapsed budget, stops at once saying how long the server asked.
func TestHostileClientRetryAfterDecide(t *testing.T) {
	t.Parallel()
	for _, tc := range hostileRetryCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ok := remedy.Parse(503, tc.header, []byte(tc.body))
			require.True(t, ok)
			t.Logf("RetryAfter %v (%s)", e.RetryAfter, e.RetrySource)
			if tc.bug != "" && e.RetryAfter < 0 {
				t.Skipf("bug: %s (RetryAfter %v)", tc.bug, e.RetryAfter)
			}
			assert.GreaterOrEqual(t, e.RetryAfter, time.Duration(0), "never negative")
			if tc.after >= 0 {
				assert.Equal(t, tc.after, e.RetryAfter)
			}
			assert.Equal(t, e.RetryAfter, remedy.Classify(503, tc.header, []byte(tc.body)).RetryAfter, "Classify agrees")

			state := client.State{Attempt: 1, SafeToRepeat: true, BudgetLeft: true, Backoff: 10 * time.Millisecond,
				Limits: client.Limits{MaxAttempts: 3, MaxWait: 50 * time.Millisecond, MaxElapsed: time.Second}}
			d := client.Decide(e, nil, &state)
			if e.RetryAfter > 50*time.Millisecond {
				// Longer than MaxWait: never clamped and retried early, stopped at once.
				require.Equal(t, client.ActStop, d.Action, "%s", d.Why)
				assert.ErrorIs(t, d.Cause, client.ErrWaitTooLong)
				assert.Equal(t, e.RetryAfter, d.Asked)
			} else {
				require.Equal(t, client.ActRetry, d.Action, "%s", d.Why)
				assert.GreaterOrEqual(t, d.Wait, time.Duration(0))
				if e.RetryAfter > 0 {
					assert.Equal(t, e.RetryAfter, d.Wait, "the server's wait, obeyed")
					assert.Equal(t, e.RetryAfter, d.Asked)
				} else {
					assert.Equal(t, 10*time.Millisecond, d.Wait, "no wait given: the backoff")
				}
			}

			// A wait that cannot fit in the elapsed budget: stop at once, saying what was asked.
			state.Limits = client.Limits{MaxAttempts: 3, MaxWait: time.Duration(math.MaxInt64), MaxElapsed: 200 * time.Millisecond}
			d = client.Decide(e, nil, &state)
			if e.RetryAfter > 200*time.Millisecond {
				assert.Equal(t, client.ActStop, d.Action)
				assert.ErrorIs(t, d.Cause, client.ErrElapsedBudget)
				assert.Equal(t, e.RetryAfter, d.Asked)
			} else {
				assert.Equal(t, client.ActRetry, d.Action, "%s", d.Why)
				assert.GreaterOrEqual(t, d.Wait, time.Duration(0))
			}

			// Under a deadline nearer than the wait: stop at once.
			state.Limits = client.Limits{MaxAttempts: 3, MaxWait: time.Duration(math.MaxInt64), MaxElapsed: time.Duration(math.MaxInt64)}
			state.HasDeadline, state.Remaining = true, 100*time.Millisecond
			d = client.Decide(e, nil, &state)
			if e.RetryAfter >= 100*time.Millisecond {
				assert.Equal(t, client.ActStop, d.Action)
				assert.ErrorIs(t, d.Cause, client.ErrDeadline)
			}
		})
	}
}

// TestHostileClientRetryAfterCall: the same waits from a real server, through Client.Call.
// A wait within MaxWait is obeyed until the attempts run out; a longer one stops the call at
// once, and so does one that the elapsed budget cannot hold, with CallError.Asked and a
// RetryLater saying what was asked.
func TestHostileClientRetryAfterCall(t *testing.T) {
	t.Parallel()
	for _, tc := range hostileRetryCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := hostileServe(t, func(w http.ResponseWriter, r *http.Request) {
				for k, vs := range tc.header {
					w.Header()[k] = vs
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(503)
				io.WriteString(w, tc.body)
			})
			e, _ := remedy.Parse(503, tc.header, []byte(tc.body))

			c, at, _ := hostileClient(t, srv.URL, client.Limits{MaxAttempts: 3, MaxWait: 5 * time.Millisecond, MaxElapsed: 10 * time.Second})
			_, err := hostileCall(t, c, "create", 20*time.Second)
			ce := hostileCallError(t, err)
			attempts := at.all()
			hostileWaitsBounded(t, attempts, 5*time.Millisecond)
			if e.RetryAfter > 5*time.Millisecond {
				assert.ErrorIs(t, err, client.ErrWaitTooLong, "a wait longer than MaxWait stops the call at once: %v", err)
				assert.Len(t, attempts, 1)
				assert.Equal(t, e.RetryAfter, ce.Asked)
				var later *client.RetryLater
				if assert.ErrorAs(t, err, &later) {
					assert.Equal(t, e.RetryAfter, later.After)
				}
			} else {
				assert.ErrorIs(t, err, client.ErrAttemptsExhausted, "retried within MaxWait until the attempts ran out: %v", err)
				assert.Len(t, attempts, 3)
			}

			// The elapsed budget is short where the wait alone exceeds it, so that stopping at
			// once owes nothing to how long the first attempt took; where the wait fits, it is
			// generous, so that no slow attempt uses it up before the attempts run out.
			budget := 300 * time.Millisecond
			if e.RetryAfter <= budget {
				budget = 10 * time.Second
			}
			c, at, _ = hostileClient(t, srv.URL, client.Limits{MaxAttempts: 3, MaxWait: time.Minute, MaxElapsed: budget})
			_, err = hostileCall(t, c, "create", 20*time.Second)
			ce = hostileCallError(t, err)
			attempts = at.all()
			hostileWaitsBounded(t, attempts, time.Minute)
			if tc.bug != "" && e.RetryAfter < 0 && len(attempts) > 1 {
				t.Skipf("bug: %s (%d attempts, each decision asked %v)", tc.bug, len(attempts), attempts[0].Decision.Asked)
			}
			switch {
			case e.RetryAfter > time.Minute:
				assert.ErrorIs(t, err, client.ErrWaitTooLong, "an enormous wait stops the call at once")
				assert.Len(t, attempts, 1)
				assert.Equal(t, e.RetryAfter, ce.Asked, "the error says how long the server asked")
			case e.RetryAfter > budget:
				assert.ErrorIs(t, err, client.ErrElapsedBudget, "a wait past the budget stops the call at once")
				assert.Len(t, attempts, 1)
				assert.Equal(t, e.RetryAfter, ce.Asked, "the error says how long the server asked")
			default:
				assert.Len(t, attempts, 3, "a wait that fits is taken: %v", err)
			}
		})
	}
}

// hostileGzipBomb is 64 MiB of gzip in about 64 KiB: an error envelope whose message never
// ends within any bound. It is one gzip member with the envelope's start and 1 MiB of "a",
// then the same 1 MiB member repeated (a gzip stream may hold many members). Built once.
var hostileGzipBomb = sync.OnceValue(func() []byte {
	member := func(prefix string) []byte {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		io.WriteString(zw, prefix)
		zw.Write(bytes.Repeat([]byte("a"), 1<<20))
		zw.Close()
		return b.Bytes()
	}
	bomb := member(`{"error":{"code":"bomb","message":"`)
	rest := member("")
	for range 63 {
		bomb = append(bomb, rest...)
	}
	return bomb
})

// TestHostileClientBodies: Client.Call against servers that answer with bodies built to
// break it: unreadable, huge, endless, compressed 1000:1. What the client reads stays within
// Limits.MaxBody (a failure) or WithMaxResult (a success), and the call ends with a clear
// error, not an out-of-memory.
func TestHostileClientBodies(t *testing.T) {
	t.Parallel()
	const maxBody, maxResult = 64 << 10, 1 << 20
	endless := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			chunk := bytes.Repeat([]byte("x"), 32<<10)
			io.WriteString(w, `{"error":{"message":"`)
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}
	}
	fixed := func(status int, header http.Header, body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			for k, vs := range header {
				w.Header()[k] = vs
			}
			if w.Header().Get("Content-Type") == "" {
				w.Header().Set("Content-Type", "application/json")
			}
			w.WriteHeader(status)
			w.Write(body)
		}
	}
	gz := http.Header{"Content-Encoding": {"gzip"}}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		// maxRead bounds the bytes read from the body, per attempt
		maxRead int64
		// check the outcome
		check func(t *testing.T, resp *client.Response, err error)
	}{
		{"an endless 500", endless(500), maxBody + 1 + 4<<10, func(t *testing.T, _ *client.Response, err error) {
			ce := hostileCallError(t, err)
			require.NotNil(t, ce.Envelope)
			assert.Equal(t, remedy.DialectUnstructured, ce.Envelope.Dialect)
			assert.Equal(t, 500, ce.Envelope.Status)
		}},
		{"a 10 MB 400", fixed(400, nil, append([]byte(`{"error":{"code":"x","message":"`), bytes.Repeat([]byte("y"), 10<<20)...)),
			maxBody + 1 + 4<<10, func(t *testing.T, _ *client.Response, err error) {
				assert.ErrorIs(t, err, client.ErrNotRetryable)
				ce := hostileCallError(t, err)
				assert.Equal(t, remedy.DialectTruncated, ce.Envelope.Dialect)
				assert.Equal(t, "x", ce.Envelope.Code, "read from the prefix that arrived")
			}},
		{"an endless 200", endless(200), maxResult + 1 + 32<<10, func(t *testing.T, _ *client.Response, err error) {
			assert.ErrorIs(t, err, client.ErrNotRetryable)
			assert.ErrorContains(t, err, fmt.Sprintf("larger than %d bytes", maxResult))
		}},
		{"a 10 MB 200 with its length", fixed(200, nil, bytes.Repeat([]byte(" "), 10<<20)), maxResult + 1 + 32<<10,
			func(t *testing.T, _ *client.Response, err error) {
				assert.ErrorIs(t, err, client.ErrNotRetryable)
				assert.ErrorContains(t, err, "larger than")
			}},
		{"a gzip bomb in a 500 (64 MiB in ~64 KiB)", fixed(500, gz, hostileGzipBomb()), maxBody + 1 + 4<<10,
			func(t *testing.T, _ *client.Response, err error) {
				ce := hostileCallError(t, err)
				assert.Equal(t, remedy.DialectTruncated, ce.Envelope.Dialect, "the decompressed prefix is truncated JSON")
				assert.Equal(t, "bomb", ce.Envelope.Code, "read from the prefix that arrived")
			}},
		{"a gzip bomb in a 200", fixed(200, gz, hostileGzipBomb()), maxResult + 1 + 32<<10,
			func(t *testing.T, _ *client.Response, err error) {
				assert.ErrorContains(t, err, "larger than", "the bound applies to the decompressed bytes")
			}},
		{"deep nesting in a 422", fixed(422, nil, []byte(strings.Repeat("[", 100_000))), maxBody + 1 + 4<<10,
			func(t *testing.T, _ *client.Response, err error) {
				assert.ErrorIs(t, err, client.ErrNotRetryable)
				ce := hostileCallError(t, err)
				assert.Equal(t, remedy.DialectUnstructured, ce.Envelope.Dialect)
			}},
		{"invalid UTF-8 in a 400", fixed(400, nil, []byte("{\"error\":{\"code\":\"x\xff\",\"message\":\"m\"}}")), maxBody + 1 + 4<<10,
			func(t *testing.T, _ *client.Response, err error) {
				ce := hostileCallError(t, err)
				assert.Equal(t, remedy.DialectUnstructured, ce.Envelope.Dialect)
				assert.Equal(t, "bad_request", ce.Envelope.Code)
			}},
		{"a BOM before a 409 envelope", fixed(409, nil, []byte("\xef\xbb\xbf"+`{"error":{"code":"conflict_x","message":"m"}}`)), maxBody + 1 + 4<<10,
			func(t *testing.T, _ *client.Response, err error) {
				ce := hostileCallError(t, err)
				assert.Equal(t, "conflict_x", ce.Envelope.Code)
			}},
		{"deep nesting in a 200", fixed(200, nil, []byte(strings.Repeat("[", 100_000))), maxResult + 1,
			func(t *testing.T, resp *client.Response, err error) {
				require.NoError(t, err, "a 2xx nothing can be read in is a success")
				assert.Len(t, resp.Body, 100_000)
			}},
		{"a failure inside a 200 with huge numbers", fixed(200, nil, []byte(`{"jsonrpc":"2.0","id":1e999999,"error":{"code":-1e999999,"message":"m"}}`)), maxResult + 1,
			func(t *testing.T, _ *client.Response, err error) {
				ce := hostileCallError(t, err)
				assert.Equal(t, remedy.DialectJSONRPC, ce.Envelope.Dialect)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := hostileServe(t, tc.handler)
			c, at, tr := hostileClient(t, srv.URL, client.Limits{MaxAttempts: 2, MaxWait: 10 * time.Millisecond,
				MaxElapsed: 5 * time.Second, MaxBody: maxBody}, client.WithMaxResult(maxResult))
			resp, err := hostileCall(t, c, "create", 10*time.Second)
			attempts := at.all()
			t.Logf("%d attempts, %d bytes read, err: %.200v", len(attempts), tr.read.Load(), err)
			require.NotEmpty(t, attempts)
			assert.LessOrEqual(t, tr.read.Load(), tc.maxRead*int64(len(attempts)), "bytes read over %d attempts", len(attempts))
			hostileWaitsBounded(t, attempts, 10*time.Millisecond)
			tc.check(t, resp, err)
		})
	}
}

// TestHostileClientGzipUnasked: a caller that asks for gzip itself gets the compressed bytes
// (net/http decompresses only what it asked for): ParseResponse then reads at most its bound
// of them and sees no JSON; decompressed, the bound's worth is the start of an envelope.
func TestHostileClientGzipUnasked(t *testing.T) {
	t.Parallel()
	bomb := hostileGzipBomb()
	srv := hostileServe(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(502)
		w.Write(bomb)
	})
	for _, tc := range []struct {
		name         string
		acceptGzip   bool
		uncompressed bool
		dialect      remedy.Dialect
		code         string
	}{
		{"net/http asks and decompresses", false, true, remedy.DialectTruncated, "bomb"},
		{"the caller asks: compressed bytes", true, false, remedy.DialectUnstructured, "bad_gateway"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("GET", srv.URL, nil)
			require.NoError(t, err)
			if tc.acceptGzip {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tc.uncompressed, resp.Uncompressed)
			var read atomic.Int64
			resp.Body = hostileCountingBody{resp.Body, &read}
			e, ok := remedy.ParseResponse(resp, remedy.WithMaxBody(64<<10))
			require.True(t, ok)
			assert.LessOrEqual(t, read.Load(), int64(64<<10+1))
			assert.Equal(t, tc.dialect, e.Dialect)
			assert.Equal(t, tc.code, e.Code)
		})
	}
}

// TestHostileClientStalls: a server that sends its headers and then stalls the body forever,
// or never answers: the call returns when the context's deadline passes, or — once the call
// retries — when Limits.MaxElapsed is spent, even without a deadline.
func TestHostileClientStalls(t *testing.T) {
	t.Parallel()
	// stall answers with status and the start of a body (or nothing, when headers is false),
	// notes that it stalls, and waits for the client to go away.
	stall := func(status int, headers bool, stalled *atomic.Bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if headers {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				io.WriteString(w, `{"error":{"code":"x","message":"`)
				http.NewResponseController(w).Flush()
			}
			stalled.Store(true)
			<-r.Context().Done()
		}
	}
	for _, tc := range []struct {
		name    string
		status  int
		headers bool
	}{
		{"a 200 whose body stalls", 200, true},
		{"a 500 whose body stalls", 500, true},
		{"no answer at all", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stalled atomic.Bool
			srv := hostileServe(t, stall(tc.status, tc.headers, &stalled))
			c, at, _ := hostileClient(t, srv.URL, client.Limits{MaxAttempts: 3, MaxWait: 10 * time.Millisecond, MaxElapsed: time.Minute})
			// The deadline must not pass before the server stalled: on a busy machine the way
			// there takes longer, and a deadline that passed first would prove nothing.
			margin.Grow(t, 50*time.Millisecond, 10*time.Second, func(deadline time.Duration) bool {
				_, err := hostileCall(t, c, "create", deadline)
				require.Error(t, err)
				assert.ErrorIs(t, err, client.ErrDeadline, "%v", err)
				hostileWaitsBounded(t, at.all(), 10*time.Millisecond)
				return stalled.Load()
			})
		})
	}
	t.Run("a 503, then a stall, without a deadline", func(t *testing.T) {
		t.Parallel()
		// The elapsed budget runs from the call's start, and must outlast the first attempt
		// and the way to the server's stall: it starts short and doubles until the server had
		// stalled the second attempt before the budget ran out.
		var stalled atomic.Bool
		margin.Grow(t, 50*time.Millisecond, 10*time.Second, func(budget time.Duration) bool {
			var n atomic.Int64
			srv := hostileServe(t, func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 1 {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(503)
					return
				}
				stall(200, true, &stalled)(w, r)
			})
			c, at, _ := hostileClient(t, srv.URL, client.Limits{MaxAttempts: 3, MaxWait: 10 * time.Millisecond, MaxElapsed: budget})
			done := make(chan error, 1)
			go func() {
				_, err := c.Call(context.Background(), "create", nil)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("the retrying call was not cut off by Limits.MaxElapsed")
			}
			attempts := at.all()
			t.Logf("budget %v: %d attempts; ended: %v", budget, len(attempts), err)
			// Whether the budget ran out during the stalled attempt or, on a busy machine,
			// before the retry could begin, the call stops for it.
			assert.ErrorIs(t, err, client.ErrElapsedBudget)
			hostileWaitsBounded(t, attempts, 10*time.Millisecond)
			require.NotEmpty(t, attempts)
			require.LessOrEqual(t, len(attempts), 2, "nothing is sent after the stalled attempt")
			if len(attempts) == 2 {
				assert.Error(t, attempts[1].Err, "the second attempt was cut off")
			}
			return stalled.Load()
		})
	})
}

// TestHostileClientLyingServer: responses whose framing lies, written by hand on the
// connection.
func TestHostileClientLyingServer(t *testing.T) {
	t.Parallel()
	envelope := `{"error":{"code":"lied","message":"m"}}`
	tests := []struct {
		name string
		raw  string
		// hold: the server holds the connection open after raw, so that only the call's
		// deadline ends it; otherwise the server closes it, and the call ends by itself.
		hold  bool
		check func(t *testing.T, resp *client.Response, err error)
		bug   string
	}{
		{"Content-Length 2^63-1 on a 500", "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 9223372036854775807\r\n\r\n" + envelope, false,
			func(t *testing.T, _ *client.Response, err error) {
				require.Error(t, err)
			}, ""},
		{"Content-Length 2^63-1 on a 200", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9223372036854775807\r\n\r\n{}", false,
			func(t *testing.T, _ *client.Response, err error) {
				require.Error(t, err)
			}, ""},
		{"Content-Length larger than the body, then close", "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n" + envelope, false,
			func(t *testing.T, _ *client.Response, err error) {
				ce := hostileCallError(t, err)
				require.NotNil(t, ce.Envelope, "classified from what arrived")
				assert.Equal(t, "lied", ce.Envelope.Code)
			}, ""},
		{"Content-Length shorter than the body", "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n" + envelope, false,
			func(t *testing.T, _ *client.Response, err error) {
				ce := hostileCallError(t, err)
				require.NotNil(t, ce.Envelope)
				assert.Equal(t, remedy.DialectUnstructured, ce.Envelope.Dialect, "10 bytes of JSON are not an envelope")
			}, ""},
		{"a 2 MB header", "HTTP/1.1 503 Service Unavailable\r\nX-Big: " + strings.Repeat("b", 2<<20) + "\r\nContent-Length: 0\r\n\r\n", false,
			func(t *testing.T, _ *client.Response, err error) {
				require.Error(t, err, "net/http refuses headers over 1 MB")
			}, ""},
		{"a 1xx forever", strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", 10_000), true,
			func(t *testing.T, _ *client.Response, err error) {
				assert.ErrorIs(t, err, client.ErrDeadline, "no final answer: the deadline ends the call")
			}, ""},
		{"not HTTP", "SSH-2.0-OpenSSH_9.0\r\n" + strings.Repeat("\x00", 1024), false,
			func(t *testing.T, _ *client.Response, err error) {
				require.Error(t, err)
			}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, written := hostileRawServe(t, func(*http.Request) string { return tc.raw }, tc.hold)
			c, at, _ := hostileClient(t, srv.URL, client.Limits{MaxAttempts: 2, MaxWait: 10 * time.Millisecond, MaxElapsed: 10 * time.Second})
			try := func(deadline time.Duration) {
				var resp *client.Response
				var err error
				if p := hostileCatch(func() { resp, err = hostileCall(t, c, "create", deadline) }); p != nil {
					if tc.bug != "" {
						t.Skipf("bug: %s (%v)", tc.bug, p)
					}
					t.Fatalf("Call panicked: %v", p)
				}
				t.Logf("%d attempts, err: %.200v", len(at.all()), err)
				hostileWaitsBounded(t, at.all(), 10*time.Millisecond)
				tc.check(t, resp, err)
			}
			if !tc.hold {
				try(10 * time.Second) // only a hang would meet it
				return
			}
			// Only the deadline ends the call: it must not pass before the server wrote its answer.
			margin.Grow(t, 50*time.Millisecond, 10*time.Second, func(deadline time.Duration) bool {
				try(deadline)
				return written.Load() > 0
			})
		})
	}
}

// TestHostileClientRetryableHTTP: the go-retryablehttp policy reads hostile responses through
// ParseResponse too, and caps what the server asks.
func TestHostileClientRetryableHTTP(t *testing.T) {
	t.Parallel()
	t.Run("Content-Length 2^63-1", func(t *testing.T) {
		resp := &http.Response{StatusCode: 503, Header: http.Header{}, ContentLength: math.MaxInt64,
			Body: io.NopCloser(strings.NewReader(`{"error":{"code":"busy"}}`))}
		var retry bool
		var err error
		if p := hostileCatch(func() { retry, err = retryable.CheckRetry(context.Background(), resp, nil) }); p != nil {
			t.Fatalf("panicked: %v", p)
		}
		assert.True(t, retry)
		assert.Error(t, err)
	})
	for _, tc := range hostileRetryCases() {
		t.Run("Backoff: "+tc.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: 503, Header: tc.header, Body: io.NopCloser(strings.NewReader(tc.body))}
			if resp.Header == nil {
				resp.Header = http.Header{}
			}
			wait := retryable.Backoff(time.Millisecond, 50*time.Millisecond, 1, resp)
			assert.GreaterOrEqual(t, wait, time.Duration(0))
			assert.LessOrEqual(t, wait, 50*time.Millisecond)
			if tc.after == hostileMaxDuration && tc.bug == "" {
				assert.Equal(t, 50*time.Millisecond, wait, "an enormous wait is capped at max")
			}
		})
	}
}
