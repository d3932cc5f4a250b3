package remedy

import "unicode/utf8"

// Limits on what Parse accepts as structured JSON. A body beyond them is not guessed at: it is
// classified by status and headers alone.
const (
	maxDepth     = 64 // nesting of objects and arrays
	maxNumberLen = 64 // bytes in one number literal; no error body needs more
	smallObject  = 16 // objects up to this many members are checked for duplicates without allocating
)

// validJSON reports whether s is exactly one JSON value, in valid UTF-8, nested at most
// maxDepth deep, with no number longer than maxNumberLen and no object holding the same key
// twice. Readers rely on it: gjson is lenient about malformed input, and a body whose keys
// repeat means different things to different parsers, so it is not read at all.
//
// It runs in time linear in len(s).
func validJSON(s string) bool {
	v := validator{s: s}
	v.ws()
	if !v.value(0) {
		return false
	}
	v.ws()
	return v.i == len(v.s)
}

type validator struct {
	s string
	i int
}

func (v *validator) ws() {
	for v.i < len(v.s) {
		switch v.s[v.i] {
		case ' ', '\t', '\n', '\r':
			v.i++
		default:
			return
		}
	}
}

func (v *validator) value(depth int) bool {
	if v.i >= len(v.s) {
		return false
	}
	switch c := v.s[v.i]; {
	case c == '{':
		return depth < maxDepth && v.object(depth+1)
	case c == '[':
		return depth < maxDepth && v.array(depth+1)
	case c == '"':
		_, ok := v.str()
		return ok
	case c == '-' || (c >= '0' && c <= '9'):
		return v.number()
	case c == 't':
		return v.lit("true")
	case c == 'f':
		return v.lit("false")
	case c == 'n':
		return v.lit("null")
	}
	return false
}

func (v *validator) lit(w string) bool {
	if len(v.s)-v.i < len(w) || v.s[v.i:v.i+len(w)] != w {
		return false
	}
	v.i += len(w)
	return true
}

func (v *validator) object(depth int) bool {
	v.i++ // {
	v.ws()
	if v.i < len(v.s) && v.s[v.i] == '}' {
		v.i++
		return true
	}
	var small [smallObject]string
	var seen map[string]struct{}
	n := 0
	for {
		if v.i >= len(v.s) || v.s[v.i] != '"' {
			return false
		}
		// Keys are compared as written; two spellings of one key through escapes are rare
		// enough that gjson's first-match reading of them is accepted.
		key, ok := v.str()
		if !ok {
			return false
		}
		if seen == nil {
			for _, k := range small[:n] {
				if k == key {
					return false
				}
			}
			if n < smallObject {
				small[n] = key
				n++
			} else {
				seen = make(map[string]struct{}, 2*smallObject)
				for _, k := range small {
					seen[k] = struct{}{}
				}
			}
		}
		if seen != nil {
			if _, dup := seen[key]; dup {
				return false
			}
			seen[key] = struct{}{}
		}
		v.ws()
		if v.i >= len(v.s) || v.s[v.i] != ':' {
			return false
		}
		v.i++
		v.ws()
		if !v.value(depth) {
			return false
		}
		v.ws()
		if v.i >= len(v.s) {
			return false
		}
		switch v.s[v.i] {
		case ',':
			v.i++
			v.ws()
		case '}':
			v.i++
			return true
		default:
			return false
		}
	}
}

func (v *validator) array(depth int) bool {
	v.i++ // [
	v.ws()
	if v.i < len(v.s) && v.s[v.i] == ']' {
		v.i++
		return true
	}
	for {
		if !v.value(depth) {
			return false
		}
		v.ws()
		if v.i >= len(v.s) {
			return false
		}
		switch v.s[v.i] {
		case ',':
			v.i++
			v.ws()
		case ']':
			v.i++
			return true
		default:
			return false
		}
	}
}

// str consumes a string literal and returns its raw contents (escapes not decoded).
func (v *validator) str() (string, bool) {
	v.i++ // "
	start := v.i
	for v.i < len(v.s) {
		c := v.s[v.i]
		switch {
		case c == '"':
			raw := v.s[start:v.i]
			v.i++
			return raw, true
		case c == '\\':
			v.i++
			if v.i >= len(v.s) {
				return "", false
			}
			switch v.s[v.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				v.i++
			case 'u':
				if len(v.s)-v.i < 5 || !isHex4(v.s[v.i+1:v.i+5]) {
					return "", false
				}
				v.i += 5
			default:
				return "", false
			}
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			v.i++
		default:
			r, size := utf8.DecodeRuneInString(v.s[v.i:])
			if r == utf8.RuneError && size <= 1 {
				return "", false
			}
			v.i += size
		}
	}
	return "", false
}

func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (v *validator) number() bool {
	start := v.i
	if v.s[v.i] == '-' {
		v.i++
	}
	if v.i >= len(v.s) {
		return false
	}
	if v.s[v.i] == '0' {
		v.i++
	} else if !v.digits() {
		return false
	}
	if v.i < len(v.s) && v.s[v.i] == '.' {
		v.i++
		if !v.digits() {
			return false
		}
	}
	if v.i < len(v.s) && (v.s[v.i] == 'e' || v.s[v.i] == 'E') {
		v.i++
		if v.i < len(v.s) && (v.s[v.i] == '+' || v.s[v.i] == '-') {
			v.i++
		}
		if !v.digits() {
			return false
		}
	}
	return v.i-start <= maxNumberLen
}

func (v *validator) digits() bool {
	start := v.i
	for v.i < len(v.s) && v.s[v.i] >= '0' && v.s[v.i] <= '9' {
		v.i++
	}
	return v.i > start
}
