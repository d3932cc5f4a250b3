package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/remedy-go/remedy"
)

// observe checks what every error response must satisfy, whichever step met it: an envelope
// with a code, retryability stated (and not claimed for a failure that names fields), nothing
// internal, a trace id on a 5xx, a wait on a 429 or 503, and a code the operation lists.
func (p *prober) observe(op *operation, r *reply) {
	if r.err != nil || r.env == nil {
		return
	}
	env := r.env
	switch {
	case env.Dialect == remedy.DialectUnstructured:
		p.fail("envelope", r.ex, fmt.Sprintf("a %d answer is not an envelope: its body has no structure to read", r.status))
	case !wroteCode(r):
		p.fail("envelope", r.ex, fmt.Sprintf("a %d answer (read as %s) carries no machine code", r.status, env.Dialect))
	default:
		p.pass("envelope", op, r.ex)
	}
	switch {
	case env.RetrySource != remedy.RetryFromBody:
		p.fail("retryable-stated", r.ex, fmt.Sprintf("a %d %s answer does not say whether to retry (retryable)", r.status, env.Code))
	case !env.Retryable && saysRetryable(r.body):
		// Parse reads a body's true as false only where the same request cannot succeed
		// later: a failure that names fields to fix, or one that waits on the caller (a
		// confirmation, a payment, an idempotency key).
		p.fail("retryable-stated", r.ex, fmt.Sprintf("a %d %s answer says retryable: true, but the same request cannot succeed later "+
			"(it names fields to fix, or waits on the caller); a retrier that reads only the flag sends it again: say false", r.status, env.Code))
	default:
		p.pass("retryable-stated", op, r.ex)
	}
	if leak := leaked(r.body); leak != "" {
		p.fail("no-internal-detail", r.ex, fmt.Sprintf("a %d answer carries internal detail: %q", r.status, leak))
	} else {
		p.pass("no-internal-detail", op, r.ex)
	}
	if r.status >= 500 {
		if env.TraceID != "" {
			p.pass("trace-id", op, r.ex)
		} else {
			p.fail("trace-id", r.ex, fmt.Sprintf("a %d %s answer carries no trace id", r.status, env.Code))
		}
	}
	if r.status == http.StatusTooManyRequests || r.status == http.StatusServiceUnavailable {
		if env.RetryAfter > 0 {
			p.pass("rate-limit-wait", op, r.ex)
		} else {
			p.fail("rate-limit-wait", r.ex, fmt.Sprintf("a %d %s answer does not say how long to wait (retry_after_ms, Retry-After)", r.status, env.Code))
		}
	}
	if op != nil && len(op.Codes) > 0 && wroteCode(r) {
		if slices.Contains(op.Codes, env.Code) {
			p.pass("openapi-error-codes", op, r.ex)
		} else {
			p.fail("openapi-error-codes", r.ex, fmt.Sprintf("%s answered %s, which its x-agent-error-codes do not list", op, env.Code))
		}
	}
}

// saysRetryable reports whether a body states retryable: true (or is_retriable: true) at its
// top level (RFC 9457) or in its "error" object (the agent envelope): the envelope holds only
// what the client made of it.
func saysRetryable(body []byte) bool {
	var top, inner map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return false
	}
	objs := []map[string]json.RawMessage{top}
	if json.Unmarshal(top["error"], &inner) == nil {
		objs = append(objs, inner)
	}
	for _, o := range objs {
		for _, k := range []string{"retryable", "is_retriable"} {
			if string(bytes.TrimSpace(o[k])) == "true" {
				return true
			}
		}
	}
	return false
}

// wroteCode reports whether the failure's code is one the server wrote, rather than one the
// reader derived from the status for a body without one.
func wroteCode(r *reply) bool {
	return r.env.Code != "" && bytes.Contains(r.body, []byte(r.env.Code))
}

// leaks are the marks of what a server must not show a caller: stack traces of the common
// runtimes, source file positions, and messages of decoders and databases that name the
// server's internals.
var leaks = regexp.MustCompile(`goroutine \d+ \[|panic: |runtime error: |\.go:\d+|` +
	`Traceback \(most recent call last\)|File "[^"]+", line \d+|` +
	`Exception in thread|\tat [\w$.]+\([\w$]+\.java:\d+\)|at [\w$.<>]+ \([^)]*\.[jt]s:\d+:\d+\)|` +
	`json: cannot unmarshal|Go struct field|SQLSTATE|syntax error at or near|ORA-\d{5}|` +
	`(?:/[\w.-]+){2,}/[\w.-]+\.(?:go|py|rb|php|java|js|ts|cs):\d+`)

func leaked(body []byte) string {
	return string(leaks.Find(body))
}

// variant is one invalid request derived from an operation's valid arguments.
type variant struct {
	name  string
	args  map[string]any // the arguments, one of them broken
	raw   []byte         // a body sent as is instead of args (malformed JSON)
	ctype string         // the content type, when not JSON
	field string         // the JSON Pointer of the broken argument, "" when none
	// parentOf: the issue may instead be at the field's parent naming it (a missing field).
	parentOf bool
	// routed: a broken path parameter, which a server may refuse as an unknown resource.
	routed bool
}

// field is one top-level argument the probe can break: a body member or a parameter.
type field struct {
	name     string
	schema   map[string]any
	required bool
	in       string // "body", "path", "query"
}

func (p *prober) fields(op *operation) []field {
	var fs []field
	if op.Body != nil {
		req := map[string]bool{}
		for _, r := range asSlice(op.Body["required"]) {
			if s, ok := r.(string); ok {
				req[s] = true
			}
		}
		props, _ := op.Body["properties"].(map[string]any)
		for _, name := range sortedKeys(props) {
			if s := p.doc.sub(op.Body, "properties", name); s != nil {
				fs = append(fs, field{name: name, schema: s, required: req[name], in: "body"})
			}
		}
	}
	for _, pm := range op.Params {
		if (pm.In == "path" || pm.In == "query") && pm.Schema != nil {
			fs = append(fs, field{name: pm.Name, schema: pm.Schema, required: pm.Required || pm.In == "path", in: pm.In})
		}
	}
	// Body members first, required before optional: the likeliest to be validated.
	slices.SortStableFunc(fs, func(a, b field) int {
		return rank(a) - rank(b)
	})
	return fs
}

func rank(f field) int {
	r := 0
	if f.in != "body" {
		r += 2
	}
	if !f.required {
		r++
	}
	return r
}

// variants lists the invalid requests to send to op: one of each kind the schema allows.
func (p *prober) variants(op *operation) []variant {
	base := p.args(op)
	fs := p.fields(op)
	var out []variant
	with := func(name string, f field, v any, parentOf bool) {
		a := clone(base)
		a[f.name] = v
		out = append(out, variant{name: name + " at /" + f.name, args: a, field: pointer(f.name),
			parentOf: parentOf, routed: f.in == "path"})
	}
	// A missing required member (a path parameter cannot be missing from its URL).
	for _, f := range fs {
		if f.required && f.in != "path" {
			a := clone(base)
			delete(a, f.name)
			out = append(out, variant{name: "missing required /" + f.name, args: a, field: pointer(f.name), parentOf: true})
			break
		}
	}
	// A value of the wrong type (in a URL every value is text: only non-string types break).
	for _, f := range fs {
		if v, ok := wrongType(f); ok {
			with("wrong type", f, v, false)
			break
		}
	}
	for _, f := range fs {
		if e := asSlice(f.schema["enum"]); len(e) > 0 && typeOf(f.schema) != "boolean" {
			with("out of enum", f, "remedy-conformance-not-allowed", false)
			break
		}
	}
	for _, f := range fs {
		if v, ok := outOfRange(f); ok {
			with("out of range", f, v, false)
			break
		}
	}
	for _, f := range fs {
		if pat, ok := f.schema["pattern"].(string); ok && typeOf(f.schema) == "string" {
			bad := "remedy conformance!"
			if !matches(map[string]any{"pattern": pat}, bad) {
				with("against its pattern", f, bad, false)
				break
			}
		}
	}
	if op.Body != nil && op.Body["additionalProperties"] == false {
		a := clone(base)
		a["remedy_conformance_unexpected"] = true
		out = append(out, variant{name: "an unexpected member", args: a, field: "/remedy_conformance_unexpected", parentOf: true})
	}
	if op.Body != nil {
		out = append(out, variant{name: "malformed JSON", args: base, raw: malformed})
		if p.opts.Writes {
			out = append(out, variant{name: "a body that is not JSON", args: base, ctype: "text/plain"})
		}
	}
	return out
}

// malformed is a body no JSON reader accepts.
var malformed = []byte(`{"remedy": "conformance",`)

// skipUnsafe lists, for an operation that changes state, the checks that need
// Options.Writes: every invalid request, even a malformed one, since a server that does not
// validate executes what reaches its handler.
func (p *prober) skipUnsafe(op *operation) {
	vs := p.variants(op)
	if len(vs) == 0 {
		return
	}
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.name
	}
	why := fmt.Sprintf("needs Options.Writes (remedy probe --writes): would send %s invalid requests that a server which does not validate would execute: %s",
		op, strings.Join(names, ", "))
	if op.Secured && p.anon == nil {
		why += "; nor was it sent a request without credentials, since Options.HTTPClient's transport may add some"
	}
	for _, id := range []string{"invalid-input-refused", "issues-point-at-fields", "schema-inline"} {
		p.skipCheck(id, why)
	}
}

// unauthenticated sends op, which changes state and which the document says needs
// credentials, a request without any and, when op takes a body, with one that is not JSON:
// the only request Run sends such an operation without Options.Writes, since a server that
// enforces the security it declares refuses it before any handler runs. Its refusal is
// checked as every error is; it says nothing of validation. Its execution is a failure twice
// over.
func (p *prober) unauthenticated(op *operation) {
	// Only the path parameters, which route the request: nothing else a handler could use.
	all, args := p.args(op), map[string]any{}
	for _, pm := range op.Params {
		if pm.In == "path" {
			args[pm.Name] = all[pm.Name]
		}
	}
	target, _ := p.request(op, args)
	var body []byte
	ct, what := "", "a request without credentials"
	if op.Body != nil {
		body, ct, what = malformed, "application/json", what+" and with a body that is not JSON"
	}
	p.anonymous = true
	r := p.send(op.Method, target, body, ct, nil)
	p.anonymous = false
	r.ex.Request = "[without credentials] " + r.ex.Request
	p.observe(op, r)
	switch {
	case r.ok():
		p.fail("invalid-input-refused", r.ex, fmt.Sprintf("%s, which its document says needs credentials, executed %s (answered %d)", op, what, r.status))
	case r.err == nil && r.status >= 500:
		p.fail("invalid-input-refused", r.ex, fmt.Sprintf("%s answered %s with a server error (%d)", op, what, r.status))
	}
}

func pointer(name string) string {
	return "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(name)
}

func wrongType(f field) (any, bool) {
	switch typeOf(f.schema) {
	case "string":
		if f.in != "body" {
			return nil, false
		}
		return 12345.0, true
	case "integer", "number":
		return "remedy-conformance-not-a-number", true
	case "boolean":
		return "remedy-conformance-not-a-boolean", true
	case "array", "object":
		if f.in != "body" {
			return nil, false
		}
		return "remedy-conformance-not-a-" + typeOf(f.schema), true
	}
	return nil, false
}

func outOfRange(f field) (any, bool) {
	s := f.schema
	switch typeOf(s) {
	case "integer", "number":
		if hi, ok := s["maximum"].(float64); ok {
			return hi + 1, true
		}
		if lo, ok := s["minimum"].(float64); ok {
			return lo - 1, true
		}
	case "string":
		if n, ok := s["maxLength"].(float64); ok && n < 4096 {
			return strings.Repeat("x", int(n)+1), true
		}
	case "array":
		if n, ok := s["minItems"].(float64); ok && n > 0 && f.in == "body" {
			return []any{}, true
		}
	}
	return nil, false
}

// invalidCall sends one invalid request and checks that it is refused, and that the refusal
// points at the field and inlines the schema.
func (p *prober) invalidCall(op *operation, v variant) {
	var r *reply
	if v.raw != nil || v.ctype != "" {
		target, body := p.request(op, v.args)
		if v.raw != nil {
			body = v.raw
		}
		ct := v.ctype
		if ct == "" {
			ct = "application/json"
		}
		h := http.Header{}
		if op.KeyMode != "" {
			h.Set(remedy.HeaderIdempotencyKey, p.key())
		}
		r = p.send(op.Method, target, body, ct, h)
		p.observe(op, r)
	} else {
		r = p.call(op, v.args, "", "")
	}
	r.ex.Request = "[" + v.name + "] " + r.ex.Request
	switch {
	case r.err != nil:
		p.fail("invalid-input-refused", r.ex, fmt.Sprintf("%s: %s got no answer", op, v.name))
		return
	case r.status < 400:
		p.fail("invalid-input-refused", r.ex, fmt.Sprintf("%s executed a request with %s (answered %d)", op, v.name, r.status))
		return
	case r.status >= 500:
		p.fail("invalid-input-refused", r.ex, fmt.Sprintf("%s answered a request with %s with a server error (%d)", op, v.name, r.status))
		return
	}
	p.pass("invalid-input-refused", op, r.ex)
	if v.field == "" || r.env == nil {
		return
	}
	if why := unrelated(r); why != "" {
		p.skip("issues-point-at-fields", "invalid requests were refused before validation ("+why+")")
		p.skip("schema-inline", "invalid requests were refused before validation ("+why+")")
		return
	}
	if v.routed && r.status == http.StatusNotFound {
		return
	}
	p.checkIssues(op, v, r)
}

// unrelated says why a refusal was not about the arguments: credentials, a confirmation
// challenge, a rate limit.
func unrelated(r *reply) string {
	switch {
	case r.status == http.StatusUnauthorized || r.status == http.StatusForbidden:
		return fmt.Sprintf("%d %s: give credentials with Options.Header", r.status, r.code())
	case r.env.ConfirmationToken != "":
		return "a confirmation challenge"
	case r.status == http.StatusTooManyRequests:
		return "429 " + r.code()
	}
	return ""
}

func (p *prober) checkIssues(op *operation, v variant, r *reply) {
	env := r.env
	if len(env.Issues) == 0 {
		p.fail("issues-point-at-fields", r.ex, fmt.Sprintf("%s refused %s without an issue naming the field", op, v.name))
	} else {
		hit := false
		for _, is := range env.Issues {
			hit = hit || at(is.Path, v.field) ||
				(v.parentOf && at(is.Path, parent(v.field)) && strings.Contains(is.Message, strings.TrimPrefix(v.field, "/")))
		}
		var stray []string
		for _, is := range env.Issues {
			if !p.real(op, v.args, is.Path) {
				stray = append(stray, is.Path)
			}
		}
		switch {
		case !hit:
			p.fail("issues-point-at-fields", r.ex, fmt.Sprintf("%s refused %s, but no issue points at %s", op, v.name, v.field))
		case len(stray) > 0:
			p.fail("issues-point-at-fields", r.ex, fmt.Sprintf("%s refused %s with issues at %s, which is no field of the request or its schema", op, v.name, strings.Join(stray, ", ")))
		default:
			p.pass("issues-point-at-fields", op, r.ex)
		}
	}
	if len(env.Schema) > 0 && !bytes.Equal(env.Schema, []byte("null")) {
		p.pass("schema-inline", op, r.ex)
	} else {
		p.fail("schema-inline", r.ex, fmt.Sprintf("%s refused %s without the violated schema", op, v.name))
	}
}

// at reports whether an issue's path is the field's pointer, or that pointer under the part
// of the request it is in, as some servers root their paths (/body/amount, /query/currency).
func at(path, field string) bool {
	return path == field || unrooted(path) == field
}

// unrooted drops a leading /body, /query, /path or /params from a pointer.
func unrooted(ptr string) string {
	for _, root := range []string{"/body", "/query", "/path", "/params"} {
		if rest, ok := strings.CutPrefix(ptr, root); ok && strings.HasPrefix(rest, "/") {
			return rest
		}
	}
	return ptr
}

func parent(ptr string) string {
	if i := strings.LastIndexByte(ptr, '/'); i > 0 {
		return ptr[:i]
	}
	return ""
}

// real reports whether a pointer names a field of the request sent or of the operation's
// schema, itself or under the part of the request it is in.
func (p *prober) real(op *operation, args map[string]any, ptr string) bool {
	if ptr == "" {
		return true
	}
	if !strings.HasPrefix(ptr, "/") {
		return false
	}
	for _, ptr := range []string{ptr, unrooted(ptr)} {
		if inValue(args, ptr) || p.inSchema(op, ptr) {
			return true
		}
	}
	return false
}

func inValue(v any, ptr string) bool {
	for seg := range strings.SplitSeq(ptr[1:], "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[seg]; !ok {
				return false
			}
		case []any:
			i := -1
			fmt.Sscanf(seg, "%d", &i)
			if i < 0 || i >= len(x) {
				return false
			}
			v = x[i]
		default:
			return false
		}
	}
	return true
}

func (p *prober) inSchema(op *operation, ptr string) bool {
	if op.Body != nil {
		if _, ok := p.doc.fieldSchema(op.Body, ptr); ok {
			return true
		}
	}
	name, rest, _ := strings.Cut(ptr[1:], "/")
	for _, pm := range op.Params {
		if pm.Name == name {
			if rest == "" {
				return true
			}
			_, ok := p.doc.fieldSchema(pm.Schema, "/"+rest)
			return ok
		}
	}
	return false
}

// variantArgs returns args with one value changed to another the schema accepts, and the
// pointer of what changed.
func (p *prober) variantArgs(op *operation, args map[string]any) (map[string]any, string, bool) {
	for _, f := range p.fields(op) {
		v, present := args[f.name]
		if !present {
			continue
		}
		if alt, ok := another(f.schema, v); ok {
			a := clone(args)
			a[f.name] = alt
			return a, pointer(f.name), true
		}
	}
	return nil, "", false
}

// confirmation checks that a confirmation token is bound to its payload and confirms one call.
func (p *prober) confirmation(op *operation) {
	if !p.opts.Writes {
		return
	}
	args := p.args(op)
	challenge := func() (*reply, string) {
		r := p.call(op, args, "", "")
		if r.ok() {
			p.fail("confirmation-bound", r.ex, fmt.Sprintf("%s, documented as needing confirmation, executed without a token", op))
			return r, ""
		}
		if r.env == nil || r.env.ConfirmationToken == "" {
			p.skip("confirmation-bound", fmt.Sprintf("%s answered %d %s, not a confirmation challenge with a token", op, r.status, r.code()))
			p.skip("confirmation-single-use", fmt.Sprintf("%s answered %d %s, not a confirmation challenge with a token", op, r.status, r.code()))
			return r, ""
		}
		return r, r.env.ConfirmationToken
	}

	// Bound: the token, sent with another payload, is refused.
	_, token := challenge()
	if token == "" {
		return
	}
	other, changed, ok := p.variantArgs(op, args)
	if !ok {
		p.skip("confirmation-bound", fmt.Sprintf("no other valid payload for %s could be made from its example", op))
	} else {
		r := p.call(op, other, "", token)
		switch {
		case r.err != nil:
			p.skip("confirmation-bound", fmt.Sprintf("%s with a token got no answer", op))
		case r.status < 300:
			p.fail("confirmation-bound", r.ex, fmt.Sprintf("%s executed with a token issued for another payload (%s changed)", op, changed))
		case spentToken(r):
			p.pass("confirmation-bound", op, r.ex)
		default:
			p.skip("confirmation-bound", fmt.Sprintf("%s refused a token for another payload as %d %s, which does not tell whether the token is bound", op, r.status, r.code()))
		}
	}

	// Single use: the token confirms the call once; sent again it is refused.
	_, token = challenge()
	if token == "" {
		return
	}
	first := p.call(op, args, "", token)
	if !first.ok() {
		p.skip("confirmation-single-use", fmt.Sprintf("%s, confirmed, answered %d %s: %s", op, first.status, first.code(), exampleHint(op.ID)))
		return
	}
	again := p.call(op, args, "", token)
	switch {
	case again.err != nil:
		p.skip("confirmation-single-use", fmt.Sprintf("%s sent again with its token got no answer", op))
	case again.status < 300:
		p.fail("confirmation-single-use", again.ex, fmt.Sprintf("%s ran again with a token that had confirmed it already", op))
	case spentToken(again):
		p.pass("confirmation-single-use", op, again.ex)
	default:
		// A deletion run twice finds nothing the second time: a 404 does not tell whether the
		// token was refused or accepted.
		p.skip("confirmation-single-use", fmt.Sprintf("%s sent again with its token answered %d %s, which does not tell whether the token was spent", op, again.status, again.code()))
	}
}

// spentToken reports whether a refusal is about the confirmation token: a 409 or a code
// about confirmation.
func spentToken(r *reply) bool {
	return r.refused() && (r.status == http.StatusConflict || strings.Contains(r.code(), "confirm"))
}

// idempotency checks replays, key reuse and that failures are not stored, executing op twice.
func (p *prober) idempotency(op *operation) {
	if !p.opts.Writes {
		return
	}
	args := p.args(op)
	key := p.key()
	first := p.call(op, args, key, "")
	if !first.ok() {
		why := fmt.Sprintf("%s answered %d %s to its example: %s", op, first.status, first.code(), exampleHint(op.ID))
		for _, id := range []string{"idempotent-replay", "idempotency-key-reuse", "idempotency-errors-not-stored"} {
			p.skip(id, why)
		}
		return
	}
	replay := p.call(op, args, key, "")
	switch {
	case remedy.Replayed(first.header):
		p.fail("idempotent-replay", first.ex, fmt.Sprintf("%s marked its first execution under a new key as replayed", op))
	case replay.err != nil:
		p.fail("idempotent-replay", replay.ex, fmt.Sprintf("%s retried with the same key got no answer", op))
	case replay.status != first.status:
		p.fail("idempotent-replay", replay.ex, fmt.Sprintf("%s retried with the same key answered %d, not the first %d", op, replay.status, first.status))
	case !bytes.Equal(replay.body, first.body):
		p.fail("idempotent-replay", replay.ex, fmt.Sprintf("%s retried with the same key answered another body than the first (%s)", op, excerpt(first.body, 120)))
	case !remedy.Replayed(replay.header):
		p.fail("idempotent-replay", replay.ex, fmt.Sprintf("%s replayed without %s: true (Stripe's spelling, Idempotent-Replayed, is read too): a client cannot tell the replay from a second execution", op, remedy.HeaderReplayed))
	default:
		p.pass("idempotent-replay", op, replay.ex)
	}

	if other, changed, ok := p.variantArgs(op, args); ok {
		r := p.call(op, other, key, "")
		switch {
		case r.err != nil:
			p.skip("idempotency-key-reuse", fmt.Sprintf("%s with a reused key got no answer", op))
		case r.status < 300:
			p.fail("idempotency-key-reuse", r.ex, fmt.Sprintf("%s accepted a key already used with another payload (%s changed)", op, changed))
		case r.refused():
			p.pass("idempotency-key-reuse", op, r.ex)
		default:
			p.fail("idempotency-key-reuse", r.ex, fmt.Sprintf("%s answered a reused key with a server error (%d)", op, r.status))
		}
	} else {
		p.skip("idempotency-key-reuse", fmt.Sprintf("no other valid payload for %s could be made from its example", op))
	}

	var bad *variant
	for _, v := range p.variants(op) {
		if v.raw == nil && v.ctype == "" && v.field != "" {
			bad = &v
			break
		}
	}
	if bad == nil {
		p.skip("idempotency-errors-not-stored", fmt.Sprintf("no invalid request for %s could be made", op))
		return
	}
	key = p.key()
	failed := p.call(op, bad.args, key, "")
	if !failed.refused() {
		p.skip("idempotency-errors-not-stored", fmt.Sprintf("%s with %s answered %d", op, bad.name, failed.status))
		return
	}
	fixed := p.call(op, args, key, "")
	switch {
	case fixed.err != nil:
		p.skip("idempotency-errors-not-stored", fmt.Sprintf("%s, corrected under the same key, got no answer", op))
	case !fixed.ok():
		p.fail("idempotency-errors-not-stored", fixed.ex, fmt.Sprintf("%s, corrected under the key of a refused request (%s), answered %d %s: the failure was kept", op, bad.name, fixed.status, fixed.code()))
	case remedy.Replayed(fixed.header):
		p.fail("idempotency-errors-not-stored", fixed.ex, fmt.Sprintf("%s, corrected under the key of a refused request, was answered by a replay", op))
	default:
		p.pass("idempotency-errors-not-stored", op, fixed.ex)
	}
}

// burst sends quick requests to a read-only operation until one is rate limited.
func (p *prober) burst() {
	var op *operation
	for _, o := range p.doc.ops {
		if o.readOnly() {
			op = o
			break
		}
	}
	if op == nil {
		p.skip("rate-limit-wait", "no read-only operation to send a burst to")
		return
	}
	args := p.args(op)
	p.bursting = true
	defer func() { p.bursting = false }()
	for range p.opts.Burst {
		if p.ctx.Err() != nil {
			return
		}
		r := p.call(op, args, "", "")
		if r.status == http.StatusTooManyRequests {
			return
		}
	}
	p.skip("rate-limit-wait", fmt.Sprintf("%d requests to %s met no 429", p.opts.Burst, op))
}

// exampleHint says how to give op a valid example: the probe's flag, and the option for a
// Go caller of Run.
func exampleHint(op string) string {
	return fmt.Sprintf("give it valid arguments with remedy probe --example '%s={...}' (Options.Examples from Go)", op)
}
