package redisstore

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/server"
)

func TestResultEncoding(t *testing.T) {
	for name, r := range map[string]server.StoredResponse{
		"zero":         {},
		"empty":        {Status: 204, Header: http.Header{}, Body: []byte{}},
		"negative":     {Status: -1},
		"large status": {Status: 1 << 40},
		"nil values":   {Status: 200, Header: http.Header{"A": nil, "B": {}}},
		"binary":       {Status: 200, Header: http.Header{"X\x00": {"\xff\x00", "", "\r\n"}}, Body: []byte{0, 0xff, 0}},
		"many":         {Status: 201, Header: http.Header{"Content-Type": {"application/json"}, "Link": {"<a>", "<b>"}, "Location": {"/x"}}, Body: []byte(`{"id":1}`)},
		"long body":    {Status: 200, Body: make([]byte, 1<<20)},
		"long value":   {Status: 200, Header: http.Header{"V": {string(make([]byte, 300))}}},
		"nil body":     {Status: 200, Header: http.Header{"A": {"b"}}},
	} {
		t.Run(name, func(t *testing.T) {
			b := encodeResult(r)
			got, err := decodeResult(b)
			require.NoError(t, err)
			assert.Equal(t, r, got)
			assert.Equal(t, b, encodeResult(got), "the encoding of the decoded result")
		})
	}
}

func TestResultEncodingMalformed(t *testing.T) {
	valid := encodeResult(server.StoredResponse{Status: 200, Header: http.Header{"A": {"b", "c"}}, Body: []byte("body")})
	for name, b := range map[string][]byte{
		"empty":            nil,
		"version only":     {resultVersion},
		"other version":    {9, 0, 0, 0},
		"no status":        {resultVersion, 0},
		"bad varint":       {resultVersion, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"huge count":       {resultVersion, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"headers when nil": {resultVersion, flagNilHeader, 0, 1, 1, 'a', 0},
		"body when nil":    {resultVersion, flagNilBody, 0, 0, 'x'},
		"duplicate header": {resultVersion, 0, 0, 2, 1, 'a', 0, 1, 'a', 0},
		"string too long":  {resultVersion, 0, 0, 1, 9, 'a'},
		"truncated":        valid[:len(valid)-len("body")-2],
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decodeResult(b)
			assert.Error(t, err)
		})
	}
}

// FuzzResultEncoding: decoding never panics, and what decodes encodes back to the same result.
func FuzzResultEncoding(f *testing.F) {
	f.Add(encodeResult(server.StoredResponse{}))
	f.Add(encodeResult(server.StoredResponse{Status: 201, Header: http.Header{"A": {"b", ""}, "N": nil}, Body: []byte{0}}))
	f.Add([]byte{resultVersion, 0, 0, 2, 1, 'a', 0, 1, 'a', 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeResult(b)
		if err != nil {
			return
		}
		again, err := decodeResult(encodeResult(r))
		if err != nil {
			t.Fatalf("the encoding of %+v does not decode: %v", r, err)
		}
		assert.Equal(t, r, again)
	})
}

func TestDecodeRecord(t *testing.T) {
	result := server.StoredResponse{Status: 200, Header: http.Header{"A": {"b"}}, Body: []byte{0}}
	rec, err := decodeRecord([]any{"state", "inflight", "fp", "\x00f", "owner", "o"})
	require.NoError(t, err)
	assert.Equal(t, server.IdempotencyRecord{Fingerprint: []byte("\x00f"), Owner: "o"}, rec)
	rec, err = decodeRecord([]any{"owner", "o", "result", string(encodeResult(result)), "fp", "f", "state", "done"})
	require.NoError(t, err)
	assert.Equal(t, server.IdempotencyRecord{Fingerprint: []byte("f"), Owner: "o", Completed: true, Result: result}, rec)

	for name, reply := range map[string][]any{
		"odd":           {"state"},
		"not a string":  {"state", int64(1), "fp", "f", "owner", "o"},
		"no state":      {"fp", "f", "owner", "o"},
		"other state":   {"state", "gone", "fp", "f", "owner", "o"},
		"no fp":         {"state", "inflight", "owner", "o"},
		"no owner":      {"state", "inflight", "fp", "f"},
		"no result":     {"state", "done", "fp", "f", "owner", "o"},
		"bad result":    {"state", "done", "fp", "f", "owner", "o", "result", "\x01"},
		"nil in reply":  {"state", nil, "fp", "f", "owner", "o"},
		"empty":         {},
		"nested arrays": {"state", []any{"inflight"}, "fp", "f", "owner", "o"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decodeRecord(reply)
			assert.Error(t, err)
		})
	}
}

func TestMillis(t *testing.T) {
	for d, want := range map[time.Duration]int64{
		-time.Second:            1,
		0:                       1,
		time.Nanosecond:         1,
		time.Millisecond:        1,
		time.Millisecond + 1:    2,
		1500 * time.Microsecond: 2,
		time.Minute:             60_000,
		24 * time.Hour:          86_400_000,
	} {
		assert.Equal(t, want, millis(d), "millis(%v)", d)
	}
}
