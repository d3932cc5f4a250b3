package remedy_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/remedy-go/remedy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fuzzMaxPrompt bounds Envelope.Prompt: 1 KB of text plus the ellipsis line it may end with.
const fuzzMaxPrompt = 1100

// FuzzParse feeds Parse and Classify arbitrary responses — a status, a Retry-After header and a
// body — seeded with every recorded response of the corpus and with hostile bodies, and checks
// the properties that must hold for any input.
func FuzzParse(f *testing.F) {
	for _, s := range loadCorpus(f) {
		f.Add(s.status, s.header.Get("Retry-After"), s.body)
	}

	hostile := [][]byte{
		[]byte(strings.Repeat("[", 10000)),
		[]byte(`{"a":` + strings.Repeat(`{"a":`, 9999) + `1` + strings.Repeat("}", 10000)),
		[]byte(`{"error":{"code":"x","retry_after_ms":` + strings.Repeat("9", 100) + `}}`),
		[]byte("{\"error\":{\"code\":\"x\",\"message\":\"bad \xff\xfe utf8\"}}"),
		[]byte(`{"error":{"code":"a","code":"b"}}`),
		[]byte(`"a string"`),
		[]byte(`{"error":"x"}`),
		[]byte(`{"error":{"code":"invalid","message":"trunc`),
		[]byte(`{"error":{"retry_after_ms":1e400}}`),
		[]byte(`{"error":{"retry_after_ms":-5,"retry_after_seconds":"NaN"}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"{\"error\":{\"code\":\"x\"}}"}]}}`),
		[]byte(`{"errors":[{"message":"a","path":["q"],"extensions":{"code":"RATE_LIMITED"}}],"data":null}`),
		[]byte("<html><title>502 Bad Gateway</title></html>"),
		[]byte("\ufeff  plain text\r\nsecond line"),
		// Event streams (sse.go): a tool error after a notification, a JSON-RPC error cut at
		// its last line, data split over lines with CRLF ends, comments only.
		[]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"isError\":true,\"content\":[{\"type\":\"text\",\"text\":\"no\"}]}}\n\n"),
		[]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"bad"),
		[]byte("data: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":1,\"error\":{\"code\":-32603,\"message\":\"x\"}}\r\n\r\n"),
		[]byte(": keep-alive\n\n: again\n"),
		nil,
	}
	for _, body := range hostile {
		for _, status := range []int{0, 200, 400, 429, 500, 503} {
			f.Add(status, "", body)
		}
	}
	for _, ra := range []string{"-5", "NaN", "Wed, 21 Oct 2015 07:28:00 GMT", "1e400", "120", "0.5"} {
		f.Add(503, ra, []byte(`{"error":{"code":"unavailable","message":"down"}}`))
		f.Add(429, ra, []byte(nil))
	}

	f.Fuzz(func(t *testing.T, status int, retryAfter string, body []byte) {
		var header http.Header
		if retryAfter != "" {
			header = http.Header{"Retry-After": {retryAfter}}
		}
		e, ok := remedy.Parse(status, header, body)
		v := remedy.Classify(status, header, body)

		require.Equal(t, ok, v.Failure, "Classify and Parse disagree on whether it is a failure")
		if status >= 400 {
			require.True(t, ok, "a status >= 400 is always a failure")
		}
		if !ok {
			require.Nil(t, e, "no failure, no envelope")
			return
		}
		require.NotNil(t, e, "a failure always has an envelope")

		// Classify decides by exactly the rules Parse uses.
		assert.Equal(t, e.Status, v.Status, "Classify.Status")
		assert.Equal(t, e.Retryable, v.Retryable, "Classify.Retryable")
		assert.Equal(t, e.RetrySource, v.RetrySource, "Classify.RetrySource")
		assert.Equal(t, e.RetryAfter, v.RetryAfter, "Classify.RetryAfter")
		assert.Equal(t, e.Category, v.Category, "Classify.Category")
		assert.Equal(t, e.Severity, v.Severity, "Classify.Severity")
		assert.Equal(t, e.Dialect, v.Dialect, "Classify.Dialect")

		assert.NotEmpty(t, e.Dialect, "Dialect")
		assert.GreaterOrEqual(t, e.RetryAfter, time.Duration(0), "RetryAfter")

		prompt := e.Prompt()
		assert.LessOrEqual(t, len(prompt), fuzzMaxPrompt, "Prompt too long")
		assert.True(t, utf8.ValidString(prompt), "Prompt is not valid UTF-8: %q", prompt)

		canonical, err := e.MarshalJSON()
		require.NoError(t, err)
		require.True(t, json.Valid(canonical), "MarshalJSON gave invalid JSON: %s", canonical)
		problem, err := e.MarshalProblem()
		require.NoError(t, err)
		require.True(t, json.Valid(problem), "MarshalProblem gave invalid JSON: %s", problem)

		if e.Status < 400 {
			return
		}
		// Parse(Marshal(e)) round-trips.
		back, ok := remedy.Parse(e.Status, nil, canonical)
		require.True(t, ok, "the canonical encoding of a failure is not a failure: %s", canonical)
		require.NotNil(t, back)
		assert.Equal(t, e.Code, back.Code, "round trip: Code (canonical %s)", canonical)
		assert.Equal(t, e.Message, back.Message, "round trip: Message (canonical %s)", canonical)
		assert.Equal(t, e.Retryable, back.Retryable, "round trip: Retryable (canonical %s)", canonical)
		assert.Equal(t, e.Category, back.Category, "round trip: Category (canonical %s)", canonical)
		assert.Len(t, back.Issues, len(e.Issues), "round trip: Issues (canonical %s)", canonical)
		assert.LessOrEqual(t, absDuration(e.RetryAfter-back.RetryAfter), retryAfterTolerance(e.RetryAfter),
			"round trip: RetryAfter %d became %d (canonical %s)", e.RetryAfter, back.RetryAfter, canonical)
	})
}

// retryAfterTolerance is how far a wait may move through the canonical encoding, which carries
// it as a float64 number of milliseconds: sub-microsecond rounding, and beyond 2^53 ns (about
// 104 days), where a float64 no longer holds every nanosecond, a few units of its precision.
func retryAfterTolerance(d time.Duration) time.Duration {
	return max(time.Microsecond, d>>49)
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
