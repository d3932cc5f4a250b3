package oadoc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeyMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ext              any
		header, required bool
		want             string
	}{
		{nil, false, false, KeyNone},
		{nil, true, false, KeyOptional},
		{nil, true, true, KeyRequired},
		{true, false, false, KeyOptional},
		{"Optional", false, false, KeyOptional},
		{"required", false, false, KeyRequired},
		{"required", true, false, KeyRequired},
		{"optional", true, true, KeyRequired},
		{false, true, false, KeyOptional},
		{"none", false, false, KeyNone},
		{map[string]any{}, false, false, KeyNone},
	} {
		assert.Equal(t, tc.want, KeyMode(tc.ext, tc.header, tc.required), "%#v %v %v", tc.ext, tc.header, tc.required)
	}
	for _, v := range []any{"sometimes", 1.0, []any{}} {
		_, ok := KeyExtension(v)
		assert.False(t, ok, "%#v", v)
	}
	assert.True(t, KeyHeader("Header", "idempotency-key"))
	assert.False(t, KeyHeader("header", "X-Idempotency-Key"))
	assert.False(t, KeyHeader("query", "Idempotency-Key"))
}

func TestToJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want, format string }{
		{`{"a": 1}`, `{"a": 1}`, JSON},
		{"\ufeff{\"a\": 1}", `{"a": 1}`, JSON},
		{`{a: 1}`, `{"a":1}`, YAML},
		{"a: 123456789012345678901234567890\nb: 1.50\nc: 0o17\nd: -0x10\ne: ~\nf: yes\ng: !custom x\n",
			`{"a":123456789012345678901234567890,"b":1.50,"c":15,"d":-16,"e":null,"f":"yes","g":"x"}`, YAML},
		{"base: &b {x: 1, y: 2}\nk:\n  <<: [*b, {z: 3}]\n  y: 9\n", `{"base":{"x":1,"y":2},"k":{"y":9,"x":1,"z":3}}`, YAML},
		{"- 1\n- 2.5e3\n- '3'\n", `[1,2.5e3,"3"]`, YAML},
	} {
		out, format, err := ToJSON([]byte(tc.in), "")
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.format, format, tc.in)
		assert.Equal(t, tc.want, string(out), tc.in)
	}
}

func TestYAMLMedia(t *testing.T) {
	t.Parallel()
	for ct, want := range map[string]bool{
		"application/yaml": true, "application/x-yaml; charset=utf-8": true, "text/yaml": true,
		"application/openapi+yaml": true, "application/json": false, "": false, "text/plain": false,
	} {
		assert.Equal(t, want, YAMLMedia(ct), ct)
	}
}
