package rewrite

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/remedy-go/remedy/internal/jsonw"
)

// sjsonPath converts an RFC 6901 JSON Pointer into a path for sjson's Set and Delete, and
// returns the value the pointer names in doc (not Exists when it is absent).
//
// sjson and gjson share a dotted syntax in which a number means an array index and several
// characters are operators, so a pointer cannot be translated by string substitution alone:
//   - each key is escaped with a backslash wherever gjson would read an operator (".", "*",
//     "?", "|", "#", "@", "\", and ":" in first place, which sjson reads as "key follows");
//   - a numeric segment is an index only when doc holds an array there; anywhere else it is
//     forced to be a key with sjson's ":" prefix, so that a container sjson creates on the way
//     is an object, never an array padded with nulls (and "-1" never means "the last element");
//   - an array segment must be an index inside the array: "-" (append), an index at or past
//     the end, or a non-canonical number ("01") is refused rather than padding the array.
//
// ok is false for what has no sjson path: the empty pointer (the whole document, which sjson
// cannot address), a pointer without its leading "/", an invalid "~" escape, an empty key,
// an array index refused as above, or a path that goes through a string, number, boolean or
// null (setting there would silently replace that value with an object).
func sjsonPath(doc, pointer string) (path string, cur gjson.Result, ok bool) {
	if pointer == "" || pointer[0] != '/' {
		return "", gjson.Result{}, false
	}
	cur = gjson.Parse(doc)
	exists := cur.Exists()
	var b strings.Builder
	b.Grow(len(pointer) + 8)
	for i, raw := range strings.Split(pointer[1:], "/") {
		seg, valid := unescapePointer(raw)
		if !valid || seg == "" {
			return "", gjson.Result{}, false
		}
		if i > 0 {
			b.WriteByte('.')
		}
		switch {
		case exists && cur.IsArray():
			n, isIndex := arrayIndex(seg)
			if !isIndex || n >= int(cur.Get("#").Int()) {
				return "", gjson.Result{}, false
			}
			b.WriteString(seg)
			cur = cur.Get(seg)
		case !exists || cur.IsObject():
			key := escapeKey(seg)
			if isDigits(seg) || seg == "-1" {
				b.WriteByte(':')
			}
			b.WriteString(key)
			if exists {
				cur = cur.Get(key)
				exists = cur.Exists()
			}
		default:
			return "", gjson.Result{}, false
		}
	}
	if !exists {
		cur = gjson.Result{}
	}
	return b.String(), cur, true
}

// unescapePointer decodes one pointer segment; "~" must be followed by "0" or "1".
func unescapePointer(seg string) (string, bool) {
	if !strings.Contains(seg, "~") {
		return seg, true
	}
	var b strings.Builder
	b.Grow(len(seg))
	for i := 0; i < len(seg); i++ {
		if seg[i] != '~' {
			b.WriteByte(seg[i])
			continue
		}
		if i+1 == len(seg) {
			return "", false
		}
		i++
		switch seg[i] {
		case '0':
			b.WriteByte('~')
		case '1':
			b.WriteByte('/')
		default:
			return "", false
		}
	}
	return b.String(), true
}

// escapeKey escapes a key for a gjson or sjson path. gjson.Escape leaves ":" alone, which is
// right for gjson but not for sjson when it comes first.
func escapeKey(key string) string {
	key = gjson.Escape(key)
	if key != "" && key[0] == ':' {
		key = `\` + key
	}
	return key
}

// arrayIndex reads an RFC 6901 array index: "0", or digits without a leading zero. Nine digits
// at most, which no array that fits in a request body exceeds, so the conversion cannot overflow.
func arrayIndex(seg string) (int, bool) {
	if !isDigits(seg) || len(seg) > 9 || (seg[0] == '0' && len(seg) > 1) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(seg); i++ {
		n = n*10 + int(seg[i]-'0')
	}
	return n, true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// pointerSegments splits a pointer into its decoded segments; ok is false for an invalid one.
// The empty pointer has no segments.
func pointerSegments(pointer string) ([]string, bool) {
	if pointer == "" {
		return nil, true
	}
	if pointer[0] != '/' {
		return nil, false
	}
	segs := strings.Split(pointer[1:], "/")
	for i, s := range segs {
		d, ok := unescapePointer(s)
		if !ok {
			return nil, false
		}
		segs[i] = d
	}
	return segs, true
}

// appendPointer adds one key to a pointer, escaped.
func appendPointer(pointer, key string) string {
	var b strings.Builder
	b.WriteString(pointer)
	b.WriteByte('/')
	jsonw.WriteSegment(&b, key)
	return b.String()
}
