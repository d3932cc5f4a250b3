package remedy

import (
	"encoding/json"
	"strings"
)

// Issues whose path starts with where in the request the value travelled: Huma's location
// ("body.items[3].tags", "query.limit", "header.X-Foo") and FastAPI's loc (["body", "items",
// 3], ["query", "limit"]). A body location becomes a pointer into the body; a parameter
// becomes a pointer to the argument of that name (the client sends arguments as path and
// query parameters by name), and the issue's message says which kind of parameter it is, since
// Issue has no field for it.

// paramIn reports whether a location's first segment names a request parameter's place.
func paramIn(s string) bool {
	switch s {
	case "query", "path", "header", "cookie":
		return true
	}
	return false
}

// locationPath reads a Huma location. in is the parameter's place ("" for the body) and name
// its name.
func locationPath(loc string) (path, in, name string) {
	head, rest, _ := strings.Cut(loc, ".")
	switch {
	case head == "body":
		return dottedPointer(rest, false), "", ""
	case paramIn(head) && rest != "":
		return paramPointer(rest), head, rest
	}
	return toPointer(loc), "", ""
}

// locPath reads a FastAPI loc array the same way.
func locPath(loc val) (path, in, name string) {
	head := loc.member("0")
	if h := head.Str(); head.IsString() && paramIn(h) && loc.len() > 1 {
		b := pointerBuilder{}
		it := loc.iter()
		it.next()
		for it.next() {
			seg := it.val().Text()
			if name == "" {
				name = seg
			}
			b.add(seg, false)
		}
		return b.String(), h, name
	}
	if head.Str() == "body" && loc.len() == 1 {
		return "", "", "" // the whole body
	}
	return arrayPointer(loc), "", ""
}

func paramPointer(name string) string {
	var b strings.Builder
	b.Grow(len(name) + 1)
	b.WriteByte('/')
	writeEscaped(&b, name)
	return b.String()
}

// paramMessage says which parameter a message is about.
func paramMessage(in, name, msg string) string {
	if in == "" {
		return msg
	}
	return in + " parameter " + name + ": " + msg
}

// humaFacts reads what Huma's validation messages state (the formats of huma/v2/validation)
// into the issue: a code, and the bound, pattern, type or allowed values the field must meet.
// A required property's name extends the path to the member that is missing.
func (p *parser) humaFacts(is *Issue) {
	msg := is.Message
	if !strings.HasPrefix(msg, "expected ") {
		switch msg {
		case "invalid integer", "invalid number", "invalid boolean":
			is.Code, is.Expected = "type", quoteJSON(msg[len("invalid "):])
		case "unexpected property":
			is.Code = "additionalProperties"
		}
		return
	}
	rest := msg[len("expected "):]
	if s, ok := strings.CutPrefix(rest, `value to be one of "`); ok && strings.HasSuffix(s, `"`) {
		is.Code = "enum"
		p.humaEnum(is, s[:len(s)-1])
		return
	}
	if s, ok := strings.CutPrefix(rest, "string to match pattern "); ok {
		is.Code, is.Expected = "pattern", p.fragment("pattern", quoteJSON(s))
		return
	}
	if s, ok := strings.CutPrefix(rest, "required property "); ok {
		if name, ok := strings.CutSuffix(s, " to be present"); ok {
			is.Code = "required"
			is.Path += paramPointer(name)
			is.Received = nil // the object that lacks it, not the member's value
		}
		return
	}
	switch rest {
	case "integer", "number", "string", "boolean", "array", "object":
		is.Code, is.Expected = "type", quoteJSON(rest)
		return
	}
	for _, b := range humaBounds {
		if s, ok := strings.CutPrefix(rest, b.prefix); ok && isJSONNumber(s) {
			is.Code, is.Expected = b.keyword, p.fragment(b.keyword, json.RawMessage(s))
			return
		}
	}
}

// humaBounds are Huma's messages for bounds, longest prefix first where two share a start.
var humaBounds = [...]struct{ prefix, keyword string }{
	{"number >= ", "minimum"},
	{"number > ", "exclusiveMinimum"},
	{"number <= ", "maximum"},
	{"number < ", "exclusiveMaximum"},
	{"number to be a multiple of ", "multipleOf"},
	{"array length >= ", "minItems"},
	{"array length <= ", "maxItems"},
	{"length >= ", "minLength"},
	{"length <= ", "maxLength"},
}

// fragment is the schema fragment {"keyword": value}, value being valid JSON.
func (p *parser) fragment(keyword string, value json.RawMessage) json.RawMessage {
	if !p.full {
		return nil
	}
	b := make([]byte, 0, len(keyword)+len(value)+5)
	b = append(b, `{"`...)
	b = append(b, keyword...)
	b = append(b, `":`...)
	b = append(b, value...)
	b = append(b, '}')
	return b
}

// humaEnum reads the list of an enum message ("usd, eur, gbp"): numbers when the value that
// arrived is a number and every listed value is one, strings otherwise.
func (p *parser) humaEnum(is *Issue, list string) {
	if !p.full || list == "" {
		return
	}
	parts := strings.Split(list, ", ")
	numeric := len(is.Received) > 0 && isJSONNumber(string(is.Received))
	for _, s := range parts {
		numeric = numeric && isJSONNumber(s)
	}
	is.AllowedValues = make([]json.RawMessage, len(parts))
	for i, s := range parts {
		if numeric {
			is.AllowedValues[i] = json.RawMessage(s)
		} else {
			is.AllowedValues[i] = quoteJSON(s)
		}
	}
}

// pydanticFacts reads a pydantic error's ctx into the issue: bounds and patterns as a schema
// fragment, an enum's or literal's expected values as the allowed values; v2's keys, and v1's
// (limit_value, whose keyword the code's last part names; enum_values, permitted, given).
func (p *parser) pydanticFacts(is *Issue, ctx val) {
	switch is.Code {
	case "missing":
		is.Received = nil // pydantic's input is then the object that lacks the member
	case "json_invalid", "value_error.jsondecode":
		is.Path = "" // FastAPI's loc is ["body", offset]: a place in the text, not a member
	default:
		if typ := pydanticTypes[is.Code]; typ != "" && is.Expected == nil {
			is.Expected = quoteJSON(typ)
		}
	}
	if !p.full || !ctx.IsObject() {
		return
	}
	for it := ctx.iter(); it.next(); {
		v := it.val()
		keyword := ""
		switch it.Key() {
		case "limit_value":
			keyword = pydanticV1Bounds[is.Code[strings.LastIndexByte(is.Code, '.')+1:]]
			if strings.Contains(is.Code, ".list.") || strings.Contains(is.Code, ".set.") {
				keyword = strings.Replace(keyword, "Length", "Items", 1)
			}
		case "enum_values", "permitted":
			is.AllowedValues = p.rawList(v)
		case "given":
			if is.Received == nil {
				is.Received = p.raw(v)
			}
		case "gt":
			keyword = "exclusiveMinimum"
		case "ge":
			keyword = "minimum"
		case "lt":
			keyword = "exclusiveMaximum"
		case "le":
			keyword = "maximum"
		case "multiple_of":
			keyword = "multipleOf"
		case "pattern":
			keyword = "pattern"
		case "min_length":
			keyword = "minLength"
			if !strings.HasPrefix(is.Code, "string_") {
				keyword = "minItems"
			}
		case "max_length":
			keyword = "maxLength"
			if !strings.HasPrefix(is.Code, "string_") {
				keyword = "maxItems"
			}
		case "expected":
			if is.Code == "enum" || is.Code == "literal_error" {
				is.AllowedValues = pydanticChoices(v.Str())
			}
		}
		if keyword != "" && is.Expected == nil && (v.IsNumber() || v.IsString()) {
			is.Expected = p.fragment(keyword, p.raw(v))
		}
	}
}

// pydanticTypes maps pydantic's type errors to the JSON type the value must have: v2's
// <type>_type (the value had another type) and <type>_parsing (a string that does not parse
// as one), and v1's type_error.<type>. A type with no single JSON type (dates, UUIDs, which
// travel as strings of a format; decimals, which may be numbers or strings) is not listed.
var pydanticTypes = map[string]string{
	"int_type": "integer", "int_parsing": "integer", "int_from_float": "integer",
	"float_type": "number", "float_parsing": "number",
	"string_type": "string", "bool_type": "boolean", "bool_parsing": "boolean",
	"list_type": "array", "tuple_type": "array", "set_type": "array",
	"dict_type": "object", "model_type": "object", "model_attributes_type": "object",
	"type_error.integer": "integer", "type_error.float": "number", "type_error.str": "string",
	"type_error.bool": "boolean", "type_error.list": "array", "type_error.tuple": "array",
	"type_error.set": "array", "type_error.dict": "object",
}

// pydanticV1Bounds maps the last part of a pydantic v1 code to the keyword its limit_value
// is the bound of (for lists, Length becomes Items).
var pydanticV1Bounds = map[string]string{
	"not_gt": "exclusiveMinimum", "not_ge": "minimum", "not_lt": "exclusiveMaximum", "not_le": "maximum",
	"min_length": "minLength", "max_length": "maxLength", "min_items": "minItems", "max_items": "maxItems",
}

// pydanticChoices reads pydantic's list of expected values: "'asc' or 'desc'", "'a', 'b' or
// 'c'", "1, 2 or 3". A quoted item is a string, an unquoted number a number; anything else
// makes the list unreadable (nil).
func pydanticChoices(s string) []json.RawMessage {
	var out []json.RawMessage
	for s != "" {
		var item string
		if s[0] == '\'' {
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil
			}
			item, s = s[1:1+end], s[2+end:]
			out = append(out, quoteJSON(item))
		} else {
			end := strings.IndexAny(s, ", ")
			if end < 0 {
				end = len(s)
			}
			item, s = s[:end], s[end:]
			if !isJSONNumber(item) {
				return nil
			}
			out = append(out, json.RawMessage(item))
		}
		switch {
		case strings.HasPrefix(s, ", "):
			s = s[2:]
		case strings.HasPrefix(s, " or "):
			s = s[4:]
		case s != "":
			return nil
		}
	}
	return out
}

// zodMarker starts the part of the TypeScript MCP SDK's validation error that names the tool;
// after the tool's name and ": " come zod's issues: a JSON array (SDK 1.17 to 1.2x, zod 3's
// message) or one "message at path" line each (later SDKs).
const zodMarker = "Invalid arguments for tool "

// zodIssues reads the zod issues of such a message into issues; it reports whether msg was
// one.
func (p *parser) zodIssues(msg string) bool {
	i := strings.Index(msg, zodMarker)
	if i < 0 {
		return false
	}
	rest := msg[i+len(zodMarker):]
	j := strings.Index(rest, ": ")
	if j < 0 {
		return false
	}
	rest = strings.TrimSpace(rest[j+2:])
	if !p.full {
		p.unread = true
		return true
	}
	if strings.HasPrefix(rest, "[") {
		t := getTape()
		if t.parse(rest) {
			p.zodList(t.root())
		}
		putTape(t)
		return true
	}
	for _, line := range strings.Split(rest, "\n") {
		is := Issue{Message: line}
		if k := strings.LastIndex(line, " at "); k >= 0 {
			is.Message = line[:k]
			if path := line[k+len(" at "):]; path != "object root" {
				is.Path = toPointer(path)
			}
		}
		p.zod4Facts(&is)
		p.addIssue(is)
	}
	return true
}

// zod4Facts reads what zod 4's English messages state (zod/v4/locales/en) into the issue: the
// code, and the type, allowed values, bound or pattern the field must meet.
func (p *parser) zod4Facts(is *Issue) {
	msg := is.Message
	switch {
	case strings.HasPrefix(msg, "Invalid input: expected "):
		rest := msg[len("Invalid input: expected "):]
		if typ, _, ok := strings.Cut(rest, ", received "); ok && isWord(typ) {
			is.Code, is.Expected = "invalid_type", quoteJSON(typ)
		} else if v := zodLiteral(rest); v != nil {
			is.Code = "invalid_value"
			if p.full {
				is.AllowedValues = []json.RawMessage{v}
			}
		}
	case strings.HasPrefix(msg, "Invalid option: expected one of "):
		is.Code = "invalid_value"
		parts := strings.Split(msg[len("Invalid option: expected one of "):], "|")
		values := make([]json.RawMessage, 0, len(parts))
		for _, s := range parts {
			v := zodLiteral(s)
			if v == nil {
				return // a value holding "|", say: better none than wrong ones
			}
			values = append(values, v)
		}
		if p.full {
			is.AllowedValues = values
		}
	case strings.HasPrefix(msg, "Too big: expected "), strings.HasPrefix(msg, "Too small: expected "):
		small := strings.HasPrefix(msg, "Too small")
		is.Code = "too_big"
		if small {
			is.Code = "too_small"
		}
		rest := msg[strings.Index(msg, "expected ")+len("expected "):]
		origin, rest, _ := strings.Cut(rest, " ")
		sized := strings.HasPrefix(rest, "to have ") // a length: strings, arrays, sets
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, "to have "), "to be ")
		op := strings.TrimRight(rest[:len(rest)-len(strings.TrimLeft(rest, "<>="))], " ")
		num, _, _ := strings.Cut(rest[len(op):], " ")
		if !isJSONNumber(num) || (op != "<=" && op != ">=" && op != "<" && op != ">") {
			return
		}
		numeric := origin == "number" || origin == "int" || origin == "bigint"
		if keyword := zodKeyword(origin, small, op == "<" || op == ">"); keyword != "" && sized != numeric {
			is.Expected = p.fragment(keyword, json.RawMessage(num))
		}
	case strings.HasPrefix(msg, "Invalid string: must match pattern /"):
		is.Code = "invalid_format"
		re := msg[len("Invalid string: must match pattern "):]
		if len(re) >= 2 && re[len(re)-1] == '/' { // a RegExp's source, without flags
			is.Expected = p.fragment("pattern", quoteJSON(re[1:len(re)-1]))
		}
	case strings.HasPrefix(msg, "Unrecognized key"):
		is.Code = "unrecognized_keys"
	}
}

// zodLiteral is a value as zod 4 prints it in a message (stringifyPrimitive): a string in
// double quotes (not escaped), a number, true, false or null; nil for anything else.
func zodLiteral(s string) json.RawMessage {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		if inner := s[1 : len(s)-1]; !strings.ContainsAny(inner, "\"\\") {
			return quoteJSON(inner)
		}
		return nil
	}
	if isJSONNumber(s) || s == "true" || s == "false" || s == "null" {
		return json.RawMessage(s)
	}
	return nil
}

// isWord reports whether s is a lower-case type name, as zod prints one.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// zodList reads zod's issues: zod 3's {code, message, path, expected, received, options,
// minimum, maximum, type}, and zod 4's, which name the type origin and an enum's values. An
// invalid_type's received is a type name, not the value, so it is not kept.
func (p *parser) zodList(v val) {
	for it := v.iter(); it.next(); {
		x := it.val()
		if !x.IsObject() {
			continue
		}
		is := Issue{Path: arrayPointer(x.member("path")), Code: x.member("code").Str(), Message: x.member("message").Str()}
		switch is.Code {
		case "invalid_type":
			// zod 3 names an enum or a literal it expected by its values ("'a' | 'b'"):
			// only a JSON type name is an expected type.
			if exp := x.member("expected"); jsonType(exp.Str()) {
				is.Expected = p.raw(exp)
			}
		case "invalid_enum_value", "invalid_literal":
			is.Received = p.raw(x.member("received"))
			is.AllowedValues = p.rawList(x.member("options"))
		case "invalid_value": // zod 4's enum and literal
			is.AllowedValues = p.rawList(x.member("values"))
		case "too_small", "too_big":
			is.Expected = p.zodBound(x, is.Code == "too_small")
		}
		p.addIssue(is)
	}
}

// zodKeyword is the JSON Schema keyword of a zod bound (small: a lower one) on a value of type
// typ, as zod names types: minimum or maximum for numbers, exclusive ones when the bound is;
// minLength/maxLength for strings, minItems/maxItems for arrays and sets; "" otherwise (an
// exclusive length is not one JSON Schema can state).
func zodKeyword(typ string, small, exclusive bool) string {
	var lo, hi string
	switch typ {
	case "number", "int", "bigint":
		lo, hi = "minimum", "maximum"
		if exclusive {
			lo, hi = "exclusiveMinimum", "exclusiveMaximum"
		}
	case "string":
		lo, hi = "minLength", "maxLength"
	case "array", "set":
		lo, hi = "minItems", "maxItems"
	}
	if exclusive && lo != "exclusiveMinimum" {
		return ""
	}
	if small {
		return lo
	}
	return hi
}

// zodBound is zod's bound as a schema fragment: minimum or maximum (exclusive when not
// inclusive) for numbers, minLength/maxLength for strings, minItems/maxItems for arrays.
func (p *parser) zodBound(x val, small bool) json.RawMessage {
	bound := x.member("maximum")
	if small {
		bound = x.member("minimum")
	}
	if !bound.IsNumber() {
		return nil
	}
	typ := x.member("type").Str()
	if typ == "" {
		typ = x.member("origin").Str() // zod 4
	}
	keyword := zodKeyword(typ, small, x.member("inclusive").kind() == kFalse)
	if keyword == "" {
		return nil
	}
	return p.fragment(keyword, p.raw(bound))
}
