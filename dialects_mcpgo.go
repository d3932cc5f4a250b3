package remedy

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/remedy-go/remedy/internal/prose"
	"github.com/remedy-go/remedy/internal/tape"
)

// mcp-go's (github.com/mark3labs/mcp-go) argument failures, which come as the text of a tool
// error: its server's input schema validation, the errors of the argument accessors a handler
// returns as its result, and a typed handler's binding failure. Their texts are those of
// mcp-go v1.2.1, recorded in testdata/envelopes/mcp/mcp-go-* by interop/mcpgo.

// mcpgoValidation starts the text of a call refused by mcp-go's input schema validation
// (server.WithInputSchemaValidation): then one "<JSON Pointer>: <violation>" per violation,
// joined by "; ", the pointer "<root>" for the arguments themselves.
const mcpgoValidation = "input schema validation failed: "

// maxMCPGoParts bounds the violations read from one text.
const maxMCPGoParts = 100

// mcpgoIssues reads an mcp-go argument failure in a tool error's text into issues; it reports
// whether text was one.
func (p *parser) mcpgoIssues(text string) bool {
	if rest, ok := strings.CutPrefix(text, mcpgoValidation); ok {
		if p.full {
			p.mcpgoValidation(rest)
		} else {
			p.unread = true
		}
		return true
	}
	if rest, ok := strings.CutPrefix(text, "failed to bind arguments: "); ok {
		return p.jsonText(rest) // a typed handler's binding failure: encoding/json's text
	}
	if is, ok := accessorIssue(text); ok {
		p.addIssue(is)
		return true
	}
	return false
}

// mcpgoValidation reads the violations of a schema validation failure. Each is the
// validator's (santhosh-tekuri/jsonschema v6) error kind, as mcp-go v1.2.1 prints it (the Go
// value: "&{Got:0/1 Want:1/1}"), or as the validator words it ("minimum: got 0, want 1");
// either way the issue gets the validator's words. Go's print of a numeric bound does not say
// which keyword failed (minimum, maximum, exclusive or multipleOf), so such an issue says
// what arrived and the limit, and no keyword.
func (p *parser) mcpgoValidation(s string) {
	for n := 0; s != "" && n < maxMCPGoParts; n++ {
		part := s
		s = ""
		// The next violation starts with its pointer; a "; " inside a value does not split.
		for i := 0; ; {
			j := strings.Index(part[i:], "; ")
			if j < 0 {
				break
			}
			if next := part[i+j+2:]; strings.HasPrefix(next, "/") || strings.HasPrefix(next, "<root>: ") {
				part, s = part[:i+j], next
				break
			}
			i += j + 2
		}
		at, v, ok := strings.Cut(part, ": ")
		if !ok || (at != "<root>" && !strings.HasPrefix(at, "/")) {
			p.addIssue(Issue{Message: part})
			continue
		}
		if at == "<root>" {
			at = ""
		}
		if strings.HasPrefix(v, "&{") && strings.HasSuffix(v, "}") {
			p.goKind(at, v[2:len(v)-1])
		} else {
			p.schemaMessage(at, v)
		}
	}
}

// jsonTypes are the type names of JSON Schema, as the validator says them.
var jsonTypes = map[string]bool{"null": true, "boolean": true, "object": true, "array": true,
	"number": true, "integer": true, "string": true}

// goKind reads one error kind as Go prints it (%+v, without "&{" and "}").
func (p *parser) goKind(at, v string) {
	list := func(s string) []string {
		s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
		if s == "" {
			return nil
		}
		return strings.Split(s, " ")
	}
	switch {
	case strings.HasPrefix(v, "Missing:"): // required
		p.required(at, list(v[len("Missing:"):]))
		return
	case strings.HasPrefix(v, "Prop:"): // dependentRequired, dependencies
		if _, m, ok := strings.Cut(v, " Missing:"); ok {
			p.required(at, list(m))
			return
		}
	case strings.HasPrefix(v, "Properties:"): // additionalProperties
		p.additional(at, list(v[len("Properties:"):]))
		return
	case strings.HasPrefix(v, "Got:"):
		w := strings.LastIndex(v, " Want:")
		if w < 0 {
			break
		}
		got, want := v[len("Got:"):w], v[w+len(" Want:"):]
		if f, _, ok := strings.Cut(want, " Err:"); ok { // format
			p.addIssue(Issue{Path: at, Code: "format", Message: jsQuote(got) + " is not valid " + f,
				Expected: p.fragment("format", quoteJSON(f))})
			return
		}
		if strings.HasPrefix(want, "[") && strings.HasSuffix(want, "]") {
			wants := list(want)
			types := jsonTypes[got] && len(wants) > 0
			for _, w := range wants {
				types = types && jsonTypes[w]
			}
			if types {
				p.typeIssue(at, got, wants)
			} else {
				p.enumIssue(at, got, wants, false)
			}
			return
		}
		gr, wr := ratText(got), ratText(want)
		switch {
		case gr != "" && wr != "": // a numeric bound or multipleOf: which, Go's print does not say
			is := Issue{Path: at, Message: "got " + gr + ", want " + wr}
			if tape.IsNumber(gr) {
				is.Received = json.RawMessage(gr)
			}
			p.addIssue(is)
		case isCount(got) && isCount(want): // a length, item or property count
			p.addIssue(Issue{Path: at, Message: "got " + got + ", want " + want})
		case strings.HasPrefix(want, "^") || strings.HasSuffix(want, "$"):
			p.patternIssue(at, got, want)
		default:
			p.addIssue(Issue{Path: at, Message: "got " + got + ", want " + want})
		}
		return
	case strings.HasPrefix(v, "Duplicates:"):
		if d := list(v[len("Duplicates:"):]); len(d) == 2 {
			p.addIssue(Issue{Path: at, Code: "uniqueItems", Message: "items at " + d[0] + " and " + d[1] + " are equal"})
			return
		}
	case v == "":
		p.addIssue(Issue{Path: at, Code: "false", Message: "false schema"})
		return
	}
	p.addIssue(Issue{Path: at, Message: prose.Clip(v, 300)})
}

// schemaMessage reads one violation as the validator words it.
func (p *parser) schemaMessage(at, v string) {
	if names, ok := strings.CutPrefix(v, "missing property "); ok {
		p.required(at, jsQuotedList(names))
		return
	}
	if names, ok := strings.CutPrefix(v, "missing properties "); ok {
		p.required(at, jsQuotedList(names))
		return
	}
	if rest, ok := strings.CutPrefix(v, "additional properties "); ok {
		if names, ok := strings.CutSuffix(rest, " not allowed"); ok {
			p.additional(at, jsQuotedList(names))
			return
		}
	}
	if list, ok := strings.CutPrefix(v, "value must be one of "); ok {
		p.enumIssue(at, "", strings.Split(list, ", "), true)
		return
	}
	if rest, ok := strings.CutPrefix(v, "got "); ok {
		if got, want, ok := strings.Cut(rest, ", want "); ok && jsonTypes[got] {
			wants := strings.Split(want, " or ")
			types := true
			for _, w := range wants {
				types = types && jsonTypes[w]
			}
			if types {
				p.typeIssue(at, got, wants)
				return
			}
		}
	}
	if kw, rest, ok := strings.Cut(v, ": got "); ok && schemaBounds[kw] {
		if _, want, ok := strings.Cut(rest, ", want "); ok && tape.IsNumber(want) {
			p.addIssue(Issue{Path: at, Code: kw, Message: v, Expected: p.fragment(kw, json.RawMessage(want))})
			return
		}
	}
	if got, want, ok := strings.Cut(v, " does not match pattern "); ok {
		g, gok := jsUnquote(got)
		w, wok := jsUnquote(want)
		if gok && wok {
			p.patternIssue(at, g, w)
			return
		}
	}
	p.addIssue(Issue{Path: at, Message: prose.Clip(v, 300)})
}

// schemaBounds are the keywords whose violation the validator words "<keyword>: got X, want Y".
var schemaBounds = map[string]bool{"minimum": true, "maximum": true, "exclusiveMinimum": true,
	"exclusiveMaximum": true, "multipleOf": true, "minLength": true, "maxLength": true,
	"minItems": true, "maxItems": true, "minProperties": true, "maxProperties": true}

// required adds one issue per missing member of the object at at.
func (p *parser) required(at string, names []string) {
	for _, n := range names {
		p.addIssue(Issue{Path: at + paramPointer(n), Code: "required", Message: "missing property " + jsQuote(n)})
	}
}

// additional adds one issue per member of the object at at that the schema does not allow.
func (p *parser) additional(at string, names []string) {
	for _, n := range names {
		p.addIssue(Issue{Path: at + paramPointer(n), Code: "additionalProperties",
			Message: "additional properties " + jsQuote(n) + " not allowed"})
	}
}

func (p *parser) typeIssue(at, got string, wants []string) {
	is := Issue{Path: at, Code: "type", Message: "got " + got + ", want " + strings.Join(wants, " or ")}
	if len(wants) == 1 {
		is.Expected = quoteJSON(wants[0])
	} else if p.full {
		list, _ := json.Marshal(wants)
		is.Expected = p.fragment("type", list)
	}
	p.addIssue(is)
}

// enumIssue adds the issue of a value not among wants. quoted says the values are written as
// the validator displays them (strings in single quotes, other values as JSON); else they are
// as Go prints them, bare, and are read as numbers when every one is a number, as strings
// otherwise.
func (p *parser) enumIssue(at, got string, wants []string, quoted bool) {
	is := Issue{Path: at, Code: "enum"}
	vals := make([]json.RawMessage, 0, len(wants))
	if quoted {
		for _, w := range wants {
			if s, ok := jsUnquote(w); ok {
				vals = append(vals, quoteJSON(s))
			} else if tape.Valid(w) {
				vals = append(vals, json.RawMessage(w))
			} else {
				vals = nil
				break
			}
		}
		is.Message = "value must be one of " + strings.Join(wants, ", ")
	} else {
		numeric := true
		for _, w := range wants {
			numeric = numeric && tape.IsNumber(w)
		}
		shown := make([]string, len(wants))
		for i, w := range wants {
			if numeric {
				vals, shown[i] = append(vals, json.RawMessage(w)), w
			} else {
				vals, shown[i] = append(vals, quoteJSON(w)), jsQuote(w)
			}
		}
		is.Message = "value must be one of " + strings.Join(shown, ", ")
		if numeric && tape.IsNumber(got) {
			is.Received = json.RawMessage(got)
		} else {
			is.Received = quoteJSON(got)
		}
		if slices.Contains(wants, got) {
			// A value printed as one of the allowed ones was refused for its type: the
			// print does not say which type the allowed values have.
			vals, is.Received = nil, nil
		}
	}
	if p.full && len(vals) > 0 {
		is.AllowedValues = vals
	}
	p.addIssue(is)
}

func (p *parser) patternIssue(at, got, want string) {
	p.addIssue(Issue{Path: at, Code: "pattern", Message: jsQuote(got) + " does not match pattern " + jsQuote(want),
		Expected: p.fragment("pattern", quoteJSON(want)), Received: quoteJSON(got)})
}

// accessorIssue reads the errors of mcp-go's argument accessors (RequireString, RequireInt,
// RequireFloat, RequireBool and their slice forms), which handlers return as their result:
// required argument "x" not found; argument "x" is not a string; argument "x" cannot be
// converted to int; item 2 in argument "tags" is not a string.
func accessorIssue(text string) (Issue, bool) {
	if rest, ok := strings.CutPrefix(text, "required argument "); ok {
		name, tail, ok := goQuoted(rest)
		if ok && tail == " not found" {
			return Issue{Path: paramPointer(name), Code: "required", Message: text}, true
		}
		return Issue{}, false
	}
	path := ""
	rest := text
	if r, ok := strings.CutPrefix(text, "item "); ok {
		idx, r2, ok := strings.Cut(r, " in ")
		if !ok || !isCount(idx) {
			return Issue{}, false
		}
		path, rest = "/"+idx, r2
	}
	rest, ok := strings.CutPrefix(rest, "argument ")
	if !ok {
		return Issue{}, false
	}
	name, tail, ok := goQuoted(rest)
	if !ok {
		return Issue{}, false
	}
	var goType string
	if t, ok := strings.CutPrefix(tail, " is not a "); ok {
		goType = t
	} else if t, ok := strings.CutPrefix(tail, " is not an "); ok {
		goType = t
	} else if t, ok := strings.CutPrefix(tail, " cannot be converted to "); ok {
		goType = t
	} else {
		return Issue{}, false
	}
	want := goJSONType(goType)
	if want == "" {
		return Issue{}, false
	}
	return Issue{Path: paramPointer(name) + path, Code: "type", Message: text, Expected: quoteJSON(want)}, true
}

// goJSONType is the JSON Schema type a Go type decodes, as mcp-go's texts name them ("int",
// "float64", "string slice", "[]string", "map[string]interface {}"); "" when unknown.
func goJSONType(t string) string {
	t = strings.TrimLeft(t, "*")
	switch {
	case strings.HasSuffix(t, " slice"), strings.HasPrefix(t, "[]"), strings.HasPrefix(t, "["):
		return "array"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "struct"):
		return "object"
	case t == "string":
		return "string"
	case t == "bool":
		return "boolean"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "integer"
	case strings.HasPrefix(t, "float"):
		return "number"
	}
	return "" // a named type may decode from anything
}

// goQuoted reads a Go-quoted string at the start of s and returns it and what follows.
func goQuoted(s string) (string, string, bool) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", false
	}
	v, err := strconv.Unquote(q)
	if err != nil {
		return "", "", false
	}
	return v, s[len(q):], true
}

// jsQuote quotes s as the validator does in its messages: Go's quoting, in single quotes.
func jsQuote(s string) string {
	q := strconv.Quote(s)
	return "'" + q[1:len(q)-1] + "'"
}

// jsUnquote reads a string quoted by jsQuote.
func jsUnquote(s string) (string, bool) {
	if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return "", false
	}
	v, err := strconv.Unquote(`"` + s[1:len(s)-1] + `"`)
	return v, err == nil
}

// jsQuotedList reads "'a', 'b'" into its strings; nil when it is not such a list.
func jsQuotedList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ", ") {
		v, ok := jsUnquote(part)
		if !ok {
			return nil
		}
		out = append(out, v)
	}
	return out
}

// ratText is a big.Rat as Go prints it ("3/2") in decimal ("1.5"); "" when s is not one.
func ratText(s string) string {
	num, den, ok := strings.Cut(s, "/")
	if !ok || !isCount(strings.TrimPrefix(num, "-")) || !isCount(den) || den == "0" {
		return ""
	}
	if den == "1" {
		return num
	}
	n, err1 := strconv.ParseFloat(num, 64)
	d, err2 := strconv.ParseFloat(den, 64)
	if err1 != nil || err2 != nil {
		return ""
	}
	return strconv.FormatFloat(n/d, 'g', -1, 64)
}

// isCount reports whether s is a non-negative decimal integer.
func isCount(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
