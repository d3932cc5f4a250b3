// Package jsonw holds the pieces of JSON that remedy's encoders write by hand, the writing
// counterpart of jsonscan: a string as the canonical envelope spells it, and a JSON Pointer
// as the agent envelope's array of segments. Both the envelope's own encoder and the server's
// refusal writer use them, so that the two write the same bytes.
package jsonw

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/remedy-go/remedy/internal/jsonscan"
	"github.com/remedy-go/remedy/internal/tape"
)

// AppendString appends s as a JSON string: no HTML escapes, control characters as \n, \r,
// \t or \u00XX, invalid UTF-8 as U+FFFD. Runs of printable ASCII are copied eight bytes at a
// time.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i = jsonscan.SkipPlain(s, i); i == len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendPointerSegments appends the JSON Pointer ptr (RFC 6901) as an array of its segments:
// array indexes of at most 9 digits as numbers, names as strings with ~1 and ~0 unescaped.
// "" (the whole document) is [].
func AppendPointerSegments(b []byte, ptr string) []byte {
	b = append(b, '[')
	if ptr != "" {
		first := true
		for seg := range strings.SplitSeq(ptr[1:], "/") {
			if !first {
				b = append(b, ',')
			}
			first = false
			switch {
			case isIndex(seg):
				b = append(b, seg...)
			case strings.IndexByte(seg, '~') >= 0:
				b = AppendString(b, strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~"))
			default:
				b = AppendString(b, seg)
			}
		}
	}
	return append(b, ']')
}

// isIndex reports whether a segment is an array index the envelope writes as a number.
func isIndex(s string) bool {
	if s == "" || len(s) > 9 || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Object appends the members of one JSON object to B, leaving out empty strings and lists.
// Member names are written as given: they are the encoders' own literals, which need no
// escapes. The caller writes the braces.
type Object struct {
	B    []byte
	some bool
}

// Key writes a member's name and the colon, after a comma when a member came before.
func (w *Object) Key(k string) {
	if w.some {
		w.B = append(w.B, ',')
	}
	w.some = true
	w.B = append(w.B, '"')
	w.B = append(w.B, k...)
	w.B = append(w.B, `":`...)
}

// Str writes a string member, unless v is empty.
func (w *Object) Str(k, v string) {
	if v != "" {
		w.Key(k)
		w.B = AppendString(w.B, v)
	}
}

// Int writes a number member.
func (w *Object) Int(k string, v int64) {
	w.Key(k)
	w.B = strconv.AppendInt(w.B, v, 10)
}

// Bool writes a boolean member.
func (w *Object) Bool(k string, v bool) {
	w.Key(k)
	w.B = strconv.AppendBool(w.B, v)
}

// Strs writes an array of strings, unless v is empty.
func (w *Object) Strs(k string, v []string) {
	if len(v) == 0 {
		return
	}
	w.Key(k)
	w.B = append(w.B, '[')
	for i, s := range v {
		if i > 0 {
			w.B = append(w.B, ',')
		}
		w.B = AppendString(w.B, s)
	}
	w.B = append(w.B, ']')
}

// Compact copies valid JSON without the whitespace between tokens.
func Compact(s string) []byte { return AppendCompact(make([]byte, 0, len(s)), s) }

// AppendCompact appends Compact(s) to out.
func AppendCompact(out []byte, s string) []byte {
	if !jsonscan.HasControlOrSpace(s) {
		return append(out, s...)
	}
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr:
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == ' ' || c == '\n' || c == '\r' || c == '\t':
			continue
		}
		out = append(out, c)
	}
	return out
}

// WriteSegment writes seg as a JSON Pointer reference token: ~ as ~0, / as ~1.
func WriteSegment(b *strings.Builder, seg string) {
	if !strings.ContainsAny(seg, "~/") {
		b.WriteString(seg)
		return
	}
	for i := 0; i < len(seg); i++ {
		switch seg[i] {
		case '~':
			b.WriteString("~0")
		case '/':
			b.WriteString("~1")
		default:
			b.WriteByte(seg[i])
		}
	}
}

// Inline renders raw JSON on one line; what is not valid JSON is shown as a JSON string.
func Inline(v []byte) string {
	if !tape.Valid(string(v)) {
		return string(AppendString(nil, string(v)))
	}
	return string(Compact(string(v)))
}
