package remedy_test

import (
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
