package remedy_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/corpus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// afterCut is what a truncated body goes on with past the bound: never read.
var afterCut = `"never":"read","retryable":true,"retry_after_ms":999,"code":"later"}}` + strings.Repeat(" ", 64)

// readCut reads prefix as the part of a longer body that arrived, on every path: ParseResponse
// with MaxBody at the cut, and Parse and Classify on a body whose first DefaultMaxBody bytes
// are whitespace and then prefix (the same JSON, cut at the same place). It checks that the
// three agree and returns the envelope.
func readCut(t *testing.T, status int, header http.Header, prefix string) (*remedy.Envelope, bool) {
	t.Helper()
	if header == nil {
		header = http.Header{}
	}
	resp := &http.Response{StatusCode: status, Header: header, Body: io.NopCloser(strings.NewReader(prefix + afterCut))}
	e, ok := remedy.ParseResponse(resp, remedy.WithMaxBody(int64(len(prefix))))

	big := []byte(strings.Repeat(" ", remedy.DefaultMaxBody-len(prefix)) + prefix + afterCut)
	pe, pok := remedy.Parse(status, header, big)
	v := remedy.Classify(status, header, big)
	require.Equal(t, ok, pok, "ParseResponse and Parse disagree on whether it is a failure")
	require.Equal(t, ok, v.Failure, "Parse and Classify disagree on whether it is a failure")
	if !ok {
		return nil, false
	}
	assert.Equal(t, toView(e), toView(pe), "ParseResponse with MaxBody and Parse read the same cut differently")
	assert.Equal(t, remedy.Verdict{
		Failure: true, Status: pe.Status, Retryable: pe.Retryable, RetrySource: pe.RetrySource,
		RetryAfter: pe.RetryAfter, Severity: pe.Severity, Category: pe.Category, Dialect: pe.Dialect,
	}, v, "Classify decides a cut body as Parse does")
	return e, true
}

// TestTruncatedPrefix: a failure's body cut at the bound is read for the members at its start
// that decide a retry, by the rules every dialect uses, and for nothing else.
func TestTruncatedPrefix(t *testing.T) {
	t.Parallel()
	type want struct {
		dialect    remedy.Dialect
		code       string
		retryable  bool
		source     remedy.RetrySource
		retryAfter time.Duration
		severity   remedy.Severity
		category   remedy.Category
		message    string
	}
	unstructured503 := want{remedy.DialectUnstructured, "service_unavailable", true, remedy.RetryFromStatus, 0,
		remedy.SeverityError, remedy.CategoryDependency, ""}
	tests := []struct {
		name   string
		status int
		header http.Header
		prefix string // what arrived
		want   want
	}{
		{"the body says not retryable: it wins over the 503", 503, nil,
			`{"error":{"code":"account_closed","retryable":false,"message":"The account is closed.",`,
			want{remedy.DialectTruncated, "account_closed", false, remedy.RetryFromBody, 0, remedy.SeverityError, remedy.CategoryDependency, "The account is closed."}},
		{"the body says retryable, and how long to wait", 400, nil,
			`{"error":{"statusCode":400,"code":"busy","retryable":true,"retry_after_ms":1500,"issues":[`,
			want{remedy.DialectTruncated, "busy", true, remedy.RetryFromBody, 1500 * time.Millisecond, remedy.SeverityError, remedy.CategoryValidation, ""}},
		{"the body's flag beats a header", 503, http.Header{"X-Should-Retry": {"true"}},
			`{"error":{"retryable":false,`,
			want{remedy.DialectTruncated, "service_unavailable", false, remedy.RetryFromBody, 0, remedy.SeverityError, remedy.CategoryDependency, ""}},
		{"a well-known code decides the category and refines the status", 400, nil,
			`{"error":{"code":"rate_limited","message":"Slow down.",`,
			want{remedy.DialectTruncated, "rate_limited", true, remedy.RetryFromStatus, 0, remedy.SeverityError, remedy.CategoryRateLimit, "Slow down."}},
		{"severity fatal", 503, nil,
			`{"error":{"code":"account_suspended","severity":"fatal","category":"auth",`,
			want{remedy.DialectTruncated, "account_suspended", true, remedy.RetryFromStatus, 0, remedy.SeverityFatal, remedy.CategoryAuth, ""}},
		{"retry_after_seconds", 429, nil,
			`{"error":{"code":"quota","retry_after_seconds":30}`,
			want{remedy.DialectTruncated, "quota", true, remedy.RetryFromStatus, 30 * time.Second, remedy.SeverityError, remedy.CategoryRateLimit, ""}},
		{"a retryable nested in issues does not count", 503, nil,
			`{"error":{"code":"unavailable","issues":[{"path":["a"],"retryable":false}],"schema":{"retryable":false},`,
			want{remedy.DialectTruncated, "unavailable", true, remedy.RetryFromStatus, 0, remedy.SeverityError, remedy.CategoryDependency, ""}},
		{"a retryable in another top-level object does not count", 503, nil,
			`{"data":{"retryable":false,"error":{"retryable":false}},"meta":[{"retryable":false}],`,
			unstructured503},
		{"the top level's members do not count beside an error object", 503, nil,
			`{"retryable":false,"code":"top","error":{"message":"Down for maintenance.",`,
			want{remedy.DialectTruncated, "service_unavailable", true, remedy.RetryFromStatus, 0, remedy.SeverityError, remedy.CategoryDependency, "Down for maintenance."}},
		{"cut inside a string", 503, nil,
			`{"error":{"code":"account_clo`,
			unstructured503},
		{"a string whose closing quote arrived but not its delimiter", 503, nil,
			`{"error":{"retryable":false,"code":"account_closed"`,
			want{remedy.DialectTruncated, "service_unavailable", false, remedy.RetryFromBody, 0, remedy.SeverityError, remedy.CategoryDependency, ""}},
		{"cut inside an escape", 503, nil,
			`{"error":{"retryable":false,"message":"caf\u00`,
			want{remedy.DialectTruncated, "service_unavailable", false, remedy.RetryFromBody, 0, remedy.SeverityError, remedy.CategoryDependency, ""}},
		{"escapes in keys and values", 400, nil,
			`{"error":{"co\u0064e":"rate\u005flimited","message":"\"quoted\" \\ caf\u00e9 \ud83d\ude00",`,
			want{remedy.DialectTruncated, "rate_limited", true, remedy.RetryFromStatus, 0, remedy.SeverityError, remedy.CategoryRateLimit, "\"quoted\" \\ café 😀"}},
		{"a number cut at the bound is not trusted", 503, nil,
			`{"error":{"retryable":true,"retry_after_ms":12`, // of 1200
			want{remedy.DialectTruncated, "service_unavailable", true, remedy.RetryFromBody, 0, remedy.SeverityError, remedy.CategoryDependency, ""}},
		{"nor one whose delimiter did not arrive", 503, nil,
			`{"error":{"retryable":true,"retry_after_ms":1200 `,
			want{remedy.DialectTruncated, "service_unavailable", true, remedy.RetryFromBody, 0, remedy.SeverityError, remedy.CategoryDependency, ""}},
		{"a number with its delimiter is", 503, nil,
			`{"error":{"retryable":true,"retry_after_ms":1200 ,`,
			want{remedy.DialectTruncated, "service_unavailable", true, remedy.RetryFromBody, 1200 * time.Millisecond, remedy.SeverityError, remedy.CategoryDependency, ""}},
		{"a literal cut at the bound", 503, nil,
			`{"error":{"retryable":fal`,
			unstructured503},
		{"a literal without its delimiter", 503, nil,
			`{"error":{"retryable":false`,
			unstructured503},
		{"a duplicate key makes its field unknown", 503, nil,
			`{"error":{"code":"x","retryable":false,"retryable":false,`,
			want{remedy.DialectTruncated, "x", true, remedy.RetryFromStatus, 0, remedy.SeverityError, remedy.CategoryDependency, ""}},
		{"aliases that disagree make the field unknown", 503, nil,
			`{"error":{"code":"x","retryable":false,"is_retriable":true,`,
			want{remedy.DialectTruncated, "x", true, remedy.RetryFromStatus, 0, remedy.SeverityError, remedy.CategoryDependency, ""}},
		{"the first code wins among its aliases", 400, nil,
			`{"error_code":"RATE_LIMITED","code":"other","message":"m",`,
			want{remedy.DialectTruncated, "RATE_LIMITED", true, remedy.RetryFromStatus, 0, remedy.SeverityError, remedy.CategoryRateLimit, "m"}},
		{"RFC 9457 problem details", 429, nil,
			`{"type":"https://api.example.com/problems/rate-limited","title":"Too many requests","status":429,"is_retriable":false,"retry_after_ms":2000,"invalid_fields":[`,
			want{remedy.DialectTruncated, "rate-limited", false, remedy.RetryFromBody, 2 * time.Second, remedy.SeverityError, remedy.CategoryRateLimit, ""}},
		{"google.rpc.Status: the code name", 429, nil,
			`{"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo"`,
			want{remedy.DialectTruncated, "RESOURCE_EXHAUSTED", true, remedy.RetryFromStatus, 0, remedy.SeverityError, remedy.CategoryRateLimit, "Quota exceeded."}},
		{"Anthropic: the error's type is the code", 529, nil,
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},`,
			want{remedy.DialectTruncated, "overloaded_error", true, remedy.RetryFromStatus, 0, remedy.SeverityError, remedy.CategoryDependency, "Overloaded"}},
		{"not the start of JSON: nothing is read", 503, nil,
			`{"error":{"retryable":false,}`,
			unstructured503},
		{"invalid UTF-8: nothing is read", 503, nil,
			"{\"error\":{\"retryable\":false,\"message\":\"\xff\",",
			unstructured503},
		{"nesting past the parser's limit: nothing is read", 503, nil,
			`{"error":{"retryable":false,"a":` + strings.Repeat("[", 70),
			unstructured503},
		{"no decision member before the cut", 503, nil,
			`{"error":{"statusCode":503,"issues":[{"path":["a"],"code":"enum","message":"m"}],`,
			unstructured503},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ok := readCut(t, tc.status, tc.header, tc.prefix)
			require.True(t, ok)
			got := want{e.Dialect, e.Code, e.Retryable, e.RetrySource, e.RetryAfter, e.Severity, e.Category, e.Message}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.status, e.Status)
			assert.Empty(t, e.Issues, "issues are never read from a prefix")
			assert.Empty(t, e.Errors)
			assert.Nil(t, e.Schema)
		})
	}
}

// TestTruncatedSuccess: a cut body is read only for a failure status; a 2xx stays a success,
// since the in-band dialects need the whole structure.
func TestTruncatedSuccess(t *testing.T) {
	t.Parallel()
	for _, status := range []int{0, 200, 207} {
		_, ok := readCut(t, status, nil, `{"error":{"code":"rate_limited","retryable":false,`)
		assert.False(t, ok, "status %d", status)
	}
}

// TestTruncatedWholeEnvelope: an agent envelope longer than the bound reads, from its prefix,
// the same decision its full parse gives.
func TestTruncatedWholeEnvelope(t *testing.T) {
	t.Parallel()
	body := corpus.HugeAgentEnvelope(`"code":"account_closed","retryable":false,"retry_after_ms":250,"severity":"fatal"`, 64<<10)
	full, ok := remedy.ParseResponse(&http.Response{StatusCode: 503, Header: http.Header{},
		Body: io.NopCloser(strings.NewReader(body))}, remedy.WithMaxBody(int64(len(body))))
	require.True(t, ok)
	require.Equal(t, remedy.DialectAgent, full.Dialect)
	require.NotEmpty(t, full.Issues)

	e, ok := readCut(t, 503, nil, body[:32<<10])
	require.True(t, ok)
	assert.Equal(t, remedy.DialectTruncated, e.Dialect)
	assert.Empty(t, e.Issues)
	for _, f := range []struct {
		name      string
		full, cut any
	}{
		{"Code", full.Code, e.Code}, {"Message", full.Message, e.Message},
		{"Retryable", full.Retryable, e.Retryable}, {"RetrySource", full.RetrySource, e.RetrySource},
		{"RetryAfter", full.RetryAfter, e.RetryAfter}, {"Severity", full.Severity, e.Severity},
		{"Category", full.Category, e.Category},
	} {
		assert.Equal(t, f.full, f.cut, f.name)
	}
}

// BenchmarkParseTruncated: a failure's body over the bound, read from its prefix, on both
// paths; the prefix is 1 MiB (the default bound) of an agent envelope.
func BenchmarkParseTruncated(b *testing.B) {
	body := []byte(corpus.HugeAgentEnvelope(`"code":"account_closed","retryable":false,"retry_after_ms":250`, remedy.DefaultMaxBody+1))
	b.Run("Parse", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(remedy.DefaultMaxBody)
		for b.Loop() {
			if e, _ := remedy.Parse(503, nil, body); e.Dialect != remedy.DialectTruncated {
				b.Fatal(e.Dialect)
			}
		}
	})
	b.Run("Classify", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(remedy.DefaultMaxBody)
		for b.Loop() {
			if v := remedy.Classify(503, nil, body); v.Dialect != remedy.DialectTruncated {
				b.Fatal(v.Dialect)
			}
		}
	})
}
