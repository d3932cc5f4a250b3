package remedy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's "Reading a failure" is ExampleParse_referenceServer: every line of its code is
// in the example, and every line the example prints (which go test holds to its Output) is
// in the section, beside the code that prints it or in the prompt shown below it.
func TestReadmeReadingAFailure(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Reading a failure\n")
	require.True(t, ok, "the README has no section Reading a failure")
	section, _, _ = strings.Cut(section, "\n## ")
	_, code, ok := strings.Cut(section, "```go\n")
	require.True(t, ok, "the section has no Go code")
	code, _, _ = strings.Cut(code, "```")

	src, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	_, example, ok := strings.Cut(string(src), "\nfunc ExampleParse_referenceServer() {\n")
	require.True(t, ok, "example_test.go has no ExampleParse_referenceServer")
	example, _, _ = strings.Cut(example, "\n}\n")

	for _, line := range strings.Split(code, "\n") {
		stmt, _, _ := strings.Cut(line, " // ")
		if stmt = strings.TrimSpace(stmt); stmt != "" {
			assert.Contains(t, string(src), stmt, "the README's code is the example's")
		}
	}
	_, output, ok := strings.Cut(example, "\t// Output:\n")
	require.True(t, ok, "the example has no Output")
	for _, line := range strings.Split(strings.TrimSpace(output), "\n") {
		printed := strings.TrimPrefix(strings.TrimSpace(line), "// ")
		assert.Contains(t, section, printed, "what the example prints is what the README says it prints")
	}
}

// The README's first client example, in "Calling through the loop", is at most 10 lines, names
// no package of remedy's but client, and is ExampleNew's code: every line of it is in the
// example, which go test runs against a server on loopback and holds to its Output.
func TestReadmeCallingThroughTheLoop(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Calling through the loop\n")
	require.True(t, ok, "the README has no section Calling through the loop")
	_, code, ok := strings.Cut(section, "```go\n")
	require.True(t, ok, "the section has no Go code")
	code, _, _ = strings.Cut(code, "```")
	lines := strings.Split(strings.TrimSuffix(code, "\n"), "\n")
	assert.LessOrEqual(t, len(lines), 10, "the first client example fits 10 lines")
	assert.Contains(t, code, "client.New(")
	assert.NotRegexp(t, `\b(remedy|rewrite|tools|mcp|server|conformance|retryable|redispacer)\.[A-Z]`, code,
		"the first client example uses one package of remedy's, client")

	src, err := os.ReadFile(filepath.Join("client", "example_client_test.go"))
	require.NoError(t, err)
	_, example, ok := strings.Cut(string(src), "\nfunc ExampleNew() {\n")
	require.True(t, ok, "client/example_client_test.go has no ExampleNew")
	example, _, _ = strings.Cut(example, "\n}\n")
	for _, line := range lines {
		if line = strings.TrimSpace(line); line != "" {
			assert.Contains(t, example, line, "the README's code is ExampleNew's")
		}
	}
}
