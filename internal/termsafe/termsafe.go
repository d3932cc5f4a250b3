// Package termsafe makes text from a server or a model safe to show a person: every control
// character, escape sequence, bidirectional control and invisible character is written as a
// visible escape (\x1b, \u202e), so that what a person reads is what the bytes say, never what
// a terminal or a renderer would make of them.
package termsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String returns s with every character that a terminal or a renderer would not show as
// itself replaced by its Go escape: C0 and C1 controls (ESC, CR, LF, TAB and DEL included),
// format characters (bidirectional controls such as U+202E and U+2066, zero-width characters,
// the byte order mark), line and paragraph separators, variation selectors and the other
// default-ignorable characters, and bytes that are not UTF-8 (\xff). Everything else, the
// backslash included, is kept as it is. The result is one line.
func String(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if hidden(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case hidden(r, n):
			b.WriteString(escape(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Safe reports whether String(s) == s: s holds nothing String would escape.
func Safe(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if hidden(r, n) {
			return false
		}
		i += n
	}
	return true
}

// hidden reports whether the rune (n bytes long) is one String escapes.
func hidden(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0x80:
		return false
	}
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) ||
		unicode.Is(unicode.Zp, r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Cs, r) ||
		unicode.Is(unicode.Variation_Selector, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		r == 0xfffc // the object replacement character stands for what is not there
}

// escape is r as Go writes it in a string literal: \t, \n, \x1b, \u202e, \U000e0001.
func escape(r rune) string {
	switch r {
	case '\t':
		return `\t`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	}
	switch {
	case r < 0x80:
		return `\x` + hex2(byte(r))
	case r <= 0xffff:
		return `\u` + pad(strconv.FormatInt(int64(r), 16), 4)
	}
	return `\U` + pad(strconv.FormatInt(int64(r), 16), 8)
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

func pad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}
