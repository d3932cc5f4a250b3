package server

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/remedy-go/remedy/internal/jsonscan"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
)

// fastCheck is a sound, incomplete check of an input against its compiled schema, for the
// common case of valid input: when it accepts, the schema accepts; when it does not (the input
// is invalid, or merely outside what it decides exactly), the full validator runs and says
// why. It decides the keywords the input schemas are built from; a subschema using any other
// is unsure, which sends only the inputs that reach it to the full validator. It allocates
// nothing.
type fastCheck struct {
	sch           *jsv.Schema // what it was compiled from (nil for unsure and anything)
	unsure        bool        // a keyword the check does not decide exactly
	always, never bool        // boolean schemas
	types         uint8
	ref           *fastCheck
	// object
	props    map[string]fastProp
	required []string
	reqMask  uint64     // the bits of the required properties (see fastProp)
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
	isConst        bool     // enum holds const's value, not enum's
	// number: bounds that float64 holds exactly, in at most 15 significant digits
	min, max, exMin, exMax *float64
	kinds                  *fastKinds // what explainText reports of the keywords above
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

// fastProp is a property's check and its bit, distinct within its object; the bits of the
// required properties make up reqMask. param marks a root property that is a path or query
// parameter.
type fastProp struct {
	check *fastCheck
	bit   uint64
	param bool
}

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
	f := &fastCheck{sch: s, minItems: -1, maxItems: -1, minLen: -1, maxLen: -1}
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
		// A chain of references that comes back to where it started checks one value forever
		// (the validator reports it as a cycle): it is left to the validator.
		for r, n := s.Ref, 0; r != nil; r, n = r.Ref, n+1 {
			if r == s || n > 32 {
				f.unsure = true
				return f
			}
		}
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
		f.isConst = true
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
		f.props = make(map[string]fastProp, len(s.Properties))
		for name, p := range s.Properties {
			f.props[name] = fastProp{check: fc.compile(p, depth+1)}
		}
	}
	f.required = s.Required
	if len(s.Properties) > 64 { // each property has a bit, to find the required and the repeated
		f.unsure = true
		return f
	}
	for i, name := range s.Required { // required first, so that their bits are distinct
		p, ok := f.props[name]
		if !ok || p.bit != 0 { // required without a property schema, or listed twice
			f.unsure = true
			return f
		}
		p.bit = 1 << i
		f.props[name] = p
		f.reqMask |= p.bit
	}
	next := len(s.Required)
	for name, p := range f.props {
		if p.bit == 0 {
			p.bit = 1 << next
			next++
			f.props[name] = p
		}
	}
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
	f.kinds = newFastKinds(s)
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
	if !f.decided() {
		return f.always
	}
	if f.ref != nil && !f.ref.accepts(v) {
		return false
	}
	if x, ok := v.(string); ok {
		return f.str(x)
	}
	if f.format != nil && f.format.Validate(v) != nil {
		return false
	}
	switch x := v.(type) {
	case nil:
		return f.literal(tNull)
	case bool:
		return f.literal(tBool)
	case json.Number:
		return f.num(string(x))
	case []any:
		return f.types&tArray != 0 && f.enum == nil && f.array(x)
	case map[string]any:
		return f.types&tObject != 0 && f.enum == nil && f.object(x)
	}
	return false
}

// decided reports whether the check looks at the value: not for a boolean schema (always
// says) or one it is unsure of (it does not accept).
func (f *fastCheck) decided() bool { return !f.unsure && !f.always && !f.never }

func (f *fastCheck) literal(t uint8) bool { return f.types&t != 0 && f.enum == nil }

func (f *fastCheck) str(s string) bool {
	if f.types&tString == 0 || (f.enum != nil && !containsString(f.enum, s)) {
		return false
	}
	if f.minLen >= 0 || f.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if (f.minLen >= 0 && n < f.minLen) || (f.maxLen >= 0 && n > f.maxLen) {
			return false
		}
	}
	if f.format != nil && f.format.Validate(s) != nil {
		return false
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
	if f.enum != nil {
		return false
	}
	if sigDigits(s) > fastDigits || len(s) > 32 {
		return false
	}
	integer := integral(s)
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
		p := f.props[k].check
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

// integral reports whether the JSON number s is an integer, as JSON Schema counts them: 1e2,
// 100.0 and -2.5e1 are; 1.5 and 1e-2 are not.
func integral(s string) bool {
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil {
			return false
		}
		mant, exp = s[:i], e
	}
	dot := strings.IndexByte(mant, '.')
	if dot < 0 {
		if exp >= 0 {
			return true
		}
		dot = len(mant)
	}
	// The digits past the point, once the exponent has moved it, must all be zeros; so must
	// be the digits of the integer part that it moves past, when it moves left.
	digits := strings.TrimLeft(mant, "-")
	dot -= len(mant) - len(digits)
	point := dot + exp // the digits before it (the point's own byte aside) are the integer part
	for i := 0; i < len(digits); i++ {
		pos := i // the digit's place among the digits alone
		if i > dot {
			pos--
		}
		if i != dot && pos >= point && digits[i] != '0' {
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

// The same check over JSON text, in one pass and without decoding it: a valid body is
// accepted before anything is built from it. It accepts only text that is exactly one JSON
// value which encoding/json and jsonschema.UnmarshalJSON read alike, and leaves the rest
// (malformed text, escaped keys, numbers beyond 15 significant digits, nesting past
// maxFastDepth) to the full path, which says what is wrong.

const maxFastDepth = 64

// acceptsText reports whether the schema surely accepts the JSON text s. params is the
// operation's parameters that the request carries, as the bits of the required ones they
// satisfy; when the operation has parameters (withParams) the body must be an object that
// names none of them.
func (f *fastCheck) acceptsText(s string, present uint64, withParams bool) bool {
	i := jsonscan.SkipWS(s, 0)
	var ok bool
	if withParams {
		if !f.decided() || f.ref != nil || f.types&tObject == 0 || f.enum != nil || i >= len(s) || s[i] != '{' {
			return false
		}
		i, ok = f.objectText(s, i, 1, present, true)
	} else {
		i, ok = f.text(s, i, 0)
	}
	return ok && jsonscan.SkipWS(s, i) == len(s)
}

// markParams marks the root properties that are parameters, which the body must not hold.
func (f *fastCheck) markParams(params []param) {
	for _, p := range params {
		if fp, ok := f.props[p.Name]; ok {
			fp.param = true
			f.props[p.Name] = fp
		}
	}
}

// text checks the value at s[i:] and returns the position after it.
func (f *fastCheck) text(s string, i, depth int) (int, bool) {
	if !f.decided() {
		if f.always {
			return skipValue(s, i, depth)
		}
		return i, false
	}
	if i >= len(s) {
		return i, false
	}
	if f.ref != nil {
		if _, ok := f.ref.text(s, i, depth); !ok {
			return i, false
		}
	}
	switch c := s[i]; {
	case c == '"':
		end, esc, ok := jsonscan.String(s, i+1)
		if !ok {
			return end, false
		}
		v := s[i+1 : end-1]
		if esc {
			v = jsonscan.Unescape(v)
		}
		return end, f.str(v)
	case c == '{':
		if f.types&tObject == 0 || f.enum != nil || depth >= maxFastDepth {
			return i, false
		}
		return f.objectText(s, i, depth+1, 0, false)
	case c == '[':
		if f.types&tArray == 0 || f.enum != nil || depth >= maxFastDepth {
			return i, false
		}
		return f.arrayText(s, i, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
		end, ok := jsonscan.Number(s, i)
		return end, ok && f.format == nil && f.num(s[i:end])
	}
	end, t := literalText(s, i)
	return end, t != 0 && f.format == nil && f.literal(t)
}

// literalText reads true, false or null at s[i:], as their type bit (0 for none).
func literalText(s string, i int) (int, uint8) {
	switch {
	case strings.HasPrefix(s[i:], "true"):
		return i + 4, tBool
	case strings.HasPrefix(s[i:], "false"):
		return i + 5, tBool
	case strings.HasPrefix(s[i:], "null"):
		return i + 4, tNull
	}
	return i, 0
}

// objectText checks the object at s[i:]. seen holds the bits of the required properties met
// already; with params, a member that is one of the root's parameters is refused.
func (f *fastCheck) objectText(s string, i, depth int, seen uint64, params bool) (int, bool) {
	var (
		others [16]string // members outside the properties, to find one repeated
		n      int
	)
	i = jsonscan.SkipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		return i + 1, seen&f.reqMask == f.reqMask
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return i, false
		}
		end, esc, ok := jsonscan.String(s, i+1)
		if !ok || esc { // an escaped name may spell a property another way
			return end, false
		}
		name := s[i+1 : end-1]
		if i = jsonscan.SkipWS(s, end); i >= len(s) || s[i] != ':' {
			return i, false
		}
		i = jsonscan.SkipWS(s, i+1)
		// A repeated member is refused by the full path; so is a parameter in the body.
		p, known := f.props[name]
		sub := p.check
		switch {
		case known:
			if seen&p.bit != 0 || (params && p.param) {
				return i, false
			}
			seen |= p.bit
		case f.closed || n == len(others):
			return i, false
		default:
			for _, prev := range others[:n] {
				if prev == name {
					return i, false
				}
			}
			others[n], n = name, n+1
			sub = f.extra
			if sub == nil {
				sub = anything
			}
		}
		if i, ok = sub.text(s, i, depth); !ok {
			return i, false
		}
		var more bool
		if i, more, ok = jsonscan.Next(s, i, '}'); !more {
			return i, ok && seen&f.reqMask == f.reqMask
		}
	}
}

// uniqueMax is the longest list whose uniqueItems the text check decides (pairwise).
const uniqueMax = 32

func (f *fastCheck) arrayText(s string, i, depth int) (int, bool) {
	var (
		n    int
		strs [uniqueMax]string
	)
	items := f.items
	if items == nil {
		items = anything
	}
	i = jsonscan.SkipWS(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1, f.minItems <= 0
	}
	for {
		start := i
		var ok bool
		if i, ok = items.text(s, i, depth); !ok {
			return i, false
		}
		if f.unique {
			// Decided for strings without escapes, which are equal exactly when their
			// text is.
			if n >= uniqueMax || s[start] != '"' || strings.IndexByte(s[start:i], '\\') >= 0 {
				return i, false
			}
			v := s[start:i]
			for _, prev := range strs[:n] {
				if prev == v {
					return i, false
				}
			}
			strs[n] = v
		}
		if n++; f.maxItems >= 0 && n > f.maxItems {
			return i, false
		}
		var more bool
		if i, more, ok = jsonscan.Next(s, i, ']'); !more {
			return i, ok && n >= f.minItems
		}
	}
}

// anything is the check of a value the schema does not constrain.
var anything = &fastCheck{always: true, minItems: -1, maxItems: -1, minLen: -1, maxLen: -1}

// skipValue reads any one JSON value at s[i:], checking only that it is well formed.
func skipValue(s string, i, depth int) (int, bool) {
	if i >= len(s) {
		return i, false
	}
	switch c := s[i]; {
	case c == '"':
		end, _, ok := jsonscan.String(s, i+1)
		return end, ok
	case c == '{':
		if depth >= maxFastDepth {
			return i, false
		}
		return anything.objectText(s, i, depth+1, 0, false)
	case c == '[':
		if depth >= maxFastDepth {
			return i, false
		}
		return anything.arrayText(s, i, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
		end, ok := jsonscan.Number(s, i)
		return end, ok && end-i <= 32
	}
	end, t := literalText(s, i)
	return end, t != 0
}
