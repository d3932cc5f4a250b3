// Package schemaissue names the violations santhosh-tekuri/jsonschema reports as remedy's issue
// codes. The reference server's refusals and the client's check before sending both use it,
// so that a violation has one code whichever side found it, and a rewriter reads them alike.
package schemaissue

import (
	"strings"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Keyword is the keyword an error kind reports, "" for none: KeywordPath's first, without the
// slice KeywordPath allocates for the common ones.
func Keyword(k jsv.ErrorKind) string {
	switch k.(type) {
	case *kind.Type:
		return "type"
	case *kind.Enum:
		return "enum"
	case *kind.Const:
		return "const"
	case *kind.Format:
		return "format"
	case *kind.Required:
		return "required"
	case *kind.AdditionalProperties:
		return "additionalProperties"
	case *kind.Minimum:
		return "minimum"
	case *kind.Maximum:
		return "maximum"
	case *kind.ExclusiveMinimum:
		return "exclusiveMinimum"
	case *kind.ExclusiveMaximum:
		return "exclusiveMaximum"
	case *kind.MinLength:
		return "minLength"
	case *kind.MaxLength:
		return "maxLength"
	case *kind.Pattern:
		return "pattern"
	case *kind.MinItems:
		return "minItems"
	case *kind.MaxItems:
		return "maxItems"
	case *kind.UniqueItems:
		return "uniqueItems"
	case *kind.FalseSchema:
		return ""
	}
	if kp := k.KeywordPath(); len(kp) > 0 {
		return kp[0]
	}
	return ""
}

// Code is the issue code of the violation k of the keyword kw (Keyword(k)): the keyword in
// snake_case (exclusive_minimum, additional_properties), not_allowed for a value a false
// schema refuses, not, invalid_value for a value that is not JSON, ref_cycle, and invalid
// when no keyword is known.
func Code(k jsv.ErrorKind, kw string) string {
	switch k.(type) {
	case *kind.FalseSchema:
		return "not_allowed"
	case *kind.Not:
		return "not"
	case *kind.InvalidJsonValue:
		return "invalid_value"
	case *kind.RefCycle:
		return "ref_cycle"
	}
	if code := Spell(kw); code != "" {
		return code
	}
	return "invalid"
}

// Spell spells a keyword as an issue code: exclusiveMinimum → exclusive_minimum.
func Spell(kw string) string {
	kw = strings.TrimPrefix(kw, "$")
	if code, ok := codes[kw]; ok {
		return code
	}
	return spell(kw)
}

// codes are the codes of the keywords of JSON Schema 2020-12 whose code is not the keyword
// itself, spelled once.
var codes = func() map[string]string {
	m := map[string]string{}
	for _, kw := range []string{"minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "minProperties",
		"maxProperties", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "additionalProperties",
		"propertyNames", "minContains", "maxContains", "contentEncoding", "contentMediaType", "anyOf",
		"oneOf", "allOf", "dependentRequired", "additionalItems", "unevaluatedProperties", "unevaluatedItems"} {
		m[kw] = spell(kw)
	}
	return m
}()

// spell is Spell, without the look-up.
func spell(kw string) string {
	plain := true
	for i := 0; i < len(kw); i++ {
		if c := kw[i]; (c >= 'A' && c <= 'Z') || c == '-' {
			plain = false
			break
		}
	}
	if plain {
		return kw
	}
	var b strings.Builder
	for i := 0; i < len(kw); i++ {
		ch := kw[i]
		switch {
		case ch >= 'A' && ch <= 'Z':
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteByte(ch + 'a' - 'A')
		case ch == '-':
			b.WriteByte('_')
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}
