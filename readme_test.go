package remedy_test

import (
	"os"
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
