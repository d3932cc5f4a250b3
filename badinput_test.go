package remedy_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// badNested is a body whose JSON nests depth objects and arrays in all: {"error":{"code":
// "deep","schema":[[...]]}} — two objects, then depth-2 arrays.
func badNested(depth int) []byte {
	n := depth - 2
	return []byte(`{"error":{"code":"deep","schema":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`)
}

// badAgreesWithClassify checks that Classify reaches the decision Parse reached.
func badAgreesWithClassify(t *testing.T, status int, header http.Header, body []byte, e *remedy.Envelope) {
	t.Helper()
	v := remedy.Classify(status, header, body)
	if e == nil {
		assert.False(t, v.Failure, "Classify: failure")
		return
	}
	assert.True(t, v.Failure, "Classify: failure")
	assert.Equal(t, e.Dialect, v.Dialect, "Classify: dialect")
	assert.Equal(t, e.Retryable, v.Retryable, "Classify: retryable")
	assert.Equal(t, e.RetrySource, v.RetrySource, "Classify: retry source")
	assert.Equal(t, e.RetryAfter, v.RetryAfter, "Classify: retry after")
	assert.Equal(t, e.Category, v.Category, "Classify: category")
}

// TestBadInputUnstructured: a body that is not valid, unambiguous JSON within the limits is not
// guessed at; the failure is classified by its status alone.
func TestBadInputUnstructured(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		status        int
		body          []byte
		wantCode      string
		wantRetryable bool
		wantCategory  remedy.Category
	}{
		{"nesting 65 levels", 500, badNested(65), "internal_server_error", true, remedy.CategoryInternal},
		{"nesting 10000 levels of objects", 500,
			[]byte(strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)),
			"internal_server_error", true, remedy.CategoryInternal},
		{"nesting 10000 unclosed arrays", 500, []byte(strings.Repeat("[", 10000)),
			"internal_server_error", true, remedy.CategoryInternal},
		{"nesting 10000 levels inside the error object", 503,
			[]byte(`{"error":{"code":"x","schema":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}}`),
			"service_unavailable", true, remedy.CategoryDependency},
		{"invalid UTF-8 in a string", 400, []byte("{\"error\":{\"code\":\"x\",\"message\":\"caf\xe9 \xff\"}}"),
			"bad_request", false, remedy.CategoryValidation},
		{"invalid UTF-8 in a key", 400, []byte("{\"error\":{\"co\xffde\":\"x\"}}"),
			"bad_request", false, remedy.CategoryValidation},
		{"truncated UTF-8 sequence at the end of a string", 400, []byte("{\"error\":{\"code\":\"\xe2\x82\"}}"),
			"bad_request", false, remedy.CategoryValidation},
		{"duplicate keys", 400, []byte(`{"error":{"code":"a","code":"b"}}`),
			"bad_request", false, remedy.CategoryValidation},
		{"duplicate top-level keys", 409, []byte(`{"error":{"code":"a"},"error":{"code":"b"}}`),
			"conflict", false, remedy.CategoryState},
		{"100-digit number", 503,
			[]byte(`{"error":{"code":"x","retry_after_ms":` + strings.Repeat("7", 100) + `}}`),
			"service_unavailable", true, remedy.CategoryDependency},
		{"JSON string body", 400, []byte(`"oops"`), "bad_request", false, remedy.CategoryValidation},
		{"truncated JSON", 502, []byte(`{"error":{"code":"invalid","message":"trunc`),
			"bad_gateway", true, remedy.CategoryDependency},
		{"trailing garbage", 500, []byte(`{"error":{"code":"x"}} trailing`),
			"internal_server_error", true, remedy.CategoryInternal},
		{"two JSON values", 500, []byte(`{"error":{"code":"x"}}{"error":{"code":"y"}}`),
			"internal_server_error", true, remedy.CategoryInternal},
		{"bare control character in a string", 422, []byte("{\"error\":{\"code\":\"a\x01b\"}}"),
			"unprocessable_entity", false, remedy.CategoryValidation},
		{"bad escape", 400, []byte(`{"error":{"code":"\x"}}`), "bad_request", false, remedy.CategoryValidation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ok := remedy.Parse(tc.status, nil, tc.body)
			require.True(t, ok)
			require.NotNil(t, e)
			assert.Equal(t, remedy.DialectUnstructured, e.Dialect)
			assert.Equal(t, tc.status, e.Status)
			assert.Equal(t, tc.wantCode, e.Code, "the code names the status")
			assert.Empty(t, e.Message, "unreadable JSON is not a message")
			assert.Equal(t, tc.wantRetryable, e.Retryable)
			assert.Equal(t, remedy.RetryFromStatus, e.RetrySource)
			assert.Equal(t, tc.wantCategory, e.Category)
			assert.Zero(t, e.RetryAfter)
			assert.Empty(t, e.Issues)
			badAgreesWithClassify(t, tc.status, nil, tc.body, e)
		})
	}
}

// TestBadInputDepthLimit: 64 levels is the deepest body still read as structured.
func TestBadInputDepthLimit(t *testing.T) {
	t.Parallel()
	e, ok := remedy.Parse(500, nil, badNested(64))
	require.True(t, ok)
	assert.Equal(t, remedy.DialectAgent, e.Dialect)
	assert.Equal(t, "deep", e.Code)

	e, ok = remedy.Parse(500, nil, badNested(65))
	require.True(t, ok)
	assert.Equal(t, remedy.DialectUnstructured, e.Dialect)
	assert.Equal(t, "internal_server_error", e.Code)
}

// TestBadInputRetryAfterSaturates: a wait too large for a Duration is the largest Duration, not
// an overflow, and not ignored.
func TestBadInputRetryAfterSaturates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		header      http.Header
		body        string
		wantDialect remedy.Dialect
	}{
		{"retry_after_ms 1e400", nil, `{"error":{"retry_after_ms":1e400}}`, remedy.DialectAgentSpec},
		{"retry_after_ms 1e300", nil, `{"error":{"retry_after_ms":1e300}}`, remedy.DialectAgentSpec},
		{"retry_after_seconds as a string", nil, `{"error":{"code":"x","retry_after_seconds":"1e400"}}`, remedy.DialectAgentSpec},
		{"Retry-After 1e400", http.Header{"Retry-After": {"1e400"}}, "", remedy.DialectUnstructured},
		{"Retry-After-Ms 1e400", http.Header{"Retry-After-Ms": {"1e400"}}, "", remedy.DialectUnstructured},
		{"Retry-After 10^30 seconds", http.Header{"Retry-After": {"1" + strings.Repeat("0", 30)}}, "", remedy.DialectUnstructured},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ok := remedy.Parse(503, tc.header, []byte(tc.body))
			require.True(t, ok)
			assert.Equal(t, tc.wantDialect, e.Dialect)
			assert.Equal(t, time.Duration(math.MaxInt64), e.RetryAfter, "saturates at the largest Duration")
			assert.True(t, e.Retryable)
			assert.Equal(t, remedy.RetryFromStatus, e.RetrySource)
			assert.Contains(t, e.Prompt(), "more than 100 years")
			badAgreesWithClassify(t, 503, tc.header, []byte(tc.body), e)
		})
	}
}

// TestBadInputRetryValuesIgnored: negative, NaN and non-numeric waits are ignored, never
// guessed, and the next source in envelope_retry.go's order (retry_after_ms, Retry-After-Ms,
// retry_after_seconds, Google RetryInfo, Kubernetes retryAfterSeconds, Retry-After, then for
// rate limits the reset headers) decides.
func TestBadInputRetryValuesIgnored(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     int
		header     http.Header
		body       string
		wantAfter  time.Duration
		wantSource remedy.RetrySource
	}{
		{"negative retry_after_ms, then Retry-After-Ms", 503,
			http.Header{"Retry-After-Ms": {"1500"}}, `{"error":{"code":"x","retry_after_ms":-5}}`,
			1500 * time.Millisecond, remedy.RetryFromStatus},
		{"NaN retry_after_ms, then retry_after_seconds", 503,
			nil, `{"error":{"code":"x","retry_after_ms":"NaN","retry_after_seconds":2}}`,
			2 * time.Second, remedy.RetryFromStatus},
		{"non-numeric retry_after_ms, then Retry-After", 503,
			http.Header{"Retry-After": {"7"}}, `{"error":{"code":"x","retry_after_ms":"soon"}}`,
			7 * time.Second, remedy.RetryFromStatus},
		{"-Inf retry_after_ms, then Retry-After", 503,
			http.Header{"Retry-After": {"8"}}, `{"error":{"code":"x","retry_after_ms":-1e400}}`,
			8 * time.Second, remedy.RetryFromStatus},
		{"boolean retry_after_ms, then Retry-After", 503,
			http.Header{"Retry-After": {"3"}}, `{"error":{"code":"x","retry_after_ms":true}}`,
			3 * time.Second, remedy.RetryFromStatus},
		{"negative Retry-After-Ms, then retry_after_seconds", 503,
			http.Header{"Retry-After-Ms": {"-1"}}, `{"error":{"code":"x","retry_after_seconds":3}}`,
			3 * time.Second, remedy.RetryFromStatus},
		{"NaN Retry-After-Ms, then Retry-After", 503,
			http.Header{"Retry-After-Ms": {"NaN"}, "Retry-After": {"4"}}, "",
			4 * time.Second, remedy.RetryFromStatus},
		{"negative retry_after_seconds, then Retry-After", 503,
			http.Header{"Retry-After": {"9"}}, `{"error":{"code":"x","retry_after_seconds":-1}}`,
			9 * time.Second, remedy.RetryFromStatus},
		{"negative Google retryDelay, then Retry-After", 503,
			http.Header{"Retry-After": {"5"}},
			`{"error":{"code":503,"status":"UNAVAILABLE","message":"down","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"-3s"}]}}`,
			5 * time.Second, remedy.RetryFromStatus},
		{"negative Kubernetes retryAfterSeconds, then Retry-After", 503,
			http.Header{"Retry-After": {"6"}},
			`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503,"details":{"retryAfterSeconds":-2}}`,
			6 * time.Second, remedy.RetryFromStatus},
		{"negative Retry-After, then RateLimit-Reset", 429,
			http.Header{"Retry-After": {"-5"}, "Ratelimit-Reset": {"10"}}, "",
			10 * time.Second, remedy.RetryFromStatus},
		{"NaN Retry-After, then X-RateLimit-Reset", 429,
			http.Header{"Retry-After": {"NaN"}, "X-Ratelimit-Reset": {"12"}}, "",
			12 * time.Second, remedy.RetryFromStatus},
		{"negative RateLimit-Reset, then X-RateLimit-Reset", 429,
			http.Header{"Ratelimit-Reset": {"-1"}, "X-Ratelimit-Reset": {"11"}}, "",
			11 * time.Second, remedy.RetryFromStatus},
		{"non-numeric Retry-After, nothing else", 503,
			http.Header{"Retry-After": {"soon"}}, "", 0, remedy.RetryFromStatus},
		{"negative Retry-After, nothing else", 503,
			http.Header{"Retry-After": {"-5"}}, "", 0, remedy.RetryFromStatus},
		{"NaN Retry-After, nothing else", 503,
			http.Header{"Retry-After": {"NaN"}}, "", 0, remedy.RetryFromStatus},
		{"every source bad", 429,
			http.Header{"Retry-After-Ms": {"-1"}, "Retry-After": {"later"}, "Ratelimit-Reset": {"NaN"}},
			`{"error":{"code":"rate_limited","retry_after_ms":"x","retry_after_seconds":-3}}`, 0, remedy.RetryFromStatus},
		{"HTTP-date in the past is no wait", 503,
			http.Header{"Retry-After": {"Wed, 21 Oct 2015 07:28:00 GMT"}}, "", 0, remedy.RetryFromStatus},
		// TestMain fixes the clock at 2026-11-21 12:00:00 UTC.
		{"HTTP-date in the future", 503,
			http.Header{"Retry-After": {"Sat, 21 Nov 2026 12:00:30 GMT"}}, "", 30 * time.Second, remedy.RetryFromStatus},
		{"HTTP-date relative to the Date header", 503,
			http.Header{"Retry-After": {"Wed, 21 Oct 2015 07:28:00 GMT"}, "Date": {"Wed, 21 Oct 2015 07:27:00 GMT"}}, "",
			time.Minute, remedy.RetryFromStatus},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ok := remedy.Parse(tc.status, tc.header, []byte(tc.body))
			require.True(t, ok)
			assert.Equal(t, tc.wantAfter, e.RetryAfter)
			assert.True(t, e.Retryable, "the status decides: %d is transient", tc.status)
			assert.Equal(t, tc.wantSource, e.RetrySource)
			badAgreesWithClassify(t, tc.status, tc.header, []byte(tc.body), e)
		})
	}
}

// TestBadInputNotAFailure: a success is not a failure unless an in-band dialect says so, and a
// redirect never is.
func TestBadInputNotAFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		body   string
	}{
		{"200 ok true", 200, `{"ok":true}`},
		{"200 data", 200, `{"data":{}}`},
		{"204 empty", 204, ``},
		{"200 error object outside an in-band dialect", 200, `{"error":{"code":"x"}}`},
		{"200 error object with a message", 200, `{"error":{"code":"x","message":"y","retryable":true}}`},
		{"200 problem details", 200, `{"type":"https://example.com/p","title":"T","status":400}`},
		{"200 JSON-RPC result", 200, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"200 MCP result isError false", 200,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}],"isError":false}}`},
		{"200 bare MCP result isError false", 200, `{"content":[{"type":"text","text":"done"}],"isError":false}`},
		{"200 GraphQL data without errors", 200, `{"data":{"viewer":{"login":"x"}}}`},
		{"200 Slack ok true", 200, `{"ok":true,"channel":"C1"}`},
		{"200 plain text", 200, `error: everything is fine`},
		{"200 invalid JSON", 200, `{"error":`},
		{"302 redirect", 302, `{"error":{"code":"x","message":"moved"}}`},
		{"302 empty", 302, ``},
		{"304 not modified", 304, ``},
		{"negative status", -1, `{"error":{"code":"x"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ok := remedy.Parse(tc.status, nil, []byte(tc.body))
			assert.False(t, ok)
			assert.Nil(t, e)
			v := remedy.Classify(tc.status, nil, []byte(tc.body))
			assert.False(t, v.Failure)
			assert.Equal(t, tc.status, v.Status)
		})
	}
}

// TestBadInputNoStatus: with no HTTP status the body alone decides.
func TestBadInputNoStatus(t *testing.T) {
	t.Parallel()
	body := []byte(`{"error":{"code":"x","message":"y"}}`)
	e, ok := remedy.Parse(0, nil, body)
	require.True(t, ok)
	require.NotNil(t, e)
	assert.Equal(t, "x", e.Code)
	assert.Equal(t, "y", e.Message)
	assert.Equal(t, 0, e.Status)
	assert.Equal(t, remedy.DialectAgentSpec, e.Dialect)
	assert.False(t, e.Retryable)
	assert.Equal(t, remedy.RetryFromNone, e.RetrySource)
	badAgreesWithClassify(t, 0, nil, body, e)

	e, ok = remedy.Parse(0, nil, []byte("not json"))
	assert.False(t, ok, "no status and no structure: nothing says it failed")
	assert.Nil(t, e)
}

// TestBadInputHugeBody: Parse reads at most DefaultMaxBody of a body and classifies what it read,
// without error, and the envelope does not alias the body.
func TestBadInputHugeBody(t *testing.T) {
	t.Parallel()
	const size = 10 << 20
	tests := []struct {
		name        string
		body        []byte
		wantDialect remedy.Dialect
		wantCode    string
	}{
		{"plain text", bytes.Repeat([]byte("x"), size), remedy.DialectUnstructured, "service_unavailable"},
		// The code arrived whole before the cut; the message did not.
		{"a JSON string longer than the bound", []byte(`{"error":{"code":"x","message":"` + strings.Repeat("a", size) + `"}}`),
			remedy.DialectTruncated, "x"},
		{"deep nesting", []byte(strings.Repeat(`{"a":`, size/5)), remedy.DialectUnstructured, "service_unavailable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ok := remedy.Parse(503, nil, tc.body)
			require.True(t, ok)
			require.NotNil(t, e)
			assert.Equal(t, tc.wantDialect, e.Dialect)
			assert.Equal(t, tc.wantCode, e.Code)
			assert.True(t, e.Retryable)
			assert.LessOrEqual(t, len(e.Message), 210, "the message of an unstructured body is bounded")

			prefix, ok := remedy.Parse(503, nil, tc.body[:remedy.DefaultMaxBody+1])
			require.True(t, ok)
			assert.Equal(t, prefix, e, "only the first DefaultMaxBody bytes count")

			msg := e.Message
			for i := range tc.body[:1024] {
				tc.body[i] = '?'
			}
			assert.Equal(t, msg, e.Message, "the envelope aliases the body")
		})
	}
}

// badReadCloser yields data, then ends with err on every later read, and records Close.
type badReadCloser struct {
	data   []byte
	err    error
	closed bool
}

func (b *badReadCloser) Read(p []byte) (int, error) {
	if len(b.data) == 0 {
		return 0, b.err
	}
	n := copy(p, b.data)
	b.data = b.data[n:]
	return n, nil
}

func (b *badReadCloser) Close() error {
	b.closed = true
	return nil
}

// TestBadInputParseResponseMaxBody: a body longer than the bound is classified from the prefix
// that was read, and resp.Body still yields the whole body from its start.
func TestBadInputParseResponseMaxBody(t *testing.T) {
	t.Parallel()
	text := "upstream is down; it will be back in a few minutes, please retry the request later on. Thank you!!!!"
	agent := `{"error":{"statusCode":503,"code":"maintenance","message":"Back again soon.","retryable":false}}    `
	require.Len(t, text, 100)
	require.Len(t, agent, 100)
	tests := []struct {
		name        string
		body        string
		wantMessage string
		wantCode    string
	}{
		// The message is the prefix's first line: the 16 bytes that were read.
		{"plain text", text, "upstream is down", "service_unavailable"},
		// The whole body is an agent envelope, but its prefix is not JSON: the status decides.
		{"agent envelope", agent, "", "service_unavailable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			orig := &badReadCloser{data: []byte(tc.body), err: io.EOF}
			resp := &http.Response{StatusCode: 503, Header: http.Header{}, Body: orig}
			e, ok := remedy.ParseResponse(resp, remedy.WithMaxBody(16))
			require.True(t, ok)
			require.NotNil(t, e)
			assert.Equal(t, remedy.DialectUnstructured, e.Dialect)
			assert.Equal(t, tc.wantMessage, e.Message)
			assert.Equal(t, tc.wantCode, e.Code)
			assert.True(t, e.Retryable)
			assert.Equal(t, remedy.RetryFromStatus, e.RetrySource)

			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tc.body, string(got), "resp.Body replays the whole body from its start")
			assert.False(t, orig.closed)
			require.NoError(t, resp.Body.Close())
			assert.True(t, orig.closed, "closing resp.Body closes the original")
		})
	}
}

// TestBadInputParseResponseWholeBody: within the bound the body is read as a whole, and
// replayed.
func TestBadInputParseResponseWholeBody(t *testing.T) {
	t.Parallel()
	body := `{"error":{"statusCode":503,"code":"maintenance","message":"Back soon.","retryable":false}}`
	resp := &http.Response{StatusCode: 503, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
	e, ok := remedy.ParseResponse(resp, remedy.WithMaxBody(-1)) // ignored: the default bound applies
	require.True(t, ok)
	assert.Equal(t, remedy.DialectAgent, e.Dialect)
	assert.Equal(t, "maintenance", e.Code)
	assert.False(t, e.Retryable)
	assert.Equal(t, remedy.RetryFromBody, e.RetrySource)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, body, string(got))
	require.NoError(t, resp.Body.Close())
}

// TestBadInputParseResponseReadError: a read error ends the body; the failure is classified from
// what arrived, and the replayed body gives those bytes, then the same error.
func TestBadInputParseResponseReadError(t *testing.T) {
	t.Parallel()
	errReset := errors.New("connection reset by peer")
	tests := []struct {
		name        string
		body        string
		wantDialect remedy.Dialect
		wantCode    string
		wantMessage string
	}{
		{"text cut short", "upstream connect error", remedy.DialectUnstructured, "service_unavailable", "upstream connect error"},
		{"JSON cut short", `{"error":{"code":"maint`, remedy.DialectUnstructured, "service_unavailable", ""},
		{"JSON complete before the error", `{"error":{"code":"maintenance","message":"Back soon."}}`,
			remedy.DialectAgentSpec, "maintenance", "Back soon."},
		{"nothing before the error", "", remedy.DialectUnstructured, "service_unavailable", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			orig := &badReadCloser{data: []byte(tc.body), err: errReset}
			resp := &http.Response{StatusCode: 503, Header: http.Header{}, Body: orig}
			e, ok := remedy.ParseResponse(resp)
			require.True(t, ok)
			require.NotNil(t, e)
			assert.Equal(t, tc.wantDialect, e.Dialect)
			assert.Equal(t, tc.wantCode, e.Code)
			assert.Equal(t, tc.wantMessage, e.Message)
			assert.True(t, e.Retryable)

			got, err := io.ReadAll(resp.Body)
			assert.Equal(t, tc.body, string(got), "the bytes that arrived")
			require.ErrorIs(t, err, errReset, "then the same error")
			_, err = resp.Body.Read(make([]byte, 8))
			assert.ErrorIs(t, err, errReset, "and again on every later read")
			require.NoError(t, resp.Body.Close())
			assert.True(t, orig.closed)
		})
	}
}

// TestBadInputParseResponseEdges: a nil response, and responses without a body.
func TestBadInputParseResponseEdges(t *testing.T) {
	t.Parallel()
	e, ok := remedy.ParseResponse(nil)
	assert.False(t, ok)
	assert.Nil(t, e)

	for _, body := range []io.ReadCloser{nil, http.NoBody} {
		resp := &http.Response{StatusCode: 502, Header: http.Header{}, Body: body}
		e, ok := remedy.ParseResponse(resp)
		require.True(t, ok)
		assert.Equal(t, remedy.DialectUnstructured, e.Dialect)
		assert.Equal(t, "bad_gateway", e.Code)
		assert.True(t, e.Retryable)
		assert.Equal(t, body, resp.Body, "a missing body is left as it was")
	}

	resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{"ok":true}`))}
	e, ok = remedy.ParseResponse(resp)
	assert.False(t, ok)
	assert.Nil(t, e)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, `{"ok":true}`, string(got), "a success's body is replayed too")
}

// TestParseOwnsWhatItKeeps: the envelope of a small body (read from one copy of it) and of a
// large one (whose kept strings are copied out) is unchanged when the caller reuses the body's
// buffer, and appending to one of its raw values writes over none of the others.
func TestParseOwnsWhatItKeeps(t *testing.T) {
	t.Parallel()
	small := []byte(`{"error":{"code":"invalid_body","message":"3 issues","schema":{"type":"object"},
"issues":[{"pointer":"/currency","code":"enum","message":"currency must be one of usd, eur","received":"USD$","allowed_values":["usd","eur"],"suggested_value":"usd"},
{"pointer":"/items/2/quantity","code":"maximum","message":"at most 100","expected":{"maximum":100},"received":250}]}}`)
	pad := `,"padding":"` + strings.Repeat("p", 20<<10) + `"}}`
	large := append(bytes.TrimSuffix(bytes.Clone(small), []byte("}}")), pad...)
	for name, body := range map[string][]byte{"small": small, "large": large} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e, ok := remedy.Parse(422, nil, body)
			require.True(t, ok)
			require.Len(t, e.Issues, 2)
			want, err := json.Marshal(e)
			require.NoError(t, err)
			for i := range body {
				body[i] = '?'
			}
			_ = append(e.Issues[0].Received, `"overwritten"`...)
			_ = append(e.Issues[0].AllowedValues[0], `"overwritten"`...)
			_ = append(e.Schema, `"overwritten"`...)
			got, err := json.Marshal(e)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got), "the envelope changed with the caller's buffer or an append")
		})
	}
}
