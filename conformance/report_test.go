package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/conformance"
)

func sample() *conformance.Report {
	return &conformance.Report{Target: "http://127.0.0.1:8080", Started: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC),
		Duration: 1500 * time.Millisecond, Results: []conformance.Result{
			{Rule: conformance.Rule{ID: "envelope", Statement: "Every error is an envelope."}, Outcome: conformance.Pass,
				Detail: "3 checks", Evidence: []conformance.Exchange{{Request: "GET /x", Status: 404, Response: `{"error":{}}`}}},
			{Rule: conformance.Rule{ID: "trace-id", Statement: "5xx carry a trace id."}, Outcome: conformance.Fail,
				Detail: "a 500 internal_error answer carries no trace id", Evidence: []conformance.Exchange{{Request: "POST /boom <&>", Status: 500, Response: `{"error":{"code":"internal_error"}}`}}},
			{Rule: conformance.Rule{ID: "idempotent-replay", Statement: "Replays are identical."}, Outcome: conformance.Skip,
				Detail: "needs Options.Writes"},
		}}
}

func TestReportCounts(t *testing.T) {
	r := sample()
	assert.False(t, r.OK())
	assert.Equal(t, []string{"trace-id"}, r.Failed())
	assert.Equal(t, 1, r.Count(conformance.Pass))
	assert.Equal(t, 1, r.Count(conformance.Skip))
	res, ok := r.Result("trace-id")
	assert.True(t, ok)
	assert.Equal(t, conformance.Fail, res.Outcome)
	_, ok = r.Result("nope")
	assert.False(t, ok)
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sample().WriteText(&b, conformance.TextOptions{}))
	s := b.String()
	assert.Contains(t, s, "PASS  envelope")
	assert.Contains(t, s, "FAIL  trace-id")
	assert.Contains(t, s, "FAIL trace-id: a 500 internal_error answer carries no trace id\n    > POST /boom <&>\n    < 500 ")
	assert.Contains(t, s, "SKIP idempotent-replay: needs Options.Writes")
	assert.NotContains(t, s, "3 checks", "a pass's detail only when verbose")
	assert.Contains(t, s, "1 passed, 1 failed, 1 skipped (1.5s)")
	assert.NotContains(t, s, "\x1b[", "no color unless asked")

	b.Reset()
	require.NoError(t, sample().WriteText(&b, conformance.TextOptions{Color: true, Verbose: true}))
	assert.Contains(t, b.String(), "\x1b[31mFAIL\x1b[0m")
	assert.Contains(t, b.String(), "3 checks")
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sample().WriteJSON(&b))
	var back conformance.Report
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	assert.Equal(t, *sample(), back)
	assert.Contains(t, b.String(), `"outcome": "fail"`)
}

func TestWriteJUnit(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sample().WriteJUnit(&b))
	var suite struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testcase"`
	}
	require.NoError(t, xml.Unmarshal(b.Bytes(), &suite), b.String())
	assert.Equal(t, 3, suite.Tests)
	assert.Equal(t, 1, suite.Failures)
	assert.Equal(t, 1, suite.Skipped)
	require.Len(t, suite.Cases, 3)
	assert.Nil(t, suite.Cases[0].Failure)
	require.NotNil(t, suite.Cases[1].Failure)
	assert.Contains(t, suite.Cases[1].Failure.Text, "POST /boom <&>", "evidence escaped and read back")
	assert.NotNil(t, suite.Cases[2].Skipped)
	assert.True(t, strings.HasPrefix(b.String(), "<?xml"))
}

func TestRunRefusesUnusableArguments(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		url  string
		opts conformance.Options
		want string
	}{
		{url: "localhost:8080", want: "not an absolute http(s) URL"},
		{url: "ftp://example.com", want: "not an absolute http(s) URL"},
		{url: "http://127.0.0.1:1", opts: conformance.Options{Rules: []string{"no-such-rule"}}, want: `no rule "no-such-rule"`},
		{url: "http://127.0.0.1:1", opts: conformance.Options{Examples: map[string]json.RawMessage{"x": json.RawMessage(`[1]`)}}, want: "example of x is not a JSON object"},
	} {
		_, err := conformance.Run(ctx, c.url, c.opts)
		if assert.Error(t, err, c.url) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
}

// A server that is not there fails the document rule and the unknown route, and skips what
// needs the document: the report says so instead of an error.
func TestRunAgainstNothing(t *testing.T) {
	rep, err := conformance.Run(context.Background(), "http://127.0.0.1:1", conformance.Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"openapi", "unknown-route"}, rep.Failed())
	res, _ := rep.Result("schema-inline")
	assert.Equal(t, conformance.Skip, res.Outcome)
	assert.Contains(t, res.Detail, "no OpenAPI document")
}

func TestRunSelectedRules(t *testing.T) {
	url, opts := reference(t, nil)
	opts.Rules = []string{"unknown-route", "envelope"}
	rep, err := conformance.Run(context.Background(), url, opts)
	require.NoError(t, err)
	require.Len(t, rep.Results, 2)
	assert.Equal(t, "envelope", rep.Results[0].ID, "in the order of Rules()")
	assert.True(t, rep.OK())
}

func TestRunEndsWithItsContext(t *testing.T) {
	url, opts := reference(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	opts.Progress = func(p conformance.Progress) {
		if p.Done == 3 {
			cancel()
		}
	}
	rep, err := conformance.Run(ctx, url, opts)
	require.NoError(t, err)
	res, _ := rep.Result("idempotent-replay")
	assert.Equal(t, conformance.Skip, res.Outcome)
	assert.Contains(t, res.Detail, "ended early")
	assert.Empty(t, rep.Failed(), "a cut run fails nothing for it")
}

// TestWriteTextEscapes: what a server or a document said reaches the text report as visible
// escapes: its escape sequences do not act on the terminal, and its line breaks and tabs
// neither start lines nor break the table.
func TestWriteTextEscapes(t *testing.T) {
	t.Parallel()
	const hostile = "\x1b]0;pwned\x07\r\x1b[2K\x1b[1A\nPASS  everything\t\u202eevil"
	const shown = `\x1b]0;pwned\x07\r\x1b[2K\x1b[1A\nPASS  everything\t\u202eevil`
	rep := &conformance.Report{Target: "http://127.0.0.1:1/" + hostile, Results: []conformance.Result{
		{Rule: conformance.Rule{ID: "envelope", Statement: "Every error is an envelope."}, Outcome: conformance.Fail,
			Detail: "code " + hostile, Evidence: []conformance.Exchange{
				{Request: "GET /" + hostile, Status: 404, Response: `{"error":"` + hostile + `"}`},
				{Request: "GET /x", Response: "no response: " + hostile}}},
		{Rule: conformance.Rule{ID: "trace-id", Statement: "5xx carry a trace id."}, Outcome: conformance.Skip, Detail: hostile},
	}}
	var b bytes.Buffer
	require.NoError(t, rep.WriteText(&b, conformance.TextOptions{Verbose: true}))
	s := b.String()
	for _, c := range []string{"\x1b", "\r", "\t", "\u202e"} {
		assert.NotContains(t, s, c)
	}
	assert.Equal(t, 6, strings.Count(s, shown), "the target, a detail, two requests or responses and a skip:\n%s", s)
	for _, l := range strings.Split(s, "\n") {
		assert.False(t, strings.HasPrefix(l, "PASS"), "a forged line %q", l)
	}

	// Every finding and every skipped check, as the verbose text lists them, likewise.
	rep.Results[0].Findings = []conformance.Finding{
		{Detail: "one " + hostile, Exchange: conformance.Exchange{Request: "GET /" + hostile, Status: 422, Response: hostile}},
		{Detail: "two " + hostile, Exchange: conformance.Exchange{Request: "GET /y", Response: hostile}}}
	rep.Results[0].Skipped = []string{"some " + hostile}
	rep.Results[1].Skipped = []string{"more " + hostile}
	for _, verbose := range []bool{false, true} {
		b.Reset()
		require.NoError(t, rep.WriteText(&b, conformance.TextOptions{Verbose: verbose}))
		s = b.String()
		for _, c := range []string{"\x1b", "\r", "\t", "\u202e"} {
			assert.NotContains(t, s, c)
		}
		for _, l := range strings.Split(s, "\n") {
			assert.False(t, strings.HasPrefix(l, "PASS"), "a forged line %q", l)
		}
		if verbose {
			assert.Equal(t, 9, strings.Count(s, shown), "the target, two findings with their requests and responses, three skips:\n%s", s)
		}
	}
}
