package rewrite

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/remedy-go/remedy/internal/codename"
	"github.com/remedy-go/remedy/internal/jsonw"
	"github.com/remedy-go/remedy/internal/tape"
)

// What Default reads from the operation's schema (Request.Schema): the facts at a path
// that the failure leaves out, and whether a value in the arguments breaks them. The failure's
// own facts come first: a server whose answer contradicts the schema wins, for the schema may
// be older than the server it describes.

// readOperationSchema is the operation's schema when it is one valid JSON object, else absent:
// a schema that cannot be read says nothing.
func readOperationSchema(raw json.RawMessage) gjson.Result {
	if len(raw) == 0 || !tape.Valid(string(raw)) {
		return gjson.Result{}
	}
	if s := gjson.Parse(string(raw)); s.IsObject() {
		return s
	}
	return gjson.Result{}
}

// operationParts is what describes the value at pointer in the operation's schema, with what
// applies with it (see expand); nil when the schema does not reach the pointer.
func (env *envelopeJSON) operationParts(pointer string) []gjson.Result {
	// Each reading costs the work of a scan of the schema (see schemaCost), out of one budget
	// for the rewrite: a failure of many issues against a large schema is read only so far.
	if !env.op.Exists() || env.opWork < 0 {
		return nil
	}
	env.opWork -= schemaCost([]gjson.Result{env.op})
	segs, ok := pointerSegments(pointer)
	if !ok {
		return nil
	}
	s, _, ok := navigateIn(env.op, env.op, segs)
	if !ok {
		return nil
	}
	parts := expandIn(env.op, nil, s, 0)
	if env.opWork -= schemaCost(parts); env.opWork < 0 {
		return nil
	}
	return parts
}

// The keywords Default reads from the operation's schema besides the allowed values
// and the type, in groups: the schema's word on a group counts only when the server's says
// nothing of it. A bound is a group of its inclusive and exclusive keywords, so that a
// server's maximum is never tightened by the schema's exclusiveMaximum.
var operationGroups = [...][]string{
	{"minimum", "exclusiveMinimum"},
	{"maximum", "exclusiveMaximum"},
	{"maxLength"},
	{"default"},
}

// withOperation appends to schemas (the server's, most specific first) one schema object that
// holds what the operation's schema says at pointer and the server does not: its allowed
// values unless allowedKnown or the schemas list some, its type unless they state one, and
// each group of operationGroups they leave out. Read after the server's, it completes them
// and never overrides them.
func (env *envelopeJSON) withOperation(schemas []gjson.Result, pointer string, allowedKnown bool) []gjson.Result {
	parts := env.operationParts(pointer)
	if len(parts) == 0 {
		return schemas
	}
	b := make([]byte, 1, 64)
	b[0] = '{'
	add := func(key, raw string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, key)
		b = append(b, ':')
		b = append(b, raw...)
	}
	if !allowedKnown && env.schemaAllowed(schemas) == nil {
		if vals := schemaAllowedIn(env.op, parts); vals != nil {
			enum := make([]byte, 0, 64)
			enum = append(enum, '[')
			for i, v := range vals {
				if i > 0 {
					enum = append(enum, ',')
				}
				enum = append(enum, v...)
			}
			add("enum", string(append(enum, ']')))
		}
	}
	if !keyword(schemas, "type").Exists() {
		if t := keyword(parts, "type"); t.Exists() {
			add("type", t.Raw)
		}
	}
	for _, group := range operationGroups {
		stated := false
		for _, k := range group {
			stated = stated || keyword(schemas, k).Exists()
		}
		if stated {
			continue
		}
		for _, k := range group {
			if v := keyword(parts, k); v.Exists() {
				add(k, v.Raw)
			}
		}
	}
	if len(b) == 1 {
		return schemas
	}
	return append(schemas, gjson.Parse(string(append(b, '}'))))
}

// ruleClass is the kind of violation an issue's code names, for placing an issue that names
// no field, or an index its field leaves out, on the one value that breaks the schema so.
type ruleClass uint8

const (
	classNone     ruleClass = iota // a code that names no kind DefaultRewriter can check
	classEnum                      // a value outside the allowed values
	classType                      // a value of the wrong JSON type
	classMax                       // a number over its maximum, a string or array over its length
	classMin                       // a number under its minimum, a string or array under its length
	classRequired                  // a value that is missing
	numClasses
)

// Codes, as codename.Norm spells them, by the kind of violation they name: the JSON Schema
// keywords, go-playground/validator's tags, and the codes of zod, pydantic, ajv, Joi and
// Rails.
var codeClasses = map[string]ruleClass{
	"enum": classEnum, "oneof": classEnum, "invalidenumvalue": classEnum, "invalidenum": classEnum,
	"const": classEnum, "literalerror": classEnum, "inclusion": classEnum, "anyonly": classEnum,

	"type": classType, "invalidtype": classType, "typemismatch": classType, "typeerror": classType,
	"intparsing": classType, "inttype": classType, "floatparsing": classType, "floattype": classType,
	"boolparsing": classType, "booltype": classType, "stringtype": classType, "numeric": classType,
	"number": classType, "integer": classType, "boolean": classType, "notanumber": classType,

	"max": classMax, "maximum": classMax, "lte": classMax, "lt": classMax, "le": classMax,
	"toobig": classMax, "maxlength": classMax, "exclusivemaximum": classMax, "lessthan": classMax,
	"lessthanequal": classMax, "stringtoolong": classMax, "toolong": classMax, "maxitems": classMax,

	"min": classMin, "minimum": classMin, "gte": classMin, "gt": classMin, "ge": classMin,
	"toosmall": classMin, "minlength": classMin, "exclusiveminimum": classMin, "greaterthan": classMin,
	"greaterthanequal": classMin, "stringtooshort": classMin, "tooshort": classMin, "minitems": classMin,
}

// codeClass is the kind of violation code names; classNone for a code it does not know.
func codeClass(code string) ruleClass {
	var buf [64]byte
	c, ok := codename.Norm(&buf, code)
	if !ok {
		return classNone
	}
	if requiredCodes[c] {
		return classRequired
	}
	return codeClasses[c]
}

// breaks reports whether v, the value at a place whose schema is parts, breaks it in the way
// class names; classNone asks for any break of enum, type, bounds or lengths. Only what parts
// state is checked (an enum or const, not a union of them, whose branches would be read
// anew at every value): a schema that says nothing is broken by nothing.
func breaks(v gjson.Result, parts []gjson.Result, class ruleClass) bool {
	if class == classRequired {
		return !v.Exists() || v.Type == gjson.Null
	}
	if !v.Exists() {
		return false
	}
	all := class == classNone
	if (all || class == classType) && breaksType(v, keyword(parts, "type")) {
		return true
	}
	if all || class == classEnum {
		if allowed := listed(parts); allowed != nil && !inAllowed(string(jsonw.Compact(v.Raw)), allowed) {
			return true
		}
	}
	if (all || class == classMax) && overLimit(v, parts, "maximum", "exclusiveMaximum", "maxLength", "maxItems", 1) {
		return true
	}
	return (all || class == classMin) && overLimit(v, parts, "minimum", "exclusiveMinimum", "minLength", "minItems", -1)
}

// breaksType reports whether v is of none of the JSON types t names (a name, or a list of
// names); an absent or unreadable t names none, and is broken by nothing.
func breaksType(v gjson.Result, t gjson.Result) bool {
	switch {
	case t.Type == gjson.String:
		return !isOfType(v, t.Str)
	case t.IsArray():
		known := false
		for _, x := range t.Array() {
			if x.Type != gjson.String {
				return false
			}
			if isOfType(v, x.Str) {
				return false
			}
			known = true
		}
		return known
	}
	return false
}

// isOfType reports whether v is of the JSON Schema type typ; an unknown type name admits all.
func isOfType(v gjson.Result, typ string) bool {
	switch typ {
	case "string":
		return v.Type == gjson.String
	case "integer":
		return v.Type == gjson.Number && v.Num == math.Trunc(v.Num)
	case "number":
		return v.Type == gjson.Number
	case "boolean":
		return v.Type == gjson.True || v.Type == gjson.False
	case "null":
		return v.Type == gjson.Null
	case "object":
		return v.IsObject()
	case "array":
		return v.IsArray()
	}
	return true
}

// overLimit reports whether v passes the bound of a number (num, excl: inclusive and exclusive
// keywords), the length of a string (length) or of an array (items): above it for dir 1,
// below it for dir -1.
func overLimit(v gjson.Result, parts []gjson.Result, num, excl, length, items string, dir float64) bool {
	past := func(x, bound float64) bool { return (x-bound)*dir > 0 }
	switch {
	case v.Type == gjson.Number:
		if b := keyword(parts, num); b.Type == gjson.Number {
			if past(v.Num, b.Num) || v.Num == b.Num && keyword(parts, excl).Type == gjson.True {
				return true
			}
		}
		if b := keyword(parts, excl); b.Type == gjson.Number && (past(v.Num, b.Num) || v.Num == b.Num) {
			return true
		}
	case v.Type == gjson.String:
		if b := keyword(parts, length); b.Type == gjson.Number {
			return past(float64(utf8.RuneCountInString(v.Str)), b.Num)
		}
	case v.IsArray():
		if b := keyword(parts, items); b.Type == gjson.Number {
			return past(float64(v.Get("#").Int()), b.Num)
		}
	}
	return false
}
