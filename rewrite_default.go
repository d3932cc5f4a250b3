package remedy

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// maxRewriteIssues bounds the issues DefaultRewriter repairs. Each repair edits the whole
// document, so the work grows with issues times arguments; a failure listing more issues than
// this rejects the request as a whole rather than naming fixes.
const maxRewriteIssues = 256

// rewriteDefault is DefaultRewriter: every issue must be repaired by one rule, or nothing is
// returned. A partial repair would only earn the same refusal one attempt later, with a new
// idempotency key spent on it.
func rewriteDefault(r *Rewrite) json.RawMessage {
	if r == nil || r.Envelope == nil || len(r.Envelope.Issues) == 0 || len(r.Envelope.Issues) > maxRewriteIssues {
		return nil
	}
	args := bytes.TrimSpace(r.Args)
	// The strict validator also refuses duplicate keys: gjson would edit the first occurrence
	// while many servers read the last, so a repair could not be trusted to land.
	if len(args) == 0 || args[0] != '{' || !validJSON(string(args)) {
		return nil
	}
	e := r.Envelope
	env := readEnvelopeJSON(e)
	doc := string(args)
	var changed []string // the pointers this rewrite has set or deleted
	for i := range e.Issues {
		is := &e.Issues[i]
		next, touched, ok := repairIssue(doc, &env, is)
		switch {
		case ok:
			doc = next
			changed = append(changed, touched...)
		case covered(changed, is.Path):
			// Validators report one field several times (a type and a range, say); once an
			// earlier issue has replaced the value, the complaints about the old one are moot.
		default:
			return nil
		}
	}
	if doc == "" || doc[0] != '{' || !validJSON(doc) {
		return nil
	}
	out := compact(doc)
	if bytes.Equal(out, compact(string(args))) {
		return nil // nothing changed: sending it again would fail the same way
	}
	return out
}

// covered reports whether pointer is one of changed or lies inside one of them.
func covered(changed []string, pointer string) bool {
	for _, c := range changed {
		if pointer == c || strings.HasPrefix(pointer, c+"/") {
			return true
		}
	}
	return false
}

// envelopeJSON is what the rules read from the envelope besides the issue, validated once.
type envelopeJSON struct {
	schema  gjson.Result // the envelope's Schema when it is an object, else absent
	example gjson.Result // the example arguments when they are an object, else absent
	issues  int
}

// readEnvelopeJSON validates the envelope's schema and example once per rewrite rather than once
// per issue: both can be large, and a hand-built envelope can hold anything.
func readEnvelopeJSON(e *Envelope) envelopeJSON {
	env := envelopeJSON{issues: len(e.Issues)}
	if len(e.Schema) > 0 && validJSON(string(e.Schema)) {
		if s := gjson.Parse(string(e.Schema)); s.IsObject() {
			env.schema = s
		}
	}
	if len(e.ExampleRequest) > 0 && validJSON(string(e.ExampleRequest)) {
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

// repairIssue applies the first rule that repairs is, and returns the new document and the
// pointers it changed.
func repairIssue(doc string, env *envelopeJSON, is *Issue) (string, []string, bool) {
	one := []string{is.Path}
	if len(is.SuggestedValue) > 0 {
		if out, ok := setValue(doc, is.Path, string(is.SuggestedValue)); ok {
			return out, one, true
		}
	}
	if len(is.AllowedValues) == 1 {
		if out, ok := setValue(doc, is.Path, string(is.AllowedValues[0])); ok {
			return out, one, true
		}
	}
	// A whole example request is no repair for the whole arguments: it would discard every
	// value the caller chose.
	if is.Path != "" {
		if v := env.exampleAt(is.Path); v.Exists() {
			if out, ok := setValue(doc, is.Path, v.Raw); ok {
				return out, one, true
			}
		}
	}
	var buf [64]byte
	code, _ := normCode(&buf, is.Code) // the form wellKnownCodes is keyed by
	if additionalCodes[code] {
		if out, touched, ok := deleteAdditional(doc, env, is); ok {
			return out, touched, true
		}
	}
	schemas := fieldSchemas(env, is)
	if requiredCodes[code] {
		if out, target, ok := setDefault(doc, env, is, schemas); ok {
			return out, []string{target}, true
		}
	}
	typ := expectedType(is)
	if typ == "" {
		typ = schemaType(schemas)
	}
	if out, ok := clamp(doc, is.Path, schemas, typ); ok {
		return out, one, true
	}
	if out, ok := coerce(doc, is.Path, typ); ok {
		return out, one, true
	}
	return "", nil, false
}

// expectedType is the type an issue's Expected names when it is a bare type name ("integer").
func expectedType(is *Issue) string {
	if len(is.Expected) == 0 || is.Expected[0] != '"' || !validJSON(string(is.Expected)) {
		return ""
	}
	return normType(gjson.Parse(string(is.Expected)).Str)
}

// setValue sets raw JSON at pointer. It fails when raw is not valid JSON, when the pointer has
// no sjson path, and when the value is already there: a rule that changes nothing has not
// repaired anything, and the next rule may.
func setValue(doc, pointer, raw string) (string, bool) {
	if !validJSON(raw) {
		return "", false
	}
	v := string(compact(raw))
	if pointer == "" {
		// Replacing the whole arguments is what the server asked for, but only an object can
		// stand for them.
		if v[0] != '{' || v == string(compact(doc)) {
			return "", false
		}
		return v, true
	}
	path, cur, ok := sjsonPath(doc, pointer)
	if !ok || (cur.Exists() && string(compact(cur.Raw)) == v) {
		return "", false
	}
	out, err := sjson.SetRaw(doc, path, v)
	if err != nil {
		return "", false
	}
	return out, true
}

// Codes, as normCode spells them, that say a property is not accepted at all.
var additionalCodes = map[string]bool{
	"additionalproperties": true, "additionalproperty": true,
	"unknownfield": true, "unknownparameter": true, "unknownproperty": true, "unknownkey": true,
	"unrecognizedkeys": true, "unrecognizedkey": true, "unrecognizedfield": true,
	"extraforbidden": true, "parameterunknown": true, // pydantic, Stripe
}

// Codes, as normCode spells them, that say a required field is missing.
var requiredCodes = map[string]bool{
	"required": true, "missing": true, "missingfield": true, "missingproperty": true,
	"missingparameter": true, "parametermissing": true, "missingrequiredfield": true,
	"missingrequiredparameter": true, "fieldrequired": true, "valuerequired": true,
	"fieldvaluerequired": true, "valueerrormissing": true, // Kubernetes, pydantic v1
}

// deleteAdditional removes a property the server does not accept. Validators disagree on what
// the path names: the property itself (pydantic, Stripe), or the object holding it with the
// names in the message (zod's "Unrecognized key(s) in object: 'a', 'b'", JSON Schema
// validators). When the path holds an object containing names quoted in the message, those
// are removed; otherwise the path's own property is, unless the envelope's schema declares
// it, which would make the path the parent and removing it a loss rather than a repair.
func deleteAdditional(doc string, env *envelopeJSON, is *Issue) (string, []string, bool) {
	var cur gjson.Result
	if is.Path == "" {
		cur = gjson.Parse(doc)
	} else {
		var ok bool
		if _, cur, ok = sjsonPath(doc, is.Path); !ok || !cur.Exists() {
			return "", nil, false
		}
	}
	segs, _ := pointerSegments(is.Path)
	last := ""
	if len(segs) > 0 {
		last = segs[len(segs)-1]
	}
	if names := quotedNames(is.Message); cur.IsObject() && len(names) > 0 && !slices.Contains(names, last) {
		// The path is the object holding the names: remove those it holds, and never the
		// object itself.
		out := doc
		var touched []string
		for _, n := range names {
			member := appendPointer(is.Path, n)
			path, v, ok := sjsonPath(out, member)
			if !ok || !v.Exists() {
				continue
			}
			var err error
			if out, err = sjson.Delete(out, path); err != nil {
				return "", nil, false
			}
			touched = append(touched, member)
		}
		return out, touched, len(touched) > 0
	}
	if _, declared := navigateSchema(env.schema, segs); declared || len(segs) == 0 {
		return "", nil, false
	}
	if parent := is.Path[:strings.LastIndexByte(is.Path, '/')]; parent != "" {
		if _, p, ok := sjsonPath(doc, parent); !ok || !p.IsObject() {
			return "", nil, false // an array element is an item, not a property
		}
	}
	path, _, _ := sjsonPath(doc, is.Path)
	out, err := sjson.Delete(doc, path)
	if err != nil {
		return "", nil, false
	}
	return out, []string{is.Path}, true
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

// fieldSchemas returns what describes the issue's field, most specific first: the issue's
// Expected when it is a schema object, then the envelope's Schema, found for the field.
func fieldSchemas(env *envelopeJSON, is *Issue) []gjson.Result {
	var out []gjson.Result
	if len(is.Expected) > 0 && validJSON(string(is.Expected)) {
		if x := gjson.Parse(string(is.Expected)); x.IsObject() {
			out = append(out, x)
		}
	}
	if s, ok := env.fieldSchema(is.Path); ok {
		out = append(out, s)
	}
	return out
}

// fieldSchema finds the schema of the field at pointer in the envelope's Schema. Servers
// inline the violated subschema, which may be rooted at the request or at any object on the
// way to the field (the item of an array, say), so the path is matched from its longest
// suffix to its shortest. A schema that is no object schema is the field's own, but only when
// there is one issue it could belong to.
func (env *envelopeJSON) fieldSchema(pointer string) (gjson.Result, bool) {
	root := env.schema
	if !root.Exists() {
		return gjson.Result{}, false
	}
	if !root.Get("properties").IsObject() {
		return root, env.issues == 1
	}
	segs, ok := pointerSegments(pointer)
	if !ok {
		return gjson.Result{}, false
	}
	for k := range segs {
		if s, ok := navigateSchema(root, segs[k:]); ok {
			return s, true
		}
	}
	return gjson.Result{}, false
}

// navigateSchema follows properties by key, and items by array index.
func navigateSchema(s gjson.Result, segs []string) (gjson.Result, bool) {
	for _, seg := range segs {
		if p := s.Get("properties"); p.IsObject() {
			if next := p.Get(escapeKey(seg)); next.IsObject() {
				s = next
				continue
			}
		}
		if _, isIndex := arrayIndex(seg); isIndex {
			if items := s.Get("items"); items.IsObject() {
				s = items
				continue
			}
		}
		return gjson.Result{}, false
	}
	return s, true
}

// keyword is the first of the schemas that has key.
func keyword(schemas []gjson.Result, key string) gjson.Result {
	for _, s := range schemas {
		if v := s.Get(key); v.Exists() {
			return v
		}
	}
	return gjson.Result{}
}

// setDefault fills a missing required field with its schema default. Some validators report
// the object that lacks the field, naming the field in the message ("must have required
// property 'email'"); the field is then that object's member, and its schema is looked up
// under its own path.
func setDefault(doc string, env *envelopeJSON, is *Issue, schemas []gjson.Result) (string, string, bool) {
	target := is.Path
	var cur gjson.Result
	if target == "" {
		cur = gjson.Parse(doc)
	} else if _, c, ok := sjsonPath(doc, target); ok {
		cur = c
	}
	if cur.Exists() && cur.Type != gjson.Null {
		names := quotedNames(is.Message)
		if !cur.IsObject() || len(names) != 1 || cur.Get(escapeKey(names[0])).Exists() {
			return "", "", false // the field is there: whatever is wrong, it is not missing
		}
		target = appendPointer(is.Path, names[0])
		schemas = nil
		if s, ok := env.fieldSchema(target); ok {
			schemas = append(schemas, s)
		}
	}
	if target == "" {
		return "", "", false
	}
	def := keyword(schemas, "default")
	if !def.Exists() {
		return "", "", false
	}
	out, ok := setValue(doc, target, def.Raw)
	return out, target, ok
}

// clamp moves a number out of the schema's range onto the bound it violated, and cuts a string
// longer than maxLength. A string shorter than minLength has no repair that keeps its meaning.
func clamp(doc, pointer string, schemas []gjson.Result, typ string) (string, bool) {
	if len(schemas) == 0 || pointer == "" {
		return "", false
	}
	_, cur, ok := sjsonPath(doc, pointer)
	if !ok || !cur.Exists() {
		return "", false
	}
	switch cur.Type {
	case gjson.Number:
		v, err := strconv.ParseFloat(cur.Raw, 64)
		if err != nil {
			return "", false
		}
		// Without a type, an integral value is taken for an integer: an exclusive bound then
		// has a nearest valid value, one past it.
		integer := typ == "integer"
		stepExclusive := integer || (typ == "" && v == math.Trunc(v))
		lo, loRaw, hasLo := bound(schemas, "minimum", "exclusiveMinimum", true, integer, stepExclusive)
		hi, hiRaw, hasHi := bound(schemas, "maximum", "exclusiveMaximum", false, integer, stepExclusive)
		if hasLo && hasHi && lo > hi {
			return "", false
		}
		switch {
		case hasLo && v < lo:
			return setValue(doc, pointer, loRaw)
		case hasHi && v > hi:
			return setValue(doc, pointer, hiRaw)
		}
	case gjson.String:
		max := keyword(schemas, "maxLength")
		if max.Type != gjson.Number || max.Num < 0 || max.Num != math.Trunc(max.Num) || max.Num > 1<<30 {
			return "", false
		}
		s := cur.String()
		n := int(max.Num)
		if utf8.RuneCountInString(s) <= n {
			return "", false
		}
		cut := 0
		for i := 0; i < n; i++ {
			_, size := utf8.DecodeRuneInString(s[cut:])
			cut += size
		}
		return setValue(doc, pointer, string(quoteJSON(s[:cut])))
	}
	return "", false
}

// bound reads the lower (or upper) bound of a range: the inclusive keyword, the exclusive one
// (a number since draft 6, a boolean beside the inclusive one in draft 4), whichever binds.
// An exclusive bound only has a nearest valid value among integers (stepExclusive), one past
// it; for an integer an inclusive fractional bound is rounded inward. It returns the nearest
// valid value and its JSON text.
func bound(schemas []gjson.Result, incl, excl string, lower, integer, stepExclusive bool) (float64, string, bool) {
	var (
		b, exclusive bool
		v            float64
		raw          string
	)
	if x := keyword(schemas, incl); x.Type == gjson.Number {
		b, v, raw = true, x.Num, x.Raw
		exclusive = keyword(schemas, excl).Type == gjson.True
	}
	if x := keyword(schemas, excl); x.Type == gjson.Number {
		if !b || (lower && x.Num >= v) || (!lower && x.Num <= v) {
			b, v, raw, exclusive = true, x.Num, x.Raw, true
		}
	}
	if !b || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, "", false
	}
	if exclusive && !stepExclusive {
		return 0, "", false
	}
	if !integer && !exclusive {
		return v, raw, true
	}
	n := v
	switch {
	case lower && exclusive:
		n = math.Floor(v) + 1
	case lower:
		n = math.Ceil(v)
	case exclusive:
		n = math.Ceil(v) - 1
	default:
		n = math.Floor(v)
	}
	if math.Abs(n) > 1<<53 {
		return 0, "", false // past exact integers in a float64: the bound cannot be written exactly
	}
	return n, strconv.FormatFloat(n, 'f', -1, 64), true
}

// schemaType is the JSON type the schemas ask for, "" when they do not say or allow several.
// "null" beside one other type (["integer", "null"]) is that type: a repair never aims at null.
func schemaType(schemas []gjson.Result) string {
	t := keyword(schemas, "type")
	if t.Type == gjson.String {
		return normType(t.Str)
	}
	if !t.IsArray() {
		return ""
	}
	only := ""
	for _, x := range t.Array() {
		if x.Type != gjson.String || x.Str == "null" {
			continue
		}
		if only != "" {
			return ""
		}
		only = normType(x.Str)
	}
	return only
}

// normType folds the type names servers write in Expected onto JSON Schema's.
func normType(t string) string {
	switch strings.ToLower(t) {
	case "integer", "int", "int32", "int64", "long":
		return "integer"
	case "number", "float", "double", "decimal":
		return "number"
	case "boolean", "bool":
		return "boolean"
	case "string", "str":
		return "string"
	}
	return ""
}

// coerce converts the value to the type the schema asks for, when the conversion loses nothing:
// "5" to 5, "true" to true, 5 to "5", 5.0 to 5.
func coerce(doc, pointer, typ string) (string, bool) {
	if pointer == "" || typ == "" {
		return "", false
	}
	_, cur, ok := sjsonPath(doc, pointer)
	if !ok || !cur.Exists() {
		return "", false
	}
	raw := ""
	switch typ {
	case "integer":
		switch {
		case cur.Type == gjson.String && isJSONNumber(cur.Str) && !strings.ContainsAny(cur.Str, ".eE"):
			raw = cur.Str
		case cur.Type == gjson.Number && strings.ContainsAny(cur.Raw, ".eE") &&
			cur.Num == math.Trunc(cur.Num) && math.Abs(cur.Num) <= 1<<53:
			raw = strconv.FormatFloat(cur.Num, 'f', -1, 64)
		}
	case "number":
		if cur.Type == gjson.String && isJSONNumber(cur.Str) {
			raw = cur.Str
		}
	case "boolean":
		if cur.Type == gjson.String && (cur.Str == "true" || cur.Str == "false") {
			raw = cur.Str
		}
	case "string":
		if cur.Type == gjson.Number || cur.Type == gjson.True || cur.Type == gjson.False {
			raw = string(quoteJSON(cur.Raw))
		}
	}
	if raw == "" {
		return "", false
	}
	return setValue(doc, pointer, raw)
}

// isJSONNumber reports whether s is exactly a JSON number, without surrounding space: valid
// JSON that starts with a digit or a minus sign can be nothing else, and a JSON number always
// ends with a digit.
func isJSONNumber(s string) bool {
	if s == "" || len(s) > maxNumberLen {
		return false
	}
	first, last := s[0], s[len(s)-1]
	return (first == '-' || first >= '0' && first <= '9') && last >= '0' && last <= '9' && validJSON(s)
}
