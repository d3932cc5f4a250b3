package remedy

import (
	"encoding/json"
	"strings"

	"github.com/remedy-go/remedy/internal/tape"
)

// Pydantic's errors, as FastAPI answers them: a loc array read as Huma's location, a type and a ctx
// with the bound or the choices.

// locPath reads a FastAPI loc array the same way.
func locPath(loc tape.Val) (path, in, name string) {
	head := loc.Member("0")
	if h := head.Str(); head.IsString() && paramIn(h) && loc.Len() > 1 {
		b := pointerBuilder{}
		it := loc.Iter()
		it.Next()
		for it.Next() {
			seg := it.Val().Text()
			if name == "" {
				name = seg
			}
			b.add(seg, false)
		}
		return b.String(), h, name
	}
	if head.Str() == "body" && loc.Len() == 1 {
		return "", "", "" // the whole body
	}
	return arrayPointer(loc), "", ""
}

// pydanticFacts reads a pydantic error's ctx into the issue: bounds and patterns as a schema
// fragment, an enum's or literal's expected values as the allowed values; v2's keys, and v1's
// (limit_value, whose keyword the code's last part names; enum_values, permitted, given).
func (p *parser) pydanticFacts(is *Issue, ctx tape.Val) {
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
	for it := ctx.Iter(); it.Next(); {
		v := it.Val()
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
			if !tape.IsNumber(item) {
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
