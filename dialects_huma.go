package remedy

import (
	"encoding/json"
	"strings"

	"github.com/remedy-go/remedy/internal/jsonw"
	"github.com/remedy-go/remedy/internal/tape"
)

// Huma's issues: a location ("body.amount", "query.limit") whose first segment says where in
// the request the value travelled, which becomes a pointer to the argument of that name (the
// client sends arguments as path and query parameters by name), with the message saying which
// kind of parameter it is, since Issue has no field for it; and the bounds and enums its
// messages state.

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

func paramPointer(name string) string {
	var b strings.Builder
	b.Grow(len(name) + 1)
	b.WriteByte('/')
	jsonw.WriteSegment(&b, name)
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
		if s, ok := strings.CutPrefix(rest, b.prefix); ok && tape.IsNumber(s) {
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
	numeric := len(is.Received) > 0 && tape.IsNumber(string(is.Received))
	for _, s := range parts {
		numeric = numeric && tape.IsNumber(s)
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
