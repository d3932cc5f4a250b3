package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/remedy-go/remedy/conformance"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/internal/testkit/margin"
	"github.com/remedy-go/remedy/internal/testkit/nettest"
	"github.com/remedy-go/remedy/internal/testkit/redistest"
)

// result is what one run of the command gave.
type result struct {
	code           int
	stdout, stderr string
}

// remedyCmd runs the command line args with stdin, as main does.
func remedyCmd(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// wantExit checks the exit status, and that an error is one line on stderr starting
// "remedy: " exactly when the status says something could not be done.
func (r result) wantExit(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("want exit %d, got %s", code, r)
	}
	switch code {
	case exitUsage, exitCannotRun:
		if !strings.HasPrefix(r.stderr, "remedy: ") || strings.Count(r.stderr, "\n") != 1 {
			t.Fatalf("want one error line on stderr starting \"remedy: \", got %s", r)
		}
	}
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
		t.Fatalf("a stack trace on stderr: %s", r)
	}
}

// exchange is one request the billing API received.
type exchange struct {
	method, path string
	header       http.Header
	body         string
}

// billingServer serves the billing API on loopback, recording every request.
type billingServer struct {
	url   string
	store *billing.Store
	mu    sync.Mutex
	seen  []exchange
}

func startBilling(t *testing.T) *billingServer {
	t.Helper()
	api, store, err := billing.New()
	if err != nil {
		t.Fatal(err)
	}
	b := &billingServer{store: store}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		b.mu.Lock()
		b.seen = append(b.seen, exchange{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: string(body)})
		b.mu.Unlock()
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	b.url = srv.URL
	return b
}

func (b *billingServer) requests() []exchange {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]exchange(nil), b.seen...)
}

// refusedURL is an http URL on loopback where nothing listens.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

const wrongEnum = `{"customer_id":"cus_ada","currency":"EUR","amount":1200}`

func TestCallRepairsWrongEnum(t *testing.T) {
	t.Parallel()
	b := startBilling(t)
	r := remedyCmd(t, "", "call", "--check=off", b.url, "create_invoice", wrongEnum)
	r.wantExit(t, exitOK)
	for _, want := range []string{
		"create_invoice on " + b.url + " (7 operations in " + b.url + "/openapi.json)",
		"#1 create_invoice POST /v1/invoices",
		"422 invalid_body",
		`issue /currency enum allowed ["usd","eur","gbp"]`,
		"-> rewrite: the failure names a fix",
		"#2 create_invoice POST /v1/invoices",
		"=> 201, after 2 attempts",
		`"currency": "eur"`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, r)
		}
	}
	if r.stderr != "" {
		t.Errorf("stderr: %q", r.stderr)
	}
	if n := b.store.Effects("create_invoice"); n != 1 {
		t.Errorf("create_invoice executed %d times, want once", n)
	}
}

// callJSON is call --json's output, as a script reads it.
type callJSON struct {
	OK       bool            `json:"ok"`
	Status   int             `json:"status"`
	Replayed bool            `json:"replayed"`
	Result   json.RawMessage `json:"result"`
	Attempts []struct {
		Number    int    `json:"number"`
		Operation string `json:"operation"`
		Status    int    `json:"status"`
		Code      string `json:"code"`
		Action    string `json:"action"`
		Why       string `json:"why"`
	} `json:"attempts"`
	Cause        string          `json:"cause"`
	Detail       string          `json:"detail"`
	Envelope     json.RawMessage `json:"envelope"`
	Confirmation *struct {
		Operation string          `json:"operation"`
		Args      json.RawMessage `json:"args"`
		Hint      string          `json:"hint"`
	} `json:"confirmation"`
}

func decodeCall(t *testing.T, r result) callJSON {
	t.Helper()
	var out callJSON
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("call --json printed no JSON object: %v\n%s", err, r)
	}
	if err := dec.Decode(new(json.RawMessage)); err != io.EOF {
		t.Fatalf("call --json printed more than one JSON value (%v):\n%s", err, r)
	}
	return out
}

func TestCallJSON(t *testing.T) {
	t.Parallel()
	b := startBilling(t)
	r := remedyCmd(t, "", "call", "--check=off", "--json", b.url, "create_invoice", wrongEnum)
	r.wantExit(t, exitOK)
	out := decodeCall(t, r)
	if !out.OK || out.Status != http.StatusCreated || out.Replayed {
		t.Errorf("ok, status, replayed = %v, %d, %v; want true, 201, false", out.OK, out.Status, out.Replayed)
	}
	if len(out.Attempts) != 2 {
		t.Fatalf("want 2 attempts, got %+v", out.Attempts)
	}
	first, second := out.Attempts[0], out.Attempts[1]
	if first.Number != 1 || first.Operation != "create_invoice" || first.Status != 422 || first.Code != "invalid_body" ||
		first.Action != "rewrite" || first.Why == "" {
		t.Errorf("first attempt: %+v", first)
	}
	if second.Number != 2 || second.Status != 201 || second.Code != "" || second.Action != "return" {
		t.Errorf("second attempt: %+v", second)
	}
	var inv billing.Invoice
	if err := json.Unmarshal(out.Result, &inv); err != nil || inv.Currency != "eur" || inv.Amount != 1200 {
		t.Errorf("result %s (%v): want the invoice in eur", out.Result, err)
	}
	if out.Cause != "" || out.Envelope != nil {
		t.Errorf("a success with a cause or an envelope: %s", r.stdout)
	}
	if strings.Contains(r.stdout, "#1 ") {
		t.Errorf("--json printed the transcript too:\n%s", r.stdout)
	}
}

func TestCallFailureJSON(t *testing.T) {
	t.Parallel()
	b := startBilling(t)
	r := remedyCmd(t, "", "call", "--json", b.url, "get_invoice", `{"id":"in_404"}`)
	r.wantExit(t, exitFailed)
	out := decodeCall(t, r)
	if out.OK || out.Status != 404 || out.Cause != "not retryable" || out.Detail == "" {
		t.Errorf("ok, status, cause, detail = %v, %d, %q, %q", out.OK, out.Status, out.Cause, out.Detail)
	}
	var env struct {
		Error struct {
			StatusCode int    `json:"statusCode"`
			Code       string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out.Envelope, &env); err != nil || env.Error.Code != "not_found" || env.Error.StatusCode != 404 {
		t.Errorf("envelope %s (%v): want the canonical not_found envelope", out.Envelope, err)
	}
}

func TestCallConfirmation(t *testing.T) {
	t.Parallel()
	b := startBilling(t)
	args := `{"id":"cus_ada"}`

	r := remedyCmd(t, "", "call", b.url, "delete_customer", args)
	r.wantExit(t, exitFailed)
	for _, want := range []string{"needs confirmation", `would confirm: delete_customer {"id":"cus_ada"}`, "rerun with --confirm"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, r)
		}
	}

	r = remedyCmd(t, "", "call", "--json", b.url, "delete_customer", args)
	r.wantExit(t, exitFailed)
	out := decodeCall(t, r)
	if out.OK || out.Cause != "confirmation required" || out.Confirmation == nil ||
		out.Confirmation.Operation != "delete_customer" || !strings.Contains(out.Confirmation.Hint, "--confirm") {
		t.Errorf("want a confirmation to rerun with --confirm:\n%s", r.stdout)
	}
	if n := b.store.Effects("delete_customer"); n != 0 {
		t.Fatalf("delete_customer executed %d times without --confirm", n)
	}

	// Flags after the arguments count too.
	r = remedyCmd(t, "", "call", b.url, "delete_customer", args, "--confirm")
	r.wantExit(t, exitOK)
	if !strings.Contains(r.stdout, "X-Confirmation-Token") || !strings.Contains(r.stdout, `"deleted": true`) {
		t.Errorf("want the confirmed attempt and the result:\n%s", r)
	}
	if n := b.store.Effects("delete_customer"); n != 1 {
		t.Errorf("delete_customer executed %d times with --confirm, want once", n)
	}
}

func TestCallMCP(t *testing.T) {
	t.Parallel()
	b := startBilling(t)
	r := remedyCmd(t, "", "call", "--check=off", "--mcp", b.url+"/mcp", "create_invoice", wrongEnum)
	r.wantExit(t, exitOK)
	for _, want := range []string{"create_invoice on " + b.url + "/mcp (MCP)", "tools/call create_invoice", "-> rewrite", `"currency": "eur"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, r)
		}
	}
	if n := b.store.Effects("create_invoice"); n != 1 {
		t.Errorf("create_invoice executed %d times, want once", n)
	}

	r = remedyCmd(t, "", "call", "--mcp", "--json", b.url+"/mcp", "delete_customer", `{"id":"cus_ada"}`)
	r.wantExit(t, exitFailed)
	if out := decodeCall(t, r); out.Confirmation == nil {
		t.Errorf("want a confirmation over MCP:\n%s", r.stdout)
	}
	r = remedyCmd(t, "", "call", "--mcp", "--confirm", b.url+"/mcp", "delete_customer", `{"id":"cus_ada"}`)
	r.wantExit(t, exitOK)
	if n := b.store.Effects("delete_customer"); n != 1 {
		t.Errorf("delete_customer executed %d times, want once", n)
	}

	r = remedyCmd(t, "", "call", "--mcp", b.url+"/mcp", "no_such_tool", `{}`)
	r.wantExit(t, exitUsage)
	if !strings.Contains(r.stderr, `no tool "no_such_tool"`) || !strings.Contains(r.stderr, "create_invoice") {
		t.Errorf("want the tool named and the tools listed: %s", r)
	}
}

func TestCallHeaders(t *testing.T) {
	t.Parallel()
	b := startBilling(t)
	r := remedyCmd(t, `{"currency":"usd"}`, "call", "--header", "Authorization: Bearer s3cret", "--header", "X-Tenant:acme",
		b.url, "revenue_report", "-")
	r.wantExit(t, exitOK)
	seen := b.requests()
	if len(seen) < 2 {
		t.Fatalf("want the document and the call, got %d requests", len(seen))
	}
	for _, ex := range seen {
		if ex.header.Get("Authorization") != "Bearer s3cret" || ex.header.Get("X-Tenant") != "acme" {
			t.Errorf("%s %s without the headers: %v", ex.method, ex.path, ex.header)
		}
	}
	if last := seen[len(seen)-1]; last.path != "/v1/reports/revenue" {
		t.Errorf("the arguments from stdin did not make the call: %+v", last)
	}

	// Over MCP, every request of the session carries them too.
	b = startBilling(t)
	r = remedyCmd(t, "", "call", "--mcp", "--header", "Authorization: Bearer s3cret", b.url+"/mcp", "revenue_report", `{"currency":"usd"}`)
	r.wantExit(t, exitOK)
	for _, ex := range b.requests() {
		if ex.header.Get("Authorization") != "Bearer s3cret" {
			t.Errorf("MCP %s %s without the header", ex.method, ex.path)
		}
	}
}

func TestCallUsageErrors(t *testing.T) {
	t.Parallel()
	b := startBilling(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"invalid JSON", []string{"call", b.url, "create_invoice", `{"amount":`}, "not JSON"},
		{"not an object", []string{"call", b.url, "create_invoice", `[1,2]`}, "not a JSON object"},
		{"null", []string{"call", b.url, "create_invoice", `null`}, "not a JSON object"},
		{"too few arguments", []string{"call", b.url}, "takes 2 or 3 arguments, got 1"},
		{"too many arguments", []string{"call", b.url, "a", "{}", "extra"}, "got 4"},
		{"unknown flag", []string{"call", "--bogus", b.url, "get_invoice"}, "flag provided but not defined"},
		{"bad header", []string{"call", "--header", "no colon", b.url, "get_invoice"}, "Name: value"},
		{"not a URL", []string{"call", "127.0.0.1:8080", "get_invoice"}, "not an absolute http(s) URL"},
		{"unknown operation", []string{"call", b.url, "get_invoce", `{}`}, `"get_invoce" is not an operation`},
		{"openapi with mcp", []string{"call", "--mcp", "--openapi", "/x.json", b.url + "/mcp", "get_invoice"}, "--openapi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := remedyCmd(t, "", tc.args...)
			r.wantExit(t, exitUsage)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr lacks %q: %s", tc.want, r)
			}
			if r.stdout != "" {
				t.Errorf("stdout: %q", r.stdout)
			}
		})
	}
	if n := b.store.Effects("create_invoice"); n != 0 {
		t.Errorf("a refused command line executed create_invoice %d times", n)
	}
}

func TestCallUnreachable(t *testing.T) {
	t.Parallel()
	url := refusedURL(t)
	r := remedyCmd(t, "", "call", url, "get_invoice", `{"id":"in_1"}`)
	r.wantExit(t, exitCannotRun)
	if !strings.Contains(r.stderr, "connection refused") {
		t.Errorf("want the reason: %s", r)
	}
	r = remedyCmd(t, "", "call", "--mcp", url+"/mcp", "get_invoice", `{"id":"in_1"}`)
	r.wantExit(t, exitCannotRun)

	// A server without an OpenAPI document cannot be called by operation name.
	b := startBilling(t)
	r = remedyCmd(t, "", "call", "--openapi", "/nothing.json", b.url, "get_invoice", `{"id":"in_1"}`)
	r.wantExit(t, exitCannotRun)
	if !strings.Contains(r.stderr, "/nothing.json") {
		t.Errorf("want the document named: %s", r)
	}
}

// TestCallTimeout: --timeout ends a call to a server that never answers, and the error says
// so. --timeout also bounds loading the document first; a machine too slow to load it within
// the timeout gets a longer one, so that the timeout always expires during the call.
func TestCallTimeout(t *testing.T) {
	t.Parallel()
	api, _, err := billing.New()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			<-r.Context().Done() // a server that never answers
			return
		}
		api.ServeHTTP(w, r)
	}))
	defer srv.Close()
	margin.Grow(t, 100*time.Millisecond, 10*time.Second, func(timeout time.Duration) bool {
		start := time.Now()
		r := remedyCmd(t, "", "call", "--timeout", timeout.String(), srv.URL, "get_invoice", `{"id":"in_1"}`)
		took := time.Since(start)
		r.wantExit(t, exitCannotRun)
		if strings.Contains(r.stderr, "cannot load the OpenAPI document") {
			return false
		}
		if !strings.Contains(r.stderr, "no response from "+srv.URL+" within --timeout "+timeout.String()) {
			t.Errorf("%s", r)
		}
		// Only a hang guard: the command must end because of --timeout, not some default.
		if took > timeout+20*time.Second {
			t.Errorf("--timeout %v took %v", timeout, took)
		}
		return true
	})
	remedyCmd(t, "", "call", "--timeout", "-1s", srv.URL, "get_invoice").wantExit(t, exitUsage)
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	r := remedyCmd(t, "", "frobnicate")
	r.wantExit(t, exitUsage)
	if !strings.Contains(r.stderr, `unknown command "frobnicate"`) {
		t.Errorf("%s", r)
	}
	r = remedyCmd(t, "")
	if r.code != exitUsage || !strings.Contains(r.stderr, "Commands:") {
		t.Errorf("no command: want the usage on stderr and exit 2, got %s", r)
	}
	r = remedyCmd(t, "", "help", "frobnicate")
	r.wantExit(t, exitUsage)
	r = remedyCmd(t, "", "version")
	r.wantExit(t, exitOK)
	if !strings.HasPrefix(r.stdout, "remedy ") {
		t.Errorf("%s", r)
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		r := remedyCmd(t, "", args...)
		r.wantExit(t, exitOK)
		for _, want := range []string{"Usage:", "Commands:", "Examples:", "Exit status:", "2  usage error", "3  could not run"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%v: the usage lacks %q:\n%s", args, want, r.stdout)
			}
		}
		for _, c := range commands {
			if !strings.Contains(r.stdout, "\n  "+c.name+" ") {
				t.Errorf("%v: the usage does not list %s", args, c.name)
			}
		}
	}
	for _, c := range commands {
		for _, args := range [][]string{{"help", c.name}, {c.name, "--help"}, {c.name, "-h"}} {
			r := remedyCmd(t, "", args...)
			r.wantExit(t, exitOK)
			if r.stderr != "" {
				t.Errorf("%v: stderr %q", args, r.stderr)
			}
			for _, want := range []string{"Usage: " + c.synopsis, "Examples:\n  remedy " + c.name, "Exit status:"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("%v: the usage lacks %q:\n%s", args, want, r.stdout)
				}
			}
		}
	}
	r := remedyCmd(t, "", "probe", "--help")
	for _, rule := range conformance.Rules() {
		if !strings.Contains(r.stdout, rule.ID) {
			t.Errorf("probe --help does not list the rule %s", rule.ID)
		}
	}
	r = remedyCmd(t, "", "call", "--help")
	for _, flag := range []string{"--confirm", "--header 'Name: value'", "--json", "--mcp", "--openapi PATH", "--rewrite MODE", "--timeout DURATION", "JSON output (--json):"} {
		if !strings.Contains(r.stdout, flag) {
			t.Errorf("call --help does not document %s:\n%s", flag, r.stdout)
		}
	}
}

func TestProbe(t *testing.T) {
	t.Parallel()
	b := startBilling(t)
	dir := t.TempDir()

	r := remedyCmd(t, "", "probe", "--json", b.url)
	var rep conformance.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("probe --json: %v\n%s", err, r)
	}
	want := exitOK
	if !rep.OK() {
		want = exitFailed
	}
	r.wantExit(t, want)
	if rep.Target != b.url || len(rep.Results) != len(conformance.Rules()) {
		t.Errorf("report of %q with %d results, want %q with %d", rep.Target, len(rep.Results), b.url, len(conformance.Rules()))
	}

	junit := filepath.Join(dir, "probe.xml")
	r = remedyCmd(t, "", "probe", "--junit", junit, b.url)
	r.wantExit(t, want)
	if !strings.Contains(r.stdout, b.url+": ") || !strings.Contains(r.stdout, "envelope") {
		t.Errorf("probe --junit: want the text report on stdout:\n%s", r)
	}
	if strings.Contains(r.stdout, "\x1b[") || strings.Contains(r.stderr, "\r") {
		t.Errorf("colors or a progress line written to a buffer:\n%q", r.stdout+r.stderr)
	}
	var suite struct {
		XMLName xml.Name `xml:"testsuite"`
		Tests   int      `xml:"tests,attr"`
		Cases   []struct {
			Name string `xml:"name,attr"`
		} `xml:"testcase"`
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(data, &suite); err != nil {
		t.Fatalf("the JUnit file is not XML: %v\n%s", err, data)
	}
	if suite.Tests != len(conformance.Rules()) || len(suite.Cases) != suite.Tests {
		t.Errorf("JUnit: %d tests, %d cases; want %d", suite.Tests, len(suite.Cases), len(conformance.Rules()))
	}

	r = remedyCmd(t, "", "probe", "--json", "--rule", "envelope", "--rule", "unknown-route", b.url)
	rep = conformance.Report{}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if len(rep.Results) != 2 || rep.Results[0].ID != "envelope" || rep.Results[1].ID != "unknown-route" {
		t.Errorf("--rule: want envelope and unknown-route only, got %+v", rep.Results)
	}
}

func TestProbeOptions(t *testing.T) {
	t.Parallel()
	b := startBilling(t)
	examples := filepath.Join(t.TempDir(), "examples.json")
	err := os.WriteFile(examples, []byte(`{
		"charge": {"customer_id": "cus_fromfile", "amount": 4242, "currency": "usd"},
		"create_invoice": {"customer_id": "cus_ada", "amount": 1, "memo": "file-memo"}
	}`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	// The examples are of operations that change state: only --writes sends them anything
	// a server could execute.
	r := remedyCmd(t, "", "probe", "--writes", "--header", "X-Probe: yes", "--examples", examples,
		"--example", `create_invoice={"customer_id":"cus_ada","currency":"gbp","amount":7,"memo":"flag-memo"}`, b.url)
	if r.code != exitOK && r.code != exitFailed {
		t.Fatalf("%s", r)
	}
	var fromFile, fromFlag, fileOverridden bool
	for _, ex := range b.requests() {
		if ex.header.Get("X-Probe") != "yes" {
			t.Errorf("%s %s without --header", ex.method, ex.path)
		}
		fromFile = fromFile || strings.Contains(ex.body, "cus_fromfile")
		fromFlag = fromFlag || strings.Contains(ex.body, "flag-memo")
		fileOverridden = fileOverridden || strings.Contains(ex.body, "file-memo")
	}
	if !fromFile || !fromFlag || fileOverridden {
		t.Errorf("examples used: from the file %v, from the flag %v, the file's replaced by the flag's %v", fromFile, fromFlag, !fileOverridden)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--example", "create_invoice"}, exitUsage, "operation={json}"},
		{[]string{"--example", "create_invoice=[1]"}, exitUsage, "not a JSON object"},
		{[]string{"--example", "create_invoice={"}, exitUsage, "not JSON"},
		{[]string{"--rule", "no-such-rule"}, exitUsage, `unknown rule "no-such-rule"`},
		{[]string{"--burst", "-1"}, exitUsage, "--burst"},
		{[]string{"--examples", filepath.Join(t.TempDir(), "missing.json")}, exitCannotRun, "missing.json"},
	} {
		r := remedyCmd(t, "", append(append([]string{"probe"}, tc.args...), b.url)...)
		r.wantExit(t, tc.code)
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: stderr lacks %q: %s", tc.args, tc.want, r)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"charge": [1]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	remedyCmd(t, "", "probe", "--examples", bad, b.url).wantExit(t, exitUsage)

	r = remedyCmd(t, "", "probe", refusedURL(t))
	r.wantExit(t, exitCannotRun)
	if !strings.Contains(r.stderr, "cannot reach") {
		t.Errorf("%s", r)
	}
	remedyCmd(t, "", "probe").wantExit(t, exitUsage)
	remedyCmd(t, "", "probe", "ftp://example.com").wantExit(t, exitUsage)
}

func TestLint(t *testing.T) {
	t.Parallel()
	api, _, err := billing.New()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(good, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	r := remedyCmd(t, "", "lint", good)
	r.wantExit(t, exitOK)
	if !strings.Contains(r.stdout, "lint-openapi") || !strings.Contains(r.stdout, good+": ") {
		t.Errorf("want the report on the file:\n%s", r)
	}

	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("<html>not a document</html>"), 0o600); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(dir, "lint.xml")
	r = remedyCmd(t, "", "lint", "--json", "--junit", junit, garbage)
	r.wantExit(t, exitFailed)
	var rep conformance.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("lint --json: %v\n%s", err, r)
	}
	if res, ok := rep.Result("lint-openapi"); !ok || res.Outcome != conformance.Fail {
		t.Errorf("lint-openapi: %+v, want a failure", res)
	}
	if rep.Target != garbage {
		t.Errorf("target %q, want %q", rep.Target, garbage)
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(data, &suite); err != nil || suite.Failures == 0 {
		t.Errorf("JUnit %s (%v): want a failure", data, err)
	}

	r = remedyCmd(t, string(doc), "lint", "-")
	r.wantExit(t, exitOK)
	if !strings.Contains(r.stdout, "stdin: ") {
		t.Errorf("want the report on stdin:\n%s", r)
	}
	remedyCmd(t, "", "lint", filepath.Join(dir, "missing.json")).wantExit(t, exitCannotRun)
	remedyCmd(t, "", "lint").wantExit(t, exitUsage)
	remedyCmd(t, "", "lint", "--junit", filepath.Join(dir, "no", "such", "dir.xml"), good).wantExit(t, exitCannotRun)
}

// lines is a writer that hands the lines written to it to a channel.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
	c   chan string
}

func newLines() *lines { return &lines{c: make(chan string, 16)} }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err != nil {
			l.buf.WriteString(line) // incomplete: keep it for the next write
			return len(p), nil
		}
		select {
		case l.c <- line:
		default:
		}
	}
}

// lockedBuffer is a bytes.Buffer for several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var urlsRE = regexp.MustCompile(`^billing API at (http://\S+)  OpenAPI (http://\S+)  MCP (http://\S+)\n$`)

// startServe runs serve with args until the test ends, and returns its URLs (base, OpenAPI,
// MCP), the function that stops it and returns its exit status, and its stderr.
func startServe(t *testing.T, args ...string) (urls []string, stop func() int, stderr *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errs := newLines(), &lockedBuffer{}
	code, exited := -1, make(chan struct{})
	go func() {
		defer close(exited)
		code = run(ctx, append([]string{"serve"}, args...), strings.NewReader(""), out, errs)
	}()
	stop = func() int {
		cancel()
		select {
		case <-exited:
		case <-time.After(shutdownGrace + 5*time.Second):
			t.Fatalf("serve did not stop after its context ended\nstderr: %s", errs)
		}
		return code
	}
	t.Cleanup(func() { stop() })
	select {
	case line := <-out.c:
		m := urlsRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("serve printed %q, want its URLs", line)
		}
		return m[1:], stop, errs
	case <-exited:
		t.Fatalf("serve exited %d before listening\nstderr: %s", code, errs)
	case <-time.After(10 * time.Second):
		t.Fatalf("serve printed nothing\nstderr: %s", errs)
	}
	return nil, nil, nil
}

func TestServe(t *testing.T) {
	t.Parallel()
	urls, stop, stderr := startServe(t, "--addr", "127.0.0.1:0")
	base := urls[0]
	if strings.HasSuffix(base, ":0") || urls[1] != base+"/openapi.json" || urls[2] != base+"/mcp" {
		t.Fatalf("URLs %v: want the real port, the OpenAPI and the MCP URL", urls)
	}
	remedyCmd(t, "", "call", base, "create_invoice", wrongEnum).wantExit(t, exitOK)
	remedyCmd(t, "", "call", "--mcp", urls[2], "revenue_report", `{"currency":"eur"}`).wantExit(t, exitOK)
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d after its context ended\nstderr: %s", code, stderr)
	}
	if _, err := http.Get(base + "/openapi.json"); err == nil {
		t.Error("the server still answers after serve returned")
	}
}

// TestServeEndsEventStreams: an MCP client with its event stream open does not hold the
// shutdown for the whole grace period. serve ends the stream itself, so the client reads it to
// a proper end; a stream serve did not end would hold the shutdown until the grace period ran
// out, and then be cut (the client reading an unexpected EOF).
func TestServeEndsEventStreams(t *testing.T) {
	t.Parallel()
	urls, stop, stderr := startServe(t, "--addr", "127.0.0.1:0")
	ctx := context.Background()
	streaming := make(chan struct{}, 1)
	ended := make(chan error, 1)
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil && r.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
			resp.Body = &nettest.EndingBody{ReadCloser: resp.Body, Ended: ended}
			select {
			case streaming <- struct{}{}:
			default:
			}
		}
		return resp, err
	})}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: urls[2], HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	select {
	case <-streaming:
	case <-time.After(10 * time.Second):
		t.Fatal("the MCP client opened no event stream")
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d\nstderr: %s", code, stderr)
	}
	select {
	case err := <-ended:
		if err != io.EOF {
			t.Errorf("the event stream ended with %v, want its proper end: the shutdown cut it", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the event stream is still open after serve returned")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestServeRate: with --rate 1 the first request passes, and no two pass within a second. The
// client cannot know when the server counted a request, only that it was between sending it
// and reading the answer: two successes less than a second apart by those bounds break the
// limit. A machine slow enough to space requests a second apart may see more than one pass,
// so the test sends until one is refused.
func TestServeRate(t *testing.T) {
	t.Parallel()
	urls, _, _ := startServe(t, "--addr", "127.0.0.1:0", "--rate", "1")
	var passed time.Time // when the last request that passed was sent
	for guard := time.Now().Add(20 * time.Second); ; {
		sent := time.Now()
		resp, err := http.Get(urls[0] + "/v1/reports/revenue?currency=usd")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		answered := time.Now()
		switch resp.StatusCode {
		case http.StatusOK, http.StatusServiceUnavailable: // 503: the demo's report, being built, passed the limit
			if !passed.IsZero() && answered.Sub(passed) < time.Second {
				t.Fatalf("two requests passed within %v with --rate 1", answered.Sub(passed))
			}
			passed = sent
		case http.StatusTooManyRequests:
			if passed.IsZero() {
				t.Fatal("the first request refused with --rate 1")
			}
			return
		default:
			t.Fatalf("status %d with --rate 1", resp.StatusCode)
		}
		if answered.After(guard) {
			t.Fatal("no request refused with --rate 1")
		}
	}
}

func TestServeErrors(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := remedyCmd(t, "", "serve", "--addr", ln.Addr().String())
	r.wantExit(t, exitCannotRun)
	if !strings.Contains(r.stderr, "cannot listen") {
		t.Errorf("%s", r)
	}
	// Without retries (go-redis retries a refused Ping for about two seconds), in the URL form.
	r = remedyCmd(t, "", "serve", "--addr", "127.0.0.1:0", "--redis", "redis://"+strings.TrimPrefix(refusedURL(t), "http://")+"/?max_retries=-1")
	r.wantExit(t, exitCannotRun)
	if !strings.Contains(r.stderr, "Redis at") || !strings.Contains(r.stderr, "unreachable") {
		t.Errorf("%s", r)
	}
	remedyCmd(t, "", "serve", "--rate", "-1").wantExit(t, exitUsage)
	remedyCmd(t, "", "serve", "extra").wantExit(t, exitUsage)
}

func TestServeRedis(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	urls, stop, stderr := startServe(t, "--addr", "127.0.0.1:0", "--redis", addr)
	base := urls[0]

	r := remedyCmd(t, "", "call", "--json", base, "charge", `{"customer_id":"cus_ada","amount":4200,"currency":"usd"}`)
	r.wantExit(t, exitOK)
	r = remedyCmd(t, "", "call", base, "delete_customer", `{"id":"cus_ada"}`)
	r.wantExit(t, exitFailed)
	r = remedyCmd(t, "", "call", "--confirm", "--mcp", urls[2], "delete_customer", `{"id":"cus_ada"}`)
	r.wantExit(t, exitOK)

	// The charge's idempotency record is in Redis: the store serve was given is the one used.
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	keys, err := rc.Keys(context.Background(), "remedy:i:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Errorf("no idempotency record in Redis after a charge")
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d\nstderr: %s", code, stderr)
	}
}

// TestTerminal checks the terminal detection the colors and the progress line depend on.
func TestTerminal(t *testing.T) {
	t.Parallel()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) || isTerminal(&bytes.Buffer{}) {
		t.Error("a file or a buffer taken for a terminal")
	}
	var buf bytes.Buffer
	progress, done := progressLine(&buf)
	progress(conformance.Progress{Done: 3, Total: 10, Step: "create_invoice: wrong type"})
	done()
	if got := buf.String(); got != "\r\x1b[Kprobing [3/10] create_invoice: wrong type\r\x1b[K" {
		t.Errorf("progress line %q", got)
	}
}

// By default the arguments are checked against the operation's schema before anything is
// sent (the OpenAPI document's, the tool's input schema over --mcp): the wrong case is
// repaired before the first request, and the transcript says so. --check=strict stops, and
// sends nothing, what only a lossy repair would fix.
func TestCallChecksBeforeSending(t *testing.T) {
	t.Parallel()
	b := startBilling(t)
	for _, surface := range [][]string{{b.url}, {"--mcp", b.url + "/mcp"}} {
		r := remedyCmd(t, "", append(append([]string{"call"}, surface...), "create_invoice", wrongEnum)...)
		r.wantExit(t, exitOK)
		for _, want := range []string{`checked: change /currency "EUR" → "eur" by enum_match`, ", after 1 attempt\n"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the output lacks %q:\n%s", want, r)
			}
		}
	}
	r := remedyCmd(t, "", "call", "--json", b.url, "create_invoice", wrongEnum)
	r.wantExit(t, exitOK)
	var out struct {
		Attempts []struct {
			Checked []struct {
				Path, Rule string
				Lossy      bool
			} `json:"checked"`
		} `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Attempts) != 1 || len(out.Attempts[0].Checked) != 1 || out.Attempts[0].Checked[0].Path != "/currency" ||
		out.Attempts[0].Checked[0].Rule != "enum_match" {
		t.Errorf("want one attempt, checked /currency by enum_match:\n%s", r.stdout)
	}
	if n := b.store.Effects("create_invoice"); n != 3 {
		t.Errorf("create_invoice executed %d times, want 3", n)
	}

	r = remedyCmd(t, "", "call", "--check=strict", b.url, "charge", `{"customer_id":"cus_ada","amount":99999999,"currency":"usd"}`)
	r.wantExit(t, exitUsage)
	if !strings.Contains(r.stderr, "charge was not sent") || !strings.Contains(r.stderr, "/amount") {
		t.Errorf("want the violation named, nothing sent:\n%s", r)
	}
	if n := b.store.Effects("charge"); n != 0 {
		t.Errorf("charge executed %d times, want none", n)
	}
	remedyCmd(t, "", "call", "--check=loose", b.url, "get_invoice", `{"id":"in_1"}`).wantExit(t, exitUsage)
}
