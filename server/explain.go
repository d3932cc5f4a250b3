package server

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/jsonscan"
)

// Explaining a refusal from the text. A body the text check refuses is most often a plain
// mistake (a value out of its bounds, a string that misses its pattern or its enum, an unknown
// member) against a schema made only of the keywords the check decides. For those, the same
// walk over the text can say what the full validator would say, violation by violation, without
// decoding the body and without running the validator, which builds an error tree for every
// value it refuses. The violations it finds are handed to the same issueCollector as the
// validator's, as the same kinds of error, so that the issues, the schema excerpt and the
// counts are the same, byte for byte. At one value they come in the validator's order (type,
// const, enum and format first, each the only one when it fails; then what a $ref finds; then
// the keywords of the value's type), which decides the order of issues that sort alike;
// members and elements come in the text's order, which the sorting of the issues by location
// makes no matter.
//
// It explains only what it decides exactly, and gives up (ok false) on anything else, which the
// full path then reads as before: a keyword the fast check is unsure of, a schema of a draft
// before 2020-12, a number of more than 15 significant digits or beyond a double's normal range,
// an escaped member name, a member named twice (or more than 16 unknown members in one object,
// among which it could not tell), nesting deeper than maxFastDepth, an instance of more than
// pruneFrom values (which the full path prunes), a format on a value that is not a string,
// uniqueItems over anything but plain strings, a chain of more than maxExplainRefs references at
// one value, and text that is not exactly one JSON value. TestExplainAgrees and FuzzExplain hold
// it to the full path's answers.

// maxExplainRefs bounds the $ref hops the explanation follows at one value: a cycle of
// references, which the validator reports as ref_cycle, is left to it.
const maxExplainRefs = 16

// fastKinds are the errors an explanation reports for the keywords of one subschema, made
// once: what an issue says of them is the schema's (the bound, the pattern, the format), never
// the value's, which the issue is given beside them. Nothing changes them once made.
type fastKinds struct {
	enum, cnst, format, pattern, minLen, maxLen, min, max, exMin, exMax, minItems, maxItems jsv.ErrorKind
}

// newFastKinds makes the errors of s's keywords that the fast check decides.
func newFastKinds(s *jsv.Schema) *fastKinds {
	k := &fastKinds{}
	if s.Enum != nil {
		k.enum = &kind.Enum{Want: s.Enum.Values}
	}
	if s.Const != nil {
		k.cnst = &kind.Const{Want: *s.Const}
	}
	if s.Format != nil {
		k.format = &kind.Format{Want: s.Format.Name}
	}
	if s.Pattern != nil {
		k.pattern = &kind.Pattern{Want: s.Pattern.String()}
	}
	if s.MinLength != nil {
		k.minLen = &kind.MinLength{Want: *s.MinLength}
	}
	if s.MaxLength != nil {
		k.maxLen = &kind.MaxLength{Want: *s.MaxLength}
	}
	if s.Minimum != nil {
		k.min = &kind.Minimum{Want: s.Minimum}
	}
	if s.Maximum != nil {
		k.max = &kind.Maximum{Want: s.Maximum}
	}
	if s.ExclusiveMinimum != nil {
		k.exMin = &kind.ExclusiveMinimum{Want: s.ExclusiveMinimum}
	}
	if s.ExclusiveMaximum != nil {
		k.exMax = &kind.ExclusiveMaximum{Want: s.ExclusiveMaximum}
	}
	if s.MinItems != nil {
		k.minItems = &kind.MinItems{Want: *s.MinItems}
	}
	if s.MaxItems != nil {
		k.maxItems = &kind.MaxItems{Want: *s.MaxItems}
	}
	return k
}

// falseSchema is the error of a false schema, which says nothing else.
var falseSchema jsv.ErrorKind = &kind.FalseSchema{}

// explainer is the state of one explanation.
type explainer struct {
	s    string
	c    issueCollector
	path []string // the location of the value being read, as instance tokens
	// arena holds the locations handed to the collector, which keeps them: one block for
	// the few issues of most refusals, another when it is full.
	arena  []string
	values int  // the values read so far, to leave large instances to the full path
	found  bool // a violation was found
}

// here is the current location, in a slice of its own.
func (e *explainer) here() []string {
	n := len(e.path)
	if cap(e.arena)-len(e.arena) < n {
		e.arena = make([]string, 0, max(16, 2*n))
	}
	start := len(e.arena)
	e.arena = append(e.arena, e.path...)
	return e.arena[start : start+n : start+n]
}

// explainText explains why the body s (with the operation's parameters, as acceptsText takes
// them, and the values they add to the instance) is refused: the issues, the violated
// subschema, and the count, as check would give them for the instance. ok is false when it
// cannot say exactly, or finds nothing wrong.
func (v *validator) explainText(s string, present uint64, withParams bool, paramValues int) (issues []remedy.Issue, violated json.RawMessage, total int, atLeast, ok bool) {
	f := v.fast
	if f == nil {
		return nil, nil, 0, false, false
	}
	var pathBuf [8]string
	e := explainer{s: s, c: issueCollector{v: v}, path: pathBuf[:0], values: paramValues}
	i := jsonscan.SkipWS(s, 0)
	if withParams {
		// The instance is the body's object with the parameters added: only its members are
		// explained, against a root that says nothing of the object itself.
		if !e.explainable(f) || f.always || f.never || f.ref != nil || f.format != nil || f.types&tObject == 0 ||
			f.enum != nil || i >= len(s) || s[i] != '{' {
			return nil, nil, 0, false, false
		}
		e.values++
		i, ok = e.object(f, i, 1, present, true, true)
	} else {
		i, ok = e.value(f, i, 0, true, 0)
	}
	if !ok || jsonscan.SkipWS(s, i) != len(s) || !e.found || len(e.c.issues) == 0 && e.c.left == 0 {
		return nil, nil, 0, false, false
	}
	issues, violated, total, atLeast = e.c.finish()
	return issues, violated, total, atLeast, true
}

// explainable reports whether f is a schema the explanation decides.
func (e *explainer) explainable(f *fastCheck) bool {
	if f.unsure || f.sch == nil || f.sch.DraftVersion < 2020 {
		return false
	}
	return f.sch.Types == nil || !f.sch.Types.IsEmpty()
}

// report hands one violation of the subschema f, at the current location, to the collector.
func (e *explainer) report(f *fastCheck, k jsv.ErrorKind, val any) {
	e.found = true
	e.c.fault(e.c.v.byLoc[f.sch.Location], e.here(), k, &val, nil)
}

// value explains the value at s[i:] against f and returns the position after it. count is set
// when the value is met for the first time (not again through a $ref), and refs counts the $ref
// hops that led to f at this value.
func (e *explainer) value(f *fastCheck, i, depth int, count bool, refs int) (int, bool) {
	s := e.s
	if i >= len(s) {
		return i, false
	}
	if count {
		if e.values++; e.values > pruneFrom {
			return i, false
		}
	}
	if f.always || f.never {
		end, ok := e.skip(i, depth, count)
		if ok && f.never {
			val, ok := e.decode(i, end)
			if !ok {
				return end, false
			}
			e.report(f, falseSchema, val)
		}
		return end, ok
	}
	if !e.explainable(f) {
		return i, false
	}
	// What the value is: its type, and its end for a scalar.
	var (
		t     uint8
		end   int
		str   string // a string's value
		num   float64
		isStr bool
	)
	switch c := s[i]; {
	case c == '"':
		var esc, ok bool
		if end, esc, ok = jsonscan.String(s, i+1); !ok {
			return end, false
		}
		t, isStr, str = tString, true, s[i+1:end-1]
		if esc {
			str = jsonscan.Unescape(str)
		}
	case c == '{':
		t = tObject
	case c == '[':
		t = tArray
	case c == '-' || (c >= '0' && c <= '9'):
		var ok bool
		if end, ok = jsonscan.Number(s, i); !ok {
			return end, false
		}
		if num, ok = exactNumber(s[i:end]); !ok {
			return end, false
		}
		t = tNumber
		if integral(s[i:end]) {
			t = tInt
		}
	default:
		if end, t = literalText(s, i); t == 0 {
			return end, false
		}
	}
	// type, const, enum and format: a violation of any is the only one the value gets.
	refused := func(k jsv.ErrorKind) (int, bool) {
		if t == tObject || t == tArray {
			var ok bool
			if end, ok = e.skip(i, depth, count); !ok {
				return end, false
			}
		}
		val, ok := e.decode(i, end)
		if !ok {
			return end, false
		}
		e.report(f, k, val)
		return end, true
	}
	if f.types&t == 0 {
		return refused(&kind.Type{Got: typeName(t), Want: f.sch.Types.ToStrings()})
	}
	if f.enum != nil && (!isStr || !containsString(f.enum, str)) {
		if f.isConst {
			return refused(f.kinds.cnst)
		}
		return refused(f.kinds.enum)
	}
	if f.format != nil {
		if !isStr {
			return i, false // a format may say anything of other values: left to the validator
		}
		if err := f.format.Validate(str); err != nil {
			return refused(f.kinds.format)
		}
	}
	if f.ref != nil {
		if refs >= maxExplainRefs {
			return i, false
		}
		if _, ok := e.value(f.ref, i, depth, false, refs+1); !ok {
			return i, false
		}
	}
	switch t {
	case tString:
		if f.minLen >= 0 || f.maxLen >= 0 {
			n := utf8.RuneCountInString(str)
			if f.minLen >= 0 && n < f.minLen {
				e.report(f, f.kinds.minLen, str)
			}
			if f.maxLen >= 0 && n > f.maxLen {
				e.report(f, f.kinds.maxLen, str)
			}
		}
		if f.pattern != nil && !f.pattern.MatchString(str) {
			e.report(f, f.kinds.pattern, str)
		}
		return end, true
	case tInt, tNumber:
		if f.min != nil && num < *f.min {
			e.report(f, f.kinds.min, json.Number(s[i:end]))
		}
		if f.max != nil && num > *f.max {
			e.report(f, f.kinds.max, json.Number(s[i:end]))
		}
		if f.exMin != nil && num <= *f.exMin {
			e.report(f, f.kinds.exMin, json.Number(s[i:end]))
		}
		if f.exMax != nil && num >= *f.exMax {
			e.report(f, f.kinds.exMax, json.Number(s[i:end]))
		}
		return end, true
	case tObject:
		if depth >= maxFastDepth {
			return i, false
		}
		return e.object(f, i, depth+1, 0, false, count)
	case tArray:
		if depth >= maxFastDepth {
			return i, false
		}
		return e.array(f, i, depth+1, count)
	}
	return end, true // null and booleans have no keywords of their own
}

// typeName is the name of a JSON type the validator reports (a number is a number, integral or
// not).
func typeName(t uint8) string {
	switch t {
	case tNull:
		return "null"
	case tBool:
		return "boolean"
	case tInt, tNumber:
		return "number"
	case tString:
		return "string"
	case tArray:
		return "array"
	}
	return "object"
}

// exactNumber is the JSON number s as a float64, when the comparisons of the fast check are
// exact for it: at most fastDigits significant digits, and a magnitude within a double's normal
// range (or zero), where such decimals stay distinct and in order.
func exactNumber(s string) (float64, bool) {
	if sigDigits(s) > fastDigits || len(s) > 32 {
		return 0, false
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(x, 0) {
		return 0, false
	}
	if x == 0 {
		return x, sigDigits(s) == 0 // 1e-400 is no zero
	}
	return x, math.Abs(x) >= 0x1p-1022
}

// object explains the object at s[i:]. seen holds the bits of the required properties met
// already; with params, a member that is one of the root's parameters is left to the full path.
func (e *explainer) object(f *fastCheck, i, depth int, seen uint64, params, count bool) (int, bool) {
	s := e.s
	var (
		others [16]string // members outside the properties, to find one repeated
		n      int
		extra  []string // the members additionalProperties: false refuses
		spans  [][2]int // where their values are
	)
	i = jsonscan.SkipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		i++
	} else {
		for {
			if i >= len(s) || s[i] != '"' {
				return i, false
			}
			end, esc, ok := jsonscan.String(s, i+1)
			if !ok || esc {
				return end, false
			}
			name := s[i+1 : end-1]
			if i = jsonscan.SkipWS(s, end); i >= len(s) || s[i] != ':' {
				return i, false
			}
			i = jsonscan.SkipWS(s, i+1)
			p, known := f.props[name]
			sub := p.check
			switch {
			case known:
				if seen&p.bit != 0 || (params && p.param) {
					return i, false
				}
				seen |= p.bit
			case n == len(others):
				return i, false
			default:
				for _, prev := range others[:n] {
					if prev == name {
						return i, false
					}
				}
				others[n], n = name, n+1
				sub = f.extra
			}
			if !known && (f.closed || sub == nil) {
				start := i
				if i, ok = e.skipCounted(i, depth, count); !ok {
					return i, false
				}
				if f.closed {
					extra, spans = append(extra, name), append(spans, [2]int{start, i})
				}
			} else {
				e.path = append(e.path, name)
				i, ok = e.value(sub, i, depth, count, 0)
				e.path = e.path[:len(e.path)-1]
				if !ok {
					return i, false
				}
			}
			var more bool
			if i, more, ok = jsonscan.Next(s, i, '}'); !ok {
				return i, false
			} else if !more {
				break
			}
		}
	}
	// The validator reports required before the members, and the members refused after them;
	// the issues are sorted by location anyway, and none of these shares one with another.
	if seen&f.reqMask != f.reqMask {
		var missing []string
		for _, name := range f.required {
			if seen&f.props[name].bit == 0 {
				missing = append(missing, name)
			}
		}
		e.found = true
		e.c.fault(e.c.v.byLoc[f.sch.Location], e.here(), &kind.Required{Missing: missing}, nil, nil)
	}
	if len(extra) > 0 {
		vals := make([]any, len(extra))
		if len(extra) <= issueMaxListed { // past it, one issue names them, without their values
			for k, sp := range spans {
				var ok bool
				if vals[k], ok = e.decode(sp[0], sp[1]); !ok {
					return i, false
				}
			}
		}
		e.found = true
		e.c.fault(e.c.v.byLoc[f.sch.Location], e.here(), &kind.AdditionalProperties{Properties: extra}, nil, vals)
	}
	return i, true
}

// array explains the array at s[i:].
func (e *explainer) array(f *fastCheck, i, depth int, count bool) (int, bool) {
	s := e.s
	var (
		start = i
		n     int
		strs  [uniqueMax]string
	)
	if i = jsonscan.SkipWS(s, i+1); i < len(s) && s[i] == ']' {
		i++
	} else {
		for {
			elem := i
			var ok bool
			if f.items == nil {
				i, ok = e.skipCounted(i, depth, count)
			} else {
				e.path = append(e.path, strconv.Itoa(n))
				i, ok = e.value(f.items, i, depth, count, 0)
				e.path = e.path[:len(e.path)-1]
			}
			if !ok {
				return i, false
			}
			if f.unique {
				// Duplicates are found among strings without escapes, which are equal exactly
				// when their text is.
				if n >= uniqueMax || s[elem] != '"' || indexByte(s[elem:i], '\\') >= 0 {
					return i, false
				}
				strs[n] = s[elem:i]
			}
			n++
			var more bool
			if i, more, ok = jsonscan.Next(s, i, ']'); !ok {
				return i, false
			} else if !more {
				break
			}
		}
	}
	minFail := f.minItems >= 0 && n < f.minItems
	maxFail := f.maxItems >= 0 && n > f.maxItems
	a, b := -1, -1
	if f.unique && n > 1 {
		// The pair the validator names: the first element equal to one before it, and the
		// first of those.
	pairs:
		for y := 1; y < n; y++ {
			for x := range y {
				if strs[x] == strs[y] {
					a, b = x, y
					break pairs
				}
			}
		}
	}
	if !minFail && !maxFail && a < 0 {
		return i, true
	}
	val, ok := e.decode(start, i)
	if !ok {
		return i, false
	}
	if minFail {
		e.report(f, f.kinds.minItems, val)
	}
	if maxFail {
		e.report(f, f.kinds.maxItems, val)
	}
	if a >= 0 {
		e.report(f, &kind.UniqueItems{Duplicates: [2]int{a, b}}, val)
	}
	return i, true
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// skipCounted reads any one JSON value at s[i:], counting it and the values it holds.
func (e *explainer) skipCounted(i, depth int, count bool) (int, bool) {
	if count {
		if e.values++; e.values > pruneFrom {
			return i, false
		}
	}
	return e.skip(i, depth, count)
}

// skip reads the value at s[i:] as the full path would decode it (no member named twice, no
// escaped member name among them, which it could not compare), counting the values it holds
// (not itself) when count is set.
func (e *explainer) skip(i, depth int, count bool) (int, bool) {
	s := e.s
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
		var (
			names [16]string
			n     int
		)
		if i = jsonscan.SkipWS(s, i+1); i < len(s) && s[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(s) || s[i] != '"' {
				return i, false
			}
			end, esc, ok := jsonscan.String(s, i+1)
			if !ok || esc || n == len(names) {
				return end, false
			}
			name := s[i+1 : end-1]
			for _, prev := range names[:n] {
				if prev == name {
					return i, false
				}
			}
			names[n], n = name, n+1
			if i = jsonscan.SkipWS(s, end); i >= len(s) || s[i] != ':' {
				return i, false
			}
			if i, ok = e.skipCounted(jsonscan.SkipWS(s, i+1), depth+1, count); !ok {
				return i, false
			}
			var more bool
			if i, more, ok = jsonscan.Next(s, i, '}'); !more {
				return i, ok
			}
		}
	case c == '[':
		if depth >= maxFastDepth {
			return i, false
		}
		if i = jsonscan.SkipWS(s, i+1); i < len(s) && s[i] == ']' {
			return i + 1, true
		}
		for {
			var ok, more bool
			if i, ok = e.skipCounted(i, depth+1, count); !ok {
				return i, false
			}
			if i, more, ok = jsonscan.Next(s, i, ']'); !more {
				return i, ok
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		end, ok := jsonscan.Number(s, i)
		if !ok {
			return end, false
		}
		// A number the full path would set aside as too large to validate (see validNumber) is
		// left to it, with every other one the explanation does not compare exactly.
		_, ok = exactNumber(s[i:end])
		return end, ok
	}
	end, t := literalText(s, i)
	return end, t != 0
}

// decode is the value of the text s[i:end] (which skip or value read), as the full path
// decodes it.
func (e *explainer) decode(i, end int) (any, bool) {
	text := e.s[i:end]
	switch c := text[0]; {
	case c == '"':
		if indexByte(text, '\\') < 0 {
			return text[1 : len(text)-1], true
		}
		return jsonscan.Unescape(text[1 : len(text)-1]), true
	case c == '-' || (c >= '0' && c <= '9'):
		return json.Number(text), true
	case c == 't':
		return true, true
	case c == 'f':
		return false, true
	case c == 'n':
		return nil, true
	}
	return decodeFastString(text)
}
