package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/conformance"
	"github.com/remedy-go/remedy/internal/termsafe"
	"github.com/remedy-go/remedy/rewrite"
)

// The tests here check that what a server (or a model) says reaches a person's terminal as
// visible escapes: the call's output, the errors, probe's and lint's reports.

// spoof is a server's text written to act on a terminal: a window title, a carriage return, an
// erased line, the cursor moved up, a forged line, a C1 control and a right-to-left override.
const spoof = "\x1b]0;pwned\x07\r\x1b[2K\x1b[1A\nremedy: all clear\u009b2J\u202eevil"

// spoofShown is spoof as it must be shown.
const spoofShown = `\x1b]0;pwned\x07\r\x1b[2K\x1b[1A\nremedy: all clear\u009b2J\u202eevil`

// wantEscaped checks that out holds spoof only escaped: no character that acts on a terminal
// but its own line breaks, no line the server started, and the escaped form at least once.
func wantEscaped(t *testing.T, what, out string) {
	t.Helper()
	shown := escapedLines(out)
	if i := strings.IndexFunc(out, func(r rune) bool { return r != '\n' && !termsafe.Safe(string(r)) }); i >= 0 {
		t.Errorf("%s: a raw %q at byte %d:\n%s", what, out[i:i+1], i, shown)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "remedy: all clear") {
			t.Errorf("%s: a line the server wrote: %s", what, termsafe.String(l))
		}
	}
	if !strings.Contains(out, spoofShown) {
		t.Errorf("%s: the server's words are not shown escaped:\n%s", what, shown)
	}
}

// TestCallTextEscapes: each way a call ends is written with the server's and the model's words
// escaped: a warning and a body that is not JSON, a JSON body holding a right-to-left override,
// a confirmation, a refused proposal, a failure with its hint and error.
func TestCallTextEscapes(t *testing.T) {
	t.Parallel()
	env := &remedy.Envelope{Status: 422, Code: "invalid" + spoof, Message: spoof, Hint: spoof}
	for _, tc := range []struct {
		name  string
		resp  *client.Response
		ce    *client.CallError
		lines int
		line  string // a line of the output, when one is to be checked
	}{
		{"warning, body not JSON", &client.Response{Status: 200, Body: []byte("plain " + spoof),
			Envelope: &remedy.Envelope{Severity: remedy.SeverityWarning, Code: "deprecated", Message: spoof}}, nil, 3,
			"plain " + spoofShown},
		// Indented, a JSON body keeps its lines: its strings cannot hold a line break.
		{"JSON body", &client.Response{Status: 200, Body: []byte(`{"name":"` + "\u202e" + `"}`),
			Envelope: &remedy.Envelope{Severity: remedy.SeverityInfo, Message: spoof}}, nil, 5, `  "name": "\u202e"`},
		{"confirmation", nil, &client.CallError{Operation: "transfer", Cause: client.ErrConfirmationRequired,
			Challenge: &client.Challenge{Operation: "transfer", Args: json.RawMessage(`{"memo":"` + "\u202e" + `"}`), Message: spoof}}, 4,
			`   would confirm: transfer {"memo":"\u202e"}`},
		{"proposal", nil, &client.CallError{Operation: "charge", Cause: client.ErrRewriteRefused,
			Proposal: &rewrite.Proposal{Operation: "charge", Args: json.RawMessage(`{"a":1}`), New: json.RawMessage(`{"a":"` + "\u202e" + `"}`),
				Changes:  []rewrite.Change{{Path: "/a" + spoof, Old: json.RawMessage(`1`), New: json.RawMessage(`"` + "\u202e" + `"`), Rule: "llm", Lossy: true}},
				Envelope: env}}, 6, ""},
		{"failure", nil, &client.CallError{Operation: "charge", Cause: client.ErrNotRetryable, Detail: "the server said " + spoof,
			Envelope: env, Err: errors.New("read: " + spoof)}, 4, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			writeCallText(&out, tc.resp, tc.ce)
			wantEscaped(t, tc.name, out.String())
			if n := strings.Count(out.String(), "\n"); n != tc.lines {
				t.Errorf("%d lines, want %d:\n%s", n, tc.lines, escapedLines(out.String()))
			}
			if tc.line != "" && !slices.Contains(strings.Split(out.String(), "\n"), tc.line) {
				t.Errorf("no line %q:\n%s", tc.line, escapedLines(out.String()))
			}
		})
	}
}

// TestCallTranscriptEscapes: the server's confirmation message is escaped in the transcript,
// whether the call stops for it (no terminal, no --confirm) or --confirm approves it.
func TestCallTranscriptEscapes(t *testing.T) {
	t.Parallel()
	const payload = `{"to":"acct_ada","amount":4200}`
	for _, tc := range []struct {
		flags []string
		exit  int
		want  string
	}{
		{nil, exitFailed, "   the server says: " + termsafe.String(forgery) + "\n"},
		{[]string{"--confirm"}, exitOK, "--confirm: approving transfer " + payload + " (" + termsafe.String(forgery) + ")\n"},
	} {
		ts := startTransfers(t)
		r := remedyCmd(t, "", append(append([]string{"call"}, tc.flags...), ts.url, "transfer", payload)...)
		r.wantExit(t, tc.exit)
		if i := strings.IndexFunc(r.stdout, func(r rune) bool { return r != '\n' && !termsafe.Safe(string(r)) }); i >= 0 {
			t.Errorf("%v: a raw control at byte %d:\n%s", tc.flags, i, escapedLines(r.stdout))
		}
		for _, want := range []string{"409 confirmation_required: " + termsafe.String(forgery) + "\n", tc.want} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%v: the output lacks %q:\n%s", tc.flags, want, escapedLines(r.stdout))
			}
		}
	}
}

// TestReportEscapes: an error is one line on stderr, whatever a server put in it.
func TestReportEscapes(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	if code := report(&stderr, cannotRunf("call: cannot load the OpenAPI document: %s", spoof)); code != exitCannotRun {
		t.Errorf("exit %d", code)
	}
	// The CR and the LF are folded into "; " as any error's line breaks are; the rest is escaped.
	want := `remedy: call: cannot load the OpenAPI document: \x1b]0;pwned\x07; \x1b[2K\x1b[1A; remedy: all clear\u009b2J\u202eevil` + "\n"
	if got := stderr.String(); got != want {
		t.Errorf("got  %s\nwant %s", termsafe.String(got), termsafe.String(want))
	}
}

// TestCallUnknownToolEscapesNames: the usage error that lists an MCP server's tools shows
// their names escaped.
func TestCallUnknownToolEscapesNames(t *testing.T) {
	t.Parallel()
	ms := sdk.NewServer(&sdk.Implementation{Name: "spoof", Version: "1"}, nil)
	ms.AddTool(&sdk.Tool{Name: "get" + spoof, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return ms }, nil))
	t.Cleanup(srv.Close)
	r := remedyCmd(t, "", "call", "--mcp", srv.URL, "transfer")
	r.wantExit(t, exitUsage)
	if !strings.Contains(r.stderr, "(its tools: get"+spoofShown+")") {
		t.Errorf("want the tool's name escaped:\n%s", escapedLines(r.stderr))
	}
	wantEscaped(t, "stderr", r.stderr)
}

// spoofDoc is an OpenAPI document whose path and operationId hold spoof, and whose operation
// documents no errors: lint and probe quote them in their failures.
var spoofDoc = func() string {
	b, _ := json.Marshal(map[string]any{"openapi": "3.1.0", "info": map[string]any{"title": "spoof", "version": "1"},
		"paths": map[string]any{"/a" + spoof: map[string]any{"get": map[string]any{"operationId": "get" + spoof,
			"responses": map[string]any{"200": map[string]any{"description": "ok"}}}}}})
	return string(b)
}()

// TestLintEscapesDocument: lint's report quotes a fetched document's names escaped.
func TestLintEscapesDocument(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, spoofDoc)
	}))
	t.Cleanup(srv.Close)
	r := remedyCmd(t, "", "lint", srv.URL+"/openapi.json")
	r.wantExit(t, exitFailed)
	wantEscaped(t, "lint", r.stdout)
}

// TestProbeEscapesServer: probe's report quotes the server's answers and names escaped.
func TestProbeEscapesServer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/openapi.json" {
			io.WriteString(w, spoofDoc)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "not found "+spoof)
	}))
	t.Cleanup(srv.Close)
	r := remedyCmd(t, "", "probe", "--rule", "unknown-route", srv.URL)
	r.wantExit(t, exitFailed)
	wantEscaped(t, "probe", r.stdout)
}

// TestProgressLineEscapes: probe's progress line, on a terminal, names the step escaped: its own
// carriage return and erase are the only controls written.
func TestProgressLineEscapes(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	progress, done := progressLine(&buf)
	progress(conformance.Progress{Done: 1, Total: 2, Step: "get\x1b[2J: wrong type"})
	done()
	if got, want := buf.String(), "\r\x1b[Kprobing [1/2] get\\x1b[2J: wrong type\r\x1b[K"; got != want {
		t.Errorf("progress line %q, want %q", got, want)
	}
}
