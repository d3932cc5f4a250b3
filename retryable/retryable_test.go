package retryable

// Internal tests: the wait helpers are unexported.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
)

// script serves the i-th request with the i-th handler (the last one repeats) and counts the
// requests that reached it.
type script struct {
	*httptest.Server
	hits atomic.Int32
}

func newScript(t *testing.T, handlers ...http.HandlerFunc) *script {
	t.Helper()
	s := &script{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(s.hits.Add(1)) - 1
		handlers[min(i, len(handlers)-1)](w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// reply writes a status and a body.
func reply(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// recorder is a client built the way a user would (NewClient) whose Backoff is
// observed: every wait remedy's Backoff chose is kept, and the attempts are counted.
type recorder struct {
	client   *retryablehttp.Client
	mu       sync.Mutex
	waits    []time.Duration
	attempts atomic.Int32
}

// newRecorder makes a client with 3 retries and waits in [minWait, maxWait]. With sleep false
// the client waits 1ms instead of what Backoff chose, so that long server-asked waits are
// asserted through Backoff's return value without the test sleeping through them.
func newRecorder(t *testing.T, minWait, maxWait time.Duration, sleep bool) *recorder {
	t.Helper()
	r := &recorder{client: NewClient()}
	c := r.client
	c.RetryMax = 3
	c.RetryWaitMin, c.RetryWaitMax = minWait, maxWait
	c.RequestLogHook = func(retryablehttp.Logger, *http.Request, int) { r.attempts.Add(1) }
	c.Backoff = func(lo, hi time.Duration, n int, resp *http.Response) time.Duration {
		d := Backoff(lo, hi, n, resp)
		r.mu.Lock()
		r.waits = append(r.waits, d)
		r.mu.Unlock()
		if !sleep {
			return time.Millisecond
		}
		return d
	}
	t.Cleanup(c.HTTPClient.CloseIdleConnections)
	return r
}

func (r *recorder) recorded() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.waits...)
}

func (r *recorder) get(t *testing.T, url string) (*http.Response, error) {
	t.Helper()
	return r.getCtx(t, context.Background(), url)
}

func (r *recorder) getCtx(t *testing.T, ctx context.Context, url string) (*http.Response, error) {
	t.Helper()
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := r.client.Do(req)
	if resp != nil {
		t.Cleanup(func() { _ = resp.Body.Close() })
	}
	return resp, err
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func TestRetryable503ThenSuccess(t *testing.T) {
	t.Parallel()
	srv := newScript(t, reply(503, ""), reply(503, "Service Unavailable"), reply(200, `{"data":{"ok":true}}`))
	r := newRecorder(t, time.Millisecond, 50*time.Millisecond, true)

	resp, err := r.get(t, srv.URL)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, `{"data":{"ok":true}}`, readAll(t, resp))
	require.EqualValues(t, 3, srv.hits.Load())
	require.EqualValues(t, 3, r.attempts.Load())
	waits := r.recorded()
	require.Len(t, waits, 2)
	require.True(t, waits[0] >= 500*time.Microsecond && waits[0] <= time.Millisecond, waits[0])
	require.True(t, waits[1] >= time.Millisecond && waits[1] <= 2*time.Millisecond, waits[1])
}

func TestRetryableNotRetryableFailure(t *testing.T) {
	t.Parallel()
	srv := newScript(t, reply(500, `{"error":{"code":"bug","retryable":false}}`))
	r := newRecorder(t, time.Millisecond, 50*time.Millisecond, true)

	resp, err := r.get(t, srv.URL)
	require.Nil(t, resp)
	var env *remedy.Envelope
	require.ErrorAs(t, err, &env)
	require.Equal(t, "bug", env.Code)
	require.Equal(t, 500, env.Status)
	require.False(t, env.Retryable)
	require.Contains(t, err.Error(), "after 1 attempt:")
	require.EqualValues(t, 1, srv.hits.Load())
	require.Empty(t, r.recorded())
}

func TestRetryableFatalSeverityNotRetried(t *testing.T) {
	t.Parallel()
	srv := newScript(t, reply(503, `{"error":{"code":"gone_for_good","retryable":true,"severity":"fatal"}}`))
	r := newRecorder(t, time.Millisecond, 50*time.Millisecond, true)

	_, err := r.get(t, srv.URL)
	var env *remedy.Envelope
	require.ErrorAs(t, err, &env)
	require.Equal(t, remedy.SeverityFatal, env.Severity)
	require.EqualValues(t, 1, srv.hits.Load())
}

// A 400 is not retryable by status, but the body's flag says it is and how long to wait.
func TestRetryableBodyRetryAfterMsOn400(t *testing.T) {
	t.Parallel()
	srv := newScript(t,
		reply(400, `{"error":{"code":"busy","message":"index rebuilding","retryable":true,"retry_after_ms":20}}`),
		reply(200, "done"))
	r := newRecorder(t, time.Millisecond, time.Minute, false)

	resp, err := r.get(t, srv.URL)
	require.NoError(t, err)
	require.Equal(t, "done", readAll(t, resp))
	require.EqualValues(t, 2, srv.hits.Load())
	waits := r.recorded()
	require.Len(t, waits, 1)
	require.GreaterOrEqual(t, waits[0], 20*time.Millisecond, "never below the server's wait")
	require.LessOrEqual(t, waits[0], 22*time.Millisecond, "at most 10% above it")
}

func TestRetryableGraphQLInBand(t *testing.T) {
	t.Parallel()
	t.Run("transient code is retried", func(t *testing.T) {
		t.Parallel()
		srv := newScript(t,
			reply(200, `{"data":null,"errors":[{"message":"Slow down","extensions":{"code":"THROTTLED"}}]}`, "Content-Type", "application/json"),
			reply(200, `{"data":{"viewer":{"login":"octocat"}}}`, "Content-Type", "application/json"))
		r := newRecorder(t, time.Millisecond, 50*time.Millisecond, true)

		resp, err := r.get(t, srv.URL)
		require.NoError(t, err)
		require.Equal(t, `{"data":{"viewer":{"login":"octocat"}}}`, readAll(t, resp))
		require.EqualValues(t, 2, srv.hits.Load())
	})
	t.Run("input error is returned as the envelope", func(t *testing.T) {
		t.Parallel()
		srv := newScript(t, reply(200,
			`{"data":null,"errors":[{"message":"amount must be positive","path":["createInvoice"],"extensions":{"code":"BAD_USER_INPUT"}}]}`,
			"Content-Type", "application/graphql-response+json"))
		r := newRecorder(t, time.Millisecond, 50*time.Millisecond, true)

		resp, err := r.get(t, srv.URL)
		require.Nil(t, resp)
		var env *remedy.Envelope
		require.ErrorAs(t, err, &env)
		require.Equal(t, remedy.DialectGraphQL, env.Dialect)
		require.Equal(t, "BAD_USER_INPUT", env.Code)
		require.Equal(t, "amount must be positive", env.Message)
		require.EqualValues(t, 1, srv.hits.Load())
	})
}

func TestRetryableServerWaitCappedAtMax(t *testing.T) {
	t.Parallel()
	srv := newScript(t,
		reply(429, `{"error":{"code":"rate_limited","retryable":true,"retry_after_ms":1000000000000}}`),
		reply(200, "ok"))
	r := newRecorder(t, time.Millisecond, 50*time.Millisecond, false)

	resp, err := r.get(t, srv.URL)
	require.NoError(t, err)
	require.Equal(t, "ok", readAll(t, resp))
	require.Equal(t, []time.Duration{50 * time.Millisecond}, r.recorded())
}

func TestRetryableRetryAfterHTTPDate(t *testing.T) {
	t.Parallel()
	date := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	srv := newScript(t,
		// A 500 too: retryablehttp's DefaultBackoff would read Retry-After on 429 and 503 only.
		reply(500, "upgrading", "Date", date.Format(http.TimeFormat), "Retry-After", date.Add(3*time.Second).Format(http.TimeFormat)),
		reply(200, "ok"))
	r := newRecorder(t, time.Millisecond, time.Minute, false)

	resp, err := r.get(t, srv.URL)
	require.NoError(t, err)
	require.Equal(t, "ok", readAll(t, resp))
	waits := r.recorded()
	require.Len(t, waits, 1)
	require.GreaterOrEqual(t, waits[0], 3*time.Second)
	require.LessOrEqual(t, waits[0], 3300*time.Millisecond)
}

func TestRetryableSuccessBodyReadable(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte(`{"k":"0123456789abcdef"},`), (2<<20)/25+1) // over 2 MiB, over the parse bound
	for _, c := range []struct {
		name   string
		header []string
		body   string
	}{
		{"small json", []string{"Content-Type", "application/json"}, `{"data":{"id":1}}`},
		{"larger than the parse bound, streamed", []string{"Content-Type", "application/json"}, "[" + string(big) + "1]"},
		{"larger than the parse bound, with a length", []string{"Content-Length", strconv.Itoa(len(big) + 3)}, "[" + string(big) + "1]"},
		{"event stream", []string{"Content-Type", "text/event-stream"}, "data: 1\n\n"},
		{"empty", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newScript(t, reply(200, c.body, c.header...))
			r := newRecorder(t, time.Millisecond, 50*time.Millisecond, true)

			resp, err := r.get(t, srv.URL)
			require.NoError(t, err)
			got := readAll(t, resp)
			require.Equal(t, len(c.body), len(got))
			require.True(t, got == c.body, "the caller reads the whole body from its start")
			require.EqualValues(t, 1, srv.hits.Load())
		})
	}
}

// On the final failure the response is still whole for whoever looks at it after CheckRetry:
// a ResponseLogHook, and a caller that asked for it with PassthroughErrorHandler.
func TestRetryableFailureBodyReadable(t *testing.T) {
	t.Parallel()
	body := `{"error":{"code":"down","message":"maintenance until noon"}}`
	srv := newScript(t, reply(503, body, "Content-Type", "application/json"))
	r := newRecorder(t, time.Millisecond, 5*time.Millisecond, true)
	r.client.ErrorHandler = retryablehttp.PassthroughErrorHandler

	resp, err := r.get(t, srv.URL)
	require.NotNil(t, resp)
	require.Equal(t, body, readAll(t, resp))
	var env *remedy.Envelope
	require.ErrorAs(t, err, &env)
	require.Equal(t, "down", env.Code)
	require.EqualValues(t, 4, srv.hits.Load())

	t.Run("to a response hook", func(t *testing.T) {
		t.Parallel()
		srv := newScript(t, reply(503, body, "Content-Type", "application/json"))
		r := newRecorder(t, time.Millisecond, 5*time.Millisecond, true)
		var logged []string
		r.client.ResponseLogHook = func(_ retryablehttp.Logger, resp *http.Response) {
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			logged = append(logged, string(b))
			resp.Body = io.NopCloser(bytes.NewReader(b)) // what a logging hook does to give it back
		}

		_, err := r.get(t, srv.URL)
		var env *remedy.Envelope
		require.ErrorAs(t, err, &env)
		require.Equal(t, "maintenance until noon", env.Message)
		require.Equal(t, []string{body, body, body, body}, logged)
	})
	t.Run("larger than the parse bound", func(t *testing.T) {
		t.Parallel()
		big := strings.Repeat("x", 3<<20)
		srv := newScript(t, reply(502, big))
		r := newRecorder(t, time.Millisecond, 5*time.Millisecond, true)
		r.client.RetryMax = 1
		r.client.ErrorHandler = retryablehttp.PassthroughErrorHandler

		resp, err := r.get(t, srv.URL)
		require.Error(t, err)
		require.True(t, readAll(t, resp) == big)
	})
}

// With this package's ErrorHandler the envelope of the last response, read from its body,
// is the error, and the body is closed.
func TestRetryableExhausted(t *testing.T) {
	t.Parallel()
	srv := newScript(t, reply(503, `{"error":{"code":"down","message":"maintenance until noon"}}`))
	r := newRecorder(t, time.Millisecond, 5*time.Millisecond, true)

	resp, err := r.get(t, srv.URL)
	require.Nil(t, resp)
	var env *remedy.Envelope
	require.ErrorAs(t, err, &env)
	require.Equal(t, "down", env.Code)
	require.Equal(t, "maintenance until noon", env.Message)
	require.Equal(t, "remedy: giving up after 4 attempts: down (503): maintenance until noon", err.Error())
	require.EqualValues(t, 4, srv.hits.Load())
	require.Len(t, r.recorded(), 3)
}

func TestRetryableConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	r := newRecorder(t, time.Millisecond, 5*time.Millisecond, true)
	r.client.RetryMax = 2

	resp, err := r.get(t, "http://"+addr+"/")
	require.Nil(t, resp)
	var opErr *net.OpError
	require.ErrorAs(t, err, &opErr)
	require.Equal(t, "dial", opErr.Op)
	require.Contains(t, err.Error(), "giving up after 3 attempts")
	require.EqualValues(t, 3, r.attempts.Load())
}

// hangUp hijacks the connection and closes it without a response: abruptly (a TCP reset) or
// cleanly (an EOF where the response should be).
func hangUp(reset bool) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		if tc, ok := conn.(*net.TCPConn); ok && reset {
			_ = tc.SetLinger(0)
		}
		_ = conn.Close()
	}
}

// A request whose answer is lost after the server read it is sent again only when that is
// safe: an idempotent method, or a key. A POST without one may have executed (here: a charge)
// and is sent once, with an error that says so. A POST: net/http does not resend it on its
// own, so every drop reaches CheckRetry.
func TestRetryableConnectionDropped(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		method string
		key    string
		hits   int32 // requests that reach the server, and attempts
	}{
		{"POST without a key", http.MethodPost, "", 1},
		{"POST with a key", http.MethodPost, "charge-1", 3},
		{"PATCH with a key, lower-case", http.MethodPatch, "charge-1", 3},
		{"GET", http.MethodGet, "", 3},
	} {
		for _, reset := range []bool{true, false} {
			t.Run(fmt.Sprint(c.name, "/reset=", reset), func(t *testing.T) {
				t.Parallel()
				srv := newScript(t, hangUp(reset), hangUp(reset), reply(200, "ok"))
				r := newRecorder(t, time.Millisecond, 5*time.Millisecond, true)
				req, err := retryablehttp.NewRequest(c.method, srv.URL, []byte(`{"amount":1200}`))
				require.NoError(t, err)
				if c.key != "" {
					if c.method == http.MethodPatch {
						req.Header["idempotency-key"] = []string{c.key}
					} else {
						req.Header.Set("Idempotency-Key", c.key)
					}
				}

				resp, err := r.client.Do(req)
				require.EqualValues(t, c.hits, srv.hits.Load())
				require.EqualValues(t, c.hits, r.attempts.Load())
				if c.hits == 1 {
					require.Nil(t, resp)
					require.ErrorIs(t, err, remedy.ErrOutcomeUnknown)
					require.Contains(t, err.Error(), "giving up after 1 attempt: outcome unknown: the request may have executed")
					var ue *url.Error
					require.ErrorAs(t, err, &ue, "the transport's error is still there")
					return
				}
				require.NoError(t, err)
				defer resp.Body.Close()
				require.Equal(t, "ok", readAll(t, resp))
			})
		}
	}
}

// A POST that failed before it was written (nothing listens) cannot have executed: retried.
func TestRetryableConnectionRefusedPost(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	r := newRecorder(t, time.Millisecond, 5*time.Millisecond, true)
	r.client.RetryMax = 2

	resp, err := r.client.Post("http://"+addr+"/charges", "application/json", []byte(`{"amount":1200}`))
	require.Nil(t, resp)
	require.EqualValues(t, 3, r.attempts.Load())
	require.Contains(t, err.Error(), "giving up after 3 attempts")
	require.NotErrorIs(t, err, remedy.ErrOutcomeUnknown)
	var opErr *net.OpError
	require.ErrorAs(t, err, &opErr)
	require.Equal(t, "dial", opErr.Op)
}

// A 303 turns the POST into a GET, whose answer is lost. The POST executed, and Client.Do would
// send it again: not safe without a key, although the leg that failed is a GET.
func TestRetryableRedirectedPostDropped(t *testing.T) {
	t.Parallel()
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
			http.Redirect(w, r, "/elsewhere", http.StatusSeeOther)
			return
		}
		hangUp(false)(w, r) // net/http may send this GET twice by itself: it is idempotent
	}))
	t.Cleanup(srv.Close)
	r := newRecorder(t, time.Millisecond, 5*time.Millisecond, true)

	_, err := r.client.Post(srv.URL, "application/json", []byte(`{}`))
	require.ErrorIs(t, err, remedy.ErrOutcomeUnknown)
	require.EqualValues(t, 1, posts.Load())
	require.EqualValues(t, 1, r.attempts.Load())
}

func TestRetryableTLSCertificateNotRetried(t *testing.T) {
	t.Parallel()
	srv := quietTLSServer()
	t.Cleanup(srv.Close)
	r := newRecorder(t, time.Millisecond, 5*time.Millisecond, true)

	_, err := r.get(t, srv.URL) // the client does not trust the test certificate
	require.Error(t, err)
	require.EqualValues(t, 1, r.attempts.Load())
	require.Contains(t, err.Error(), "after 1 attempt:")
}

// quietTLSServer is a TLS server whose clients do not trust it, without the handshake errors
// that causes in the test log.
func quietTLSServer() *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	return srv
}

func TestRetryableContextCanceled(t *testing.T) {
	t.Parallel()
	t.Run("during the request", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		srv := newScript(t, func(w http.ResponseWriter, _ *http.Request) {
			cancel()
			w.WriteHeader(503)
		})
		r := newRecorder(t, time.Millisecond, 5*time.Millisecond, true)

		resp, err := r.getCtx(t, ctx, srv.URL)
		require.Nil(t, resp)
		require.ErrorIs(t, err, context.Canceled)
		require.EqualValues(t, 1, srv.hits.Load())
		require.Empty(t, r.recorded())
	})
	t.Run("during the wait", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		srv := newScript(t, reply(503, ""))
		r := newRecorder(t, time.Millisecond, 5*time.Millisecond, true)
		r.client.Backoff = func(time.Duration, time.Duration, int, *http.Response) time.Duration {
			cancel()
			return time.Hour // the client must stop waiting as soon as the context is done
		}

		resp, err := r.getCtx(t, ctx, srv.URL)
		require.Nil(t, resp)
		require.ErrorIs(t, err, context.Canceled)
		require.EqualValues(t, 1, srv.hits.Load())
	})
}

func TestNewClient(t *testing.T) {
	t.Parallel()
	c := NewClient()
	require.Nil(t, c.Logger)
	require.NotNil(t, c.CheckRetry)
	require.NotNil(t, c.Backoff)
	require.NotNil(t, c.ErrorHandler)
	require.Equal(t, 4, c.RetryMax)
	require.IsType(t, &watchingRoundTripper{}, c.HTTPClient.Transport)
}

// response builds a response as http.Client would hand it over.
func response(status int, body string, header ...string) *http.Response {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: -1}
}

// blockingBody fails the test if it is read: reading it would wait forever on a real stream.
type blockingBody struct{ t *testing.T }

func (b blockingBody) Read([]byte) (int, error) {
	b.t.Error("the body was read")
	return 0, io.EOF
}
func (blockingBody) Close() error { return nil }

func TestCheckRetry(t *testing.T) {
	t.Parallel()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	ctx := context.Background()

	t.Run("context done", func(t *testing.T) {
		ok, err := CheckRetry(canceled, response(503, ""), nil)
		require.False(t, ok)
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("transport errors", func(t *testing.T) {
		ok, err := CheckRetry(ctx, nil, &url.Error{Op: "Get", URL: "http://x", Err: io.EOF})
		require.True(t, ok)
		require.NoError(t, err)
		ok, err = CheckRetry(ctx, nil, &url.Error{Op: "Get", URL: "ftp://x", Err: errors.New(`unsupported protocol scheme "ftp"`)})
		require.False(t, ok)
		require.NoError(t, err)
	})
	t.Run("transport errors without RoundTripper's word", func(t *testing.T) {
		dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
		for _, c := range []struct {
			err     error
			retry   bool
			unknown bool
		}{
			{&url.Error{Op: "Post", URL: "http://x", Err: io.EOF}, false, true},
			{&url.Error{Op: "Patch", URL: "http://x", Err: io.ErrUnexpectedEOF}, false, true},
			{&url.Error{Op: "Post", URL: "http://x", Err: dial}, true, false},
			{&url.Error{Op: "Put", URL: "http://x", Err: io.EOF}, true, false},
			{&url.Error{Op: "Delete", URL: "http://x", Err: io.EOF}, true, false},
		} {
			ok, err := CheckRetry(ctx, nil, c.err)
			require.Equal(t, c.retry, ok, c.err)
			if c.unknown {
				require.ErrorIs(t, err, remedy.ErrOutcomeUnknown)
				require.ErrorIs(t, err, c.err)
			} else {
				require.NoError(t, err)
			}
		}
	})
	t.Run("success", func(t *testing.T) {
		resp := response(200, `{"data":{}}`)
		ok, err := CheckRetry(ctx, resp, nil)
		require.False(t, ok)
		require.NoError(t, err)
		require.Equal(t, `{"data":{}}`, readAll(t, resp))
	})
	t.Run("bodies that cannot carry a failure are not read", func(t *testing.T) {
		for _, resp := range []*http.Response{
			{StatusCode: 101, Header: http.Header{"Upgrade": {"websocket"}}},
			{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}},
			{StatusCode: 200, Header: http.Header{"Content-Type": {"application/x-ndjson"}}},
			{StatusCode: 200, Header: http.Header{"Content-Type": {"video/mp4"}}},
			{StatusCode: 200, Header: http.Header{}, ContentLength: remedy.DefaultMaxBody + 1},
		} {
			body := blockingBody{t}
			resp.Body = body
			ok, err := CheckRetry(ctx, resp, nil)
			require.False(t, ok)
			require.NoError(t, err)
			require.Equal(t, body, resp.Body, "left as it was")
			require.Zero(t, Backoff(0, time.Second, 0, resp))
		}
	})
	t.Run("retryable failure", func(t *testing.T) {
		ok, err := CheckRetry(ctx, response(503, `{"error":{"code":"down"}}`), nil)
		require.True(t, ok)
		var env *remedy.Envelope
		require.ErrorAs(t, err, &env)
		require.Equal(t, "down", env.Code)
	})
	t.Run("the same response is parsed once", func(t *testing.T) {
		resp := response(503, `{"error":{"code":"down"}}`)
		_, err1 := CheckRetry(ctx, resp, nil)
		_, err2 := CheckRetry(ctx, resp, nil)
		require.Same(t, err1, err2)
	})
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	const maxD = time.Duration(math.MaxInt64)
	date := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name     string
		min, max time.Duration
		attempt  int
		resp     func() *http.Response
		lo, hi   time.Duration
	}{
		{"first attempt", 10 * time.Millisecond, time.Second, 0, nil, 5 * time.Millisecond, 10 * time.Millisecond},
		{"fourth attempt", 10 * time.Millisecond, time.Second, 3, nil, 40 * time.Millisecond, 80 * time.Millisecond},
		{"capped at max, still jittered", 10 * time.Millisecond, time.Second, 10, nil, 500 * time.Millisecond, time.Second},
		{"attempt huge", 10 * time.Millisecond, time.Second, math.MaxInt, nil, 500 * time.Millisecond, time.Second},
		{"attempt 62 at the edge", 1, maxD, 62, nil, 1 << 61, 1 << 62},
		{"attempt 63", 1, maxD, 63, nil, maxD / 2, maxD},
		{"attempt negative", 10 * time.Millisecond, time.Second, -5, nil, 5 * time.Millisecond, 10 * time.Millisecond},
		{"min > max", time.Second, 100 * time.Millisecond, 0, nil, 50 * time.Millisecond, 100 * time.Millisecond},
		{"min and max saturated", maxD, maxD, 1 << 40, nil, maxD / 2, maxD},
		{"min zero", 0, time.Second, 3, nil, 0, 0},
		{"min negative", -time.Second, time.Second, 3, nil, 0, 0},
		{"max zero", time.Millisecond, 0, 3, nil, 0, 0},
		{"max negative, even with a server wait", time.Millisecond, -time.Second, 0,
			func() *http.Response { return response(429, "", "Retry-After", "2") }, 0, 0},
		{"a success has no server wait", 10 * time.Millisecond, time.Second, 0,
			func() *http.Response { return response(200, "ok", "Retry-After", "2") }, 5 * time.Millisecond, 10 * time.Millisecond},
		{"retry_after_ms on a 400", time.Millisecond, time.Second, 0,
			func() *http.Response {
				return response(400, `{"error":{"code":"busy","retryable":true,"retry_after_ms":100}}`)
			}, 100 * time.Millisecond, 110 * time.Millisecond},
		{"server wait below min is honoured", time.Second, time.Minute, 2,
			func() *http.Response { return response(503, "", "Retry-After-Ms", "50") }, 50 * time.Millisecond, 55 * time.Millisecond},
		{"Retry-After on a 500", time.Millisecond, time.Minute, 0,
			func() *http.Response { return response(500, "", "Retry-After", "2") }, 2 * time.Second, 2200 * time.Millisecond},
		{"Retry-After HTTP-date", time.Millisecond, time.Minute, 0,
			func() *http.Response {
				return response(503, "", "Date", date.Format(http.TimeFormat), "Retry-After", date.Add(3*time.Second).Format(http.TimeFormat))
			}, 3 * time.Second, 3300 * time.Millisecond},
		{"Retry-After in the past", 10 * time.Millisecond, time.Minute, 0,
			func() *http.Response {
				return response(503, "", "Date", date.Format(http.TimeFormat), "Retry-After", date.Add(-time.Hour).Format(http.TimeFormat))
			}, 5 * time.Millisecond, 10 * time.Millisecond},
		{"Retry-After zero", 10 * time.Millisecond, time.Minute, 0,
			func() *http.Response { return response(503, "", "Retry-After", "0") }, 5 * time.Millisecond, 10 * time.Millisecond},
		{"Retry-After negative is ignored", 10 * time.Millisecond, time.Minute, 0,
			func() *http.Response { return response(503, "", "Retry-After", "-5") }, 5 * time.Millisecond, 10 * time.Millisecond},
		{"server wait above max", time.Millisecond, time.Second, 0,
			func() *http.Response { return response(429, "", "Retry-After", "30") }, time.Second, time.Second},
		{"retry_after_ms absurd", time.Millisecond, 50 * time.Millisecond, 0,
			func() *http.Response {
				return response(429, `{"error":{"code":"x","retryable":true,"retry_after_ms":1000000000000}}`)
			}, 50 * time.Millisecond, 50 * time.Millisecond},
		{"Retry-After beyond a Duration, max saturated", time.Millisecond, maxD, 0,
			func() *http.Response { return response(429, "", "Retry-After", "1e300") }, maxD, maxD},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			seen := map[time.Duration]bool{}
			for range 2000 {
				var resp *http.Response
				if c.resp != nil {
					resp = c.resp()
				}
				d := Backoff(c.min, c.max, c.attempt, resp)
				require.GreaterOrEqual(t, d, c.lo)
				require.LessOrEqual(t, d, c.hi)
				seen[d] = true
			}
			if c.hi-c.lo >= 1000 {
				require.Greater(t, len(seen), 100, "jittered")
			}
		})
	}
}

// The wait in the body survives retryablehttp draining and closing the body before Backoff.
func TestBackoffAfterDrain(t *testing.T) {
	t.Parallel()
	resp := response(400, `{"error":{"code":"busy","retryable":true,"retry_after_ms":100}}`)
	ok, _ := CheckRetry(context.Background(), resp, nil)
	require.True(t, ok)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())

	d := Backoff(time.Millisecond, time.Second, 0, resp)
	require.GreaterOrEqual(t, d, 100*time.Millisecond)
	require.LessOrEqual(t, d, 110*time.Millisecond)
}

func TestServerWaitNeverOverflows(t *testing.T) {
	t.Parallel()
	const maxD = time.Duration(math.MaxInt64)
	for _, after := range []time.Duration{1, 9, maxD / 10 * 9, maxD - 1, maxD} {
		for range 2000 {
			d := serverWait(after, maxD)
			require.GreaterOrEqual(t, d, after)
			require.LessOrEqual(t, d, maxD)
		}
	}
}

func TestErrorHandler(t *testing.T) {
	t.Parallel()
	t.Run("transport error", func(t *testing.T) {
		resp, err := ErrorHandler(nil, &url.Error{Op: "Get", URL: "http://x", Err: io.EOF}, 1)
		require.Nil(t, resp)
		require.ErrorIs(t, err, io.EOF)
		require.Equal(t, `remedy: giving up after 1 attempt: Get "http://x": EOF`, err.Error())
	})
	t.Run("envelope from CheckRetry", func(t *testing.T) {
		body := &closeRecorder{Reader: strings.NewReader(`{"error":{"code":"down"}}`)}
		resp := &http.Response{StatusCode: 503, Header: http.Header{}, Body: body}
		_, checkErr := CheckRetry(context.Background(), resp, nil)
		out, err := ErrorHandler(resp, checkErr, 5)
		require.Nil(t, out)
		var env *remedy.Envelope
		require.ErrorAs(t, err, &env)
		require.Equal(t, "down", env.Code)
		require.Equal(t, "remedy: giving up after 5 attempts: down (503)", err.Error())
		require.True(t, body.closed)
	})
	t.Run("no reason given: the response is read", func(t *testing.T) {
		body := &closeRecorder{Reader: strings.NewReader(`{"error":{"code":"quota","message":"later"}}`)}
		resp := &http.Response{StatusCode: 429, Header: http.Header{}, Body: body}
		_, err := ErrorHandler(resp, nil, 2)
		var env *remedy.Envelope
		require.ErrorAs(t, err, &env)
		require.Equal(t, "quota", env.Code)
		require.True(t, body.closed)
	})
	t.Run("nothing to say", func(t *testing.T) {
		_, err := ErrorHandler(response(200, "ok"), nil, 3)
		require.EqualError(t, err, "remedy: giving up after 3 attempts")
	})
	t.Run("context error", func(t *testing.T) {
		_, err := ErrorHandler(response(503, ""), context.Canceled, 1)
		require.ErrorIs(t, err, context.Canceled)
	})
}

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// A failure that names fields is sent once, whatever says it is retryable: sent again
// unchanged, it fails the same way. First the reference server's own answer to an invalid
// body (which said retryable: true until issue 34), then a failure that says it is retryable
// in its body (AgentBack's meaning: "with corrected input"), in a header, and by its status.
func TestRetryableFailureThatNamesFieldsIsSentOnce(t *testing.T) {
	t.Parallel()
	type CreateInvoice struct {
		CustomerID string `json:"customer_id"`
		Currency   string `json:"currency" schema:"enum=usd,eur"`
		Amount     int    `json:"amount" schema:"minimum=1"`
	}
	api, err := server.New()
	require.NoError(t, err)
	require.NoError(t, server.Post(api, "/v1/invoices", func(_ context.Context, in CreateInvoice) (CreateInvoice, error) {
		return in, nil
	}, server.OperationID("create_invoice")))
	var hits atomic.Int32
	ref := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(ref.Close)

	c := NewClient() // retryablehttp's defaults: 4 retries
	c.RetryWaitMin, c.RetryWaitMax = time.Millisecond, 10*time.Millisecond
	t.Cleanup(c.HTTPClient.CloseIdleConnections)
	req, err := retryablehttp.NewRequest(http.MethodPost, ref.URL+"/v1/invoices",
		[]byte(`{"customer_id":"cus_1","currency":"USD","amount":1200}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	require.Nil(t, resp)
	require.EqualValues(t, 1, hits.Load(), "the same invalid body is sent once")
	var env *remedy.Envelope
	require.ErrorAs(t, err, &env)
	require.Equal(t, "invalid_body", env.Code)
	require.NotEmpty(t, env.Issues)
	require.False(t, env.Retryable)

	const issues = `"issues":[{"path":["currency"],"code":"invalid_value","message":"Invalid option: expected one of \"usd\"|\"eur\""}]`
	for _, tc := range []struct {
		name   string
		status int
		body   string
		header []string
	}{
		{"the body says retryable", 422, `{"error":{"statusCode":422,"code":"invalid_body","message":"The request body is invalid.","retryable":true,` + issues + `}}`, nil},
		{"a header says retry", 422, `{"error":{"code":"invalid_body","message":"invalid",` + issues + `}}`, []string{"X-Should-Retry", "true"}},
		{"the status says retryable", 500, `{"error":{"code":"internal_server_error","message":"invalid",` + issues + `}}`, nil},
		// AgentBack's challenge: retryable "with the token", which the same request lacks.
		{"a confirmation challenge says retryable", 409, `{"error":{"statusCode":409,"code":"confirmation_required","message":"This operation requires confirmation.","retryable":true,"confirmationToken":"ct_1"}}`, nil},
		{"a spent token says retryable", 409, `{"error":{"statusCode":409,"code":"confirmation_invalid","message":"spent","retryable":true}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newScript(t, reply(tc.status, tc.body, tc.header...))
			r := newRecorder(t, time.Millisecond, 10*time.Millisecond, false)
			_, err := r.get(t, srv.URL)
			require.EqualValues(t, 1, srv.hits.Load())
			var env *remedy.Envelope
			require.ErrorAs(t, err, &env)
			require.False(t, env.Retryable)
			require.Empty(t, r.recorded(), "no wait: nothing to wait for")
		})
	}
}
