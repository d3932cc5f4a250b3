package remedy

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/remedy-go/remedy/internal/jsonw"
	"github.com/remedy-go/remedy/internal/tape"
)

// The texts of Go's validators and decoders, which the Go web frameworks pass through as a
// failure's message by default: gin's {"error": err.Error()}, echo's {"message": ...}, fiber's
// and net/http's text/plain, ogen's {"error_message": ...}. Each is read only against its
// exact template, from the source of the version recorded in testdata/envelopes by
// interop/frameworks; a fact the text does not state soundly is left out:
//
//   - go-playground/validator v10 ("Key: 'CreateItem.Lines[1].SKU' Error:Field validation for
//     'SKU' failed on the 'required' tag", one line per failure): the tag is the issue's code.
//     A tag's parameter (max's 100, oneof's list) is not in the text. The namespace names Go
//     fields unless the app registered a tag name function, and a Go field's name is not the
//     JSON member's: the path is read only when no name in it can be a Go field's (a Go field
//     the validator sees is exported, so its name starts with an upper-case letter) or a label
//     for people (a name with a space): then a tag name function gave the names, as
//     validator's documentation shows it, from the json tags.
//   - encoding/json: a type error names the Go type and the kind that arrived, and the
//     member's path with every array index and map key dropped, and names the member even
//     when the value that failed is an item inside it: the path is read only when it is one
//     member deep. A syntax error is a body that is not JSON: a code, no field.
//   - echo's DefaultBinder, which rewords encoding/json's errors, and its HTTPError's text.
//   - kin-openapi's request validation (as oapi-codegen's middleware writes it): a JSON
//     Pointer, the rule, the bound, the allowed values as JSON, a parameter's name and place.
//   - ogen's generated server: its validation chains name members and array indices.
//
// A client's decoding or validation failure is a validation failure whatever the status it
// came with (fiber answers a handler's plain error with a 500).

// maxGoIssues bounds the failures read from one text.
const maxGoIssues = 100

// goText reads a Go validator's or decoder's text, a failure's whole message, into issues; it
// reports whether text was one.
func (p *parser) goText(text string) bool {
	if len(text) < 3 {
		return false
	}
	var ok bool
	switch text[0] { // a cheap gate: every template starts with one of these
	case 'K':
		ok = p.validatorText(text)
	case 'j', 'i', 'u', 'E':
		ok = p.jsonText(text)
	case 'U', 'S':
		ok = p.echoBinderText(text)
	case 'c':
		if msg, ok2 := echoHTTPErrorMessage(text); ok2 {
			ok = p.echoBinderText(msg) || p.validatorText(msg) || p.jsonText(msg)
		}
	case 'r', 'p':
		ok = p.kinText(text)
	case 'o':
		ok = p.ogenText(text)
	case '[':
		ok = p.validatorListText(text)
	case 'f':
		ok = p.schemaDecoderText(text)
	}
	if ok {
		p.e.Category = CategoryValidation
	}
	return ok
}

// building records, on the classification path, that the full parse keeps issues; it reports
// whether the caller should go on and build them (the full parse).
func (p *parser) building() bool {
	if !p.full {
		p.unread, p.kept = true, true
		return false
	}
	return true
}

// --- go-playground/validator ---

const (
	vKey = "Key: '"
	vFor = "' Error:Field validation for '"
	vOn  = "' failed on the '"
	vTag = "' tag"
)

// validatorText reads ValidationErrors.Error(): one FieldError.Error() a line.
func (p *parser) validatorText(text string) bool {
	n := 0
	for rest := text; rest != ""; n++ {
		line, next, _ := strings.Cut(rest, "\n")
		if _, _, ok := validatorLine(line); !ok || n == maxGoIssues {
			return false
		}
		rest = next
	}
	if !p.building() {
		return true
	}
	if p.e.Issues == nil {
		p.e.Issues = make([]Issue, 0, n)
	}
	for rest := text; rest != ""; {
		line, next, _ := strings.Cut(rest, "\n")
		ns, tag, _ := validatorLine(line)
		is := Issue{Path: validatorPointer(ns), Code: tag, Message: line}
		if is.Path == "" {
			_, is.Field, _ = strings.Cut(ns, ".") // the fields, less the top struct's name
		}
		p.addIssue(is)
		rest = next
	}
	return true
}

// validatorLine reads "Key: '<namespace>' Error:Field validation for '<field>' failed on the
// '<tag>' tag", whose field is the namespace's last name.
func validatorLine(line string) (ns, tag string, ok bool) {
	rest, ok := strings.CutPrefix(line, vKey)
	if !ok {
		return "", "", false
	}
	ns, rest, ok = strings.Cut(rest, vFor)
	if !ok {
		return "", "", false
	}
	field, rest, ok := strings.Cut(rest, vOn)
	if !ok {
		return "", "", false
	}
	tag, ok = strings.CutSuffix(rest, vTag)
	if !ok || !isTag(tag) || !(ns == field || strings.HasSuffix(ns, "."+field)) {
		return "", "", false
	}
	return ns, tag, true
}

// isTag reports whether s is a validator tag's name as the validator prints it.
func isTag(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// validatorPointer is the pointer of a validator namespace ("CreateItem.lines[1].sku" →
// "/lines/1/sku"), the top struct's name left out; "" when a name in it may be a Go field's
// (see the package comment above) or it does not read as a namespace.
func validatorPointer(ns string) string {
	_, rest, ok := strings.Cut(ns, ".")
	if !ok || rest == "" {
		return ""
	}
	var b strings.Builder
	for rest != "" {
		end := strings.IndexAny(rest, ".[]")
		if end < 0 {
			end = len(rest)
		}
		name := rest[:end]
		if r, _ := utf8.DecodeRuneInString(name); name == "" || unicode.IsUpper(r) || strings.IndexByte(name, ' ') >= 0 {
			return "" // a Go field's name, or a label for people (a tag name function may give either)
		}
		b.WriteByte('/')
		jsonw.WriteSegment(&b, name)
		rest = rest[end:]
		for strings.HasPrefix(rest, "[") { // a slice's index or a map's key
			close := strings.IndexByte(rest, ']')
			if close < 0 {
				return ""
			}
			key := rest[1:close]
			rest = rest[close+1:]
			if key == "" || strings.ContainsAny(key, "[]") {
				return ""
			}
			b.WriteByte('/')
			jsonw.WriteSegment(&b, key)
		}
		switch {
		case rest == "":
		case rest[0] == '.' && len(rest) > 1:
			rest = rest[1:]
		default:
			return ""
		}
	}
	return b.String()
}

// validatorListText reads the message of fiber v2's documented validation example: one
// "[<field>]: '<value>' | Needs to implement '<tag>'" per failure, joined by " and ". The
// field is a Go field's name without its namespace, and the value is printed without its
// type: only the tag is read.
func (p *parser) validatorListText(text string) bool {
	const needs = "' | Needs to implement '"
	n := 0
	for rest := text; ; n++ {
		if n == maxGoIssues {
			return false
		}
		_, next, ok := fiberDocsItem(rest, needs)
		if !ok {
			return false
		}
		if next == "" {
			break
		}
		rest = next
	}
	if !p.building() {
		return true
	}
	for rest := text; rest != ""; {
		item, next, _ := fiberDocsItem(rest, needs)
		tag := item[strings.LastIndex(item, needs)+len(needs) : len(item)-1]
		p.addIssue(Issue{Code: tag, Message: item})
		rest = next
	}
	return true
}

// fiberDocsItem cuts the first item off a fiber documentation validation message.
func fiberDocsItem(s, needs string) (item, rest string, ok bool) {
	if !strings.HasPrefix(s, "[") {
		return "", "", false
	}
	close := strings.Index(s, "]: '")
	if close < 2 {
		return "", "", false
	}
	i := strings.Index(s[close:], needs)
	if i < 0 {
		return "", "", false
	}
	tagStart := close + i + len(needs)
	end := strings.IndexByte(s[tagStart:], '\'')
	if end < 0 || !isTag(s[tagStart:tagStart+end]) {
		return "", "", false
	}
	stop := tagStart + end + 1
	item, rest = s[:stop], s[stop:]
	if rest == "" {
		return item, "", true
	}
	rest, ok = strings.CutPrefix(rest, " and ")
	return item, rest, ok && rest != ""
}

// --- encoding/json ---

// jsonText reads encoding/json's decoding errors: a type error, a syntax error, and the end
// of a body cut short (only with a client error's status: "unexpected EOF" and "EOF" are any
// reader's words, and a server's own failure may say them).
func (p *parser) jsonText(text string) bool {
	if rest, ok := strings.CutPrefix(text, "json: cannot unmarshal "); ok {
		return p.jsonTypeText(text, rest)
	}
	if jsonSyntax(text) || p.status < 500 && (text == "unexpected EOF" || text == "EOF") {
		if p.building() {
			p.addIssue(Issue{Code: "invalid_json", Message: text})
		}
		return true
	}
	return false
}

// jsonTypeText reads "json: cannot unmarshal <kind> into Go struct field <S>.<path> of type
// <T>" and "... into Go value of type <T>".
func (p *parser) jsonTypeText(text, rest string) bool {
	kind, rest, ok := strings.Cut(rest, " into Go ")
	if !ok || !decodedKind(kind) {
		return false
	}
	var field, goType string
	if f, ok := strings.CutPrefix(rest, "struct field "); ok {
		field, goType, ok = strings.Cut(f, " of type ")
		if !ok {
			return false
		}
		if _, field, ok = strings.Cut(field, "."); !ok || field == "" {
			return false
		}
	} else if goType, ok = strings.CutPrefix(rest, "value of type "); !ok {
		return false
	}
	if goType == "" {
		return false
	}
	if p.building() {
		p.addIssue(p.decodeTypeIssue(field, kind, goType, text))
	}
	return true
}

// decodeTypeIssue is the issue of a value of the JSON kind kind ("string", "number 1.5") that does
// not decode into Go type goType, at the dotted member path field (JSON names, array indices
// and map keys dropped). Only a path one member deep is stated: a deeper one may pass through
// an array, and then its index is missing. (Even one member deep, the value that failed may be
// an item of that member, when the member is a list of goType; encoding/json names the member.)
func (p *parser) decodeTypeIssue(field, kind, goType, text string) Issue {
	is := Issue{Code: "type", Message: text}
	if field == "" {
		return is
	}
	if strings.ContainsAny(field, ".[") {
		is.Field = field // a path whose indices are missing: named, not located
		return is
	}
	is.Path = paramPointer(field)
	if t := goDecodesFrom(goType); t != "" {
		is.Expected = quoteJSON(t)
	}
	if num, ok := strings.CutPrefix(kind, "number "); ok && tape.IsNumber(num) {
		is.Received = json.RawMessage(num)
	}
	return is
}

// decodedKind reports whether s is a JSON kind as encoding/json's UnmarshalTypeError names it.
func decodedKind(s string) bool {
	switch s {
	case "string", "number", "bool", "array", "object":
		return true
	}
	num, ok := strings.CutPrefix(s, "number ")
	return ok && tape.IsNumber(num)
}

// goDecodesFrom is the JSON type a Go type decodes from, for the types whose answer is
// certain ("" for a named type, which may be anything, and for []byte, a base64 string).
func goDecodesFrom(t string) string {
	t = strings.TrimLeft(t, "*")
	switch t {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr":
		return "integer"
	case "float32", "float64":
		return "number"
	case "[]uint8":
		return ""
	}
	switch {
	case strings.HasPrefix(t, "[]"), strings.HasPrefix(t, "[") && strings.Contains(t, "]"):
		return "array"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "struct {"):
		return "object"
	}
	return ""
}

// jsonSyntax reports whether text is encoding/json's SyntaxError: "invalid character 'x'
// <context>" or "unexpected end of JSON input".
func jsonSyntax(text string) bool {
	if text == "unexpected end of JSON input" {
		return true
	}
	rest, ok := strings.CutPrefix(text, "invalid character '")
	if !ok {
		return false
	}
	// The character is quoted as Go quotes it, in single quotes; then one of the scanner's
	// contexts.
	for _, ctx := range jsonSyntaxContexts {
		q, ok := strings.CutSuffix(rest, ctx)
		if q, ok2 := strings.CutSuffix(q, "' "); ok && ok2 && q != "" && len(q) <= 10 {
			return true
		}
	}
	return false
}

// jsonSyntaxContexts are the contexts of encoding/json's scanner errors.
var jsonSyntaxContexts = [...]string{
	"looking for beginning of value", "looking for beginning of object key string",
	"after object key", "after object key:value pair", "after array element",
	"after top-level value", "in string literal", "in string escape code",
	"in \\u hexadecimal character escape", "in numeric literal",
	"after decimal point in numeric literal", "in exponent of numeric literal",
	"in literal true (expecting 'r')", "in literal true (expecting 'u')", "in literal true (expecting 'e')",
	"in literal false (expecting 'a')", "in literal false (expecting 'l')", "in literal false (expecting 's')",
	"in literal false (expecting 'e')", "in literal null (expecting 'u')", "in literal null (expecting 'l')",
	"exceeded max depth",
}

// --- echo ---

// echoHTTPErrorMessage reads echo's HTTPError text, "code=400, message=<message>[,
// internal=<error>]", which echo's documentation puts in a new HTTPError's message when
// binding fails; it returns the message.
func echoHTTPErrorMessage(text string) (string, bool) {
	rest, ok := strings.CutPrefix(text, "code=")
	if !ok || len(rest) < 3 || !isCount(rest[:3]) {
		return "", false
	}
	msg, ok := strings.CutPrefix(rest[3:], ", message=")
	if !ok {
		return "", false
	}
	if i := strings.Index(msg, ", internal="); i >= 0 {
		msg = msg[:i]
	}
	return msg, true
}

// echoBinderText reads echo's DefaultBinder rewording of encoding/json's errors:
// "Unmarshal type error: expected=<T>, got=<kind>, field=<path>, offset=<n>" and "Syntax
// error: offset=<n>, error=<syntax error>".
func (p *parser) echoBinderText(text string) bool {
	if rest, ok := strings.CutPrefix(text, "Syntax error: offset="); ok {
		off, syn, ok := strings.Cut(rest, ", error=")
		if !ok || !isCount(off) || !jsonSyntax(syn) {
			return false
		}
		if p.building() {
			p.addIssue(Issue{Code: "invalid_json", Message: text})
		}
		return true
	}
	rest, ok := strings.CutPrefix(text, "Unmarshal type error: expected=")
	if !ok {
		return false
	}
	goType, rest, ok := strings.Cut(rest, ", got=")
	if !ok || goType == "" {
		return false
	}
	kind, rest, ok := strings.Cut(rest, ", field=")
	if !ok || !decodedKind(kind) {
		return false
	}
	i := strings.LastIndex(rest, ", offset=")
	if i < 0 || !isCount(rest[i+len(", offset="):]) {
		return false
	}
	if p.building() {
		p.addIssue(p.decodeTypeIssue(rest[:i], kind, goType, text))
	}
	return true
}

// --- gorilla/schema, through fiber's QueryParser ---

// schemaDecoderText reads fiber's QueryParser failure for a value of the wrong type:
// "failed to decode: schema: error converting value for \"limit\"", a parameter's name.
func (p *parser) schemaDecoderText(text string) bool {
	rest, ok := strings.CutPrefix(text, `failed to decode: schema: error converting value for `)
	if !ok {
		return false
	}
	name, tail, ok := goQuoted(rest)
	if !ok || tail != "" || name == "" || strings.ContainsAny(name, ".[") {
		return false
	}
	if p.building() {
		p.addIssue(Issue{Path: paramPointer(name), Code: "type", Message: text})
	}
	return true
}

// --- kin-openapi ---

// kinText reads kin-openapi's RequestError, as oapi-codegen's middleware writes it (its first
// line): "request body has an error: <reason>" and "parameter \"<name>\" in <place> has an
// error: <reason>".
func (p *parser) kinText(text string) bool {
	if rest, ok := strings.CutPrefix(text, "request body has an error: "); ok {
		return p.kinBody(text, rest)
	}
	rest, ok := strings.CutPrefix(text, "parameter ")
	if !ok {
		return false
	}
	name, rest, ok := goQuoted(rest)
	if !ok || name == "" || !strings.HasPrefix(rest, " in ") {
		return false
	}
	in, reason, ok := strings.Cut(rest[len(" in "):], " has an error: ")
	if !ok || !paramIn(in) {
		return false
	}
	if !p.building() {
		return true
	}
	is := Issue{Path: paramPointer(name), Message: reason}
	switch {
	case reason == "value is required but missing":
		is.Code = "required"
	case strings.HasPrefix(reason, "value "):
		// A value that does not parse as the parameter's type: "value ten: an invalid
		// integer: invalid syntax".
		v, r, ok := strings.Cut(reason[len("value "):], ": an invalid ")
		typ, _, _ := strings.Cut(r, ": ")
		if ok && (typ == "integer" || typ == "number" || typ == "boolean") {
			is.Code, is.Expected, is.Received = "type", quoteJSON(typ), quoteJSON(v)
		}
	default:
		if !strings.HasPrefix(reason, `Error at "`) { // an object parameter's member: not read
			p.kinReason(&is, reason)
		}
	}
	is.Message = paramMessage(in, name, is.Message)
	p.addIssue(is)
	return true
}

// kinBody reads the reason of a request body's failure: a schema violation ("doesn't match
// schema[ <id>]: [Error at \"<pointer>\": ]<reason>"), a body that is not JSON ("failed to
// decode request body: <error>") or a missing body.
func (p *parser) kinBody(text, reason string) bool {
	if rest, ok := strings.CutPrefix(reason, "doesn't match schema"); ok {
		if i := strings.Index(rest, ": "); i >= 0 && (i == 0 || rest[0] == ' ') {
			if !p.building() {
				return true
			}
			p.kinSchemaError(rest[i+2:])
			return true
		}
		return false
	}
	if rest, ok := strings.CutPrefix(reason, "failed to decode request body: "); ok {
		if !jsonSyntax(rest) && rest != "unexpected EOF" {
			return false
		}
		if p.building() {
			p.addIssue(Issue{Code: "invalid_json", Message: text})
		}
		return true
	}
	if reason == "value is required but missing" {
		if p.building() {
			p.addIssue(Issue{Code: "required", Message: text})
		}
		return true
	}
	return false
}

// kinSchemaError reads a SchemaError's first line: [Error at "<path>": ]<reason>. The path's
// segments are written as they are, unescaped: one holding "~" is not read (a pointer would
// have escaped it).
func (p *parser) kinSchemaError(s string) {
	is := Issue{Message: s}
	if rest, ok := strings.CutPrefix(s, `Error at "`); ok {
		at, reason, ok := strings.Cut(rest, `": `)
		if !ok || !strings.HasPrefix(at, "/") || strings.Contains(at, "~") {
			p.addIssue(is)
			return
		}
		is.Path, is.Message = at, reason
	}
	p.kinReason(&is, is.Message)
	p.addIssue(is)
}

// kinReason reads the rule, bound and allowed values a kin-openapi schema reason states.
func (p *parser) kinReason(is *Issue, reason string) {
	if list, ok := strings.CutPrefix(reason, "value is not one of the allowed values "); ok {
		is.Code = "enum"
		t := tape.Get()
		if t.Parse(list) && t.Root().IsArray() {
			is.AllowedValues = p.rawList(t.Root())
		}
		tape.Put(t)
		return
	}
	if name, ok := strings.CutPrefix(reason, "property "); ok {
		n, tail, ok := goQuoted(name)
		switch {
		case ok && tail == " is missing":
			// The path already ends with the missing member's name.
			is.Code = "required"
		case ok && tail == " is unsupported":
			is.Code = "additionalProperties"
			is.Path += paramPointer(n)
		}
		return
	}
	if t, ok := strings.CutPrefix(reason, "value must be a "); ok && jsonTypes[t] {
		is.Code, is.Expected = "type", quoteJSON(t)
		return
	}
	if t, ok := strings.CutPrefix(reason, "value must be an "); ok && jsonTypes[t] {
		is.Code, is.Expected = "type", quoteJSON(t)
		return
	}
	if pat, ok := strings.CutPrefix(reason, `string doesn't match the regular expression "`); ok && strings.HasSuffix(pat, `"`) {
		is.Code, is.Expected = "pattern", p.fragment("pattern", quoteJSON(pat[:len(pat)-1]))
		return
	}
	if reason == "duplicate items found" {
		is.Code = "uniqueItems"
		return
	}
	for _, b := range kinBounds {
		if n, ok := strings.CutPrefix(reason, b.prefix); ok && tape.IsNumber(n) {
			is.Code, is.Expected = b.keyword, p.fragment(b.keyword, json.RawMessage(n))
			return
		}
	}
}

// kinBounds are kin-openapi's reasons for a bound (numbers printed with %g, counts with %d).
var kinBounds = [...]struct{ prefix, keyword string }{
	{"number must be at least ", "minimum"},
	{"number must be at most ", "maximum"},
	{"number must be more than ", "exclusiveMinimum"},
	{"number must be less than ", "exclusiveMaximum"},
	{"minimum string length is ", "minLength"},
	{"maximum string length is ", "maxLength"},
	{"minimum number of items is ", "minItems"},
	{"maximum number of items is ", "maxItems"},
}

// --- ogen ---

// ogenText reads the failure of a server ogen generated, as its default error handler
// writes it: "operation <Op>: decode request: <error>" or "operation <Op>: decode params:
// <error>".
func (p *parser) ogenText(text string) bool {
	rest, ok := strings.CutPrefix(text, "operation ")
	if !ok {
		return false
	}
	op, rest, ok := strings.Cut(rest, ": ")
	if !ok || op == "" || strings.ContainsAny(op, " ") {
		return false
	}
	if v, ok := strings.CutPrefix(rest, "decode request: validate: "); ok {
		return p.ogenValidate(v, true)
	}
	if v, ok := strings.CutPrefix(rest, "decode request: decode application/json: "); ok {
		if strings.HasPrefix(v, "invalid: ") {
			// The decoder's own check of the top-level object's required members.
			return p.ogenValidate(v, true)
		}
		if _, tail, ok := strings.Cut(v, ": callback: invalid: "); ok && strings.HasPrefix(v, "decode ") {
			// Inside a member: the path through the members' decoders drops array indices,
			// so only the rule is read.
			return p.ogenValidate("invalid: "+tail, false)
		}
		return p.ogenDecodeType(v)
	}
	if v, ok := strings.CutPrefix(rest, "decode params: "); ok {
		return p.ogenParam(v)
	}
	return false
}

// ogenDecodeType reads the decoder's failure on a value of another kind than the member's type:
// the chain of member decoders, "decode <T>: callback: decode field \"<name>\": [callback:
// decode <T>: callback: decode field \"<name>\": ]...", ending in go-faster/jx's "unexpected
// byte <n> '<c>' at <offset>" for a byte that begins a JSON value (a quote where a number
// belongs). The members' path drops array indices, so, as for encoding/json, a path is read
// only one member deep, and a deeper one is the issue's Field; the type expected is not said.
func (p *parser) ogenDecodeType(v string) bool {
	var names []string
	for rest := v; ; {
		switch {
		case strings.HasPrefix(rest, "decode field "):
			name, tail, ok := goQuoted(rest[len("decode field "):])
			if !ok || name == "" || strings.ContainsAny(name, ".[]") || len(names) == maxGoIssues {
				return false
			}
			if rest, ok = strings.CutPrefix(tail, ": "); !ok {
				return false
			}
			names = append(names, name)
			continue
		case strings.HasPrefix(rest, "callback: "):
			rest = rest[len("callback: "):]
			continue
		case strings.HasPrefix(rest, "decode "):
			typ, tail, ok := strings.Cut(rest[len("decode "):], ": ")
			if !ok || typ == "" || strings.ContainsAny(typ, " \"") {
				return false
			}
			rest = tail
			continue
		}
		if len(names) == 0 || !jxValueByte(rest) {
			return false
		}
		break
	}
	if p.building() {
		is := Issue{Code: "type", Message: v}
		if len(names) == 1 {
			is.Path = paramPointer(names[0])
		} else {
			is.Field = strings.Join(names, ".")
		}
		p.addIssue(is)
	}
	return true
}

// jxValueByte reports whether s is go-faster/jx's "unexpected byte <n> '<c>' at <offset>" for
// a byte that begins a JSON value: the value is of another kind than the one decoded.
func jxValueByte(s string) bool {
	rest, ok := strings.CutPrefix(s, "unexpected byte ")
	if !ok {
		return false
	}
	num, rest, ok := strings.Cut(rest, " ")
	if !ok || !isCount(num) {
		return false
	}
	q, rest, ok := strings.Cut(rest, " at ")
	if !ok || !isCount(rest) || len(q) != 3 || q[0] != '\'' || q[2] != '\'' || strconv.Itoa(int(q[1])) != num {
		return false
	}
	return strings.IndexByte(`"-0123456789tfn[{`, q[1]) >= 0
}

// ogenValidate reads a validate.Error: "invalid: <name> (<error>)[, <name> (<error>)]...",
// nested for members and array items ("[1]"). withPath says the names from the top are all
// there.
func (p *parser) ogenValidate(s string, withPath bool) bool {
	n := 0
	if !p.ogenFields(s, "", false, withPath, &n) || n == 0 {
		return false
	}
	if p.building() {
		p.ogenFields(s, "", true, withPath, &n)
	}
	return true
}

// ogenFields reads "invalid: a (x), b (invalid: [0] (y))": with emit, it adds an issue for
// each leaf (with its pointer when withPath); without, it only checks the template and counts
// the leaves in n.
func (p *parser) ogenFields(s, at string, emit, withPath bool, n *int) bool {
	rest, ok := strings.CutPrefix(s, "invalid:")
	if !ok {
		return false
	}
	for rest != "" {
		rest, ok = strings.CutPrefix(rest, " ")
		if !ok {
			return false
		}
		open := strings.Index(rest, " (")
		if open <= 0 {
			return false
		}
		name := rest[:open]
		end := closingParen(rest, open+1)
		if end < 0 {
			return false
		}
		inner := rest[open+2 : end]
		rest = rest[end+1:]
		if rest != "" {
			if rest, ok = strings.CutPrefix(rest, ","); !ok {
				return false
			}
		}
		seg := name
		if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") && isCount(name[1:len(name)-1]) {
			seg = name[1 : len(name)-1]
		} else if strings.ContainsAny(name, "[]") {
			return false
		}
		path := ""
		if emit && withPath {
			path = at + paramPointer(seg)
		}
		if strings.HasPrefix(inner, "invalid: ") {
			if !p.ogenFields(inner, path, emit, withPath, n) {
				return false
			}
			continue
		}
		if !emit {
			if *n++; *n > maxGoIssues {
				return false
			}
			continue
		}
		is := Issue{Path: path, Message: inner}
		p.ogenReason(&is, inner)
		p.addIssue(is)
	}
	return true
}

// closingParen is the index of the parenthesis that closes the one at open, or -1.
func closingParen(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// ogenReason reads what a leaf's reason states. An integer bound's text is the same for
// maximum and exclusiveMaximum ("value 500 greater than 100"): the keyword is read only when
// the value equals the bound (then the bound is exclusive); otherwise only what arrived.
func (p *parser) ogenReason(is *Issue, reason string) {
	switch {
	case reason == "field required":
		is.Code = "required"
		return
	case strings.HasPrefix(reason, "invalid value: "):
		is.Code = "enum" // the value is printed without its type: not read
		return
	}
	r, ok := strings.CutPrefix(reason, "int: value ")
	if !ok {
		return
	}
	for _, op := range [...]struct{ word, keyword string }{{" greater than ", "exclusiveMaximum"}, {" less than ", "exclusiveMinimum"}} {
		v, bound, ok := strings.Cut(r, op.word)
		if !ok || !tape.IsNumber(v) || !tape.IsNumber(bound) {
			continue
		}
		is.Received = json.RawMessage(v)
		if v == bound {
			is.Code, is.Expected = op.keyword, p.fragment(op.keyword, json.RawMessage(bound))
		}
		return
	}
}

// ogenParam reads a parameter's failure: "<place>: \"<name>\": <error>".
func (p *parser) ogenParam(s string) bool {
	in, rest, ok := strings.Cut(s, ": ")
	if !ok || !paramIn(in) {
		return false
	}
	name, rest, ok := goQuoted(rest)
	if !ok || name == "" || !strings.HasPrefix(rest, ": ") {
		return false
	}
	reason := rest[2:]
	if !p.building() {
		return true
	}
	is := Issue{Path: paramPointer(name), Message: reason}
	if fn, r, ok := strings.Cut(reason, `: parsing "`); ok {
		if t := strconvType(fn); t != "" && strings.Contains(r, `": `) {
			is.Code, is.Expected = "type", quoteJSON(t)
			if v, _, ok := goQuoted(`"` + r); ok {
				is.Received = quoteJSON(v)
			}
		}
	} else {
		p.ogenReason(&is, reason)
	}
	is.Message = paramMessage(in, name, is.Message)
	p.addIssue(is)
	return true
}

// strconvType is the JSON type a strconv parse function reads.
func strconvType(fn string) string {
	switch fn {
	case "strconv.Atoi", "strconv.ParseInt", "strconv.ParseUint":
		return "integer"
	case "strconv.ParseFloat":
		return "number"
	case "strconv.ParseBool":
		return "boolean"
	}
	return ""
}
