// Package conformance is the reference client run as a test kit: it probes a server for the
// contract remedy's envelope and loop rely on — every failure an envelope with a code that
// says whether to retry and when, issues that point at real fields, the violated schema
// inline, nothing internal leaked, confirmation tokens bound to their payload and single-use,
// idempotent replays identical and marked — and reports, rule by rule, where it breaks.
//
// Run probes a live server through its OpenAPI document; Lint checks a document alone;
// Test runs the probe inside a Go test.
package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/httpop"
)

// DefaultOpenAPIPath is where Run looks for the document unless Options.OpenAPIPath says
// otherwise, relative to the base URL.
const DefaultOpenAPIPath = "/openapi.json"

// Options configure Run. The zero value sends nothing a server could execute to an operation
// that changes state (see Writes).
type Options struct {
	// HTTPClient sends the probe's requests (default: a client with a 10 s timeout that
	// follows no redirect). The requests without credentials that Writes describes go
	// through its transport only when that is an *http.Transport, which adds none of its
	// own; through another, they are not sent.
	HTTPClient *http.Client
	// OpenAPIPath is the document's path (or absolute URL) relative to the base URL
	// (default DefaultOpenAPIPath).
	OpenAPIPath string
	// Header is sent with every request: the credentials of the principal the probe acts as.
	Header http.Header
	// Examples holds valid arguments for operations, by operation id: one JSON object with
	// the body's members and the path and query parameters by name, as client.Client.Call
	// takes them. Without one, the probe uses the document's example, else values generated
	// from the schema, which a server may refuse (an identifier that does not exist); the
	// rules that need a success are then skipped for that operation.
	Examples map[string]json.RawMessage
	// Writes allows requests that a server could execute to the operations that change
	// state (every method but GET and HEAD): the invalid requests, which a server that does
	// not validate executes; the idempotency rules, which execute each operation that takes
	// an Idempotency-Key twice (and check that the retries in between do not execute); and
	// the confirmation rules, which confirm each destructive operation once. With it, probe
	// a test deployment.
	//
	// Without it, such an operation is sent at most one request: without any credentials
	// (none of Header, no cookie, no user of the base URL) and with a body that is not JSON,
	// and only when the document says the operation needs credentials, so that a server
	// that enforces the security it declares refuses it before any handler runs. Every
	// other check of the operation is skipped, and each Result lists those of its rule in
	// Skipped. (A server that ignores the security its own document declares, and executes
	// a body it cannot read, would run that request: as it would anyone's.)
	Writes bool
	// Burst is how many requests the rate-limit rule may send in quick succession to one
	// read-only operation to provoke a 429 (0: none; the rule then judges only the 429 and
	// 503 answers other steps met). It runs last, since the limit it trips may last.
	Burst int
	// Rules restricts the run to these rule IDs (default: every rule of Rules()).
	Rules []string
	// Progress, when set, is called before each step with how many steps are done of how
	// many.
	Progress func(Progress)
}

// Progress is how far a run has come.
type Progress struct {
	Done, Total int
	Step        string // what is being done now: "create_invoice: wrong type at /amount"
}

// maxResponse bounds how much of a response the probe reads.
const maxResponse = 1 << 20

// Run probes the server at baseURL (an absolute http or https URL) and reports on every
// rule of Rules(). It reads the OpenAPI document first; without one, the rules that need it
// are skipped. It returns an error only for unusable arguments (a base URL that is not
// absolute http(s), an unknown rule ID, an example that is not a JSON object); everything the
// server does is in the report. When ctx ends, the rules not yet decided are skipped and the
// report is returned.
func Run(ctx context.Context, baseURL string, opts Options) (*Report, error) {
	base, err := url.Parse(baseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("conformance: the base URL %q is not an absolute http(s) URL", baseURL)
	}
	base.Path = strings.TrimSuffix(base.Path, "/")
	wanted := map[string]bool{}
	for _, id := range opts.Rules {
		if !slices.ContainsFunc(rules, func(r Rule) bool { return r.ID == id }) {
			return nil, fmt.Errorf("conformance: no rule %q (see Rules)", id)
		}
		wanted[id] = true
	}
	examples := map[string]map[string]any{}
	for op, raw := range opts.Examples {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			return nil, fmt.Errorf("conformance: the example of %s is not a JSON object", op)
		}
		examples[op] = m
	}
	p := &prober{ctx: ctx, base: base, opts: opts, examples: examples, tallies: map[string]*tally{}, nonce: nonce()}
	p.hc = opts.HTTPClient
	if p.hc == nil {
		p.hc = &http.Client{Timeout: 10 * time.Second, CheckRedirect: noRedirect}
	}
	p.anon = anonymousClient(p.hc)
	rep := &Report{Target: baseURL, Started: time.Now()}
	p.run()
	rep.Duration = time.Since(rep.Started)
	for _, r := range rules {
		if len(wanted) > 0 && !wanted[r.ID] {
			continue
		}
		rep.Results = append(rep.Results, p.result(r))
	}
	return rep, nil
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// anonymousClient returns a client that sends with hc's transport and nothing of the
// caller's credentials (no cookie jar), or nil when hc's transport is not a plain
// *http.Transport: another RoundTripper may add credentials the probe cannot see.
func anonymousClient(hc *http.Client) *http.Client {
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if _, ok := rt.(*http.Transport); !ok {
		return nil
	}
	return &http.Client{Transport: rt, Timeout: hc.Timeout, CheckRedirect: noRedirect}
}

// prober is one run's state.
type prober struct {
	ctx      context.Context
	base     *url.URL
	hc       *http.Client
	anon     *http.Client // hc without credentials; nil when that cannot be vouched for
	opts     Options
	examples map[string]map[string]any
	doc      *document
	tallies  map[string]*tally
	nonce    string
	seq      int
	bursting bool // provoking a rate limit: a 429 is what the step waits for
	// anonymous: the request goes without credentials, through anon.
	anonymous bool
}

// tally gathers what the run observed about one rule.
type tally struct {
	checks   int
	findings []Finding
	sample   *Exchange
	skip     string          // why nothing could be checked, when nothing was
	skipped  []string        // the checks not made, and why
	covered  map[string]bool // operations the checks covered
}

func (p *prober) tally(id string) *tally {
	t := p.tallies[id]
	if t == nil {
		t = &tally{covered: map[string]bool{}}
		p.tallies[id] = t
	}
	return t
}

func (p *prober) pass(id string, op *operation, ex Exchange) {
	t := p.tally(id)
	t.checks++
	if op != nil {
		t.covered[op.ID] = true
	}
	if t.sample == nil {
		t.sample = &ex
	}
}

func (p *prober) fail(id string, ex Exchange, why string) {
	if p.ctx.Err() != nil {
		// The request was cut short by the caller, not by the server.
		return
	}
	t := p.tally(id)
	t.checks++
	t.findings = append(t.findings, Finding{Detail: why, Exchange: ex})
}

// skip records why a rule could not be checked; the first reason given is kept.
func (p *prober) skip(id, why string) {
	if t := p.tally(id); t.skip == "" {
		t.skip = why
	}
}

// skipCheck records a check of the rule id that the run did not make, and why: listed in the
// result whatever its outcome, since a rule may pass on the operations it checked.
func (p *prober) skipCheck(id, why string) {
	t := p.tally(id)
	if !slices.Contains(t.skipped, why) {
		t.skipped = append(t.skipped, why)
	}
}

func (p *prober) result(r Rule) Result {
	t := p.tally(r.ID)
	res := Result{Rule: r, Skipped: t.skipped}
	switch {
	case len(t.findings) > 0:
		res.Outcome, res.Findings = Fail, t.findings
		for _, f := range t.findings[:min(len(t.findings), 3)] {
			res.Evidence = append(res.Evidence, f.Exchange)
		}
		res.Detail = t.findings[0].Detail
		if n := len(t.findings) - 1; n > 0 {
			res.Detail += fmt.Sprintf(" (and %d more)", n)
		}
	case t.checks > 0:
		res.Outcome = Pass
		res.Detail = plural(t.checks, "check")
		if len(t.covered) > 0 {
			res.Detail += " over " + plural(len(t.covered), "operation")
		}
		if t.sample != nil {
			res.Evidence = []Exchange{*t.sample}
		}
	default:
		res.Outcome, res.Detail = Skip, t.skip
		if res.Detail == "" && len(t.skipped) > 0 {
			res.Detail = t.skipped[0]
		}
		if res.Detail == "" {
			res.Detail = "nothing the run met tells either way"
		}
		if err := p.ctx.Err(); err != nil {
			res.Detail = "the run ended early: " + err.Error()
		}
	}
	return res
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// step is one unit of the run, reported as progress.
type step struct {
	name string
	run  func()
}

func (p *prober) run() {
	p.progress(0, 0, "the OpenAPI document")
	p.fetchDocument()
	steps := []step{{"an unknown route", p.unknownRoute}}
	if p.doc != nil {
		for _, op := range p.doc.ops {
			if op.readOnly() {
				steps = append(steps, step{op.ID + ": a valid call", func() { p.validCall(op) }})
			}
			if !op.readOnly() && !p.opts.Writes {
				// A server that does not validate executes whatever reaches the handler,
				// even a body it cannot read: only a request its own security refuses first
				// is sent.
				p.skipUnsafe(op)
				if op.Secured && p.anon != nil {
					steps = append(steps, step{op.ID + ": without credentials", func() { p.unauthenticated(op) }})
				}
				continue
			}
			for _, v := range p.variants(op) {
				steps = append(steps, step{op.ID + ": " + v.name, func() { p.invalidCall(op, v) }})
			}
		}
		for _, op := range p.doc.ops {
			if op.Confirm {
				steps = append(steps, step{op.ID + ": confirmation", func() { p.confirmation(op) }})
			}
			if op.KeyMode != "" && !op.readOnly() {
				steps = append(steps, step{op.ID + ": idempotency", func() { p.idempotency(op) }})
			}
		}
		p.noteUnchecked()
		if p.opts.Burst > 0 {
			steps = append(steps, step{"a burst of requests", p.burst})
		} else {
			p.skip("rate-limit-wait", "no 429 or 503 was met; Options.Burst (remedy probe --burst) provokes one")
		}
	} else {
		for _, id := range []string{"openapi-error-codes", "invalid-input-refused", "issues-point-at-fields",
			"schema-inline", "confirmation-bound", "confirmation-single-use", "idempotent-replay",
			"idempotency-key-reuse", "idempotency-errors-not-stored"} {
			p.skip(id, "no OpenAPI document to read the operations from")
		}
	}
	total := len(steps) + 1
	for i, s := range steps {
		if p.ctx.Err() != nil {
			return
		}
		p.progress(i+1, total, s.name)
		s.run()
	}
	p.progress(total, total, "done")
	p.skip("trace-id", "no 5xx was met")
	p.skip("no-internal-detail", "no error response was met")
}

func (p *prober) progress(done, total int, name string) {
	if p.opts.Progress != nil {
		p.opts.Progress(Progress{Done: done, Total: total, Step: name})
	}
}

// reply is what one request got.
type reply struct {
	status int
	header http.Header
	body   []byte
	env    *remedy.Envelope // the failure, when the response is one
	err    error            // no response came
	ex     Exchange
}

func (r *reply) ok() bool      { return r.err == nil && r.env == nil && r.status < 300 }
func (r *reply) refused() bool { return r.err == nil && r.status >= 400 && r.status < 500 }
func (r *reply) code() string {
	if r.env == nil {
		return ""
	}
	return r.env.Code
}

// Rate limits the probe meets are waited out as the reference client would: a 429 is
// checked like any answer, then, when it is retryable, the request is sent again after the
// wait it names (at most maxLimitWait, and maxLimitTries times). Nothing else is sent again
// unchanged: a 429 that names fields to fix, or says it is not retryable, is the answer.
const (
	maxLimitWait  = 5 * time.Second
	maxLimitTries = 3
)

// send sends one request and reads its answer, bounded, waiting out rate limits unless the
// run is provoking one.
func (p *prober) send(method, target string, body []byte, contentType string, header http.Header) *reply {
	for try := 1; ; try++ {
		r := p.sendOnce(method, target, body, contentType, header)
		if r.status != http.StatusTooManyRequests || r.env == nil || !r.env.Retryable || p.bursting || try == maxLimitTries {
			return r
		}
		p.observe(nil, r)
		wait := time.Second
		if r.env != nil && r.env.RetryAfter > 0 {
			wait = min(r.env.RetryAfter, maxLimitWait)
		}
		t := time.NewTimer(wait)
		select {
		case <-p.ctx.Done():
			t.Stop()
			return r
		case <-t.C:
		}
	}
}

func (p *prober) sendOnce(method, target string, body []byte, contentType string, header http.Header) *reply {
	r := &reply{ex: Exchange{Request: method + " " + target}}
	if len(body) > 0 {
		r.ex.Request += " " + excerpt(body, 240)
	}
	base, hc, creds := p.base, p.hc, p.opts.Header
	if p.anonymous {
		// No credentials at all: neither the caller's headers nor a user in the base URL
		// (which the client would send as Basic authorization).
		bare := *p.base
		bare.User = nil
		base, hc, creds = &bare, p.anon, nil
	}
	u := base.String() + target
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(p.ctx, method, u, rd)
	if err != nil {
		r.err = err
		r.ex.Response = "request not sent: " + err.Error()
		return r
	}
	for k, vs := range creds {
		req.Header[k] = append([]string(nil), vs...)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := hc.Do(req)
	if err != nil {
		r.err = err
		r.ex.Response = "no response: " + err.Error()
		return r
	}
	defer resp.Body.Close()
	r.body, err = io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		r.err = err
		r.ex.Response = "the response broke off: " + err.Error()
		return r
	}
	r.status, r.header = resp.StatusCode, resp.Header
	r.ex.Status, r.ex.Response = r.status, excerpt(r.body, 360)
	if env, ok := remedy.Parse(r.status, r.header, r.body); ok {
		r.env = env
	}
	return r
}

func excerpt(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

func nonce() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// key mints an idempotency key no other run uses.
func (p *prober) key() string {
	p.seq++
	return "remedy-conformance-" + p.nonce + "-" + strconv.Itoa(p.seq)
}

func (p *prober) fetchDocument() {
	target := p.opts.OpenAPIPath
	if target == "" {
		target = DefaultOpenAPIPath
	}
	var r *reply
	if u, err := url.Parse(target); err == nil && u.IsAbs() {
		saved := p.base
		p.base = &url.URL{}
		r = p.send("GET", target, nil, "", nil)
		p.base = saved
	} else {
		if !strings.HasPrefix(target, "/") {
			target = "/" + target
		}
		r = p.send("GET", target, nil, "", nil)
	}
	if r.err == nil && r.status >= 400 {
		p.observe(nil, r)
	}
	if r.err != nil || r.status != http.StatusOK {
		why := r.ex.Response
		if r.err == nil {
			why = fmt.Sprintf("answered %d", r.status)
		}
		p.fail("openapi", r.ex, "no OpenAPI document at "+target+": "+why)
		return
	}
	doc, err := readDocument(r.body, r.header.Get("Content-Type"))
	if err != nil {
		r.ex.Response = excerpt(r.body, 120)
		p.fail("openapi", r.ex, err.Error())
		return
	}
	p.doc = doc
	r.ex.Response = excerpt(r.body, 120)
	p.pass("openapi", nil, r.ex)
	p.tally("openapi").checks = len(doc.ops)
	for _, op := range doc.ops {
		ex := Exchange{Request: op.String()}
		if len(op.Codes) == 0 {
			ex.Response = "no x-agent-error-codes"
			p.fail("openapi-error-codes", ex, op.String()+" lists no error codes (x-agent-error-codes)")
		} else {
			ex.Response = "x-agent-error-codes: " + strings.Join(op.Codes, ", ")
			p.pass("openapi-error-codes", op, ex)
		}
	}
}

// noteUnchecked explains the rules no operation of the document lets the run check, and
// those that Options.Writes gates.
func (p *prober) noteUnchecked() {
	confirm, keyed := false, false
	for _, op := range p.doc.ops {
		confirm = confirm || op.Confirm
		keyed = keyed || (op.KeyMode != "" && !op.readOnly())
	}
	if !confirm {
		for _, id := range []string{"confirmation-bound", "confirmation-single-use"} {
			p.skip(id, "no operation requires confirmation (x-confirmation-required)")
		}
	}
	if !keyed {
		for _, id := range []string{"idempotent-replay", "idempotency-key-reuse", "idempotency-errors-not-stored"} {
			p.skip(id, "no operation that changes state takes an Idempotency-Key")
		}
	}
	if p.opts.Writes {
		return
	}
	for _, op := range p.doc.ops {
		if op.Confirm {
			for _, id := range []string{"confirmation-bound", "confirmation-single-use"} {
				p.skipCheck(id, fmt.Sprintf("needs Options.Writes (remedy probe --writes): would confirm %s once", op))
			}
		}
		if op.KeyMode != "" && !op.readOnly() {
			for _, id := range []string{"idempotent-replay", "idempotency-key-reuse", "idempotency-errors-not-stored"} {
				p.skipCheck(id, fmt.Sprintf("needs Options.Writes (remedy probe --writes): would execute %s twice under one Idempotency-Key", op))
			}
		}
	}
}

func (p *prober) unknownRoute() {
	target := "/remedy-conformance-" + p.nonce + "/no/such/route"
	r := p.send("GET", target, nil, "", nil)
	// Not observed for the other rules: whether this answer is an envelope is this rule's
	// question alone.
	switch {
	case r.err != nil:
		p.fail("unknown-route", r.ex, "no response to an unknown route")
	case r.status != http.StatusNotFound:
		p.fail("unknown-route", r.ex, fmt.Sprintf("an unknown route answered %d, not 404", r.status))
	case looksHTML(r.header, r.body):
		p.fail("unknown-route", r.ex, "an unknown route answered with an HTML page")
	case r.env == nil || r.env.Dialect == remedy.DialectUnstructured || r.env.Code == "":
		p.fail("unknown-route", r.ex, "an unknown route answered without an envelope carrying a code")
	default:
		p.pass("unknown-route", nil, r.ex)
	}
}

func looksHTML(h http.Header, body []byte) bool {
	if strings.Contains(strings.ToLower(h.Get("Content-Type")), "html") {
		return true
	}
	b := bytes.TrimSpace(body)
	return len(b) > 0 && b[0] == '<'
}

// args are the arguments the probe starts from for op: the caller's example, else the
// document's, else generated.
func (p *prober) args(op *operation) map[string]any {
	if ex, ok := p.examples[op.ID]; ok {
		return clone(ex)
	}
	out := map[string]any{}
	if op.Example != nil {
		out = clone(op.Example)
	} else if op.Body != nil {
		if m, ok := p.doc.value(op.Body, 0).(map[string]any); ok {
			out = m
		}
	}
	for _, pm := range op.Params {
		if (pm.In == "path" || (pm.In == "query" && pm.Required)) && out[pm.Name] == nil {
			out[pm.Name] = p.doc.value(pm.Schema, 0)
		}
	}
	return out
}

func clone(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// request turns arguments into a target and a body as the reference client sends them: path
// parameters into the template, query parameters (and, for a method without a body, every
// other argument) into the query string, the rest into a JSON object body.
func (p *prober) request(op *operation, args map[string]any) (target string, body []byte) {
	rest := map[string]any{}
	for k, v := range args {
		rest[k] = v
	}
	target = op.Path
	for _, pm := range op.Params {
		if pm.In != "path" {
			continue
		}
		target = strings.ReplaceAll(target, "{"+pm.Name+"}", url.PathEscape(scalar(rest[pm.Name])))
		delete(rest, pm.Name)
	}
	q := url.Values{}
	for _, pm := range op.Params {
		if pm.In == "query" {
			if v, ok := rest[pm.Name]; ok {
				q.Set(pm.Name, scalar(v))
				delete(rest, pm.Name)
			}
		}
	}
	if httpop.Bodyless(op.Method) && op.Body == nil {
		for k, v := range rest {
			q.Set(k, scalar(v))
		}
		rest = nil
	}
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	if rest != nil && (op.Body != nil || len(rest) > 0) {
		body, _ = json.Marshal(rest)
	}
	return target, body
}

func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// call sends op with args, the caller's headers and, when op takes one, a fresh
// idempotency key (or key, when given).
func (p *prober) call(op *operation, args map[string]any, key, token string) *reply {
	target, body := p.request(op, args)
	h := http.Header{}
	if op.KeyMode != "" {
		if key == "" {
			key = p.key()
		}
		h.Set(remedy.HeaderIdempotencyKey, key)
	}
	if token != "" {
		h.Set(remedy.HeaderConfirmationToken, token)
	}
	ct := ""
	if body != nil {
		ct = "application/json"
	}
	r := p.send(op.Method, target, body, ct, h)
	p.observe(op, r)
	return r
}

func (p *prober) validCall(op *operation) {
	p.call(op, p.args(op), "", "")
}
