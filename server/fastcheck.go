package server

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
)

// fastCheck is a sound, incomplete check of an input against its compiled schema, for the
// common case of valid input: when it accepts, the schema accepts; when it does not (the input
// is invalid, or merely outside what it decides exactly), the full validator runs and says
// why. It decides the keywords the input schemas are built from; a subschema using any other
// is unsure, which sends only the inputs that reach it to the full validator. It allocates
// nothing.
type fastCheck struct {
	unsure        bool // a keyword the check does not decide exactly
	always, never bool // boolean schemas
	types         uint8
	ref           *fastCheck
	// object
	props    map[string]*fastCheck
	required []string
	closed   bool       // additionalProperties: false
	extra    *fastCheck // additionalProperties: a schema
	// array
	items              *fastCheck
	minItems, maxItems int // -1: none
	unique             bool
	// string
	minLen, maxLen int // -1: none
	pattern        jsv.Regexp
	format         *jsv.Format
	enum           []string // string values (const is a one-value enum); others are unsure
	// number: bounds that float64 holds exactly, in at most 15 significant digits
	min, max, exMin, exMax *float64
}

const (
	tNull uint8 = 1 << iota
	tBool
	tInt
	tNumber
	tString
	tArray
	tObject
)

// Numbers are compared as float64 only when both sides have at most 15 significant decimal
// digits (and the bound is exactly a float64): distinct such decimals stay distinct, and in
// order, as float64s.
const fastDigits = 15

// compileFast builds the check for a compiled schema.
func compileFast(s *jsv.Schema) *fastCheck {
	return fastCompiler{seen: map[*jsv.Schema]*fastCheck{}}.compile(s, 0)
}

var unsure = &fastCheck{unsure: true}

type fastCompiler struct{ seen map[*jsv.Schema]*fastCheck }

func (fc fastCompiler) compile(s *jsv.Schema, depth int) *fastCheck {
	if s == nil || depth > 64 {
		return unsure
	}
	if f, ok := fc.seen[s]; ok {
		return f
	}
	f := &fastCheck{minItems: -1, maxItems: -1, minLen: -1, maxLen: -1}
	fc.seen[s] = f
	if s.Bool != nil {
		f.always, f.never = *s.Bool, !*s.Bool
		return f
	}
	if s.RecursiveRef != nil || s.DynamicRef != nil || s.Not != nil || len(s.AllOf) > 0 || len(s.AnyOf) > 0 ||
		len(s.OneOf) > 0 || s.If != nil || s.Then != nil || s.Else != nil || s.MaxProperties != nil ||
		s.MinProperties != nil || s.PropertyNames != nil || len(s.PatternProperties) > 0 || len(s.Dependencies) > 0 ||
		len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0 || s.UnevaluatedProperties != nil ||
		s.Contains != nil || s.MinContains != nil || s.MaxContains != nil || s.Items != nil || s.AdditionalItems != nil ||
		len(s.PrefixItems) > 0 || s.UnevaluatedItems != nil || s.ContentEncoding != nil || s.ContentMediaType != nil ||
		s.ContentSchema != nil || s.MultipleOf != nil || len(s.Extensions) > 0 {
		f.unsure = true
		return f
	}
	if s.Ref != nil {
		f.ref = fc.compile(s.Ref, depth+1)
	}
	f.types = tNull | tBool | tInt | tNumber | tString | tArray | tObject
	if s.Types != nil {
		f.types = 0
		for _, t := range s.Types.ToStrings() {
			switch t {
			case "null":
				f.types |= tNull
			case "boolean":
				f.types |= tBool
			case "integer":
				f.types |= tInt
			case "number":
				f.types |= tInt | tNumber
			case "string":
				f.types |= tString
			case "array":
				f.types |= tArray
			case "object":
				f.types |= tObject
			}
		}
	}
	var values []any
	if s.Enum != nil {
		values = s.Enum.Values
	}
	if s.Const != nil {
		values = append(values[:len(values):len(values)], *s.Const)
	}
	for _, v := range values {
		str, ok := v.(string)
		if !ok {
			f.unsure = true
			return f
		}
		f.enum = append(f.enum, str)
	}
	if s.Enum != nil && s.Const != nil {
		f.unsure = true // both must hold; not worth deciding here
		return f
	}
	if len(s.Properties) > 0 {
		f.props = make(map[string]*fastCheck, len(s.Properties))
		for name, p := range s.Properties {
			f.props[name] = fc.compile(p, depth+1)
		}
	}
	f.required = s.Required
	switch ap := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		f.closed = !ap
	case *jsv.Schema:
		f.extra = fc.compile(ap, depth+1)
	default:
		f.unsure = true
		return f
	}
	if s.Items2020 != nil {
		f.items = fc.compile(s.Items2020, depth+1)
	}
	f.minItems, f.maxItems = intOr(s.MinItems), intOr(s.MaxItems)
	f.unique = s.UniqueItems
	f.minLen, f.maxLen = intOr(s.MinLength), intOr(s.MaxLength)
	f.pattern, f.format = s.Pattern, s.Format
	for _, b := range []struct {
		r   interface{ Float64() (float64, bool) }
		dst **float64
	}{{ratOrNil(s.Minimum), &f.min}, {ratOrNil(s.Maximum), &f.max}, {ratOrNil(s.ExclusiveMinimum), &f.exMin}, {ratOrNil(s.ExclusiveMaximum), &f.exMax}} {
		if b.r == nil {
			continue
		}
		x, exact := b.r.Float64()
		if !exact || math.IsInf(x, 0) || sigDigits(strconv.FormatFloat(x, 'g', -1, 64)) > fastDigits {
			f.unsure = true
			return f
		}
		*b.dst = &x
	}
	return f
}

func intOr(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// ratOrNil keeps a nil *big.Rat a nil interface.
func ratOrNil[R interface {
	comparable
	Float64() (float64, bool)
}](r R) interface{ Float64() (float64, bool) } {
	var zero R
	if r == zero {
		return nil
	}
	return r
}

// accepts reports whether the schema surely accepts v (as jsonschema.UnmarshalJSON decodes it).
func (f *fastCheck) accepts(v any) bool {
	if f.unsure {
		return false
	}
	if f.always {
		return true
	}
	if f.never || (f.ref != nil && !f.ref.accepts(v)) {
		return false
	}
	if f.format != nil && f.format.Validate(v) != nil {
		return false
	}
	switch x := v.(type) {
	case nil:
		return f.types&tNull != 0 && f.enum == nil
	case bool:
		return f.types&tBool != 0 && f.enum == nil
	case string:
		return f.types&tString != 0 && f.str(x)
	case json.Number:
		return f.enum == nil && f.num(string(x))
	case []any:
		return f.types&tArray != 0 && f.enum == nil && f.array(x)
	case map[string]any:
		return f.types&tObject != 0 && f.enum == nil && f.object(x)
	}
	return false
}

func (f *fastCheck) str(s string) bool {
	if f.enum != nil && !containsString(f.enum, s) {
		return false
	}
	if f.minLen >= 0 || f.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if (f.minLen >= 0 && n < f.minLen) || (f.maxLen >= 0 && n > f.maxLen) {
			return false
		}
	}
	return f.pattern == nil || f.pattern.MatchString(s)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// num decides integers written without a fraction or exponent, and other numbers of at most
// 15 significant digits; anything else is left to the full validator.
func (f *fastCheck) num(s string) bool {
	integer := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '.' || c == 'e' || c == 'E' {
			integer = false
			break
		}
	}
	if sigDigits(s) > fastDigits || len(s) > 32 {
		return false
	}
	if integer {
		if f.types&tInt == 0 {
			return false
		}
	} else if f.types&tNumber == 0 {
		return false
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(x, 0) {
		return false
	}
	return (f.min == nil || x >= *f.min) && (f.max == nil || x <= *f.max) &&
		(f.exMin == nil || x > *f.exMin) && (f.exMax == nil || x < *f.exMax)
}

func (f *fastCheck) array(a []any) bool {
	if (f.minItems >= 0 && len(a) < f.minItems) || (f.maxItems >= 0 && len(a) > f.maxItems) {
		return false
	}
	if f.unique {
		// Decided here only for strings, compared pairwise: such lists are short.
		for i, x := range a {
			s, ok := x.(string)
			if !ok {
				return false
			}
			for _, y := range a[:i] {
				if y.(string) == s {
					return false
				}
			}
		}
	}
	if f.items != nil {
		for _, x := range a {
			if !f.items.accepts(x) {
				return false
			}
		}
	}
	return true
}

func (f *fastCheck) object(m map[string]any) bool {
	for _, name := range f.required {
		if _, ok := m[name]; !ok {
			return false
		}
	}
	for k, x := range m {
		p := f.props[k]
		switch {
		case p != nil:
			if !p.accepts(x) {
				return false
			}
		case f.closed:
			return false
		case f.extra != nil && !f.extra.accepts(x):
			return false
		}
	}
	return true
}

// sigDigits counts the significant digits of a number as JSON or strconv spells it: those of
// its mantissa from the first non-zero one (trailing zeros included, which only overcounts).
func sigDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 'e' || c == 'E' {
			break
		}
		if c >= '0' && c <= '9' && (n > 0 || c != '0') {
			n++
		}
	}
	return n
}
