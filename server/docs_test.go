package server_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
)

var updateDocs = flag.Bool("update", false, "rewrite testdata/errors.golden.md from the built-in codes")

// docsTestRegistry is the registry the golden docs are written from: the built-ins, documented at
// a docs base as they would be when published.
func docsTestRegistry() *server.Registry {
	reg := server.NewRegistry()
	reg.SetDocsBase("https://docs.example.com/errors")
	return reg
}

func TestWriteMarkdownGolden(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, docsTestRegistry().WriteMarkdown(&buf))
	golden := filepath.Join("testdata", "errors.golden.md")
	if *updateDocs {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run: go test ./server -run Markdown -update")
	assert.Equal(t, string(want), buf.String(), "the docs changed; review, then run: go test ./server -run Markdown -update")
}

func TestWriteMarkdownDeterministic(t *testing.T) {
	t.Parallel()
	var a, b bytes.Buffer
	require.NoError(t, docsTestRegistry().WriteMarkdown(&a))
	require.NoError(t, docsTestRegistry().WriteMarkdown(&b))
	assert.Equal(t, a.String(), b.String())
}

var (
	docsHeading = regexp.MustCompile("(?m)^## `([a-z][a-z0-9_]*)`$")
	docsLink    = regexp.MustCompile(`\]\(#([^)]*)\)`)
	docsExample = regexp.MustCompile("(?s)```json\n(.*?)\n```")
)

// Every code has one section, every link lands on one, and every example is an envelope the
// client reads back as its code.
func TestWriteMarkdownStructure(t *testing.T) {
	t.Parallel()
	reg := docsTestRegistry()
	var buf bytes.Buffer
	require.NoError(t, reg.WriteMarkdown(&buf))
	doc := buf.String()

	var headings []string
	for _, m := range docsHeading.FindAllStringSubmatch(doc, -1) {
		headings = append(headings, m[1])
	}
	var codes []string
	for _, c := range reg.Codes() {
		codes = append(codes, c.Code)
	}
	assert.Equal(t, codes, headings, "one section per code, sorted")

	for _, m := range docsLink.FindAllStringSubmatch(doc, -1) {
		assert.Contains(t, headings, m[1], "link to #%s has a section", m[1])
	}

	sections := docsHeading.Split(doc, -1)[1:]
	require.Len(t, sections, len(codes))
	for i, sec := range sections {
		c, _ := reg.Lookup(codes[i])
		ex := docsExample.FindStringSubmatch(sec)
		require.NotNil(t, ex, "%s has an example", c.Code)
		env, ok := remedy.Parse(c.Status, nil, []byte(ex[1]))
		require.True(t, ok, c.Code)
		assert.Equal(t, c.Code, env.Code)
		assert.Equal(t, c.Cause, env.Message, "the example's message is the cause")
		assert.Equal(t, c.DocsURL, env.DocsURL)
		for _, want := range []string{"| Status | ", "| Severity | error |", "| Category | ", "| Retryable | ", "| Stability | stable |", "**Cause**", "**Repair**"} {
			assert.Contains(t, sec, want, c.Code)
		}
		for _, rel := range c.Related {
			assert.Contains(t, sec, "[`"+rel+"`](#"+rel+")", "%s links to %s", c.Code, rel)
		}
	}
}

func TestWriteMarkdownApplicationCode(t *testing.T) {
	t.Parallel()
	reg := server.NewRegistry()
	require.NoError(t, reg.Register(server.Code{
		Code: "quota_window", Status: 429, Title: "Quota | window", Category: remedy.CategoryRateLimit,
		Retryable: true, Stability: server.Beta, DocsURL: "https://shop.example.com/quota",
		Related: []string{"rate_limited"},
	}))
	var buf bytes.Buffer
	require.NoError(t, reg.WriteMarkdown(&buf))
	doc := buf.String()
	assert.Contains(t, doc, "| [`quota_window`](#quota_window) | 429 | rate_limit | yes | Quota \\| window |", "a pipe in a cell is escaped")
	assert.Contains(t, doc, "| Stability | beta |")
	assert.Contains(t, doc, "| Docs | <https://shop.example.com/quota> |")
	assert.NotContains(t, doc, "**Cause**\n\n\n", "an empty cause writes no block")
}

type docsFailingWriter struct{}

var errDocsDisk = errors.New("disk full")

func (docsFailingWriter) Write([]byte) (int, error) { return 0, errDocsDisk }

func TestWriteMarkdownWriterError(t *testing.T) {
	t.Parallel()
	err := server.NewRegistry().WriteMarkdown(docsFailingWriter{})
	assert.ErrorIs(t, err, errDocsDisk)
}

func TestWriteMarkdownEmptyRegistry(t *testing.T) {
	t.Parallel()
	var reg server.Registry
	var buf bytes.Buffer
	require.NoError(t, reg.WriteMarkdown(&buf))
	assert.True(t, strings.HasPrefix(buf.String(), "# Error codes\n"))
	assert.NotContains(t, buf.String(), "## ")
}
