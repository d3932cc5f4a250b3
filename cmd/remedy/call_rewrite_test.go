package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/client/transcript"
	"github.com/remedy-go/remedy/rewrite"
)

// The failures of the charge server, as a server states them: a bound the amount violates
// (no suggested value: the repair is the rewriter's clamp, which changes what the call means)
// and a currency with the server's own suggested value (a lossless repair).
const (
	overMaximum = `{"error":{"statusCode":422,"code":"invalid_body","message":"amount must be at most 1000000",` +
		`"category":"validation","retryable":false,"issues":[{"path":"/amount","code":"maximum",` +
		`"message":"amount must be at most 1000000","expected":{"maximum":1000000},"received":%s}]}}`
	wrongCurrency = `{"error":{"statusCode":422,"code":"invalid_body","message":"currency must be lower case",` +
		`"category":"validation","retryable":false,"issues":[{"path":"/currency","code":"enum",` +
		`"message":"currency must be lower case","received":%s,"suggested_value":%s}]}}`
)

const (
	hugeCharge  = `{"customer_id":"cus_ada","amount":99999999,"currency":"usd"}`
	upperCharge = `{"customer_id":"cus_ada","amount":4200,"currency":"EUR"}`
)

// chargeDoc is the OpenAPI document of the charge server: one operation, charge.
const chargeDoc = `{"openapi":"3.1.0","info":{"title":"charges","version":"1"},"paths":{"/v1/charges":{"post":{
"operationId":"charge","requestBody":{"required":true,"content":{"application/json":{"schema":{"type":"object",
"properties":{"customer_id":{"type":"string"},"amount":{"type":"integer","minimum":50,"maximum":1000000},
"currency":{"type":"string","enum":["usd","eur","gbp"]}}}}}},
"responses":{"201":{"description":"charged"}}}}}}`

// chargeServer answers charge, over REST and as an MCP tool, with failures the test controls
// (answer), and records every call's arguments.
type chargeServer struct {
	url string // REST base URL; the MCP endpoint is url + "/mcp"
	mu  sync.Mutex
	got []map[string]any
}

// answer is what the charge server answers args with: a failure envelope, or the charge.
func answer(args map[string]any) (status int, body string) {
	amount, _ := args["amount"].(float64)
	currency, _ := args["currency"].(string)
	switch {
	case amount > 1000000:
		return 422, fmt.Sprintf(overMaximum, jsonOf(args["amount"]))
	case currency != strings.ToLower(currency):
		return 422, fmt.Sprintf(wrongCurrency, jsonOf(currency), jsonOf(strings.ToLower(currency)))
	}
	return 201, jsonOf(map[string]any{"id": "ch_1", "amount": amount, "currency": currency})
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func startCharges(t *testing.T) *chargeServer {
	t.Helper()
	cs := &chargeServer{}
	ms := sdk.NewServer(&sdk.Implementation{Name: "charges", Version: "1"}, nil)
	ms.AddTool(&sdk.Tool{Name: "charge", InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"customer_id":{"type":"string"},"amount":{"type":"integer"},"currency":{"type":"string"}}}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			status, body := answer(cs.record(req.Params.Arguments))
			return &sdk.CallToolResult{IsError: status >= 400, Content: []sdk.Content{&sdk.TextContent{Text: body}}}, nil
		})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return ms }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpHandler)
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, chargeDoc)
	})
	mux.HandleFunc("POST /v1/charges", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		status, out := answer(cs.record(body))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, out)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	cs.url = srv.URL
	return cs
}

func (cs *chargeServer) record(raw []byte) map[string]any {
	var args map[string]any
	json.Unmarshal(raw, &args)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.got = append(cs.got, args)
	return args
}

// calls are the arguments of every charge the server received, in order.
func (cs *chargeServer) calls() []map[string]any {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append([]map[string]any(nil), cs.got...)
}

// surfaces are the two ways call reaches the charge server: its flags and its URL.
var surfaces = []struct {
	name string
	args func(cs *chargeServer) []string
}{
	{"REST", func(cs *chargeServer) []string { return []string{cs.url} }},
	{"MCP", func(cs *chargeServer) []string { return []string{"--mcp", cs.url + "/mcp"} }},
}

func callCharge(t *testing.T, cs *chargeServer, surface func(*chargeServer) []string, args string, flags ...string) result {
	t.Helper()
	line := append([]string{"call"}, flags...)
	line = append(line, surface(cs)...)
	return remedyCmd(t, "", append(line, "charge", args)...)
}

// changeJSON is one member of call --json's changes.
type changeJSON struct {
	Path    string          `json:"path"`
	Old     json.RawMessage `json:"old"`
	New     json.RawMessage `json:"new"`
	Rule    string          `json:"rule"`
	Lossy   *bool           `json:"lossy"`
	Refused bool            `json:"refused"`
}

// rewriteJSON is what call --json says about rewrites.
type rewriteJSON struct {
	OK       bool   `json:"ok"`
	Cause    string `json:"cause"`
	Attempts []struct {
		Action  string       `json:"action"`
		Changes []changeJSON `json:"changes"`
	} `json:"attempts"`
	Proposal *struct {
		Operation string          `json:"operation"`
		Args      json.RawMessage `json:"args"`
		New       json.RawMessage `json:"new"`
		Changes   []changeJSON    `json:"changes"`
		Hint      string          `json:"hint"`
	} `json:"proposal"`
}

func decodeRewrite(t *testing.T, r result) rewriteJSON {
	t.Helper()
	decodeCall(t, r) // one JSON object, nothing else
	var out rewriteJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	return out
}

// TestCallRewriteLossless: the server's suggested value is a repair that keeps what the call
// means, sent with --rewrite=safe (the default) and all; the transcript and --json list the
// change.
func TestCallRewriteLossless(t *testing.T) {
	t.Parallel()
	for _, s := range surfaces {
		for _, flags := range [][]string{nil, {"--rewrite=safe"}, {"--rewrite", "all"}} {
			t.Run(s.name+" "+strings.Join(flags, " "), func(t *testing.T) {
				t.Parallel()
				cs := startCharges(t)
				// Unchecked: the server's failure is what is repaired (TestCallChecksBeforeSending).
				r := callCharge(t, cs, s.args, upperCharge, append([]string{"--check=off"}, flags...)...)
				r.wantExit(t, exitOK)
				if got := cs.calls(); len(got) != 2 || got[1]["currency"] != "eur" || got[1]["amount"] != 4200.0 {
					t.Fatalf("want two charges, the second in eur: %v\n%s", got, r)
				}
				for _, want := range []string{"-> rewrite: ", `change /currency "EUR" → "eur" by `, ", after 2 attempts"} {
					if !strings.Contains(r.stdout, want) {
						t.Errorf("the output lacks %q:\n%s", want, r)
					}
				}
				if strings.Contains(r.stdout, "lossy") || strings.Contains(r.stdout, "refused") {
					t.Errorf("a lossless change marked:\n%s", r)
				}

				cs = startCharges(t)
				r = callCharge(t, cs, s.args, upperCharge, append([]string{"--check=off", "--json"}, flags...)...)
				r.wantExit(t, exitOK)
				out := decodeRewrite(t, r)
				if len(out.Attempts) != 2 || out.Attempts[0].Action != "rewrite" || len(out.Attempts[1].Changes) != 0 {
					t.Fatalf("want a rewrite, then the success without changes:\n%s", r.stdout)
				}
				changes := out.Attempts[0].Changes
				if len(changes) != 1 {
					t.Fatalf("want one change, got %+v", changes)
				}
				c := changes[0]
				if c.Path != "/currency" || string(c.Old) != `"EUR"` || string(c.New) != `"eur"` || c.Rule == "" ||
					c.Lossy == nil || *c.Lossy || c.Refused {
					t.Errorf("change %+v: want /currency \"EUR\" → \"eur\", a rule, lossy false", c)
				}
				if !strings.Contains(r.stdout, `"lossy": false`) {
					t.Errorf("lossy is left out when false:\n%s", r.stdout)
				}
				if out.Proposal != nil {
					t.Errorf("a proposal on a success:\n%s", r.stdout)
				}
			})
		}
	}
}

// TestCallRewriteNone: --rewrite=none sends no repair, even one the server suggests.
func TestCallRewriteNone(t *testing.T) {
	t.Parallel()
	for _, s := range surfaces {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			cs := startCharges(t)
			r := callCharge(t, cs, s.args, upperCharge, "--rewrite=none")
			r.wantExit(t, exitFailed)
			if n := len(cs.calls()); n != 1 {
				t.Fatalf("the server saw %d charges, want one:\n%s", n, r)
			}
			for _, want := range []string{"no rewriter is configured", "rerun with --rewrite=safe"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("the output lacks %q:\n%s", want, r)
				}
			}
			if strings.Contains(r.stdout, "change /") {
				t.Errorf("a change listed with --rewrite=none:\n%s", r)
			}

			cs = startCharges(t)
			r = callCharge(t, cs, s.args, upperCharge, "--rewrite=none", "--json")
			r.wantExit(t, exitFailed)
			out := decodeRewrite(t, r)
			if out.OK || out.Cause != client.ErrRewriteGaveUp.Error() || len(out.Attempts) != 1 ||
				len(out.Attempts[0].Changes) != 0 || out.Proposal != nil {
				t.Errorf("want one attempt, no change, no proposal, cause %q:\n%s", client.ErrRewriteGaveUp, r.stdout)
			}
			if n := len(cs.calls()); n != 1 {
				t.Errorf("the server saw %d charges with --json, want one", n)
			}
		})
	}
}

// TestCallRewriteClamp is issue 21's charge: an amount over the maximum, which the rewriter
// can only clamp. With --rewrite=all the clamp is sent; with safe (the default) the server
// sees one request and the output shows the proposal.
func TestCallRewriteClamp(t *testing.T) {
	t.Parallel()
	for _, s := range surfaces {
		t.Run(s.name+" all", func(t *testing.T) {
			t.Parallel()
			cs := startCharges(t)
			r := callCharge(t, cs, s.args, hugeCharge, "--rewrite=all", "--check=off")
			r.wantExit(t, exitOK)
			if got := cs.calls(); len(got) != 2 || got[1]["amount"] != 1000000.0 {
				t.Fatalf("want the clamp sent: %v\n%s", got, r)
			}
			want := "change /amount 99999999 → 1000000 by clamp (lossy, approved)"
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the output lacks %q:\n%s", want, r)
			}
		})
		t.Run(s.name+" safe", func(t *testing.T) {
			t.Parallel()
			cs := startCharges(t)
			r := callCharge(t, cs, s.args, hugeCharge)
			r.wantExit(t, exitFailed)
			if n := len(cs.calls()); n != 1 {
				t.Fatalf("the server saw %d charges, want one:\n%s", n, r)
			}
			for _, want := range []string{"=> not sent: the repair of charge changes what the call means",
				"change /amount 99999999 → 1000000 by ", "(lossy, refused)", "rerun with --rewrite=all"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("the output lacks %q:\n%s", want, r)
				}
			}
			cs = startCharges(t)
			r = callCharge(t, cs, s.args, hugeCharge, "--json")
			r.wantExit(t, exitFailed)
			out := decodeRewrite(t, r)
			if out.Proposal == nil || len(out.Proposal.Changes) == 0 || out.Proposal.Changes[0].Path != "/amount" {
				t.Errorf("want the proposal:\n%s", r.stdout)
			}
			if n := len(cs.calls()); n != 1 {
				t.Errorf("the server saw %d charges with --json, want one", n)
			}
		})
	}
}

// clampRewriter clamps the amount to 1000000 and says so: a lossy change, as rewrite.Default
// reports a clamp.
var clampRewriter = rewrite.Func(func(_ context.Context, r *rewrite.Request) (json.RawMessage, error) {
	var args map[string]json.RawMessage
	if err := json.Unmarshal(r.Args, &args); err != nil {
		return nil, nil
	}
	old := args["amount"]
	args["amount"] = json.RawMessage("1000000")
	out, err := json.Marshal(args)
	r.Changes = []rewrite.Change{{Path: "/amount", Old: old, New: args["amount"], Rule: "clamp", Lossy: true,
		Why: "amount must be at most 1000000"}}
	return out, err
})

// TestCallRefusedProposal runs a charge over each surface with a rewriter whose clamp is
// lossy: the policy of --rewrite=safe refuses it, the server sees one request, and the text
// and JSON renderings show the proposal; with the policy of --rewrite=all it is sent.
func TestCallRefusedProposal(t *testing.T) {
	t.Parallel()
	for _, mcp := range []bool{false, true} {
		for _, approve := range []bool{false, true} {
			policy := rewrite.Safe
			if approve {
				policy = rewrite.All
			}
			t.Run(fmt.Sprintf("mcp=%v approve=%v", mcp, approve), func(t *testing.T) {
				t.Parallel()
				cs := startCharges(t)
				endpoint := cs.url
				if mcp {
					endpoint += "/mcp"
				}
				base, err := parseBaseURL(endpoint)
				if err != nil {
					t.Fatal(err)
				}
				cfg := &callConfig{base: base, operation: "charge", args: json.RawMessage(hugeCharge),
					openapi: "/openapi.json", rewriter: clampRewriter, rewrites: policy, check: checkMode(client.CheckOff)}
				var attempts bytes.Buffer
				onAttempt := func(a *client.Attempt) { transcript.Attempt(&attempts, a) }
				call := callREST
				if mcp {
					call = callMCP
				}
				resp, err := call(context.Background(), cfg, client.RefuseAll, onAttempt)
				if approve {
					if err != nil || resp == nil || len(cs.calls()) != 2 {
						t.Fatalf("want the clamp sent and charged: %v, %d charges", err, len(cs.calls()))
					}
					if !strings.Contains(attempts.String(), "change /amount 99999999 → 1000000 by clamp (lossy, approved)") {
						t.Errorf("the transcript lacks the approved change:\n%s", attempts.String())
					}
					return
				}
				var ce *client.CallError
				if !errors.As(err, &ce) || !errors.Is(err, client.ErrRewriteRefused) || ce.Proposal == nil {
					t.Fatalf("want ErrRewriteRefused with the proposal, got %v", err)
				}
				if n := len(cs.calls()); n != 1 {
					t.Fatalf("the server saw %d charges, want one", n)
				}
				if !strings.Contains(attempts.String(), "change /amount 99999999 → 1000000 by clamp (lossy, refused)") {
					t.Errorf("the transcript lacks the refused change:\n%s", attempts.String())
				}
				var text, js bytes.Buffer
				writeCallText(&text, nil, ce)
				wantProposalText(t, text.String())
				if err := writeCallJSON(&js, nil, ce); err != nil {
					t.Fatal(err)
				}
				wantProposalJSON(t, js.String())
			})
		}
	}
}

func wantProposalText(t *testing.T, text string) {
	t.Helper()
	for _, want := range []string{
		"=> not sent: the repair of charge changes what the call means (after 1 attempt)",
		"the server said: 422 invalid_body: amount must be at most 1000000",
		`sent:     charge {"customer_id":"cus_ada","amount":99999999,"currency":"usd"}`,
		"proposed: charge {",
		"change /amount 99999999 → 1000000 by clamp (lossy)",
		"nothing was sent with these changes: rerun with --rewrite=all to approve them",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
}

func wantProposalJSON(t *testing.T, js string) {
	t.Helper()
	var out rewriteJSON
	if err := json.Unmarshal([]byte(js), &out); err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	p := out.Proposal
	if out.OK || out.Cause != client.ErrRewriteRefused.Error() || p == nil {
		t.Fatalf("want a refused call with a proposal:\n%s", js)
	}
	var sent, proposed struct{ Amount int }
	if p.Operation != "charge" || json.Unmarshal(p.Args, &sent) != nil || sent.Amount != 99999999 ||
		json.Unmarshal(p.New, &proposed) != nil || proposed.Amount != 1000000 || p.Hint != proposalHint {
		t.Errorf("proposal %+v", p)
	}
	if len(p.Changes) != 1 {
		t.Fatalf("want one change in the proposal:\n%s", js)
	}
	c := p.Changes[0]
	if c.Path != "/amount" || string(c.Old) != "99999999" || string(c.New) != "1000000" || c.Rule != "clamp" ||
		c.Lossy == nil || !*c.Lossy || c.Refused {
		t.Errorf("proposed change %+v", c)
	}
	if n := len(out.Attempts); n != 1 || out.Attempts[0].Action != "stop" || len(out.Attempts[0].Changes) != 1 ||
		!out.Attempts[0].Changes[0].Refused {
		t.Errorf("want the stopping attempt with its change marked refused:\n%s", js)
	}
}

// TestRenderProposal renders calls stopped by a refused repair, built by hand: the call's
// own, a prerequisite's, and one with nothing but the cause, which must not panic.
func TestRenderProposal(t *testing.T) {
	t.Parallel()
	env := &remedy.Envelope{Status: 422, Code: "invalid_body", Message: "amount must be at most 1000000"}
	p := &rewrite.Proposal{Operation: "charge", Args: json.RawMessage(hugeCharge),
		New:      json.RawMessage(`{"customer_id":"cus_ada","amount":1000000,"currency":"usd"}`),
		Changes:  []rewrite.Change{{Path: "/amount", Old: json.RawMessage("99999999"), New: json.RawMessage("1000000"), Rule: "clamp", Lossy: true}},
		Envelope: env}
	stop := client.Decision{Action: client.ActStop, Cause: client.ErrRewriteRefused, Why: "not approved"}
	own := &client.CallError{Operation: "charge", Cause: client.ErrRewriteRefused, Detail: "not approved",
		Envelope: env, Proposal: p,
		Attempts: []client.Attempt{{Operation: "charge", Number: 1, Status: 422, Envelope: env, Decision: stop, Changes: p.Changes}}}

	var text, js bytes.Buffer
	writeCallText(&text, nil, own)
	wantProposalText(t, text.String())
	if err := writeCallJSON(&js, nil, own); err != nil {
		t.Fatal(err)
	}
	wantProposalJSON(t, js.String())

	// A prerequisite's refused repair stops the call that ran it.
	outer := &client.CallError{Operation: "send_invoice", Cause: client.ErrNextOperation, Detail: "next operation charge", Err: own}
	text.Reset()
	writeCallText(&text, nil, outer)
	if !strings.Contains(text.String(), "=> not sent: the repair of charge") || !strings.Contains(text.String(), proposalHint) {
		t.Errorf("a prerequisite's proposal:\n%s", text.String())
	}

	// Nothing but the cause, and a change that adds and one that removes: no panic, and
	// valid JSON.
	bare := &client.CallError{Cause: client.ErrRewriteRefused, Proposal: &rewrite.Proposal{
		Changes: []rewrite.Change{{Path: "/a", New: json.RawMessage("1")}, {Path: "/b", Old: json.RawMessage("not json"), Lossy: true}}}}
	text.Reset()
	writeCallText(&text, nil, bare)
	for _, want := range []string{"change /a (absent) → 1", `change /b "not json" → (removed) (lossy)`, proposalHint} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, text.String())
		}
	}
	js.Reset()
	if err := writeCallJSON(&js, nil, bare); err != nil || !json.Valid(js.Bytes()) {
		t.Errorf("%v:\n%s", err, js.String())
	}
	js.Reset()
	if err := writeCallJSON(&js, nil, &client.CallError{Cause: client.ErrRewriteRefused}); err != nil || strings.Contains(js.String(), "proposal") {
		t.Errorf("a refusal without a proposal: %v\n%s", err, js.String())
	}
}

// TestCallRewriteUsage: an invalid --rewrite is a usage error, and nothing is sent.
func TestCallRewriteUsage(t *testing.T) {
	t.Parallel()
	cs := startCharges(t)
	for _, mode := range []string{"bogus", "", "SAFE", "lossless"} {
		r := remedyCmd(t, "", "call", "--rewrite="+mode, cs.url, "charge", upperCharge)
		r.wantExit(t, exitUsage)
		if !strings.Contains(r.stderr, "-rewrite") || !strings.Contains(r.stderr, "safe") || !strings.Contains(r.stderr, "none") {
			t.Errorf("--rewrite=%s: want the flag and its values named: %s", mode, r)
		}
		if r.stdout != "" {
			t.Errorf("--rewrite=%s: stdout %q", mode, r.stdout)
		}
	}
	if n := len(cs.calls()); n != 0 {
		t.Errorf("an invalid --rewrite sent %d charges", n)
	}
}

// Issue 21's command, as it was run: a charge far over the maximum against remedy serve. The
// server names the bound and suggests nothing; the default --rewrite=safe refuses the clamp,
// so nothing is charged, and the output shows the proposal. Then the 10 that was raised to
// 50 the same way, and the same charges over MCP.
func TestCallServeChargeOverTheMaximumIsNotSent(t *testing.T) {
	t.Parallel()
	urls, _, _ := startServe(t, "--addr", "127.0.0.1:0")
	for _, tc := range []struct{ args []string }{
		{[]string{"call", urls[0], "charge", `{"customer_id":"cus_ada","amount":99999999,"currency":"usd"}`}},
		{[]string{"call", urls[0], "charge", `{"customer_id":"cus_ada","amount":10,"currency":"usd"}`}},
		{[]string{"call", "--mcp", urls[2], "charge", `{"customer_id":"cus_ada","amount":99999999,"currency":"usd"}`}},
	} {
		r := remedyCmd(t, "", tc.args...)
		r.wantExit(t, exitFailed)
		for _, want := range []string{"=> not sent", "by clamp (lossy, refused)", "rerun with --rewrite=all"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%v: the output lacks %q:\n%s", tc.args, want, r)
			}
		}
		if strings.Contains(r.stdout, " 201") {
			t.Errorf("%v: a charge was made:\n%s", tc.args, r)
		}
	}
}
