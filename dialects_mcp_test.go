package remedy_test

import (
	"encoding/json"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseWithoutStatus reads the validation failures an MCP client meets without an HTTP
// status of its own: a FastAPI body in a tool's structuredContent, at the top level, and the
// TypeScript SDK's zod issues in a tool error's text.
func TestParseWithoutStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		paths      []string
	}{
		{"fastapi top level",
			`{"detail":[{"type":"less_than_equal","loc":["query","limit"],"msg":"Input should be less than or equal to 100","input":"500","ctx":{"le":100}},{"type":"missing","loc":["body","items",3,"qty"],"msg":"Field required","input":{}}]}`,
			[]string{"/limit", "/items/3/qty"}},
		{"fastapi in structuredContent",
			`{"content":[{"type":"text","text":"validation failed"}],"structuredContent":{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]},"isError":true}`,
			[]string{""}},
		{"zod issues as JSON in a tool error's text",
			`{"content":[{"type":"text","text":"MCP error -32602: Input validation error: Invalid arguments for tool pay: [\n  {\n    \"code\": \"invalid_type\",\n    \"expected\": \"number\",\n    \"received\": \"string\",\n    \"path\": [\n      \"amount\"\n    ],\n    \"message\": \"Expected number, received string\"\n  }\n]"}],"isError":true}`,
			[]string{"/amount"}},
	}
	for _, c := range cases {
		e, ok := remedy.Parse(0, nil, []byte(c.body))
		require.True(t, ok, c.name)
		assert.Equal(t, remedy.CategoryValidation, e.Category, c.name)
		var paths []string
		for _, is := range e.Issues {
			paths = append(paths, is.Path)
		}
		assert.Equal(t, c.paths, paths, c.name)
	}
	// A detail list that is not pydantic's is no failure without a status.
	_, ok := remedy.Parse(0, nil, []byte(`{"detail":[{"name":"a"}]}`))
	assert.False(t, ok)
}

// TestZod4Messages reads what zod 4's English messages state, one "message at path" line each
// in the TypeScript SDK's validation error (SDK 1.2x and later).
func TestZod4Messages(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line, code, expected string
		allowed              []string
	}{
		{"Invalid input: expected number, received string", "invalid_type", `"number"`, nil},
		{`Invalid input: expected "eur"`, "invalid_value", "", []string{`"eur"`}},
		{`Invalid option: expected one of "usd"|"eur"|"gbp"`, "invalid_value", "", []string{`"usd"`, `"eur"`, `"gbp"`}},
		{`Invalid option: expected one of 1|2|true`, "invalid_value", "", []string{`1`, `2`, `true`}},
		{`Invalid option: expected one of "a|b"|"c"`, "invalid_value", "", nil}, // ambiguous: none rather than wrong ones
		{"Too big: expected number to be <=1000000", "too_big", `{"maximum":1000000}`, nil},
		{"Too big: expected number to be <100", "too_big", `{"exclusiveMaximum":100}`, nil},
		{"Too small: expected number to be >0", "too_small", `{"exclusiveMinimum":0}`, nil},
		{"Too small: expected string to have >=5 characters", "too_small", `{"minLength":5}`, nil},
		{"Too big: expected array to have <=2 items", "too_big", `{"maxItems":2}`, nil},
		{"Too big: expected string to have exactly 3 characters", "too_big", "", nil},
		{"Invalid string: must match pattern /^cus_[a-z0-9]+$/", "invalid_format", `{"pattern":"^cus_[a-z0-9]+$"}`, nil},
		{"Invalid string: must match pattern /^a$/i", "invalid_format", "", nil}, // flags: not a JSON Schema pattern
		{`Unrecognized keys: "a", "b"`, "unrecognized_keys", "", nil},
		{"Invalid email address", "", "", nil},
	}
	for _, c := range cases {
		text := "MCP error -32602: Input validation error: Invalid arguments for tool t: " + c.line + " at x"
		body, err := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": true})
		require.NoError(t, err)
		e, ok := remedy.Parse(0, nil, body)
		require.True(t, ok, c.line)
		require.Len(t, e.Issues, 1, c.line)
		is := e.Issues[0]
		assert.Equal(t, "/x", is.Path, c.line)
		assert.Equal(t, c.line, is.Message)
		assert.Equal(t, c.code, is.Code, c.line)
		if c.expected == "" {
			assert.Nil(t, is.Expected, c.line)
		} else {
			assert.JSONEq(t, c.expected, string(is.Expected), c.line)
		}
		var allowed []string
		for _, v := range is.AllowedValues {
			allowed = append(allowed, string(v))
		}
		assert.Equal(t, c.allowed, allowed, c.line)
	}
}
