package remedy_test

import (
	"encoding/base64"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/corpus"
)

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// TestRPCNearMisses: a body that shares a marker with grpc-gateway's, connect's or twirp's
// errors but not the whole of it is not read as theirs. {"code": 3, "message": …} is what many
// hand-written APIs send; only the shape protojson writes for a google.rpc.Status (details
// present, of Any values, or the status the gateway gives the code) is one.
func TestRPCNearMisses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		header http.Header
		body   string
		not    remedy.Dialect
	}{
		{"numeric code and message only", 400, jsonHeader, `{"code":3,"message":"x"}`, remedy.DialectGoogle},
		{"status the gateway does not give the code", 404, jsonHeader, `{"code":3,"message":"x","details":[]}`, remedy.DialectGoogle},
		{"no status, no details", 0, nil, `{"code":3,"message":"x","details":[]}`, remedy.DialectGoogle},
		{"a member protojson does not write", 400, jsonHeader, `{"code":3,"message":"x","details":[],"field":"a"}`, remedy.DialectGoogle},
		{"details that are not Any values", 400, jsonHeader, `{"code":3,"message":"x","details":[{"field":"a","issue":"bad"}]}`, remedy.DialectGoogle},
		{"not a google.rpc.Code", 400, jsonHeader, `{"code":17,"message":"x","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest"}]}`, remedy.DialectGoogle},
		{"OK is no failure's code", 500, jsonHeader, `{"code":0,"message":"x","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest"}]}`, remedy.DialectGoogle},
		{"a fraction", 400, jsonHeader, `{"code":3.5,"message":"x","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest"}]}`, remedy.DialectGoogle},
		{"connect word at another status", 400, jsonHeader, `{"code":"not_found","message":"x"}`, remedy.DialectConnect},
		{"connect word without a status or details", 0, nil, `{"code":"not_found","message":"x"}`, remedy.DialectConnect},
		{"connect word in text", 404, http.Header{"Content-Type": {"text/plain"}}, `{"code":"not_found","message":"x"}`, remedy.DialectConnect},
		{"not connect's word", 404, jsonHeader, `{"code":"bad_route","message":"x"}`, remedy.DialectConnect},
		{"a member connect does not write", 400, jsonHeader, `{"code":"invalid_argument","message":"x","field":"a"}`, remedy.DialectConnect},
		{"a detail without its value", 400, jsonHeader, `{"code":"invalid_argument","message":"x","details":[{"type":"google.rpc.BadRequest","debug":{"fieldViolations":[{"field":"a"}]}}]}`, remedy.DialectConnect},
		{"twirp word at another status", 500, jsonHeader, `{"code":"invalid_argument","msg":"x"}`, remedy.DialectTwirp},
		{"not twirp's word", 400, jsonHeader, `{"code":"validation_failed","msg":"x"}`, remedy.DialectTwirp},
		{"twirp meta that is not strings", 400, jsonHeader, `{"code":"invalid_argument","msg":"a is required","meta":{"argument":1}}`, remedy.DialectTwirp},
		{"a member twirp does not write", 400, jsonHeader, `{"code":"invalid_argument","msg":"x","meta":{},"errors":[]}`, remedy.DialectTwirp},
	}
	for _, c := range cases {
		e, ok := remedy.Parse(c.status, c.header, []byte(c.body))
		if ok {
			assert.NotEqual(t, c.not, e.Dialect, c.name)
		}
	}
}

// TestTwirpArgumentTemplates: meta.argument is the issue's path; the message is read as
// twirp.RequiredArgumentError's only when it is exactly "<argument> is required".
func TestTwirpArgumentTemplates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		msg, argument, path, code string
	}{
		{"customer is required", "customer", "/customer", "required"},
		{"lines[1].sku is required", "lines[1].sku", "/lines/1/sku", "required"},
		{"customer is required.", "customer", "/customer", ""},
		{"customer is  required", "customer", "/customer", ""},
		{"Customer is required", "customer", "/customer", ""},
		{"customer was required", "customer", "/customer", ""},
		{"the customer is required", "customer", "/customer", ""},
		{"customer must be at most 100", "customer", "/customer", ""},
	}
	for _, c := range cases {
		body, err := sjson.Set(`{"code":"invalid_argument","msg":"","meta":{"argument":""}}`, "msg", c.msg)
		require.NoError(t, err)
		body, err = sjson.Set(body, "meta.argument", c.argument)
		require.NoError(t, err)
		e, ok := remedy.Parse(400, jsonHeader, []byte(body))
		require.True(t, ok)
		require.Equal(t, remedy.DialectTwirp, e.Dialect, c.msg)
		require.Len(t, e.Issues, 1, c.msg)
		assert.Equal(t, c.path, e.Issues[0].Path, c.msg)
		assert.Equal(t, c.code, e.Issues[0].Code, c.msg)
		assert.Equal(t, c.msg, e.Issues[0].Message, c.msg)
	}
	// An argument on another code is the application's own metadata: not a field.
	e, ok := remedy.Parse(412, jsonHeader, []byte(`{"code":"failed_precondition","msg":"customer is required","meta":{"argument":"customer"}}`))
	require.True(t, ok)
	assert.Equal(t, remedy.DialectTwirp, e.Dialect)
	assert.Empty(t, e.Issues)
}

// TestConnectBinaryDetails: a connect error whose details carry no debug (a server or proxy
// without the details' descriptors) is read from the binary values as from the debug. The
// values are the ones protobuf-go encoded in the live recordings.
func TestConnectBinaryDetails(t *testing.T) {
	t.Parallel()
	all, err := corpus.Load(filepath.Join("testdata", "envelopes"))
	require.NoError(t, err)
	n := 0
	for _, c := range all {
		if c.Dialect != "connect" || !gjson.GetBytes(c.Body, "details.0.debug").Exists() {
			continue
		}
		n++
		bare := c.Body
		for i := range gjson.GetBytes(c.Body, "details").Array() {
			bare, err = sjson.DeleteBytes(bare, "details."+itoa(i)+".debug")
			require.NoError(t, err)
		}
		require.NotContains(t, string(bare), "debug")
		want, ok := remedy.Parse(c.Status, c.Header, c.Body)
		require.True(t, ok)
		got, ok := remedy.Parse(c.Status, c.Header, bare)
		require.True(t, ok)
		assert.Equal(t, remedy.DialectConnect, got.Dialect, c.Name)
		assert.Equal(t, want.Code, got.Code, c.Name)
		assert.Equal(t, want.Issues, got.Issues, c.Name)
		assert.Equal(t, want.RetryAfter, got.RetryAfter, c.Name)
		assert.Equal(t, want.Retryable, got.Retryable, c.Name)
		assert.Equal(t, want.RelatedCodes, got.RelatedCodes, c.Name)
		// Classify, which decodes nothing, leaves such a body to the full parse: the same decision.
		d := remedy.Classify(c.Status, c.Header, bare)
		assert.Equal(t, got.Retryable, d.Retryable, c.Name)
		assert.Equal(t, got.RetryAfter, d.RetryAfter, c.Name)
	}
	require.NotZero(t, n, "no connect recording with details")

	// A well-formed violation followed by bytes that are not protobuf: the message is refused
	// whole, as protobuf's parsers refuse it.
	good, err := base64.RawStdEncoding.DecodeString("ChsKDGxpbmVzWzFdLnNrdRILaXMgcmVxdWlyZWQ")
	require.NoError(t, err)
	for _, tail := range []string{"\x0b", "\x0a\x05ab", "\x08"} {
		bad := base64.RawStdEncoding.EncodeToString(append(append([]byte{}, good...), tail...))
		body := `{"code":"invalid_argument","message":"x","details":[{"type":"google.rpc.BadRequest","value":"` + bad + `"}]}`
		e, ok := remedy.Parse(400, jsonHeader, []byte(body))
		require.True(t, ok)
		assert.Equal(t, remedy.DialectConnect, e.Dialect)
		assert.Empty(t, e.Issues, "%q", tail)
	}
	e, ok := remedy.Parse(400, jsonHeader, []byte(`{"code":"invalid_argument","message":"x","details":[{"type":"google.rpc.BadRequest","value":"ChsKDGxpbmVzWzFdLnNrdRILaXMgcmVxdWlyZWQ"}]}`))
	require.True(t, ok)
	require.Len(t, e.Issues, 1)
	assert.Equal(t, "/lines/1/sku", e.Issues[0].Path)

	// A value that is not base64, or not a message, is no fact.
	for _, v := range []string{"!!!", "CgII", "//////8"} {
		body := `{"code":"resource_exhausted","message":"x","details":[{"type":"google.rpc.RetryInfo","value":"` + v + `"}]}`
		e, ok := remedy.Parse(429, jsonHeader, []byte(body))
		require.True(t, ok)
		assert.Equal(t, remedy.DialectConnect, e.Dialect, v)
		assert.Zero(t, e.RetryAfter, v)
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

// TestGatewayStatusCodes: grpc-gateway's numeric code reads as the google.rpc.Code name that
// Google's {"error":{"status":…}} form gives, and ErrorInfo's reason stays the more specific
// code.
func TestGatewayStatusCodes(t *testing.T) {
	t.Parallel()
	e, ok := remedy.Parse(400, jsonHeader, []byte(`{"code":3,"message":"x","details":[]}`))
	require.True(t, ok)
	g, ok := remedy.Parse(400, jsonHeader, []byte(`{"error":{"code":400,"message":"x","status":"INVALID_ARGUMENT"}}`))
	require.True(t, ok)
	assert.Equal(t, remedy.DialectGoogle, e.Dialect)
	assert.Equal(t, g.Code, e.Code)
	assert.Equal(t, g.Category, e.Category)

	e, ok = remedy.Parse(503, jsonHeader, []byte(`{"code":14,"message":"down","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"},{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"BACKEND_DOWN","domain":"x"}]}`))
	require.True(t, ok)
	assert.Equal(t, "BACKEND_DOWN", e.Code)
	assert.Equal(t, []string{"UNAVAILABLE"}, e.RelatedCodes)
	assert.Equal(t, 1500*time.Millisecond, e.RetryAfter)
	assert.True(t, e.Retryable)
	assert.Equal(t, remedy.CategoryDependency, e.Category)

	// The routing handler's Method Not Allowed is UNIMPLEMENTED, a 501 with no details; a 405
	// (a status the default handlers never give that code) is not read as the gateway's.
	e, ok = remedy.Parse(501, jsonHeader, []byte(`{"code":12,"message":"Method Not Allowed","details":[]}`))
	require.True(t, ok)
	assert.Equal(t, remedy.DialectGoogle, e.Dialect)
	assert.Equal(t, "UNIMPLEMENTED", e.Code)
	e, ok = remedy.Parse(405, jsonHeader, []byte(`{"code":12,"message":"Method Not Allowed","details":[]}`))
	require.True(t, ok)
	assert.NotEqual(t, remedy.DialectGoogle, e.Dialect)
}

// TestNumericCodeInErrorObject: a number in an error object's code that is not an HTTP status
// (JSON-RPC's -32602 in an MCP tool result, an application's 1001) is the code, as text.
func TestNumericCodeInErrorObject(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		body   string
		code   string
	}{
		{200, `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"{\"error\":{\"code\":-32602,\"message\":\"bad params\"}}"}]}}`, "-32602"},
		{0, `{"error":{"code":-32602,"message":"bad"}}`, "-32602"},
		{400, `{"error":{"code":1001,"message":"bad"}}`, "1001"},
		// An HTTP status is Google's: the code then comes from the status.
		{0, `{"error":{"code":404,"message":"gone"}}`, "not_found"},
	}
	for _, c := range cases {
		e, ok := remedy.Parse(c.status, nil, []byte(c.body))
		require.True(t, ok, c.body)
		assert.Equal(t, c.code, e.Code, c.body)
	}
}

// TestRPCWithoutStatus: without an HTTP status (a body carried by something else), the status
// is the one the framework gives the code, and decides as it would.
func TestRPCWithoutStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body      string
		status    int
		retryable bool
	}{
		{`{"code":8,"message":"x","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure"}]}`, 429, true},
		{`{"code":"resource_exhausted","message":"x","details":[{"type":"google.rpc.QuotaFailure","value":""}]}`, 429, true},
		{`{"code":"unavailable","msg":"x"}`, 503, true},
		{`{"code":"malformed","msg":"x"}`, 400, false},
	}
	for _, c := range cases {
		e, ok := remedy.Parse(0, nil, []byte(c.body))
		require.True(t, ok, c.body)
		assert.Equal(t, c.status, e.Status, c.body)
		assert.Equal(t, c.retryable, e.Retryable, c.body)
	}
}
