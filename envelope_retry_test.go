package remedy_test

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRetryDecision is the precedence table of Retryable: body flag > header > status default
// (refined by well-known codes), each read in the one meaning — the same request can succeed
// later — so that a failure that names fields is not retryable whatever spoke. Classify
// decides the same.
func TestRetryDecision(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		status int
		header http.Header
		body   string
		want   bool
		source remedy.RetrySource
	}{
		{"body true beats a 400", 400, nil, `{"error":{"code":"x","retryable":true}}`, true, remedy.RetryFromBody},
		{"body false beats a 503", 503, nil, `{"error":{"code":"x","retryable":false}}`, false, remedy.RetryFromBody},
		{"body false beats a header true", 503, hdr("X-Should-Retry", "true"), `{"error":{"code":"x","retryable":false}}`, false, remedy.RetryFromBody},
		{"is_retriable", 500, nil, `{"type":"about:blank","status":500,"is_retriable":false}`, false, remedy.RetryFromBody},
		{"header false beats a 503", 503, hdr("X-Should-Retry", "false"), ``, false, remedy.RetryFromHeader},
		{"stripe header true beats a 409", 409, hdr("Stripe-Should-Retry", "true"), `{"error":{"type":"api_error","message":"m"}}`, true, remedy.RetryFromHeader},
		{"github 403 with exhausted limit", 403, hdr("X-RateLimit-Remaining", "0"), `{"message":"API rate limit exceeded","documentation_url":"https://docs.github.com"}`, true, remedy.RetryFromHeader},
		{"plain 403", 403, nil, ``, false, remedy.RetryFromStatus},
		{"408", 408, nil, ``, true, remedy.RetryFromStatus},
		{"425", 425, nil, ``, true, remedy.RetryFromStatus},
		{"429", 429, nil, ``, true, remedy.RetryFromStatus},
		{"500", 500, nil, ``, true, remedy.RetryFromStatus},
		{"502", 502, nil, ``, true, remedy.RetryFromStatus},
		{"503", 503, nil, ``, true, remedy.RetryFromStatus},
		{"504", 504, nil, ``, true, remedy.RetryFromStatus},
		{"501", 501, nil, ``, false, remedy.RetryFromStatus},
		{"404", 404, nil, ``, false, remedy.RetryFromStatus},
		{"422", 422, nil, ``, false, remedy.RetryFromStatus},
		{"409 plain conflict", 409, nil, `{"error":{"code":"conflict","message":"m"}}`, false, remedy.RetryFromStatus},
		{"409 idempotency in flight", 409, nil, `{"error":{"code":"idempotency_in_flight","message":"m"}}`, true, remedy.RetryFromStatus},
		{"409 confirmation required: the same request is challenged again", 409, nil, `{"error":{"code":"confirmation_required","message":"m"}}`, false, remedy.RetryFromStatus},
		{"409 confirmation required, retryable: true (AgentBack)", 409, nil, `{"error":{"code":"confirmation_required","message":"m","retryable":true,"confirmationToken":"t"}}`, false, remedy.RetryFromBody},
		{"400 AWS throttling", 400, nil, `{"__type":"ThrottlingException","message":"Rate exceeded"}`, true, remedy.RetryFromStatus},
		{"429 insufficient quota", 429, nil, `{"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"m","param":null}}`, false, remedy.RetryFromStatus},
		{"in-band unknown code", 200, nil, `{"ok":false,"error":"channel_not_found"}`, false, remedy.RetryFromNone},
		{"in-band transient code", 200, nil, `{"ok":false,"error":"ratelimited"}`, true, remedy.RetryFromStatus},

		// AgentBack's retryable: true on a validation failure means "with corrected input":
		// the same request fails the same way. The body still decided.
		{"body true, issues", 422, nil, `{"error":{"statusCode":422,"code":"invalid_body","message":"m","retryable":true,"issues":[{"path":["currency"],"code":"invalid_value","message":"Invalid option"}]}}`, false, remedy.RetryFromBody},
		{"body true, a field and its allowed values", 400, nil, `{"error":{"code":"CURRENCY_NOT_SUPPORTED","message":"m","field":"currency","allowed_values":["eur"],"retryable":true}}`, false, remedy.RetryFromBody},
		{"body true, message-only issues", 422, nil, `{"error":{"code":"invalid_body","message":"m","retryable":true,"issues":["amount is too large"]}}`, false, remedy.RetryFromBody},
		{"body true, an example request", 400, nil, `{"error":{"code":"invalid_request","message":"m","retryable":true,"category":"validation","example_request":{"amount":1}}}`, false, remedy.RetryFromBody},
		{"is_retriable true, invalid_fields", 400, nil, `{"type":"https://example.com/probs/validation","title":"Invalid","status":400,"is_retriable":true,"invalid_fields":[{"field":"currency","reason":"unsupported"}]}`, false, remedy.RetryFromBody},
		{"is_retriable true, a Huma location", 422, nil, `{"title":"Unprocessable Entity","status":422,"detail":"expected number >= 1","location":"body.amount","value":0,"is_retriable":true}`, false, remedy.RetryFromBody},
		{"Google RetryInfo beside field violations", 400, nil, `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"m","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"currency","description":"unsupported"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1s"}]}}`, false, remedy.RetryFromBody},
		{"header true, issues", 422, hdr("X-Should-Retry", "true"), `{"error":{"code":"invalid_body","message":"m","issues":[{"path":["amount"],"message":"too large"}]}}`, false, remedy.RetryFromHeader},
		{"a 500 whose issues name a field", 500, nil, `{"error":{"code":"internal_server_error","message":"m","issues":[{"path":["amount"],"message":"overflow"}]}}`, false, remedy.RetryFromStatus},
		{"body true, a validation failure that names nothing", 400, nil, `{"error":{"statusCode":400,"code":"invalid_parameter","message":"Unexpected end of JSON input","retryable":true}}`, true, remedy.RetryFromBody},
		{"a rate limit with issues passes", 429, nil, `{"error":{"code":"rate_limited","message":"m","retryable":true,"issues":[{"path":["amount"],"message":"too many"}]}}`, true, remedy.RetryFromBody},
		{"an outage with issues passes", 503, nil, `{"error":{"code":"unavailable","message":"m","issues":[{"path":["amount"],"message":"x"}]}}`, true, remedy.RetryFromStatus},
		{"a known internal code with issues", 500, nil, `{"error":{"code":"internal_error","message":"m","retryable":true,"issues":[{"path":["amount"],"message":"x"}]}}`, true, remedy.RetryFromBody},
	} {
		e, ok := remedy.Parse(c.status, c.header, []byte(c.body))
		require.True(t, ok, c.name)
		assert.Equal(t, c.want, e.Retryable, c.name)
		assert.Equal(t, c.source, e.RetrySource, c.name)
		v := remedy.Classify(c.status, c.header, []byte(c.body))
		assert.Equal(t, c.want, v.Retryable, c.name+" (Classify)")
		assert.Equal(t, c.source, v.RetrySource, c.name+" (Classify)")
	}
}

// TestRetryAfterSources is the order of the wait's sources: the first present and valid wins.
func TestRetryAfterSources(t *testing.T) {
	t.Parallel()
	all := http.Header{"Retry-After-Ms": {"2500"}, "Retry-After": {"7"}}
	for _, c := range []struct {
		name   string
		status int
		header http.Header
		body   string
		want   time.Duration
	}{
		{"retry_after_ms first", 503, all, `{"error":{"code":"x","retry_after_ms":1500,"retry_after_seconds":9}}`, 1500 * time.Millisecond},
		{"then Retry-After-Ms", 503, all, `{"error":{"code":"x","retry_after_seconds":9}}`, 2500 * time.Millisecond},
		{"then retry_after_seconds", 503, hdr("Retry-After", "7"), `{"error":{"code":"x","retry_after_seconds":9}}`, 9 * time.Second},
		{"then Google RetryInfo", 503, hdr("Retry-After", "7"), `{"error":{"code":503,"status":"UNAVAILABLE","message":"m","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}`, 1500 * time.Millisecond},
		{"RetryInfo as an object", 503, nil, `{"error":{"code":503,"status":"UNAVAILABLE","message":"m","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{"seconds":2,"nanos":500000000}}]}}`, 2500 * time.Millisecond},
		{"then Kubernetes retryAfterSeconds", 429, hdr("Retry-After", "7"), `{"kind":"Status","status":"Failure","reason":"TooManyRequests","code":429,"details":{"retryAfterSeconds":3}}`, 3 * time.Second},
		{"then Retry-After seconds", 503, hdr("Retry-After", "7"), ``, 7 * time.Second},
		{"Retry-After HTTP-date against Date", 503, http.Header{"Retry-After": {"Sat, 21 Nov 2026 12:02:00 GMT"}, "Date": {"Sat, 21 Nov 2026 12:00:30 GMT"}}, ``, 90 * time.Second},
		{"Retry-After HTTP-date against now", 503, hdr("Retry-After", "Sat, 21 Nov 2026 12:01:00 GMT"), ``, time.Minute},
		{"Retry-After in the past", 503, http.Header{"Retry-After": {"Sat, 21 Nov 2026 11:00:00 GMT"}, "Date": {"Sat, 21 Nov 2026 12:00:00 GMT"}}, ``, 0},
		{"then RateLimit-Reset on a 429", 429, hdr("RateLimit-Reset", "12"), ``, 12 * time.Second},
		{"X-RateLimit-Reset as an epoch", 429, http.Header{"X-Ratelimit-Reset": {"1795262520"}, "Date": {"Sat, 21 Nov 2026 12:00:00 GMT"}}, ``, 2 * time.Minute},
		{"OpenAI reset of the exhausted limit", 429, http.Header{"X-Ratelimit-Reset-Requests": {"6m0s"}, "X-Ratelimit-Remaining-Requests": {"0"}, "X-Ratelimit-Reset-Tokens": {"1s"}}, ``, 6 * time.Minute},
		{"Anthropic RFC 3339 reset", 429, http.Header{"Anthropic-Ratelimit-Requests-Reset": {"2026-11-21T12:00:20Z"}, "Date": {"Sat, 21 Nov 2026 12:00:00 GMT"}}, ``, 20 * time.Second},
		{"reset headers ignored when not rate limited", 503, hdr("RateLimit-Reset", "12"), ``, 0},
		{"negative ignored, next source used", 503, hdr("Retry-After", "7"), `{"error":{"code":"x","retry_after_ms":-5}}`, 7 * time.Second},
		{"non-numeric ignored", 503, hdr("Retry-After", "7"), `{"error":{"code":"x","retry_after_ms":"soon"}}`, 7 * time.Second},
		{"numeric string read", 503, nil, `{"error":{"code":"x","retry_after_ms":"250"}}`, 250 * time.Millisecond},
		{"NaN header ignored", 503, http.Header{"Retry-After-Ms": {"NaN"}, "Retry-After": {"7"}}, ``, 7 * time.Second},
		{"garbage Retry-After ignored", 503, hdr("Retry-After", "soon"), ``, 0},
		{"huge saturates", 503, nil, `{"error":{"code":"x","retry_after_ms":1000000000000000000000}}`, time.Duration(math.MaxInt64)},
	} {
		e, ok := remedy.Parse(c.status, c.header, []byte(c.body))
		require.True(t, ok, c.name)
		assert.Equal(t, c.want, e.RetryAfter, c.name)
		assert.Equal(t, c.want, remedy.Classify(c.status, c.header, []byte(c.body)).RetryAfter, c.name+" (Classify)")
	}
}

// TestSeverityFatalKept: a fatal failure says so even when it is retryable by its status.
func TestSeverityAndCategory(t *testing.T) {
	t.Parallel()
	e, _ := remedy.Parse(503, nil, []byte(`{"error":{"code":"x","severity":"fatal","category":"upstream"}}`))
	assert.Equal(t, remedy.SeverityFatal, e.Severity)
	assert.Equal(t, remedy.CategoryDependency, e.Category)
	assert.True(t, e.Retryable, "severity does not change the retry decision; the loop weighs both")
	assert.Contains(t, e.Prompt(), "Do not retry")

	e, _ = remedy.Parse(502, nil, []byte(`{"error":{"code":"server_error","message":"m","type":"server_error","param":null}}`))
	assert.Equal(t, remedy.CategoryDependency, e.Category, "a generic server-error code does not hide a 502")
}

func hdr(k, v string) http.Header { return http.Header{http.CanonicalHeaderKey(k): {v}} }

// TestClassifyAgreesOnCorpus: Classify decides as Parse does on every recorded failure, and
// again with X-Should-Retry: true, which makes every failure whose body does not say
// retryable unless it names fields: the classification path, which reads no issues, must
// notice the field-level facts it passed over in every dialect that carries them.
func TestClassifyAgreesOnCorpus(t *testing.T) {
	t.Parallel()
	for _, s := range loadCorpus(t) {
		retry := s.header.Clone()
		if retry == nil {
			retry = http.Header{}
		}
		retry.Set("X-Should-Retry", "true")
		for _, h := range []http.Header{s.header, retry} {
			e, ok := remedy.Parse(s.status, h, s.body)
			require.True(t, ok, s.path)
			v := remedy.Classify(s.status, h, s.body)
			name := s.dialect + "/" + s.name
			if h.Get("X-Should-Retry") != "" {
				name += " (X-Should-Retry: true)"
			}
			assert.Equal(t, e.Retryable, v.Retryable, "%s: Retryable", name)
			assert.Equal(t, e.RetrySource, v.RetrySource, "%s: RetrySource", name)
			assert.Equal(t, e.RetryAfter, v.RetryAfter, "%s: RetryAfter", name)
			assert.Equal(t, e.Category, v.Category, "%s: Category", name)
			assert.Equal(t, e.Dialect, v.Dialect, "%s: Dialect", name)
		}
	}
}
