package main

import (
	"strings"
	"testing"
)

// A call without arguments is a call with none, not an unknown operation: it is sent, a GET
// without a query, a POST with an empty object, and the server judges it.
func TestCallWithoutArguments(t *testing.T) {
	t.Parallel()
	urls, _, _ := startServe(t, "--addr", "127.0.0.1:0")
	r := remedyCmd(t, "", "call", urls[0], "revenue_report")
	r.wantExit(t, exitFailed)
	for _, want := range []string{"revenue_report on " + urls[0], "#1 revenue_report GET /v1/reports/revenue\n",
		"400 invalid_parameter", "issue /currency required"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, r)
		}
	}
	r = remedyCmd(t, "", "call", "--mcp", urls[2], "revenue_report")
	r.wantExit(t, exitFailed)
	if !strings.Contains(r.stdout, "tools/call revenue_report") {
		t.Errorf("want the tool called over MCP:\n%s", r)
	}
	remedyCmd(t, "", "call", urls[0], "no_such_operation").wantExit(t, exitUsage)

	b := startBilling(t)
	r = remedyCmd(t, "", "call", b.url, "create_invoice")
	r.wantExit(t, exitFailed)
	if !strings.Contains(r.stdout, "422 invalid_body") {
		t.Errorf("want the server's refusal of an empty body:\n%s", r)
	}
	if last := b.requests(); len(last) == 0 || last[len(last)-1].body != "{}" {
		t.Errorf("want {} sent, got %+v", last)
	}
}

// An Idempotency-Key given with --header is the call's key: it alone goes on the wire with the
// caller's arguments, and the transcript shows it, not one the loop minted. A repaired payload
// gets a key of its own (the server refuses a key sent with another payload), shown as sent.
func TestCallCallerIdempotencyKey(t *testing.T) {
	t.Parallel()
	b := startBilling(t)
	r := remedyCmd(t, "", "call", "--check=off", "--header", "Idempotency-Key: k", b.url, "create_invoice", wrongEnum)
	r.wantExit(t, exitOK)
	var keys [][]string
	for _, ex := range b.requests() {
		if ex.path == "/v1/invoices" {
			keys = append(keys, ex.header.Values("Idempotency-Key"))
		} else if ex.header.Get("Idempotency-Key") != "" {
			t.Errorf("%s %s carries the key", ex.method, ex.path)
		}
	}
	if len(keys) != 2 {
		t.Fatalf("want 2 attempts on the wire (the wrong enum, its repair), got %d", len(keys))
	}
	if len(keys[0]) != 1 || keys[0][0] != "k" {
		t.Errorf("the first attempt sent Idempotency-Key %q, want the caller's alone", keys[0])
	}
	if len(keys[1]) != 1 || keys[1][0] == "k" {
		t.Fatalf("the repaired attempt sent Idempotency-Key %q, want one key of its own", keys[1])
	}
	for _, want := range []string{
		"#1 create_invoice POST /v1/invoices  Idempotency-Key: k\n",
		"#2 create_invoice POST /v1/invoices  Idempotency-Key: " + keys[1][0][:8] + "…\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, r)
		}
	}

	// Without a repair, every attempt is the caller's payload under the caller's key.
	r = remedyCmd(t, "", "call", "--header", "Idempotency-Key: k1", b.url, "create_invoice",
		`{"customer_id":"cus_ada","currency":"eur","amount":1}`)
	r.wantExit(t, exitOK)
	if last := b.requests(); last[len(last)-1].header.Get("Idempotency-Key") != "k1" ||
		!strings.Contains(r.stdout, "Idempotency-Key: k1\n") {
		t.Errorf("want k1 sent and shown:\n%s", r)
	}

	r = remedyCmd(t, "", "call", "--check=off", "--mcp", "--header", "idempotency-key: k2", b.url+"/mcp", "create_invoice", wrongEnum)
	r.wantExit(t, exitOK)
	if !strings.Contains(r.stdout, "tools/call create_invoice  idempotencyKey: k2\n") {
		t.Errorf("over MCP, want the caller's key as the tool call's:\n%s", r)
	}
	for _, ex := range b.requests() {
		if ex.path == "/mcp" && ex.header.Get("Idempotency-Key") != "" {
			t.Errorf("the MCP request carries the key as a header: %v", ex.header)
		}
	}

	for _, args := range [][]string{
		{"--header", "Idempotency-Key: a", "--header", "Idempotency-Key: b"},
		{"--header", "Idempotency-Key:"},
	} {
		r := remedyCmd(t, "", append(append([]string{"call"}, args...), b.url, "create_invoice", wrongEnum)...)
		r.wantExit(t, exitUsage)
		if !strings.Contains(r.stderr, "Idempotency-Key") {
			t.Errorf("%v: %s", args, r)
		}
	}
}

// What --confirm approved is printed under the attempt that met the challenge, after the line
// naming the call.
func TestCallConfirmTranscriptOrder(t *testing.T) {
	t.Parallel()
	b := startBilling(t)
	r := remedyCmd(t, "", "call", "--confirm", b.url, "delete_customer", `{"id":"cus_ada"}`)
	r.wantExit(t, exitOK)
	lines := strings.Split(r.stdout, "\n")
	at := func(prefix string) int {
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), prefix) {
				return i
			}
		}
		t.Fatalf("no line starts %q:\n%s", prefix, r)
		return -1
	}
	title, first, decided, approving, second := at("delete_customer on "), at("#1 delete_customer"),
		at("-> confirm:"), at("--confirm: approving delete_customer"), at("#2 delete_customer")
	if !(title == 0 && title < first && first < decided && decided < approving && approving < second) {
		t.Errorf("want the title, the first attempt, its decision, the approval, then the second attempt:\n%s", r)
	}
	if got := lines[approving]; !strings.HasPrefix(got, "          --confirm") {
		t.Errorf("the approval %q is not indented as the attempt's lines", got)
	}
}

// A call whose arguments cannot make the request (a path parameter missing) sends nothing and
// is a usage error naming the argument, not "no response" from a server never asked.
func TestCallInvalidArgumentsSendNothing(t *testing.T) {
	t.Parallel()
	b := startBilling(t)
	r := remedyCmd(t, "", "call", b.url, "get_invoice", `{}`)
	r.wantExit(t, exitUsage)
	for _, want := range []string{"get_invoice was not sent", "/id", "missing path parameter"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r)
		}
	}
	if strings.Contains(r.stderr, "no response") {
		t.Errorf("nothing was sent, so nothing failed to answer:\n%s", r)
	}
	for _, ex := range b.requests() {
		if strings.HasPrefix(ex.path, "/v1/invoices") {
			t.Errorf("%s %s was sent", ex.method, ex.path)
		}
	}
}

// An unknown operation or tool is a usage error that names the one probably meant and lists
// those there are (issue 40), over REST and over MCP.
func TestCallUnknownOperationSuggests(t *testing.T) {
	t.Parallel()
	urls, _, _ := startServe(t, "--addr", "127.0.0.1:0")
	for _, args := range [][]string{
		{"call", urls[0], "revenue_reprot"},
		{"call", "--mcp", urls[2], "revenue_reprot"},
	} {
		r := remedyCmd(t, "", args...)
		r.wantExit(t, exitUsage)
		for _, want := range []string{`did you mean "revenue_report"?`, "revenue_report"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%v: the error lacks %q:\n%s", args, want, r)
			}
		}
	}
}

// An MCP URL without its path fails to connect, and says which URL was probably meant
// (issue 40).
func TestCallMCPWithoutPathHints(t *testing.T) {
	t.Parallel()
	urls, _, _ := startServe(t, "--addr", "127.0.0.1:0")
	base := strings.TrimSuffix(urls[2], "/mcp")
	r := remedyCmd(t, "", "call", "--mcp", base, "revenue_report")
	r.wantExit(t, exitCannotRun)
	if want := "did you mean " + urls[2] + "?"; !strings.Contains(r.stderr, want) {
		t.Errorf("the error lacks %q:\n%s", want, r)
	}
}
