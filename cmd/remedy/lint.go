package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/remedy-go/remedy/conformance"
)

// maxLintFetch bounds a document lint fetches from a URL, as LoadOpenAPI bounds one: 8 MiB.
const maxLintFetch = 8 << 20

// lintFetchTimeout bounds fetching a document from a URL.
const lintFetchTimeout = 30 * time.Second

var lintCommand = &command{
	name:     "lint",
	summary:  "check an OpenAPI document for what agents need, without a server",
	synopsis: "remedy lint [--json] [--junit FILE] [--verbose] [--header 'Name: value'] openapi.yaml|URL|-",
	about: `Lint checks an OpenAPI document (JSON or YAML, told by its content) alone, rule
by rule: what a client needs from it to call the API and to repair its failures. The
document is a file, an http(s) URL (fetched with GET, at most 8 MiB; a URL without a
path is a server's, whose document is at /openapi.json, as probe reads it), or "-" for
stdin. It prints one line per rule, then why each failure failed.`,
	examples: []string{
		"remedy lint openapi.yaml",
		"remedy lint https://api.example.com/openapi.json",
		"remedy lint http://127.0.0.1:8080",
		"curl -s http://127.0.0.1:8080/openapi.json | remedy lint --junit lint.xml -",
	},
	exits: `0 no rule failed
1 a rule failed (a document that is not OpenAPI 3.x included)
2 usage error
3 the file or URL could not be read, or the JUnit report written`,
	more: func() string { return ruleList("Rules", conformance.LintRules()) },
	run:  lint,
}

func lint(_ context.Context, in *invocation) error {
	var report reportFlags
	report.define(in.fs)
	var header headerFlag
	in.fs.Var(&header, "header", "send the header `'Name: value'` when fetching the document from a URL (repeatable)")
	pos, err := in.parse(1, 1)
	if err != nil {
		return err
	}
	name := pos[0]
	var doc []byte
	switch {
	case name == "-":
		name = "stdin"
		doc, err = io.ReadAll(in.stdin)
	case strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://"):
		name = withDocPath(name)
		doc, err = lintFetch(name, header.h)
	default:
		doc, err = os.ReadFile(name)
	}
	if err != nil {
		return cannotRunf("lint: cannot read %s: %v", name, err)
	}
	rep := conformance.Lint(doc)
	rep.Target = name
	return report.write(in, rep)
}

// withDocPath is rawURL with the OpenAPI document's default path when it names none (a
// server's base URL), as probe reads it: http://127.0.0.1:8080 → http://127.0.0.1:8080/openapi.json.
func withDocPath(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return rawURL
	}
	u.Path = conformance.DefaultOpenAPIPath
	return u.String()
}

// lintFetch gets the document at rawURL, sending header to its host only.
func lintFetch(rawURL string, header http.Header) ([]byte, error) {
	u, err := parseBaseURL(rawURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), lintFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, application/x-yaml;q=0.9, text/yaml;q=0.9, */*;q=0.5")
	resp, err := httpClient(header, u).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	doc, err := io.ReadAll(io.LimitReader(resp.Body, maxLintFetch+1))
	if err != nil {
		return nil, err
	}
	if len(doc) > maxLintFetch {
		return nil, fmt.Errorf("the document is larger than the %d MiB limit", maxLintFetch>>20)
	}
	return doc, nil
}
