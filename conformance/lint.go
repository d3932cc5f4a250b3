package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/remedy-go/remedy/internal/oadoc"
)

// The rules Lint checks, in the order it reports them. Their IDs are stable, like Run's: CI
// configurations refer to them.
var lintRules = []Rule{
	{ID: "lint-openapi", Statement: "The document is JSON or YAML, OpenAPI 3.x, and describes at least one operation."},
	{ID: "lint-operation-ids", Statement: "Every operation has a unique operationId: agents call operations by name."},
	{ID: "lint-error-responses", Statement: "Every operation documents its errors: a 4xx, and a 5xx or default, each with a JSON schema."},
	{ID: "lint-error-codes", Statement: "Every operation lists its error codes (x-agent-error-codes), each described in x-agent-errors and agreeing with its responses."},
	{ID: "lint-retry-markers", Statement: "Every POST, PUT, PATCH and DELETE states x-ax-retryable and x-ax-idempotent as booleans."},
	{ID: "lint-idempotency-key", Statement: "Every idempotent POST or PATCH accepts an Idempotency-Key (a header parameter, or x-idempotency-key), the header marked required where x-idempotency-key is required."},
	{ID: "lint-confirmation", Statement: "Operations that require confirmation document the 409 confirmation_required and accept X-Confirmation-Token; every DELETE says whether it does."},
	{ID: "lint-retry-after", Statement: "Every 429 and 503 response documents the Retry-After header."},
}

// lintChecks decide the rules after lint-openapi, which lintParse decides.
var lintChecks = map[string]func(*linter) lintVerdict{
	"lint-operation-ids":   (*linter).checkOperationIDs,
	"lint-error-responses": (*linter).checkErrorResponses,
	"lint-error-codes":     (*linter).checkErrorCodes,
	"lint-retry-markers":   (*linter).checkRetryMarkers,
	"lint-idempotency-key": (*linter).checkIdempotencyKey,
	"lint-confirmation":    (*linter).checkConfirmation,
	"lint-retry-after":     (*linter).checkRetryAfter,
}

// LintRules lists the rules Lint checks, in the order of its report.
func LintRules() []Rule { return append([]Rule(nil), lintRules...) }

// Lint checks an OpenAPI document (JSON or YAML, told by its content) against the contract
// statically, without calling the server it describes: one Result per rule of LintRules().
// When the document cannot be read as OpenAPI 3.x, lint-openapi fails and every other rule
// is skipped. Only local
// references ("#/components/...") are followed, so a document split over several files
// must be bundled first. Lint never panics, whatever the input; the caller sets the
// report's Target (the file name).
func Lint(doc []byte) *Report {
	r := &Report{Started: time.Now()}
	l, problem := lintParse(doc)
	if problem != "" {
		r.Results = append(r.Results, Result{Rule: lintRules[0], Outcome: Fail, Detail: problem})
		for _, rule := range lintRules[1:] {
			r.Results = append(r.Results, Result{Rule: rule, Outcome: Skip,
				Detail: "not checked: the document is not a usable OpenAPI 3.x document (see lint-openapi)"})
		}
	} else {
		r.Results = append(r.Results, Result{Rule: lintRules[0], Outcome: Pass, Detail: l.summary})
		for _, rule := range lintRules[1:] {
			r.Results = append(r.Results, lintChecks[rule.ID](l).result(rule))
		}
	}
	r.Duration = time.Since(r.Started)
	return r
}

// Bounds that keep Lint linear and its stack shallow on any input.
const (
	lintMaxRefHops  = 32  // $ref to $ref to ...: longer chains are refused
	lintMaxDepth    = 256 // how deep a schema is searched for references
	lintMaxEvidence = 5   // findings shown per rule; Detail counts the rest
)

// linter holds a parsed document and what its checks share.
type linter struct {
	root    map[string]any
	ops     []*lintOp
	summary string // lint-openapi's pass: what the document holds
	// schemas remembers the schema references already checked (nil: sound, or being
	// checked, as a recursive schema refers to itself).
	schemas map[string]error
}

// lintOp is one operation of the document.
type lintOp struct {
	method, path string // "POST", "/v1/invoices"
	id           string // its operationId, when it is a string
	obj          map[string]any
	shared       any // the path item's parameters
}

// String names the operation the way findings do: "POST /v1/invoices (create_invoice)".
func (o *lintOp) String() string {
	if o.id == "" {
		return o.method + " " + o.path
	}
	return o.method + " " + o.path + " (" + o.id + ")"
}

func (o *lintOp) mutating() bool {
	switch o.method {
	case "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}

// lintMethods are the operations a path item may hold, in the order findings list them.
var lintMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// lintParse reads doc as an OpenAPI 3.x document with at least one operation, or says why it
// cannot.
func lintParse(doc []byte) (*linter, string) {
	doc = bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf")) // RFC 8259 lets a parser ignore a BOM
	trimmed := bytes.TrimSpace(doc)
	if len(trimmed) == 0 {
		return nil, "the document is empty"
	}
	if !utf8.Valid(doc) {
		return nil, fmt.Sprintf("the document is not UTF-8 text (invalid byte at %s), and JSON and YAML must be", lintPosition(doc, lintBadUTF8(doc)))
	}
	if !json.Valid(doc) {
		// YAML, or JSON with a mistake: text that starts as JSON does is told what is wrong
		// as JSON, unless it reads as YAML (a flow mapping such as {openapi: 3.1.0}).
		converted, format, err := oadoc.ToJSON(doc, "")
		switch {
		case err == nil && format == oadoc.YAML:
			doc = converted
		case trimmed[0] != '{' && trimmed[0] != '[':
			return nil, err.Error()
		}
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber() // a number too large for a float64 is still JSON
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, "the document is not JSON: " + lintJSONError(doc, err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Sprintf("the document is not one JSON value: more follows the first, which ends at %s", lintPosition(doc, end))
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, "the document is " + lintKind(v) + ", not a JSON object"
	}
	rawVersion, ok := root["openapi"]
	if !ok {
		if s, ok := root["swagger"]; ok {
			return nil, fmt.Sprintf("the document is Swagger (swagger: %s), not OpenAPI 3.x: convert it to OpenAPI 3 first", lintExcerpt(s))
		}
		return nil, "the document has no openapi member: it is not an OpenAPI 3.x document"
	}
	version, ok := rawVersion.(string)
	if !ok {
		return nil, fmt.Sprintf("openapi is %s, not a version string such as \"3.1.0\"", lintKind(rawVersion))
	}
	if len(version) < 3 || !strings.HasPrefix(version, "3.") || version[2] < '0' || version[2] > '9' {
		return nil, fmt.Sprintf("openapi is %q: Lint reads OpenAPI 3.x documents", version)
	}
	rawPaths, ok := root["paths"]
	if !ok {
		return nil, "the document has no paths: it describes no operation"
	}
	paths, ok := rawPaths.(map[string]any)
	if !ok {
		return nil, "paths is " + lintKind(rawPaths) + ", not an object"
	}
	l := &linter{root: root, schemas: map[string]error{}}
	npaths := 0
	for _, p := range sortedKeys(paths) {
		if strings.HasPrefix(p, "x-") {
			continue
		}
		resolved, err := l.resolve(paths[p])
		if err != nil {
			return nil, fmt.Sprintf("path %s: %v", p, err)
		}
		item, ok := resolved.(map[string]any)
		if !ok {
			return nil, fmt.Sprintf("path %s is %s, not a path item object", p, lintKind(resolved))
		}
		found := false
		for _, m := range lintMethods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			obj, ok := raw.(map[string]any)
			if !ok {
				return nil, fmt.Sprintf("%s %s is %s, not an operation object", strings.ToUpper(m), p, lintKind(raw))
			}
			op := &lintOp{method: strings.ToUpper(m), path: p, obj: obj, shared: item["parameters"]}
			op.id, _ = obj["operationId"].(string)
			l.ops = append(l.ops, op)
			found = true
		}
		if found {
			npaths++
		}
	}
	if len(l.ops) == 0 {
		return nil, "the document describes no operation: no path holds a get, put, post, delete, options, head, patch or trace"
	}
	l.summary = fmt.Sprintf("OpenAPI %s, %s in %s", version, plural(len(l.ops), "operation"), plural(npaths, "path"))
	return l, ""
}

func lintJSONError(doc []byte, err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		// Offset counts the bytes read, the offending one included.
		return fmt.Sprintf("%v at %s", syn, lintPosition(doc, syn.Offset-1))
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "it ends in the middle of a value"
	}
	return err.Error()
}

// lintPosition is offset as people count: "line 3, column 14".
func lintPosition(doc []byte, offset int64) string {
	offset = min(max(offset, 0), int64(len(doc)))
	before := doc[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return fmt.Sprintf("line %d, column %d", line, col)
}

func lintBadUTF8(b []byte) int64 {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return int64(i)
		}
		i += n
	}
	return int64(len(b))
}

func (l *linter) resolve(v any) (any, error) { return resolveRef(l.root, v) }

// resolveRef follows v's $ref, when v is a Reference Object, and the references that leads
// to, to what they name in the document root; a cycle, a chain too long or a reference to
// nothing is an error saying so.
func resolveRef(root map[string]any, v any) (any, error) {
	var chain []string
	for {
		m, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		raw, ok := m["$ref"]
		if !ok {
			return v, nil
		}
		ref, ok := raw.(string)
		if !ok {
			return nil, fmt.Errorf("$ref is %s, not a string", lintKind(raw))
		}
		if slices.Contains(chain, ref) {
			return nil, fmt.Errorf("$ref cycle: %s", strings.Join(append(chain, ref), " → "))
		}
		if len(chain) == lintMaxRefHops {
			return nil, fmt.Errorf("$ref %s starts a chain of more than %d references", chain[0], lintMaxRefHops)
		}
		chain = append(chain, ref)
		target, err := lookupRef(root, ref)
		if err != nil {
			return nil, err
		}
		v = target
	}
}

// lookupRef finds what a local reference ("#/components/schemas/Envelope") names in root.
func lookupRef(root map[string]any, ref string) (any, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("$ref %q points outside the document, which is not followed: bundle the document into one file", ref)
	}
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	if frag == "" {
		return root, nil
	}
	if frag[0] != '/' {
		return nil, fmt.Errorf("$ref %q is not a JSON Pointer into the document", ref)
	}
	var v any = root
	for tok := range strings.SplitSeq(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		found := false
		switch x := v.(type) {
		case map[string]any:
			v, found = x[tok]
		case []any:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(x) {
				v, found = x[i], true
			}
		}
		if !found {
			return nil, fmt.Errorf("$ref %q does not resolve: the document has nothing there", ref)
		}
	}
	return v, nil
}

// schema checks that s is a schema, or a reference that resolves to one, and that the
// component references inside it resolve too.
func (l *linter) schema(s any) error {
	if m, ok := s.(map[string]any); ok {
		if raw, ok := m["$ref"]; ok {
			ref, ok := raw.(string)
			if !ok {
				return fmt.Errorf("$ref is %s, not a string", lintKind(raw))
			}
			return l.schemaRef(ref, 0)
		}
	}
	switch s.(type) {
	case map[string]any, bool:
		return l.walkSchema(s, 0)
	}
	return fmt.Errorf("is %s, not a schema", lintKind(s))
}

// schemaRef checks the schema ref names, once per document: a recursive schema meets its own
// reference again while it is being checked, and that is sound.
func (l *linter) schemaRef(ref string, depth int) error {
	if err, seen := l.schemas[ref]; seen {
		return err
	}
	l.schemas[ref] = nil
	target, err := l.resolve(map[string]any{"$ref": ref})
	if err == nil {
		switch target.(type) {
		case map[string]any, bool:
			err = l.walkSchema(target, depth+1)
		default:
			err = fmt.Errorf("$ref %q names %s, not a schema", ref, lintKind(target))
		}
	}
	l.schemas[ref] = err
	return err
}

// lintData are the schema keywords whose values are data, where "$ref" is just a member.
var lintData = map[string]bool{"example": true, "examples": true, "default": true, "const": true, "enum": true}

// walkSchema checks the component references inside a schema. Other local references
// ("#/$defs/...") may be relative to an $id, so they are left alone.
func (l *linter) walkSchema(v any, depth int) error {
	if depth > lintMaxDepth {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok && strings.HasPrefix(ref, "#/components/") {
			if err := l.schemaRef(ref, depth); err != nil {
				return err
			}
		}
		for _, k := range sortedKeys(x) {
			if k == "$ref" || lintData[k] {
				continue
			}
			if err := l.walkSchema(x[k], depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := l.walkSchema(e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// header finds op's header parameter called name (case does not matter in header names),
// the operation's own parameters first, then its path item's. When none is found, unread
// says which parameters could not be resolved, as they might have been it.
func (l *linter) header(op *lintOp, name string) (param map[string]any, unread []string) {
	for _, list := range []any{op.obj["parameters"], op.shared} {
		params, _ := list.([]any)
		for _, raw := range params {
			v, err := l.resolve(raw)
			if err != nil {
				unread = append(unread, err.Error())
				continue
			}
			p, ok := v.(map[string]any)
			if !ok {
				continue
			}
			in, _ := p["in"].(string)
			n, _ := p["name"].(string)
			if strings.EqualFold(in, "header") && strings.EqualFold(n, name) {
				return p, nil
			}
		}
	}
	return nil, unread
}

// lintResponse is one response of an operation, resolved.
type lintResponse struct {
	key string // "404", "4XX", "default"
	obj map[string]any
	err error // it could not be resolved to a response object
}

// class is '4' or '5' for an error status (or range), 'd' for default, and 0 otherwise.
func (r lintResponse) class() byte {
	k := r.key
	switch {
	case k == "default":
		return 'd'
	case len(k) != 3 || (k[0] != '4' && k[0] != '5'):
		return 0
	case strings.EqualFold(k[1:], "XX"), k[1] >= '0' && k[1] <= '9' && k[2] >= '0' && k[2] <= '9':
		return k[0]
	}
	return 0
}

// responses lists op's responses in key order; ok is false when it has no responses object.
func (l *linter) responses(op *lintOp) (rs []lintResponse, ok bool) {
	all, ok := op.obj["responses"].(map[string]any)
	if !ok {
		return nil, false
	}
	for _, k := range sortedKeys(all) {
		if strings.HasPrefix(k, "x-") {
			continue
		}
		r := lintResponse{key: k}
		v, err := l.resolve(all[k])
		if err == nil {
			if r.obj, ok = v.(map[string]any); !ok {
				err = fmt.Errorf("is %s, not a response object", lintKind(v))
			}
		}
		r.err = err
		rs = append(rs, r)
	}
	return rs, true
}

// jsonContent says what is wrong with the body an error response documents, or "".
func (l *linter) jsonContent(resp map[string]any) string {
	raw, ok := resp["content"]
	if !ok {
		return "no content: the error body is undocumented"
	}
	content, ok := raw.(map[string]any)
	if !ok {
		return "content is " + lintKind(raw) + ", not an object"
	}
	var others []string
	found := false
	for _, mt := range sortedKeys(content) {
		if !lintJSONMedia(mt) {
			others = append(others, mt)
			continue
		}
		found = true
		media, ok := content[mt].(map[string]any)
		if !ok {
			return mt + " is " + lintKind(content[mt]) + ", not a media type object"
		}
		s, ok := media["schema"]
		if !ok {
			return mt + " has no schema"
		}
		if err := l.schema(s); err != nil {
			return mt + " schema: " + err.Error()
		}
	}
	switch {
	case found:
		return ""
	case len(others) == 0:
		return "no JSON content: content is empty"
	}
	return "no JSON content, only " + strings.Join(others, ", ")
}

// lintJSONMedia reports whether a media type is JSON: application/json,
// application/problem+json, or any other application/...+json.
func lintJSONMedia(mt string) bool {
	mt, _, _ = strings.Cut(mt, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// lintStrings reads a code list: a non-empty array of non-empty strings, or what is wrong
// with it.
func lintStrings(v any) ([]string, string) {
	arr, ok := v.([]any)
	if !ok {
		return nil, "is " + lintKind(v) + ", not an array"
	}
	if len(arr) == 0 {
		return nil, "is empty"
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok || s == "" {
			return nil, "holds " + lintKind(e) + ", not only codes (non-empty strings)"
		}
		out = append(out, s)
	}
	return out, ""
}

// lintVerdict is what a check found: the problems, else what it covered, else why there was
// nothing to check.
type lintVerdict struct {
	findings []Exchange
	covered  string
	skip     string
}

// add records the problems of where (an operation, or a member of the document): the first
// few, and how many more.
func (v *lintVerdict) add(where fmt.Stringer, what ...string) {
	const most = 3
	if len(what) == 0 {
		return
	}
	s := strings.Join(what[:min(len(what), most)], "; ")
	if len(what) > most {
		s += fmt.Sprintf(" (and %d more)", len(what)-most)
	}
	v.findings = append(v.findings, Exchange{Request: where.String(), Response: s})
}

func (v lintVerdict) result(rule Rule) Result {
	switch {
	case len(v.findings) > 0:
		shown := v.findings[:min(len(v.findings), lintMaxEvidence)]
		parts := make([]string, len(shown))
		for i, f := range shown {
			parts[i] = f.Request + ": " + f.Response
		}
		detail := strings.Join(parts, "; ")
		if n := len(v.findings) - len(shown); n > 0 {
			detail += fmt.Sprintf("; and %d more", n)
		}
		return Result{Rule: rule, Outcome: Fail, Detail: detail, Evidence: slices.Clone(shown)}
	case v.skip != "":
		return Result{Rule: rule, Outcome: Skip, Detail: v.skip}
	}
	return Result{Rule: rule, Outcome: Pass, Detail: v.covered}
}

// lintMember names a member of the document in findings.
type lintMember string

func (m lintMember) String() string { return string(m) }

func (l *linter) checkOperationIDs() lintVerdict {
	var v lintVerdict
	first := map[string]*lintOp{}
	for _, op := range l.ops {
		raw, ok := op.obj["operationId"]
		id, isString := raw.(string)
		switch {
		case !ok:
			v.add(op, "no operationId")
		case !isString:
			v.add(op, "operationId is "+lintKind(raw)+", not a string")
		case strings.TrimSpace(id) == "":
			v.add(op, "operationId is empty")
		case first[id] != nil:
			v.add(op, fmt.Sprintf("operationId %q is also %s's", id, first[id].method+" "+first[id].path))
		default:
			first[id] = op
		}
	}
	v.covered = plural(len(l.ops), "operation") + ", each with its own operationId"
	return v
}

func (l *linter) checkErrorResponses() lintVerdict {
	var v lintVerdict
	n := 0
	for _, op := range l.ops {
		rs, ok := l.responses(op)
		if !ok {
			v.add(op, "no responses object")
			continue
		}
		var probs []string
		var has4, has5 bool
		for _, r := range rs {
			c := r.class()
			if c == 0 {
				continue
			}
			has4 = has4 || c == '4'
			has5 = has5 || c == '5' || c == 'd'
			n++
			if r.err != nil {
				probs = append(probs, "response "+r.key+": "+r.err.Error())
			} else if p := l.jsonContent(r.obj); p != "" {
				probs = append(probs, "response "+r.key+": "+p)
			}
		}
		if !has4 {
			probs = append(probs, "no 4xx response")
		}
		if !has5 {
			probs = append(probs, "no 5xx or default response")
		}
		v.add(op, probs...)
	}
	v.covered = fmt.Sprintf("%s, %s with a JSON schema", plural(len(l.ops), "operation"), plural(n, "error response"))
	return v
}

func (l *linter) checkErrorCodes() lintVerdict {
	var v lintVerdict
	var catalog map[string]any
	if raw, ok := l.root["x-agent-errors"]; ok {
		if catalog, ok = raw.(map[string]any); !ok {
			v.add(lintMember("x-agent-errors"), "is "+lintKind(raw)+", not an object of codes")
		}
	}
	uncataloged := func(codes []string) []string {
		if catalog == nil {
			return nil
		}
		var out []string
		for _, c := range codes {
			if _, ok := catalog[c]; !ok && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
		return out
	}
	for _, op := range l.ops {
		var probs []string
		raw, ok := op.obj["x-agent-error-codes"]
		var codes []string
		switch {
		case !ok:
			probs = append(probs, "no x-agent-error-codes")
		default:
			var p string
			if codes, p = lintStrings(raw); p != "" {
				probs = append(probs, "x-agent-error-codes "+p)
			} else if missing := uncataloged(codes); len(missing) > 0 {
				probs = append(probs, "x-agent-error-codes lists "+lintList(missing)+", not in x-agent-errors")
			}
		}
		rs, _ := l.responses(op)
		listed := map[string]bool{}
		everyListed, errorResponses := true, 0
		for _, r := range rs {
			if r.class() != 0 {
				errorResponses++
			}
			if r.err != nil {
				everyListed = everyListed && r.class() == 0
				continue
			}
			raw, ok := r.obj["x-agent-error-codes"]
			if !ok {
				everyListed = everyListed && r.class() == 0
				continue
			}
			rcodes, p := lintStrings(raw)
			if p != "" {
				probs = append(probs, "response "+r.key+": x-agent-error-codes "+p)
				everyListed = false
				continue
			}
			var foreign, elsewhere []string
			for _, c := range rcodes {
				listed[c] = true
				if codes != nil && !slices.Contains(codes, c) {
					foreign = append(foreign, c)
				}
				if entry, ok := catalog[c].(map[string]any); ok {
					if s, ok := lintStatus(entry["status"]); ok && !lintStatusFits(r.key, s) {
						elsewhere = append(elsewhere, fmt.Sprintf("%s (catalog status %d)", c, s))
					}
				}
			}
			if len(foreign) > 0 {
				probs = append(probs, "response "+r.key+" lists "+lintList(foreign)+", which the operation's x-agent-error-codes does not")
			}
			if missing := uncataloged(rcodes); len(missing) > 0 {
				probs = append(probs, "response "+r.key+" lists "+lintList(missing)+", not in x-agent-errors")
			}
			if len(elsewhere) > 0 {
				probs = append(probs, "response "+r.key+" lists "+strings.Join(elsewhere, ", "))
			}
		}
		// Responses that each list their codes must list them all between them: the codes
		// an agent reads per status are those it may meet.
		if codes != nil && everyListed && errorResponses > 0 {
			var unlisted []string
			for _, c := range codes {
				if !listed[c] && !slices.Contains(unlisted, c) {
					unlisted = append(unlisted, c)
				}
			}
			if len(unlisted) > 0 {
				probs = append(probs, "x-agent-error-codes lists "+lintList(unlisted)+", which no response lists")
			}
		}
		v.add(op, probs...)
	}
	v.covered = plural(len(l.ops), "operation")
	if catalog != nil {
		v.covered += ", their codes among the " + plural(len(catalog), "code") + " of x-agent-errors"
	} else {
		v.covered += "; the document has no x-agent-errors catalog to check the codes against"
	}
	return v
}

func (l *linter) checkRetryMarkers() lintVerdict {
	var v lintVerdict
	n := 0
	for _, op := range l.ops {
		if op.mutating() {
			n++
		}
		var probs []string
		for _, k := range []string{"x-ax-retryable", "x-ax-idempotent"} {
			raw, ok := op.obj[k]
			if _, isBool := raw.(bool); !ok && op.mutating() {
				probs = append(probs, "no "+k)
			} else if ok && !isBool {
				probs = append(probs, k+" is "+lintKind(raw)+", not a boolean")
			}
		}
		v.add(op, probs...)
	}
	if n == 0 {
		v.skip = "no POST, PUT, PATCH or DELETE operation"
	}
	v.covered = plural(n, "POST, PUT, PATCH or DELETE operation")
	return v
}

// checkIdempotencyKey reads how each operation takes a key as the client and the probe do
// (oadoc.KeyMode): an Idempotency-Key header parameter says it as well as x-idempotency-key.
func (l *linter) checkIdempotencyKey() lintVerdict {
	var v lintVerdict
	n, required := 0, 0
	for _, op := range l.ops {
		ext, stated := op.obj["x-idempotency-key"]
		extMode, ok := oadoc.KeyExtension(ext)
		if stated && !ok {
			v.add(op, fmt.Sprintf("x-idempotency-key is %s, not \"optional\", \"required\" or a boolean", lintExcerpt(ext)))
		}
		key, unread := l.header(op, oadoc.KeyHeaderName)
		why := ""
		if len(unread) > 0 {
			why = " (unresolved: " + strings.Join(unread, "; ") + ")"
		}
		keyRequired := key != nil && key["required"] == true
		mode := oadoc.KeyMode(ext, key != nil, keyRequired)
		switch {
		case extMode == oadoc.KeyRequired && key == nil:
			v.add(op, "x-idempotency-key is required but no Idempotency-Key header parameter is declared"+why)
		case extMode == oadoc.KeyRequired && !keyRequired:
			v.add(op, "x-idempotency-key is required but the Idempotency-Key header parameter is not marked required")
		case mode == oadoc.KeyNone && (op.method == "POST" || op.method == "PATCH") && op.obj["x-ax-idempotent"] == true:
			v.add(op, "x-ax-idempotent is true but neither an Idempotency-Key header parameter nor x-idempotency-key is declared"+why)
			n++
			continue
		}
		if mode != oadoc.KeyNone {
			n++
			if mode == oadoc.KeyRequired {
				required++
			}
		}
	}
	if n == 0 {
		v.skip = "no operation accepts an Idempotency-Key (header parameter or x-idempotency-key), and no POST or PATCH says x-ax-idempotent: true"
	}
	v.covered = fmt.Sprintf("%s accepting a key (%d requiring it)", plural(n, "operation"), required)
	return v
}

func (l *linter) checkConfirmation() lintVerdict {
	var v lintVerdict
	confirms, deletes := 0, 0
	for _, op := range l.ops {
		raw, stated := op.obj["x-confirmation-required"]
		if op.method == "DELETE" {
			deletes++
		}
		if _, isBool := raw.(bool); stated && !isBool {
			v.add(op, "x-confirmation-required is "+lintKind(raw)+", not a boolean")
			continue
		}
		if !stated {
			if op.method == "DELETE" {
				v.add(op, "a DELETE that does not state x-confirmation-required")
			}
			continue
		}
		if raw != true {
			continue
		}
		confirms++
		var probs []string
		if p := l.confirmationResponse(op); p != "" {
			probs = append(probs, p)
		}
		if token, unread := l.header(op, "X-Confirmation-Token"); token == nil {
			p := "no X-Confirmation-Token header parameter"
			if len(unread) > 0 {
				p += " (unresolved: " + strings.Join(unread, "; ") + ")"
			}
			probs = append(probs, p)
		}
		v.add(op, probs...)
	}
	if confirms == 0 && deletes == 0 {
		v.skip = "no operation requires confirmation, and there is no DELETE"
	}
	v.covered = fmt.Sprintf("%s requiring confirmation, %s", plural(confirms, "operation"), plural(deletes, "DELETE"))
	return v
}

// confirmationResponse says what is wrong with the 409 a confirmation-gated operation
// answers without a token, or "". The codes are the response's own, else the operation's.
func (l *linter) confirmationResponse(op *lintOp) string {
	rs, _ := l.responses(op)
	for _, r := range rs {
		if r.key != "409" {
			continue
		}
		if r.err != nil {
			return "response 409: " + r.err.Error()
		}
		raw, ok := r.obj["x-agent-error-codes"]
		if !ok {
			raw = op.obj["x-agent-error-codes"]
		}
		if codes, _ := lintStrings(raw); !slices.Contains(codes, "confirmation_required") {
			return "the 409 response does not list confirmation_required"
		}
		return ""
	}
	return "no 409 response for confirmation_required"
}

func (l *linter) checkRetryAfter() lintVerdict {
	var v lintVerdict
	n := 0
	for _, op := range l.ops {
		rs, _ := l.responses(op)
		var probs []string
		for _, r := range rs {
			if (r.key != "429" && r.key != "503") || r.err != nil {
				continue
			}
			n++
			if p := l.retryAfter(r.obj); p != "" {
				probs = append(probs, "response "+r.key+" "+p)
			}
		}
		v.add(op, probs...)
	}
	if n == 0 {
		v.skip = "no 429 or 503 response is documented"
	}
	v.covered = plural(n, "response") + " with status 429 or 503"
	return v
}

// retryAfter says what is wrong with a response's Retry-After header, or "".
func (l *linter) retryAfter(resp map[string]any) string {
	headers, _ := resp["headers"].(map[string]any)
	for _, name := range sortedKeys(headers) {
		if !strings.EqualFold(name, "Retry-After") {
			continue
		}
		h, err := l.resolve(headers[name])
		if err != nil {
			return "Retry-After: " + err.Error()
		}
		if _, ok := h.(map[string]any); !ok {
			return "Retry-After is " + lintKind(h) + ", not a header object"
		}
		return ""
	}
	return "does not document the Retry-After header"
}

// lintStatus reads a catalog entry's status: an integer.
func lintStatus(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	s, err := strconv.Atoi(n.String())
	return s, err == nil
}

// lintStatusFits reports whether a code whose status is s may be listed under the response
// key: its status, its range ("4XX"), or default.
func lintStatusFits(key string, s int) bool {
	r := lintResponse{key: key}
	switch r.class() {
	case 0, 'd':
		return true
	}
	if strings.EqualFold(key[1:], "XX") {
		return s/100 == int(key[0]-'0')
	}
	return strconv.Itoa(s) == key
}

// lintKind names the JSON type of v for a finding.
func lintKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		if x == "" {
			return "an empty string"
		}
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// lintExcerpt shows a scalar as JSON, and anything else by its kind.
func lintExcerpt(v any) string {
	switch v.(type) {
	case string, json.Number, bool, nil:
		b, _ := json.Marshal(v)
		if len(b) <= 40 {
			return string(b)
		}
		n := 37
		for n > 0 && !utf8.Valid(b[:n]) {
			n--
		}
		return string(b[:n]) + "..."
	}
	return lintKind(v)
}

func lintList(codes []string) string {
	const most = 8
	if len(codes) > most {
		return strings.Join(codes[:most], ", ") + fmt.Sprintf(" and %d more", len(codes)-most)
	}
	return strings.Join(codes, ", ")
}
