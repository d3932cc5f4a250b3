package rewrite

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/codename"
	"github.com/remedy-go/remedy/internal/jsonscan"
	"github.com/remedy-go/remedy/internal/jsonw"
	"github.com/remedy-go/remedy/internal/tape"
)

// maxRewriteIssues bounds the issues Default repairs. Each repair edits the whole
// document, so the work grows with issues times arguments; a failure listing more issues than
// this rejects the request as a whole rather than naming fixes.
const maxRewriteIssues = 256

// The rules of Default, as Change.Rule names them.
const (
	ruleSuggested     = "suggested_value"
	ruleOnlyAllowed   = "only_allowed_value"
	ruleEnumMatch     = "enum_match"
	ruleCoerce        = "coerce"
	ruleDefault       = "default"
	ruleDropUnknown   = "drop_unknown"
	ruleClamp         = "clamp"
	ruleTruncate      = "truncate"
	ruleExample       = "example"
	ruleChooseAllowed = "choose_allowed"
)

// lossyRule reports whether a rule may change what the call means: its changes are proposals.
func lossyRule(rule string) bool {
	switch rule {
	case ruleDropUnknown, ruleClamp, ruleTruncate, ruleExample, ruleChooseAllowed:
		return true
	}
	return false
}

// rewriteDefault is Default: every path the issues name must be repaired by one rule,
// or nothing is returned. A partial repair would only earn the same refusal one attempt later,
// with a new idempotency key spent on it.
func rewriteDefault(r *Request) json.RawMessage {
	if r == nil {
		return nil
	}
	// A rewriter that gives up has changed nothing, whatever ran before it; one that repairs
	// was blocked by nothing.
	r.Changes, r.Blocked = nil, nil
	if r.Envelope == nil || len(r.Envelope.Issues) == 0 {
		r.Blocked = []Blocked{{Why: whyNoIssues}}
		return nil
	}
	if len(r.Envelope.Issues) > maxRewriteIssues {
		r.Blocked = []Blocked{{Why: whyTooManyIssues}}
		return nil
	}
	args := bytes.TrimSpace(r.Args)
	// The strict validator also refuses duplicate keys: gjson would edit the first occurrence
	// while many servers read the last, so a repair could not be trusted to land.
	if len(args) == 0 || args[0] != '{' || !tape.Valid(string(args)) {
		r.Blocked = []Blocked{{Why: whyArgsNotObject}}
		return nil
	}
	e := r.Envelope
	doc := string(args)
	op := readOperationSchema(r.Schema)
	probs := mergeIssues(e.Issues, placeIssues(e.Issues, op, doc))
	env := readEnvelopeJSON(e, len(probs))
	env.op, env.opWork = op, maxMapWork
	changes := make([]Change, 0, len(probs))
	var blocked []Blocked
	for i := range probs {
		p := &probs[i]
		if p.lost {
			blocked = append(blocked, p.blocked(e.Issues, p.unplaced))
			continue
		}
		if covered(changes, p.path) {
			// Validators report one value several times (the object and a member of it, say);
			// once a repair has replaced or removed it, the complaints about the old one are moot.
			continue
		}
		next, made, why := repairProblem(doc, &env, p, changes)
		if why != "" {
			// The other problems are still tried, so that the account names every one that
			// blocks the repair, not only the first.
			blocked = append(blocked, p.blocked(e.Issues, why))
			continue
		}
		doc, changes = next, made
	}
	if blocked != nil {
		r.Blocked = blocked
		return nil
	}
	if doc == "" || doc[0] != '{' || !tape.Valid(doc) {
		r.Blocked = []Blocked{{Why: whyArgsNotObject}}
		return nil
	}
	out := jsonw.Compact(doc)
	if bytes.Equal(out, jsonw.Compact(string(args))) {
		// Nothing changed: sending it again would fail the same way.
		r.Blocked = []Blocked{{Why: whyUnchanged}}
		return nil
	}
	r.Changes = changes
	return out
}

// Why Default gives up, besides the reasons of placing an issue (see placeIssues), as
// Blocked.Why says it.
const (
	whyNoIssues      = "the failure names no field to repair"
	whyTooManyIssues = "the failure lists more issues than a repair is tried for"
	whyArgsNotObject = "the arguments are not one JSON object with each key once"
	whyUnchanged     = "the repair leaves the arguments as they were"
	whyNotInArgs     = "the path is not in the arguments"
	whyNoFacts       = "no allowed value or type is known"
	whyNoDefault     = "the value is missing, and no default is known"
	whyNotAdditional = "the property refused as unknown is not in the arguments, or the schema declares it"
	whyNoRule        = "no rule repairs the value with what is known"
)

// blocked is p's entry in Request.Blocked, its field and code its first issue's.
func (p *problem) blocked(issues []remedy.Issue, why string) Blocked {
	is := &issues[p.first]
	return Blocked{Path: p.path, Field: is.Field, Code: is.Code, Why: why}
}

// covered reports whether pointer is the path of one of changes or lies inside one of them.
func covered(changes []Change, pointer string) bool {
	for i := range changes {
		c := changes[i].Path
		if pointer == c || strings.HasPrefix(pointer, c+"/") {
			return true
		}
	}
	return false
}

// problem is everything the issues say about one path: issues with the same Path are one
// problem, repaired once. Validators and envelopes split one complaint across several issues
// (an issue without values in issues[], and the agent error spec's top-level field with its
// suggested_value), and repairing each alone would give up on the first before the second
// had its say.
type problem struct {
	path       string
	depth      int
	first      int            // the index of its first issue
	unplaced   string         // why the issues have no path (see placement)
	lost       bool           // they name a field that could not be placed: no rule acts for them
	suggested  string         // the first valid SuggestedValue, compact; "" when none
	allowed    []string       // the first list of AllowedValues that are all valid, compact
	expected   []gjson.Result // the issues' Expected that are schema objects
	typ        string         // the first Expected that is a bare type name, normalized
	additional bool           // a code says the property is not accepted
	required   bool           // a code says the value is missing
	names      []string       // the names the messages quote, each once
	why        string         // the first issue's message, or its code when it has none
	whys       []string       // the other issues' ones, each once
}

// tooManyIssues is the code of the issue that ends a list a server cut (the reference server
// lists at most 100): repairing the issues listed and sending again learns the rest.
const tooManyIssues = "too_many_issues"

// mergeIssues groups the issues by path, shallowest first and otherwise in the order the
// issues name them, so that a value is repaired before anything inside it. at says where each
// issue lands (see placeIssues); nil: at its Path. Issues whose field could not be placed are
// grouped by the field as written.
func mergeIssues(issues []remedy.Issue, at []placement) []problem {
	probs := make([]problem, 0, len(issues))
	for i := range issues {
		is := &issues[i]
		if is.Code == tooManyIssues {
			continue // it counts the issues left out of a cut list: it names nothing to repair
		}
		pl := placement{path: is.Path}
		if at != nil {
			pl = at[i]
		}
		j := -1
		for k := range probs {
			if p := &probs[k]; p.path == pl.path && p.lost == pl.lost && (!pl.lost || issues[p.first].Field == is.Field) {
				j = k
				break
			}
		}
		if j < 0 {
			probs = append(probs, problem{path: pl.path, depth: strings.Count(pl.path, "/"), first: i, lost: pl.lost})
			j = len(probs) - 1
		}
		p := &probs[j]
		if p.unplaced == "" {
			p.unplaced = pl.why
		}
		p.add(is)
	}
	if byDepth := func(a, b problem) int { return cmp.Compare(a.depth, b.depth) }; !slices.IsSortedFunc(probs, byDepth) {
		slices.SortStableFunc(probs, byDepth)
	}
	return probs
}

func (p *problem) add(is *remedy.Issue) {
	if p.suggested == "" && len(is.SuggestedValue) > 0 && tape.Valid(string(is.SuggestedValue)) {
		p.suggested = string(jsonw.Compact(string(is.SuggestedValue)))
	}
	if p.allowed == nil && len(is.AllowedValues) > 0 {
		p.allowed = compactAll(is.AllowedValues)
	}
	if len(is.Expected) > 0 && tape.Valid(string(is.Expected)) {
		switch x := gjson.Parse(string(is.Expected)); {
		case x.IsObject():
			p.expected = append(p.expected, x)
		case x.Type == gjson.String && p.typ == "":
			p.typ = normType(x.Str)
		}
	}
	var buf [64]byte
	code, _ := codename.Norm(&buf, is.Code) // the form wellKnownCodes is keyed by
	p.additional = p.additional || additionalCodes[code]
	p.required = p.required || requiredCodes[code]
	for _, n := range quotedNames(is.Message) {
		if !slices.Contains(p.names, n) {
			p.names = append(p.names, n)
		}
	}
	why := is.Message
	if why == "" {
		why = is.Code
	}
	switch {
	case why == "" || why == p.why:
	case p.why == "":
		p.why = why
	case !slices.Contains(p.whys, why):
		p.whys = append(p.whys, why)
	}
}

// distinct removes the values listed twice: ["usd", "usd"] allows one value, not a choice.
func distinct(vals []string) []string {
	for i := 1; i < len(vals); i++ {
		if slices.Contains(vals[:i], vals[i]) {
			out := slices.Clone(vals[:i])
			for _, v := range vals[i+1:] {
				if !slices.Contains(out, v) {
					out = append(out, v)
				}
			}
			return out
		}
	}
	return vals
}

// compactAll is the values compacted, nil when one is not valid JSON: a list with a value
// that cannot be read cannot be counted on to say which values are allowed.
func compactAll(vals []json.RawMessage) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		if len(v) == 0 || !tape.Valid(string(v)) {
			return nil
		}
		out[i] = string(jsonw.Compact(string(v)))
	}
	return out
}

// envelopeJSON is what the rules read besides the issues, validated once: the envelope's
// schema and example, and the operation's schema.
type envelopeJSON struct {
	schema     gjson.Result // the envelope's Schema when it is an object, else absent
	op         gjson.Result // the operation's schema (Request.Schema) when it is an object
	opWork     int          // what is left of the work of reading op (see operationParts)
	objectRoot bool         // the Schema declares properties: it is an object's, not a field's
	example    gjson.Result // the example arguments when they are an object, else absent
	paths      int          // how many paths the issues name
}

// readEnvelopeJSON validates the envelope's schema and example once per rewrite rather than once
// per issue: both can be large, and a hand-built envelope can hold anything.
func readEnvelopeJSON(e *remedy.Envelope, paths int) envelopeJSON {
	env := envelopeJSON{paths: paths}
	if len(e.Schema) > 0 && tape.Valid(string(e.Schema)) {
		if s := gjson.Parse(string(e.Schema)); s.IsObject() {
			env.schema = s
			env.objectRoot = env.hasProperties(s)
		}
	}
	if len(e.ExampleRequest) > 0 && tape.Valid(string(e.ExampleRequest)) {
		ex := gjson.Parse(string(e.ExampleRequest))
		// An example of a whole HTTP request ({"method", "path", "body"}) is read from its
		// body: the arguments are the body.
		if body := ex.Get("body"); body.IsObject() &&
			(ex.Get("method").Exists() || ex.Get("path").Exists() || ex.Get("url").Exists()) {
			ex = body
		}
		if ex.IsObject() {
			env.example = ex
		}
	}
	return env
}

// exampleAt is the example's value at pointer, absent when there is none.
func (env *envelopeJSON) exampleAt(pointer string) gjson.Result {
	if !env.example.Exists() {
		return gjson.Result{}
	}
	_, v, _ := sjsonPath(env.example.Raw, pointer)
	return v
}

// repairProblem applies the first rule that repairs p, every lossless rule before any lossy
// one, and returns the new document and changes with the changes it made appended; or, when
// no rule repairs p, why.
func repairProblem(doc string, env *envelopeJSON, p *problem, changes []Change) (string, []Change, string) {
	var (
		spath string // p.path for sjson
		cur   gjson.Result
	)
	if p.path == "" {
		cur = gjson.Parse(doc)
	} else {
		var ok bool
		if spath, cur, ok = sjsonPath(doc, p.path); !ok {
			return "", nil, whyNotInArgs // nothing can be set or removed there
		}
	}
	schemas := env.fieldSchemas(p.expected, p.path)
	// What the server says comes first; the operation's schema completes it (see withOperation).
	server := len(schemas)
	schemas = env.withOperation(schemas, p.path, p.allowed != nil)
	allowed := p.allowed
	if allowed == nil {
		allowed = env.schemaAllowed(schemas)
	}
	allowed = distinct(allowed)
	typ := p.typ
	if st := schemaType(schemas); typ == "" || typ == "number" && st == "integer" {
		typ = st
	}
	if typ == "" {
		typ = allowedType(allowed)
	}
	set := func(raw, rule string) (string, []Change, bool) {
		out, ok := setAt(doc, p.path, spath, cur, raw)
		if !ok {
			return "", nil, false
		}
		return out, append(changes, p.change(rule, cur, raw)), true
	}

	// Lossless: what the server states, and what the value already means.
	if p.suggested != "" {
		if out, cs, ok := set(p.suggested, ruleSuggested); ok {
			// Another number in place of the caller's is another amount, however the server
			// came by it (a bound it enforces, the nearest valid one): a proposal.
			if sv := gjson.Parse(p.suggested); cur.Type == gjson.Number && sv.Type == gjson.Number && cur.Num != sv.Num {
				cs[len(cs)-1].Lossy = true
			}
			return out, cs, ""
		}
	}
	if len(allowed) == 1 {
		if out, cs, ok := set(allowed[0], ruleOnlyAllowed); ok {
			return out, cs, ""
		}
	}
	if v := enumMatch(cur, allowed); v != "" {
		if out, cs, ok := set(v, ruleEnumMatch); ok {
			return out, cs, ""
		}
	}
	if v := coerce(cur, typ, allowed); v != "" {
		if out, cs, ok := set(v, ruleCoerce); ok {
			return out, cs, ""
		}
	}
	// A value the server complains about and the arguments lack is missing, whatever the
	// code calls it, unless the complaint is that it should not be there.
	if p.required || !cur.Exists() && !p.additional {
		if out, c, ok := setDefault(doc, env, p, cur, schemas); ok {
			return out, append(changes, c), ""
		}
	}

	// Lossy: proposals, for the Policy to approve.
	if p.additional {
		if out, cs, ok := deleteAdditional(doc, env, p, cur, changes); ok {
			return out, cs, ""
		}
	}
	if v, rule, _ := clamp(cur, schemas[:server], typ); v != "" {
		if out, cs, ok := set(v, rule); ok {
			return out, cs, ""
		}
	} else if len(schemas) > server {
		// The bound is the schema's, which the server's message may not state: the proposal
		// says it.
		if v, rule, side := clamp(cur, schemas, typ); v != "" {
			if out, cs, ok := set(v, rule); ok {
				bound := v
				if rule == ruleTruncate {
					bound = keyword(schemas, "maxLength").Raw + " characters"
				}
				cs[len(cs)-1].Why += "; the schema allows " + side + bound
				return out, cs, ""
			}
		}
	}
	// A whole example request is no repair for the whole arguments: it would discard every
	// value the caller chose. Nor is an example value outside the allowed values.
	if p.path != "" {
		if v := env.exampleAt(p.path); v.Exists() && (allowed == nil || inAllowed(string(jsonw.Compact(v.Raw)), allowed)) {
			if out, cs, ok := set(v.Raw, ruleExample); ok {
				return out, cs, ""
			}
		}
	}
	if v := chooseAllowed(cur, allowed, schemas); v != "" {
		if out, cs, ok := set(v, ruleChooseAllowed); ok {
			return out, cs, ""
		}
	}
	return "", nil, p.stuck(cur, allowed, typ, schemas)
}

// stuck says why no rule repaired p, from what is known at its path.
func (p *problem) stuck(cur gjson.Result, allowed []string, typ string, schemas []gjson.Result) string {
	switch {
	case p.path == "" && p.unplaced != "":
		return p.unplaced
	case p.path == "":
		return whyNoField
	case p.additional:
		return whyNotAdditional
	case !cur.Exists() && p.unplaced != "":
		return p.unplaced // a path the server wrote in another form, that names no one place
	case !cur.Exists() || p.required && cur.Type == gjson.Null:
		return whyNoDefault
	case allowed == nil && typ == "" && !bounded(schemas):
		return whyNoFacts
	case typ != "" && !isOfType(cur, typ):
		return "the value cannot be converted to " + typ + " without loss"
	}
	return whyNoRule
}

// bounded reports whether the schemas state a bound or a length Default reads.
func bounded(schemas []gjson.Result) bool {
	for _, k := range [...]string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "maxLength"} {
		if keyword(schemas, k).Exists() {
			return true
		}
	}
	return false
}

// change records a rule's edit at p's path: old is the value there before (absent when the
// edit added it), raw the value after ("" when the edit removed it).
func (p *problem) change(rule string, old gjson.Result, raw string) Change {
	return p.changeAt(p.path, rule, old, raw)
}

func (p *problem) changeAt(pointer, rule string, old gjson.Result, raw string) Change {
	c := Change{Path: pointer, Rule: rule, Lossy: lossyRule(rule), Why: p.why}
	if len(p.whys) > 0 {
		c.Why = p.why + "; " + strings.Join(p.whys, "; ")
	}
	if old.Exists() {
		c.Old = jsonw.Compact(old.Raw)
	}
	if raw != "" {
		c.New = jsonw.Compact(raw)
	}
	return c
}

// setValue sets raw JSON at pointer. It fails when raw is not valid JSON, when the pointer has
// no sjson path, and when the value is already there: a rule that changes nothing has not
// repaired anything, and the next rule may.
func setValue(doc, pointer, raw string) (string, bool) {
	var (
		path string
		cur  gjson.Result
	)
	if pointer != "" {
		var ok bool
		if path, cur, ok = sjsonPath(doc, pointer); !ok {
			return "", false
		}
	}
	return setAt(doc, pointer, path, cur, raw)
}

// setAt is setValue once the pointer is resolved: path is its sjson path, cur the value there.
func setAt(doc, pointer, path string, cur gjson.Result, raw string) (string, bool) {
	if !tape.Valid(raw) {
		return "", false
	}
	v := string(jsonw.Compact(raw))
	if pointer == "" {
		// Replacing the whole arguments is what the server asked for, but only an object can
		// stand for them.
		if v[0] != '{' || sameText(doc, v) {
			return "", false
		}
		return v, true
	}
	if cur.Exists() && sameText(cur.Raw, v) {
		return "", false
	}
	out, err := sjson.SetRaw(doc, path, v)
	if err != nil {
		return "", false
	}
	return out, true
}

// sameText reports whether JSON text, compacted, is v.
func sameText(raw, v string) bool {
	if !jsonscan.HasControlOrSpace(raw) {
		return raw == v
	}
	return string(jsonw.Compact(raw)) == v
}

// enumMatch is the one allowed string that the value, a string, spells with another case or
// with space around it ("EUR" for "eur", " usd " for "usd"). None when the value is allowed as
// it is (the complaint is about something else), or when it matches several allowed values
// ("Eur" when both "eur" and "EUR" are allowed): then which one was meant is a guess.
func enumMatch(cur gjson.Result, allowed []string) string {
	if cur.Type != gjson.String {
		return ""
	}
	want := strings.TrimSpace(cur.Str)
	if want == "" {
		return ""
	}
	match := ""
	for _, a := range allowed {
		if a[0] != '"' {
			continue
		}
		s := gjson.Parse(a).Str
		if s == cur.Str {
			return ""
		}
		if strings.EqualFold(strings.TrimSpace(s), want) {
			if match != "" {
				return ""
			}
			match = a
		}
	}
	return match
}

// chooseAllowed picks one of several allowed values for a value that is none of them: the
// schema's default when it is one of them, else the first that is not null. A value that is
// missing (or null) gets no choice: the caller has said nothing a choice could stand for, and the
// schema's default, were there one, would have been set already.
func chooseAllowed(cur gjson.Result, allowed []string, schemas []gjson.Result) string {
	if len(allowed) < 2 || !cur.Exists() || cur.Type == gjson.Null || inAllowed(string(jsonw.Compact(cur.Raw)), allowed) {
		return ""
	}
	if d := keyword(schemas, "default"); d.Exists() && d.Type != gjson.Null {
		def := string(jsonw.Compact(d.Raw))
		for _, a := range allowed {
			if sameValue(def, a) {
				return a
			}
		}
	}
	for _, a := range allowed {
		if a != "null" {
			return a
		}
	}
	return ""
}

// inAllowed reports whether raw, compact JSON, is one of the allowed values.
func inAllowed(raw string, allowed []string) bool {
	for _, a := range allowed {
		if sameValue(raw, a) {
			return true
		}
	}
	return false
}

// sameValue compares two compact JSON texts, numbers by value (1.0 is 1).
func sameValue(a, b string) bool {
	if a == b {
		return true
	}
	if a == "" || b == "" || !numberStart(a[0]) || !numberStart(b[0]) {
		return false
	}
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	return errA == nil && errB == nil && x == y
}

func numberStart(c byte) bool { return c == '-' || c >= '0' && c <= '9' }

// Codes, as codename.Norm spells them, that say a property is not accepted at all.
var additionalCodes = map[string]bool{
	"additionalproperties": true, "additionalproperty": true,
	"unknownfield": true, "unknownparameter": true, "unknownproperty": true, "unknownkey": true,
	"unrecognizedkeys": true, "unrecognizedkey": true, "unrecognizedfield": true,
	"extraforbidden": true, "parameterunknown": true, // pydantic, Stripe
}

// Codes, as codename.Norm spells them, that say a required field is missing.
var requiredCodes = map[string]bool{
	"required": true, "missing": true, "missingfield": true, "missingproperty": true,
	"missingparameter": true, "parametermissing": true, "missingrequiredfield": true,
	"missingrequiredparameter": true, "fieldrequired": true, "valuerequired": true,
	"fieldvaluerequired": true, "valueerrormissing": true, // Kubernetes, pydantic v1
}

// deleteAdditional removes a property the server does not accept. Validators disagree on what
// the path names: the property itself (pydantic, Stripe), or the object holding it with the
// names in the message (zod's "Unrecognized key(s) in object: 'a', 'b'", JSON Schema
// validators). When the path holds an object containing names quoted in the messages, those
// are removed; otherwise the path's own property is, unless the envelope's schema declares
// it, which would make the path the parent and removing it a loss rather than a repair.
func deleteAdditional(doc string, env *envelopeJSON, p *problem, cur gjson.Result, changes []Change) (string, []Change, bool) {
	if !cur.Exists() {
		return "", nil, false
	}
	segs, _ := pointerSegments(p.path)
	last := ""
	if len(segs) > 0 {
		last = segs[len(segs)-1]
	}
	if cur.IsObject() && len(p.names) > 0 && !slices.Contains(p.names, last) {
		// The path is the object holding the names: remove those it holds, and never the
		// object itself.
		out, before := doc, len(changes)
		for _, n := range p.names {
			member := appendPointer(p.path, n)
			path, v, ok := sjsonPath(out, member)
			if !ok || !v.Exists() {
				continue
			}
			next, err := sjson.Delete(out, path)
			if err != nil {
				return "", nil, false
			}
			out = next
			changes = append(changes, p.changeAt(member, ruleDropUnknown, v, ""))
		}
		return out, changes, len(changes) > before
	}
	if _, _, declared := env.navigate(env.schema, segs); declared || len(segs) == 0 {
		return "", nil, false
	}
	if parent := p.path[:strings.LastIndexByte(p.path, '/')]; parent != "" {
		if _, pv, ok := sjsonPath(doc, parent); !ok || !pv.IsObject() {
			return "", nil, false // an array element is an item, not a property
		}
	}
	path, _, _ := sjsonPath(doc, p.path)
	out, err := sjson.Delete(doc, path)
	if err != nil {
		return "", nil, false
	}
	return out, append(changes, p.change(ruleDropUnknown, cur, "")), true
}

// quotedNames returns what a message quotes with ', " or `: the property names validators put
// in their messages.
func quotedNames(msg string) []string {
	var names []string
	for i := 0; i < len(msg); i++ {
		q := msg[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		end := strings.IndexByte(msg[i+1:], q)
		if end < 0 {
			break
		}
		if name := msg[i+1 : i+1+end]; name != "" && !strings.ContainsAny(name, "\n\r") {
			names = append(names, name)
		}
		i += end + 1
	}
	return names
}

// setDefault fills a missing field with its schema default. Some validators report the object
// that lacks the field, naming the field in the message ("must have required property
// 'email'"); the field is then that object's member, and its schema is looked up under its
// own path.
func setDefault(doc string, env *envelopeJSON, p *problem, cur gjson.Result, schemas []gjson.Result) (string, Change, bool) {
	target := p.path
	if cur.Exists() && cur.Type != gjson.Null {
		if !cur.IsObject() || len(p.names) != 1 || cur.Get(escapeKey(p.names[0])).Exists() {
			return "", Change{}, false // the field is there: whatever is wrong, it is not missing
		}
		target = appendPointer(p.path, p.names[0])
		cur = gjson.Result{}
		schemas = env.withOperation(env.fieldSchemas(nil, target), target, false)
	}
	if target == "" {
		return "", Change{}, false
	}
	def := keyword(schemas, "default")
	if !def.Exists() {
		return "", Change{}, false
	}
	out, ok := setValue(doc, target, def.Raw)
	if !ok {
		return "", Change{}, false
	}
	return out, p.changeAt(target, ruleDefault, cur, def.Raw), true
}

// clamp moves a number out of the schema's range onto the bound it violated (rule clamp), and
// cuts a string longer than maxLength (rule truncate). It returns the new value's JSON text,
// the rule, and which bound it met: "at least " or "at most " for a number (the bound is the
// new value), "at most " for a string (maxLength). A string shorter than minLength has no
// repair that keeps its meaning.
func clamp(cur gjson.Result, schemas []gjson.Result, typ string) (string, string, string) {
	if len(schemas) == 0 {
		return "", "", ""
	}
	switch cur.Type {
	case gjson.Number:
		v, err := strconv.ParseFloat(cur.Raw, 64)
		if err != nil {
			return "", "", ""
		}
		// Without a type, an integral value is taken for an integer: an exclusive bound then
		// has a nearest valid value, one past it.
		integer := typ == "integer"
		stepExclusive := integer || (typ == "" && v == math.Trunc(v))
		lo, loRaw, hasLo := bound(schemas, "minimum", "exclusiveMinimum", true, integer, stepExclusive)
		hi, hiRaw, hasHi := bound(schemas, "maximum", "exclusiveMaximum", false, integer, stepExclusive)
		if hasLo && hasHi && lo > hi {
			return "", "", ""
		}
		switch {
		case hasLo && v < lo:
			return loRaw, ruleClamp, "at least "
		case hasHi && v > hi:
			return hiRaw, ruleClamp, "at most "
		}
	case gjson.String:
		max := keyword(schemas, "maxLength")
		if max.Type != gjson.Number || max.Num < 0 || max.Num != math.Trunc(max.Num) || max.Num > 1<<30 {
			return "", "", ""
		}
		s := cur.Str
		n := int(max.Num)
		if utf8.RuneCountInString(s) <= n {
			return "", "", ""
		}
		cut := 0
		for i := 0; i < n; i++ {
			_, size := utf8.DecodeRuneInString(s[cut:])
			cut += size
		}
		return string(json.RawMessage(jsonw.AppendString(nil, s[:cut]))), ruleTruncate, "at most "
	}
	return "", "", ""
}

// coerce converts the value to the type asked for when the conversion loses nothing: "5" to
// 5, "true" to true, 5 to "5", 5.0 to 5. It returns the new value's JSON text, or "" when
// there is none, or when allowed values are known and the converted value is none of them.
func coerce(cur gjson.Result, typ string, allowed []string) string {
	if typ == "" || !cur.Exists() {
		return ""
	}
	raw := ""
	switch typ {
	case "integer":
		switch {
		case cur.Type == gjson.String && tape.IsNumber(cur.Str) && !strings.ContainsAny(cur.Str, ".eE"):
			raw = cur.Str
		case cur.Type == gjson.Number && strings.ContainsAny(cur.Raw, ".eE") &&
			cur.Num == math.Trunc(cur.Num) && math.Abs(cur.Num) <= 1<<53:
			raw = strconv.FormatFloat(cur.Num, 'f', -1, 64)
		}
	case "number":
		if cur.Type == gjson.String && tape.IsNumber(cur.Str) {
			raw = cur.Str
		}
	case "boolean":
		if cur.Type == gjson.String && (cur.Str == "true" || cur.Str == "false") {
			raw = cur.Str
		}
	case "string":
		if cur.Type == gjson.Number || cur.Type == gjson.True || cur.Type == gjson.False {
			raw = string(json.RawMessage(jsonw.AppendString(nil, cur.Raw)))
		}
	}
	if raw == "" || allowed != nil && !inAllowed(raw, allowed) {
		return ""
	}
	return raw
}
