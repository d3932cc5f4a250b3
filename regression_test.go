package remedy_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A value nested near the depth limit is not kept, so the encodings, which nest it deeper, still
// read back.
func TestDeepValuesStillRoundTrip(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 60) + strings.Repeat("]", 60)
	body := []byte(`{"type":"https://x/p","title":"T","status":400,"schema":` + deep +
		`,"invalid_fields":[{"field":"a","expected":` + deep + `}]}`)
	e, ok := remedy.Parse(400, nil, body)
	require.True(t, ok)
	require.Equal(t, remedy.DialectProblem, e.Dialect)
	assert.Nil(t, e.Schema)
	require.Len(t, e.Issues, 1, "the issue is kept without its too-deep value")
	assert.Nil(t, e.Issues[0].Expected)

	canonical, err := json.Marshal(e)
	require.NoError(t, err)
	back, ok := remedy.Parse(400, nil, canonical)
	require.True(t, ok)
	assert.Equal(t, remedy.DialectAgent, back.Dialect)
	assert.Equal(t, "p", back.Code)
	assert.Len(t, back.Issues, 1)
}

// A body over the bound is classified the same way by Parse, Classify and ParseResponse: from
// the decision members its prefix states (DialectTruncated), never as a whole document, even
// when the prefix happens to be valid JSON: its issues are not read.
func TestOversizedBodyAgrees(t *testing.T) {
	t.Parallel()
	body := []byte(`{"error":{"code":"rate_limited","message":"slow down","issues":[{"path":["a"],"code":"enum"}]}}` +
		strings.Repeat(" ", remedy.DefaultMaxBody) + `garbage`)
	e, ok := remedy.Parse(400, nil, body)
	require.True(t, ok)
	assert.Equal(t, remedy.DialectTruncated, e.Dialect)
	assert.Equal(t, "rate_limited", e.Code)
	assert.Empty(t, e.Issues, "issues are not read from a prefix")
	assert.Equal(t, remedy.DialectTruncated, remedy.Classify(400, nil, body).Dialect)

	resp := &http.Response{StatusCode: 400, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body))}
	r, ok := remedy.ParseResponse(resp)
	require.True(t, ok)
	assert.Equal(t, e.Code, r.Code)
	assert.Equal(t, e.Dialect, r.Dialect)
	assert.Equal(t, e.Category, r.Category)
}

// The body's own related_codes count when the category is decided, on both paths.
func TestRelatedCodesDecideCategory(t *testing.T) {
	t.Parallel()
	body := []byte(`{"error":{"code":"x","related_codes":["rate_limited"]}}`)
	e, ok := remedy.Parse(400, nil, body)
	require.True(t, ok)
	assert.Equal(t, remedy.CategoryRateLimit, e.Category)
	assert.Equal(t, []string{"rate_limited"}, e.RelatedCodes)
	assert.Equal(t, remedy.CategoryRateLimit, remedy.Classify(400, nil, body).Category)
}

// A marker spelled with escapes is still the marker.
func TestEscapedMarkerKey(t *testing.T) {
	e, ok := remedy.Parse(400, nil, []byte(`{"\u0065rror":{"code":"invalid_body","message":"bad"}}`))
	if !ok || e.Code != "invalid_body" {
		t.Fatalf("got %+v, %v", e, ok)
	}
}

// A 2xx is read for an in-band failure even when the marker is spelled with escapes, and a
// success without any marker is told apart without a full read.
func TestInBandMarkersWithEscapes(t *testing.T) {
	for _, body := range []string{
		`{"\u006fk":false,"error":"invalid_auth"}`,
		`{"\u006fk":false}`,
		`{"ok":false}`,
		`{"data":null,"\u0065rrors":[{"message":"boom"}]}`,
	} {
		if _, ok := remedy.Parse(200, nil, []byte(body)); !ok {
			t.Errorf("%s: not read as a failure", body)
		}
	}
	if _, ok := remedy.Parse(200, nil, []byte(`{"id":"ord_1","status":"created"}`)); ok {
		t.Error("a plain success read as a failure")
	}
}

// A server may declare any Content-Length up to the largest int64: the buffer is sized from
// the bound, not from the declaration (it once overflowed and panicked).
func TestHugeContentLengthDoesNotSizeTheBuffer(t *testing.T) {
	t.Parallel()
	for _, cl := range []int64{1<<63 - 1, 1<<63 - 2, 1 << 62} {
		resp := &http.Response{StatusCode: 503, Header: http.Header{}, ContentLength: cl,
			Body: io.NopCloser(strings.NewReader(`{"error":{"code":"busy","message":"m"}}`))}
		e, ok := remedy.ParseResponse(resp)
		require.True(t, ok, "%d", cl)
		assert.Equal(t, "busy", e.Code)
	}
}

// Seconds near the largest Duration plus nanos saturate instead of wrapping to a negative wait.
func TestGoogleRetryDelayObjectSaturates(t *testing.T) {
	t.Parallel()
	for _, sec := range []string{"9223372036854775807", "9223372036"} {
		body := `{"error":{"code":503,"status":"UNAVAILABLE","message":"d","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{"seconds":` + sec + `,"nanos":999999999}}]}}`
		e, ok := remedy.Parse(503, nil, []byte(body))
		require.True(t, ok)
		assert.Equal(t, time.Duration(1<<63-1), e.RetryAfter, sec)
		assert.Equal(t, time.Duration(1<<63-1), remedy.Classify(503, nil, []byte(body)).RetryAfter, sec)
	}
}

// A failure inside a success status that names no code is an "error", not an "ok" (AgentBack
// answers an unknown MCP tool with a result whose JSON-RPC code is a number, in a 200).
func TestFailureInSuccessStatusIsNotOK(t *testing.T) {
	t.Parallel()
	body := []byte(`{"result":{"content":[{"type":"text","text":"{\"error\":{\"code\":-32602,\"message\":\"Internal Server Error\",\"retryable\":false}}"}],"isError":true},"jsonrpc":"2.0","id":3}`)
	for _, status := range []int{0, 200, 202} {
		e, ok := remedy.Parse(status, nil, body)
		require.True(t, ok, "status %d", status)
		assert.NotEqual(t, "ok", e.Code, "status %d", status)
		assert.NotEqual(t, "accepted", e.Code, "status %d", status)
	}
}
