package conformance

import (
	"math"
	"regexp"
	"regexp/syntax"
	"strings"
)

// maxGenDepth bounds how deep generated values nest.
const maxGenDepth = 8

// value generates a value the schema accepts: its default, const, example or first enum
// value when it has one, else the least value of its type within its bounds (the shortest
// string matching its pattern, the minimum, minItems items, the required properties). It is
// a guess: a server may still refuse it (an identifier that does not exist), which is why
// callers can give examples.
func (d *document) value(s map[string]any, depth int) any {
	if depth == 0 {
		d.work = workLimit
	}
	if s == nil || depth > maxGenDepth || !d.spend() {
		return nil
	}
	for _, k := range []string{"const", "default", "example"} {
		if v, ok := s[k]; ok {
			return v
		}
	}
	if ex := asSlice(s["examples"]); len(ex) > 0 {
		return ex[0]
	}
	if e := asSlice(s["enum"]); len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"allOf", "oneOf", "anyOf"} {
		if b := asSlice(s[k]); len(b) > 0 {
			if m, ok := d.resolve(b[0]).(map[string]any); ok {
				merged := map[string]any{}
				for kk, vv := range s {
					if kk != k {
						merged[kk] = vv
					}
				}
				for kk, vv := range m {
					merged[kk] = vv
				}
				return d.value(merged, depth+1)
			}
		}
	}
	switch typeOf(s) {
	case "string":
		return stringValue(s)
	case "integer":
		return math.Round(numberValue(s, true))
	case "number":
		return numberValue(s, false)
	case "boolean":
		return true
	case "null":
		return nil
	case "array":
		n := int(num(s, "minItems", 0))
		out := make([]any, 0, n)
		for range min(n, 4) {
			out = append(out, d.value(d.sub(s, "items"), depth+1))
		}
		return out
	default:
		return d.object(s, depth)
	}
}

// object generates the required properties of an object schema.
func (d *document) object(s map[string]any, depth int) map[string]any {
	out := map[string]any{}
	for _, r := range asSlice(s["required"]) {
		name, ok := r.(string)
		if !ok {
			continue
		}
		out[name] = d.value(d.sub(s, "properties", name), depth+1)
	}
	return out
}

// typeOf is the schema's type: the first one other than null when it lists several, and
// "object" when it has properties but says nothing.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok && str != "null" {
				return str
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	if _, ok := s["items"]; ok {
		return "array"
	}
	return ""
}

func num(s map[string]any, k string, def float64) float64 {
	if f, ok := s[k].(float64); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f
	}
	return def
}

func numberValue(s map[string]any, integer bool) float64 {
	step := 0.5
	if integer {
		step = 1
	}
	lo, hasLo := s["minimum"].(float64)
	if x, ok := s["exclusiveMinimum"].(float64); ok {
		lo, hasLo = x+step, true
	}
	hi, hasHi := s["maximum"].(float64)
	if x, ok := s["exclusiveMaximum"].(float64); ok {
		hi, hasHi = x-step, true
	}
	switch {
	case hasLo:
		if integer {
			return math.Ceil(lo)
		}
		return lo
	case hasHi && hi < 1:
		if integer {
			return math.Floor(hi)
		}
		return hi
	}
	return 1
}

func stringValue(s map[string]any) string {
	minLen := int(num(s, "minLength", 0))
	if p, ok := s["pattern"].(string); ok {
		if v, ok := shortestMatch(p); ok && len(v) >= minLen {
			return v
		}
	}
	switch s["format"] {
	case "email":
		return "probe@example.com"
	case "date-time":
		return "2026-01-02T03:04:05Z"
	case "date":
		return "2026-01-02"
	case "time":
		return "03:04:05Z"
	case "uuid":
		return "00000000-0000-4000-8000-000000000000"
	case "uri", "url":
		return "https://example.com/"
	case "ipv4":
		return "192.0.2.1"
	}
	return "x" + strings.Repeat("x", max(minLen-1, 0))
}

// shortestMatch returns a short string the regular expression matches (taking the first
// branch of alternations, the least repetition and the first character of classes), and
// whether it does match.
func shortestMatch(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	var walk func(r *syntax.Regexp, depth int)
	walk = func(r *syntax.Regexp, depth int) {
		if depth > 64 || b.Len() > 256 {
			return
		}
		switch r.Op {
		case syntax.OpLiteral:
			b.WriteString(string(r.Rune))
		case syntax.OpCharClass:
			if len(r.Rune) > 0 {
				c := r.Rune[0]
				// Prefer a letter or digit inside the class over punctuation at its start.
				for i := 0; i+1 < len(r.Rune); i += 2 {
					for _, want := range []rune{'a', '0', 'A'} {
						if r.Rune[i] <= want && want <= r.Rune[i+1] {
							c = want
							i = len(r.Rune)
							break
						}
					}
				}
				b.WriteRune(c)
			}
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte('a')
		case syntax.OpCapture, syntax.OpPlus:
			walk(r.Sub[0], depth+1)
		case syntax.OpRepeat:
			for range min(r.Min, 64) {
				walk(r.Sub[0], depth+1)
			}
		case syntax.OpConcat:
			for _, s := range r.Sub {
				walk(s, depth+1)
			}
		case syntax.OpAlternate:
			walk(r.Sub[0], depth+1)
		}
	}
	walk(re, 0)
	out := b.String()
	ok, err := regexp.MatchString(pattern, out)
	return out, err == nil && ok
}

// matches reports whether v satisfies the simple constraints of s (type, enum, pattern,
// bounds): enough to tell whether another value is still a valid one.
func matches(s map[string]any, v any) bool {
	if e := asSlice(s["enum"]); len(e) > 0 {
		for _, x := range e {
			if x == v {
				return true
			}
		}
		return false
	}
	switch x := v.(type) {
	case string:
		if t := typeOf(s); t != "" && t != "string" {
			return false
		}
		if p, ok := s["pattern"].(string); ok {
			if ok, err := regexp.MatchString(p, x); err != nil || !ok {
				return false
			}
		}
		n := float64(len([]rune(x)))
		return n >= num(s, "minLength", 0) && n <= num(s, "maxLength", math.MaxInt32)
	case float64:
		t := typeOf(s)
		if t != "" && t != "number" && t != "integer" {
			return false
		}
		if t == "integer" && x != math.Trunc(x) {
			return false
		}
		if lo, ok := s["minimum"].(float64); ok && x < lo {
			return false
		}
		if hi, ok := s["maximum"].(float64); ok && x > hi {
			return false
		}
		return true
	case bool:
		t := typeOf(s)
		return t == "" || t == "boolean"
	}
	return false
}

// another returns a value other than v that s still accepts, when one is easy to find: the
// next enum value, the number one step up or down, the string with a character added or
// changed, the boolean flipped.
func another(s map[string]any, v any) (any, bool) {
	if e := asSlice(s["enum"]); len(e) > 0 {
		for _, x := range e {
			if x != v {
				return x, true
			}
		}
		return nil, false
	}
	var candidates []any
	switch x := v.(type) {
	case string:
		for _, c := range []string{"0", "a", "1", "b", "x"} {
			candidates = append(candidates, x+c)
			if x != "" {
				candidates = append(candidates, x[:len(x)-1]+c)
			}
		}
	case float64:
		candidates = []any{x + 1, x - 1, x + 0.5}
	case bool:
		candidates = []any{!x}
	}
	for _, c := range candidates {
		if c != v && matches(s, c) {
			return c, true
		}
	}
	return nil, false
}
