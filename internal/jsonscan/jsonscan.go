// Package jsonscan holds the lexical pieces of a strict JSON reader (RFC 8259): whitespace,
// string and number literals, and unescaping. The envelope parser builds its tape from them
// and the server checks request bodies against a schema with them, so that both read JSON by
// one set of rules. They work on strings and never allocate, except Unescape.
package jsonscan

import (
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// SkipWS returns the position of the first byte at or after i that is not JSON whitespace.
func SkipWS(s string, i int) int {
	for i < len(s) {
		if c := s[i]; c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return i
		}
		i++
	}
	return i
}

// Next reads what follows a member or an element at s[i:], after any whitespace: a comma,
// when more follow (next is where the next one starts), or closer, the '}' or ']' that ends
// the container (next is past it). ok is false for anything else.
func Next(s string, i int, closer byte) (next int, more, ok bool) {
	if i = SkipWS(s, i); i >= len(s) {
		return i, false, false
	}
	switch s[i] {
	case ',':
		return SkipWS(s, i+1), true, true
	case closer:
		return i + 1, false, true
	}
	return i, false, false
}

// plainByte marks the bytes a string holds without a second look: printable ASCII other
// than '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// String reads a string literal whose opening quote is just before s[i] and returns the
// position after its closing quote; esc reports whether it holds escapes. ok is false for a
// string that is not closed, holds a control character, a bad escape or invalid UTF-8.
func String(s string, i int) (end int, esc, ok bool) {
	end, esc, st := StringPrefix(s, i)
	return end, esc, st == Whole
}

// State says how a literal read from a prefix of a document stands.
type State uint8

const (
	Whole State = iota // the literal is whole and valid
	Cut                // s ends inside it: what follows could still make it valid
	Bad                // it is not JSON, whatever follows
)

// StringPrefix is String on a document that may have been cut anywhere: it tells a string s
// ends inside (no closing quote, a partial escape, a partial UTF-8 sequence: Cut) from one
// that is not JSON (Bad). end is the position after the closing quote when the string is Whole.
func StringPrefix(s string, i int) (end int, esc bool, st State) {
	for {
		i = SkipPlain(s, i)
		if i >= len(s) {
			return i, esc, Cut
		}
		switch c := s[i]; {
		case c == '"':
			return i + 1, esc, Whole
		case c == '\\':
			esc = true
			if i+1 >= len(s) {
				return i, esc, Cut
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= len(s) {
						return j, esc, Cut
					}
					if !isHex(s[j]) {
						return j, esc, Bad
					}
				}
				i += 6
			default:
				return i, esc, Bad
			}
		case c < 0x20:
			return i, esc, Bad
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size <= 1 {
				if !utf8.FullRuneInString(s[i:]) {
					return i, esc, Cut // a valid start of a sequence s ends inside
				}
				return i, esc, Bad
			}
			i += size
		}
	}
}

// Eight bytes at a time (SWAR): a byte needs a second look when it is below 0x20, a '"', a
// '\\' or not ASCII. The tests for a byte equal to zero flag the first such byte exactly (a
// false flag can only follow a true one), which is the only one used.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// word is eight bytes as one little-endian word (the compiler loads it in one instruction).
func word(w string) uint64 {
	_ = w[7]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// Word is s[:8] as one little-endian word, for Special.
func Word(s string) uint64 { return word(s) }

// Special flags the bytes of x (eight bytes of a string, see Word) that a string holds only
// after a second look (see SkipPlain): the high bit of each such byte is set in the result,
// and the lowest set bit marks the first such byte exactly (a false flag can only follow a
// true one).
func Special(x uint64) uint64 {
	q := x ^ ('"' * ones)
	b := x ^ ('\\' * ones)
	m := (q - ones) &^ q
	m |= (b - ones) &^ b
	m |= x - 0x20*ones // a byte below 0x20 borrows into its high bit
	return (m | x) & highs
}

// SkipPlain returns the position of the first byte at or after i that a string holds only
// after a second look (a control character, '"', '\\' or a byte that is not ASCII), or len(s).
func SkipPlain(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		if m := Special(word(s[i : i+8])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(s) && plainByte[s[i]] {
		i++
	}
	return i
}

// HasControlOrSpace reports whether s holds a byte up to ' ' (whitespace or a control
// character), eight bytes at a time.
func HasControlOrSpace(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := word(s[i : i+8])
		if (x-0x21*ones)&^x&highs != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		if s[i] <= ' ' {
			return true
		}
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Number reads the number literal at s[i:] and returns the position after it; ok is false
// when what starts there is not a number in JSON's grammar.
func Number(s string, i int) (end int, ok bool) {
	start := i
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) {
		return i, false
	}
	if s[i] == '0' {
		i++
	} else if i = digits(s, i); i == start || s[i-1] == '-' {
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(s, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// IsNumber reports whether s is exactly one number in JSON's grammar.
func IsNumber(s string) bool {
	end, ok := Number(s, 0)
	return ok && end == len(s)
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// Unescape is the value of the body of a string literal that String read (without its
// quotes). A lone surrogate becomes U+FFFD, as encoding/json decodes it.
func Unescape(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hexRune(s[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if r2 := hexRune(s[i+3 : i+7]); utf16.DecodeRune(r, r2) != utf8.RuneError {
					r = utf16.DecodeRune(r, r2)
					i += 6
				}
			}
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
		default: // " \ /
			b = append(b, s[i])
		}
	}
	return string(b)
}

func hexRune(s string) rune {
	var r rune
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
