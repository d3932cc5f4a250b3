package remedy

import (
	"encoding/json"
	"strings"

	"github.com/remedy-go/remedy/internal/tape"
)

// ASP.NET Core's validation failures (ValidationProblemDetails): a map from each field, as the
// model binder keys it ("Quantity", "Lines[1].Sku", or a JSON path "$.lines[1].quantity" for a
// value that did not deserialize), to the messages of System.ComponentModel.DataAnnotations'
// English templates and System.Text.Json's. A message is read only when it is one of those
// templates exactly and names the key's own field; {0} is the property's display name, which
// is its name unless the app gave it another (then nothing is read).

// dotnetTemplates are the DataAnnotations templates read: each is a prefix holding {0}, and
// what follows it; the code is the attribute's name.
var dotnetTemplates = [...]struct{ before, after, code string }{
	{"The ", " field is required.", "required"},
	{"The field ", " must be between ", "range"},
	{"The field ", " must be a string with a maximum length of ", "stringLength"},
	{"The field ", " must be a string or array type with a maximum length of '", "maxLength"},
	{"The field ", " must be a string or array type with a minimum length of '", "minLength"},
	{"The field ", " must match the regular expression '", "regularExpression"},
}

// dotnetJSONError starts System.Text.Json's message for a value of the wrong type.
const dotnetJSONError = "The JSON value could not be converted to "

// dotnetFacts reads an ASP.NET message about the field keyed key into the issue.
func (p *parser) dotnetFacts(is *Issue, key string) {
	msg := is.Message
	if rest, ok := strings.CutPrefix(msg, dotnetJSONError); ok {
		typ, path, ok := strings.Cut(rest, ". Path: ")
		if !ok || !strings.HasPrefix(key, "$") || !strings.HasPrefix(path, key+" | ") {
			return
		}
		is.Code = "type"
		if t := dotnetJSONType(typ); t != "" {
			is.Expected = quoteJSON(t)
		}
		return
	}
	name := key[strings.LastIndexAny(key, ".]")+1:]
	if name == "" {
		return
	}
	for _, t := range dotnetTemplates {
		rest, ok := strings.CutPrefix(msg, t.before)
		if ok {
			rest, ok = strings.CutPrefix(rest, name)
		}
		if ok {
			rest, ok = strings.CutPrefix(rest, t.after)
		}
		if !ok {
			continue
		}
		switch t.code {
		case "required":
			if rest != "" {
				return
			}
		case "range": // "1 and 100."
			lo, hi, ok := strings.Cut(strings.TrimSuffix(rest, "."), " and ")
			if !ok || !strings.HasSuffix(rest, ".") || !tape.IsNumber(lo) || !tape.IsNumber(hi) {
				return
			}
			is.Expected = json.RawMessage(`{"minimum":` + lo + `,"maximum":` + hi + `}`)
		case "stringLength": // "100."
			n, ok := strings.CutSuffix(rest, ".")
			if !ok || !tape.IsNumber(n) {
				return
			}
			is.Expected = p.fragment("maxLength", json.RawMessage(n))
		case "maxLength", "minLength":
			// A string's length or an array's count: which one the message does not say, so
			// no bound is stated as a keyword.
			if n, ok := strings.CutSuffix(rest, "'."); !ok || !tape.IsNumber(n) {
				return
			}
		case "regularExpression":
			re, ok := strings.CutSuffix(rest, "'.")
			if !ok {
				return
			}
			is.Expected = p.fragment("pattern", quoteJSON(re))
		}
		is.Code = t.code
		return
	}
}

// dotnetJSONType is the JSON type of a .NET type as System.Text.Json names it in a message
// ("System.Int32", "System.Nullable`1[System.Int32]"); "" when it has no single JSON type.
func dotnetJSONType(typ string) string {
	if inner, ok := strings.CutPrefix(typ, "System.Nullable`1["); ok {
		typ = strings.TrimSuffix(inner, "]")
	}
	switch typ {
	case "System.Int16", "System.Int32", "System.Int64", "System.UInt16", "System.UInt32", "System.UInt64", "System.Byte", "System.SByte":
		return "integer"
	case "System.Single", "System.Double", "System.Decimal":
		return "number"
	case "System.String":
		return "string"
	case "System.Boolean":
		return "boolean"
	}
	return ""
}
