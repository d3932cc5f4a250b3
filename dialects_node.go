package remedy

import (
	"encoding/json"
	"strings"

	"github.com/remedy-go/remedy/internal/tape"
)

// The default failures of the Node validators: ajv's messages (as fastify, express-openapi-
// validator and Prism answer them), express-validator's list, class-validator's messages (as
// NestJS's ValidationPipe answers them), Joi's (as celebrate answers them) and zod's result
// (as @hono/zod-validator answers it). A message is read only against its validator's exact
// English template; anything else stays a message. On the classification path (p.full false)
// the readers allocate nothing: they only say whether the full parse keeps an issue.

// ajvFacts reads one of ajv's English messages (ajv v8, lib/vocabularies) into the issue: the
// keyword as the code, and the bound, type, pattern or format as Expected. is.Path is the
// instance the message is about; a required property's name extends it. listed says that an
// enum's message may end with ": " and its values (express-openapi-validator and Prism append
// them). It reports whether msg is one of the templates.
func (p *parser) ajvFacts(is *Issue, msg string, listed bool) bool {
	const enum = "must be equal to one of the allowed values"
	switch {
	case msg == enum:
		is.Code = "enum"
	case listed && strings.HasPrefix(msg, enum+": "):
		is.Code = "enum"
		is.AllowedValues = p.nodeList(msg[len(enum+": "):], ", ")
	case strings.HasPrefix(msg, "must have required property '") && strings.HasSuffix(msg, "'"):
		name := msg[len("must have required property '") : len(msg)-1]
		if name == "" || strings.IndexByte(name, '\'') >= 0 {
			return false // two messages joined, or a name no reader can tell apart
		}
		is.Code = "required"
		if p.full {
			is.Path += paramPointer(name)
		}
	case msg == "must NOT have additional properties":
		is.Code = "additionalProperties"
	case msg == "must be equal to constant":
		is.Code = "const"
	case strings.HasPrefix(msg, `must match pattern "`) && strings.HasSuffix(msg, `"`) && len(msg) > len(`must match pattern ""`):
		is.Code = "pattern"
		is.Expected = p.fragment("pattern", p.quote(msg[len(`must match pattern "`):len(msg)-1]))
	case strings.HasPrefix(msg, `must match format "`) && strings.HasSuffix(msg, `"`) && len(msg) > len(`must match format ""`):
		is.Code = "format"
		is.Expected = p.fragment("format", p.quote(msg[len(`must match format "`):len(msg)-1]))
	case strings.HasPrefix(msg, "must be multiple of "):
		n := msg[len("must be multiple of "):]
		if !tape.IsNumber(n) {
			return false
		}
		is.Code, is.Expected = "multipleOf", p.fragment("multipleOf", json.RawMessage(n))
	case strings.HasPrefix(msg, "must NOT have "):
		return p.ajvSize(is, msg[len("must NOT have "):])
	case strings.HasPrefix(msg, "must be "):
		rest := msg[len("must be "):]
		if jsonType(rest) {
			is.Code, is.Expected = "type", p.quote(rest)
			return true
		}
		op, n, _ := strings.Cut(rest, " ")
		keyword := ""
		switch op {
		case "<=":
			keyword = "maximum"
		case ">=":
			keyword = "minimum"
		case "<":
			keyword = "exclusiveMaximum"
		case ">":
			keyword = "exclusiveMinimum"
		}
		if keyword == "" || !tape.IsNumber(n) {
			return false
		}
		is.Code, is.Expected = keyword, p.fragment(keyword, json.RawMessage(n))
	default:
		return false
	}
	return true
}

// ajvSize reads the rest of ajv's size messages: "more than 10 characters" (maxLength),
// "fewer than 2 items" (minItems), and properties alike.
func (p *parser) ajvSize(is *Issue, rest string) bool {
	comp, rest, _ := strings.Cut(rest, " than ")
	n, unit, _ := strings.Cut(rest, " ")
	if !tape.IsNumber(n) || comp != "more" && comp != "fewer" {
		return false
	}
	var keyword string
	switch unit {
	case "characters":
		keyword = "Length"
	case "items":
		keyword = "Items"
	case "properties":
		keyword = "Properties"
	default:
		return false
	}
	if comp == "more" {
		keyword = "max" + keyword
	} else {
		keyword = "min" + keyword
	}
	is.Code, is.Expected = keyword, p.fragment(keyword, json.RawMessage(n))
	return true
}

// quote is s as a JSON string, on the full parse.
func (p *parser) quote(s string) json.RawMessage {
	if !p.full {
		return nil
	}
	return quoteJSON(s)
}

// nodeList reads a list of allowed values as the Node validators print one, joined by sep
// without quotes (Array.prototype.join); an empty sep reads the list as one value. Such a list cannot tell the string "1" from the
// number 1, nor "null" from null: a list with an item that reads as a JSON number, true, false
// or null, an empty item, or an object is left out (nil), as is one on the classification path.
func (p *parser) nodeList(list, sep string) []json.RawMessage {
	if !p.full || list == "" {
		return nil
	}
	parts := []string{list}
	if sep != "" {
		parts = strings.Split(list, sep)
	}
	for _, s := range parts {
		if s == "" || tape.IsNumber(s) || s == "true" || s == "false" || s == "null" || s == "[object Object]" {
			return nil
		}
	}
	out := make([]json.RawMessage, len(parts))
	for i, s := range parts {
		out[i] = quoteJSON(s)
	}
	return out
}

// ajvPart reads the part of a request a Node validator names ("body", "querystring",
// "query", "params", "headers", "cookies"): in is "" for the body, else the place of a
// parameter as paramMessage names it; ok is false for any other word.
func ajvPart(part string) (in string, ok bool) {
	switch part {
	case "body":
		return "", true
	case "querystring", "query":
		return "query", true
	case "params", "path":
		return "path", true
	case "headers", "header":
		return "header", true
	case "cookies":
		return "cookie", true
	}
	return "", false
}

// firstSegment is the parameter a pointer starts with, unescaped.
func firstSegment(ptr string) string {
	ptr = strings.TrimPrefix(ptr, "/")
	if i := strings.IndexByte(ptr, '/'); i >= 0 {
		ptr = ptr[:i]
	}
	if strings.IndexByte(ptr, '~') >= 0 {
		ptr = pointerUnescaper.Replace(ptr)
	}
	return ptr
}

var pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

// fastifyIssue reads fastify's validation message (code FST_ERR_VALIDATION): each of ajv's
// errors as "<part><instancePath> <message>" (fastify's defaultSchemaErrorFormatter), the part
// being body, querystring, params or headers. A message of several errors (joined by ", ") is
// not read: where one ends is not certain.
func (p *parser) fastifyIssue(msg string) {
	head, rest, ok := strings.Cut(msg, " ")
	part, ptr := head, ""
	if i := strings.IndexByte(head, '/'); i >= 0 {
		part, ptr = head[:i], head[i:]
	}
	in, known := ajvPart(part)
	if !ok || !known || part == "query" || part == "path" || part == "header" || strings.Contains(rest, ", "+part) {
		return
	}
	is := Issue{Path: ptr}
	if !p.ajvFacts(&is, rest, false) {
		return
	}
	if p.full {
		is.Message = paramMessage(in, firstSegment(is.Path), rest)
	}
	p.addIssue(is)
}

// nodeErrors reads a top-level errors list of express-openapi-validator (the error handler of
// its README answers err.errors) or of express-validator (result.array()), and reports
// whether it was one.
func (p *parser) nodeErrors(errs tape.Val) bool {
	found := false
	for it := errs.Iter(); it.Next(); {
		x := it.Val()
		if !x.IsObject() {
			continue
		}
		if x.Member("errorCode").IsString() {
			found = p.openAPIValidatorIssue(x) || found
		} else if x.Member("type").Str() == "field" {
			found = p.expressValidatorIssue(x) || found
		}
	}
	return found
}

// openAPIValidatorIssue reads an item of express-openapi-validator's errors: {path, message,
// errorCode: "<keyword>.openapi.validation"}, path being ajv's instancePath in the request
// (/body/..., /query/<name>, /headers/<name>, /params/<name>, /cookies/<name>) with a missing
// property's name appended as it is (not escaped), message ajv's, an enum's values appended.
func (p *parser) openAPIValidatorIssue(x tape.Val) bool {
	keyword, ok := strings.CutSuffix(x.Member("errorCode").Str(), ".openapi.validation")
	path, msg := x.Member("path").Str(), x.Member("message").Str()
	if !ok || keyword == "" || !strings.HasPrefix(path, "/") {
		return false
	}
	part, ptr, _ := strings.Cut(path[1:], "/")
	in, known := ajvPart(part)
	if !known || part == "querystring" || part == "path" || part == "header" {
		return false
	}
	if !p.full {
		p.unread, p.kept = true, true
		return true
	}
	if ptr != "" {
		ptr = "/" + ptr
	}
	is := Issue{Path: ptr, Code: keyword}
	base := ptr
	if keyword == "required" {
		// The path ends with the missing name, unescaped: the object's path is what comes
		// before it, and ajvFacts appends the name escaped.
		name := strings.TrimSuffix(strings.TrimPrefix(msg, "must have required property '"), "'")
		base, ok = strings.CutSuffix(ptr, "/"+name)
	}
	facts := Issue{Path: base}
	if ok && p.ajvFacts(&facts, msg, true) && facts.Code == keyword {
		is.Path, is.Expected, is.AllowedValues = facts.Path, facts.Expected, facts.AllowedValues
	}
	is.Message = paramMessage(in, firstSegment(is.Path), msg)
	p.addIssue(is)
	return true
}

// expressValidatorIssue reads an item of express-validator's result.array() (v7):
// {type: "field", value, msg, path, location}. Its default message ("Invalid value") names no
// rule: what it states is the field, where it travelled and the value that arrived.
func (p *parser) expressValidatorIssue(x tape.Val) bool {
	path := x.Member("path").Str()
	in, known := ajvPart(x.Member("location").Str())
	if path == "" || !known {
		return false
	}
	if !p.full {
		p.unread, p.kept = true, true
		return true
	}
	is := Issue{Message: x.Member("msg").Text(), Received: p.raw(x.Member("value"))}
	if in == "" {
		is.Path = dottedPointer(path, false) // lines[1].quantity
	} else {
		is.Path = paramPointer(path)
	}
	is.Message = paramMessage(in, path, is.Message)
	if p.e.Message == "" {
		p.e.Message = is.Message
	}
	p.addIssue(is)
	return true
}

// classValidatorIssue reads one of the messages NestJS's ValidationPipe answers: class-
// validator's "<property> <template>", the property led by its parents' path for a nested
// object ("lines.1.quantity", ValidationPipe's prependConstraintsWithParentProp). A message
// that matches no template stays a message. A template two decorators share ("should not be
// empty": IsNotEmpty and ArrayNotEmpty) states no code.
func (p *parser) classValidatorIssue(msg string) {
	prop, rest, ok := strings.Cut(msg, " ")
	is := Issue{Message: msg}
	if ok && prop != "" && p.classValidatorFacts(&is, rest) {
		if p.full {
			is.Path = dottedPointer(prop, false)
		}
	} else {
		is.Code, is.Expected, is.AllowedValues = "", nil, nil
	}
	p.addIssue(is)
}

// classValidatorTexts are class-validator's English templates that state no number or list,
// with the decorator (its constraint's name) and the type each requires.
var classValidatorTexts = map[string]struct{ code, typ string }{
	"must be an integer number":                                {"isInt", "integer"},
	"must be a number conforming to the specified constraints": {"isNumber", "number"},
	"must be a string":                                         {"isString", "string"},
	"must be a boolean value":                                  {"isBoolean", "boolean"},
	"must be an array":                                         {"isArray", "array"},
	"must be an object":                                        {"isObject", "object"},
	"should not be null or undefined":                          {"isDefined", ""},
	"should not be empty":                                      {"", ""}, // IsNotEmpty and ArrayNotEmpty
	"nested property must be either object or array":           {"", ""},
}

// classValidatorBounds are class-validator's templates that state a number: the text before
// and after it, the decorator, and the JSON Schema keyword of the bound ("" code: two
// decorators share the template, Length and MinLength or MaxLength).
var classValidatorBounds = [...]struct{ before, after, code, keyword string }{
	{"must not be greater than ", "", "max", "maximum"},
	{"must not be less than ", "", "min", "minimum"},
	{"must be longer than or equal to ", " characters", "", "minLength"},
	{"must be shorter than or equal to ", " characters", "", "maxLength"},
	{"must contain at least ", " elements", "arrayMinSize", "minItems"},
	{"must contain no more than ", " elements", "arrayMaxSize", "maxItems"},
}

// classValidatorFacts reads the template after the property into the issue, and reports
// whether it was one.
func (p *parser) classValidatorFacts(is *Issue, rest string) bool {
	if t, ok := classValidatorTexts[rest]; ok {
		is.Code = t.code
		if t.typ != "" {
			is.Expected = p.quote(t.typ)
		}
		return true
	}
	// IsIn and IsEnum share the template: the values are stated, the decorator is not.
	if list, ok := strings.CutPrefix(rest, "must be one of the following values: "); ok {
		is.AllowedValues = p.nodeList(list, ", ")
		return true
	}
	for _, b := range classValidatorBounds {
		if n, ok := strings.CutPrefix(rest, b.before); ok {
			if n, ok = strings.CutSuffix(n, b.after); ok && tape.IsNumber(n) {
				is.Code, is.Expected = b.code, p.fragment(b.keyword, json.RawMessage(n))
				return true
			}
		}
	}
	return false
}

// celebrateIssues reads celebrate's validation member: for each part of the request,
// {source, keys, message}, keys being the paths of Joi's errors (dotted, HTML-escaped) and
// message Joi's messages joined by ". ". The facts of a message are read only when it is
// about one key.
func (p *parser) celebrateIssues(v tape.Val) {
	for it := v.Iter(); it.Next(); {
		x := it.Val()
		in, known := ajvPart(x.Member("source").Str())
		keys := x.Member("keys")
		if !known || !keys.IsArray() {
			continue
		}
		if !p.full {
			p.unread, p.kept = true, p.kept || keys.Len() > 0
			continue
		}
		msg := x.Member("message").Str()
		for k := keys.Iter(); k.Next(); {
			key := k.Val().Str()
			if strings.IndexByte(key, '&') >= 0 {
				key = htmlEntities.Replace(key)
			}
			is := Issue{Message: msg}
			if in == "" {
				is.Path = dottedPointer(key, false)
			} else {
				is.Path = paramPointer(key)
			}
			if keys.Len() == 1 {
				p.joiFacts(&is, key, msg)
			}
			is.Message = paramMessage(in, key, msg)
			p.addIssue(is)
		}
	}
}

// htmlEntities undoes escape-html, which celebrate applies to each key.
var htmlEntities = strings.NewReplacer("&quot;", `"`, "&amp;", "&", "&#39;", "'", "&lt;", "<", "&gt;", ">")

// joiLabel is the label Joi gives a path (errors.path): string segments joined by dots, array
// indices in brackets. The key celebrate reports joins every segment with a dot, so a numeric
// segment is written as an index: the label is what the message says only if it was one.
func joiLabel(key string) string {
	var b strings.Builder
	for i, seg := range strings.Split(key, ".") {
		if seg != "" && strings.Trim(seg, "0123456789") == "" {
			b.WriteString("[" + seg + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// joiTexts are Joi's English templates (joi/lib/types, v17 and v18) that state no number or
// list, after the label: the error's type and the JSON type it requires.
var joiTexts = map[string]struct{ code, typ string }{
	"is required":            {"any.required", ""},
	"must be a number":       {"number.base", "number"},
	"must be an integer":     {"number.integer", "integer"},
	"must be a string":       {"string.base", "string"},
	"must be a boolean":      {"boolean.base", "boolean"},
	"must be an array":       {"array.base", "array"},
	"must be of type object": {"object.base", "object"},
	"is not allowed":         {"object.unknown", ""},
}

// joiBounds are Joi's templates that state a number, longest first where two share a start.
var joiBounds = [...]struct{ before, after, code, keyword string }{
	{"must be less than or equal to ", "", "number.max", "maximum"},
	{"must be greater than or equal to ", "", "number.min", "minimum"},
	{"must be less than ", "", "number.less", "exclusiveMaximum"},
	{"must be greater than ", "", "number.greater", "exclusiveMinimum"},
	{"length must be less than or equal to ", " characters long", "string.max", "maxLength"},
	{"length must be at least ", " characters long", "string.min", "minLength"},
	{"must contain less than or equal to ", " items", "array.max", "maxItems"},
	{"must contain at least ", " items", "array.min", "minItems"},
}

// joiFacts reads Joi's message about key: "\"<label>\" <template>".
func (p *parser) joiFacts(is *Issue, key, msg string) {
	rest, ok := strings.CutPrefix(msg, `"`+joiLabel(key)+`" `)
	if !ok {
		return
	}
	if t, ok := joiTexts[rest]; ok {
		is.Code = t.code
		if t.typ != "" {
			is.Expected = p.quote(t.typ)
		}
		return
	}
	// any.only: "must be one of [a, b]", or "must be [a]" for one value.
	if list, ok := strings.CutPrefix(rest, "must be one of ["); ok && strings.HasSuffix(list, "]") {
		is.Code, is.AllowedValues = "any.only", p.nodeList(list[:len(list)-1], ", ")
		return
	}
	if one, ok := strings.CutPrefix(rest, "must be ["); ok && strings.HasSuffix(one, "]") {
		is.Code, is.AllowedValues = "any.only", p.nodeList(one[:len(one)-1], "")
		return
	}
	for _, b := range joiBounds {
		if n, ok := strings.CutPrefix(rest, b.before); ok {
			if n, ok = strings.CutSuffix(n, b.after); ok && tape.IsNumber(n) {
				is.Code, is.Expected = b.code, p.fragment(b.keyword, json.RawMessage(n))
				return
			}
		}
	}
}

// zodResult reports whether an error object is zod's ZodError as @hono/zod-validator's
// default hook answers it: {"success": false, "error": {"name": "ZodError", ...}}.
func (p *parser) zodResult(er tape.Val) bool {
	return p.top.success.Kind() == tape.False && er.IsObject() && er.Member("name").Str() == "ZodError"
}

// zodError reads a ZodError: zod 3's issues list, or zod 4's, which serializes as its message,
// the issues as a JSON string.
func (p *parser) zodError(er tape.Val) {
	issues := er.Member("issues")
	msg := er.Member("message").Str()
	if !p.full {
		p.unread = p.unread || issues.Len() > 0 || strings.HasPrefix(msg, "[")
		p.kept = p.kept || issues.Len() > 0
		return
	}
	if issues.IsArray() {
		p.zodList(issues)
	} else if strings.HasPrefix(msg, "[") {
		t := tape.Get()
		if t.Parse(msg) {
			p.zodList(t.Root())
		}
		tape.Put(t)
	}
	if p.e.Message == "" && len(p.e.Issues) > 0 {
		p.e.Message = p.e.Issues[0].Message
	}
}

// prismIssues reads Prism's validation list: {location: ["body", "lines", "1", "quantity"],
// severity, code, message}, location led by where the value travelled and followed by ajv's
// instancePath split at "/"; code ajv's keyword; message "Request <where> property|parameter
// <path, dotted> <ajv's message>" (prism-http's convertAjvErrors).
func (c *parser) prismIssues(v tape.Val) {
	for it := v.Iter(); it.Next(); {
		x := it.Val()
		loc := x.Member("location")
		where := loc.Member("0").Str()
		in, known := ajvPart(where)
		if !loc.IsArray() || !known || where == "querystring" || where == "params" || where == "headers" || where == "cookies" {
			continue
		}
		if !c.full {
			c.unread, c.kept = true, true
			continue
		}
		var ptr, dotted strings.Builder
		first := true
		for s := loc.Iter(); s.Next(); {
			if first { // where the value travelled
				first = false
				continue
			}
			seg := s.Val().Text()
			ptr.WriteByte('/')
			ptr.WriteString(seg) // a segment of ajv's instancePath: escaped already
			if dotted.Len() > 0 {
				dotted.WriteByte('.')
			}
			dotted.WriteString(seg)
		}
		code, msg := x.Member("code").Text(), x.Member("message").Str()
		is := Issue{Path: ptr.String(), Code: code, Message: msg}
		prefix := "Request " + where + " "
		if dotted.Len() > 0 {
			kind := "parameter "
			if where == "body" {
				kind = "property "
			}
			prefix += kind + dotted.String() + " "
		}
		facts := Issue{Path: is.Path}
		if rest, ok := strings.CutPrefix(msg, prefix); ok && c.ajvFacts(&facts, rest, true) && facts.Code == code {
			is, is.Message = facts, rest
		}
		is.Message = paramMessage(in, firstSegment(is.Path), is.Message)
		c.addIssue(is)
	}
}
