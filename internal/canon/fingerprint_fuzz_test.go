package canon_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/remedy-go/remedy/internal/canon"
)

// FuzzFingerprint checks that a fingerprint tells values apart exactly: two texts that
// Fingerprint accepts share a fingerprint if and only if they decode to the same values, with
// numbers compared by their exact decimal value (and -0 apart from 0), as decided here by an
// oracle of its own (coefficient and big.Int exponent, not the package's code). Beside the pair
// it is given, which is rarely equal, it checks a respelling of a (members in another order,
// whitespace, escapes, each number written another way) that must match a, and a copy of a with
// one number changed in its last digit or beyond, which must not. b also drives those choices.
// Seeds are under testdata/fuzz/FuzzFingerprint.
func FuzzFingerprint(f *testing.F) {
	f.Fuzz(func(t *testing.T, a, b []byte) {
		va, fa, ok := fingerprinted(a)
		if !ok {
			return
		}
		if vb, fb, ok := fingerprinted(b); ok && equalExact(va, vb) != (fa == fb) {
			t.Fatalf("equal values %v, equal fingerprints %v:\n%q\n%q", equalExact(va, vb), fa == fb, a, b)
		}

		ch := &chooser{src: b}
		same := respell(nil, va, ch)
		vs, fs, ok := fingerprinted(same)
		if !ok || !equalExact(va, vs) {
			t.Fatalf("the test's respelling is wrong: %q -> %q", a, same)
		}
		if fs != fa {
			t.Fatalf("one value, two fingerprints:\n%q\n%q", a, same)
		}

		changed, ok := perturb(va, ch)
		if !ok {
			return // no number to change
		}
		other := respell(nil, changed, ch)
		vo, fo, ok := fingerprinted(other)
		if !ok || equalExact(va, vo) {
			t.Fatalf("the test's change is wrong: %q -> %q", a, other)
		}
		if fo == fa {
			t.Fatalf("two values, one fingerprint:\n%q\n%q", a, other)
		}
	})
}

// fingerprinted decodes in, numbers as json.Number, and fingerprints it; ok is false when
// either refuses it.
func fingerprinted(in []byte) (v any, sum [32]byte, ok bool) {
	sum, err := canon.Fingerprint(in)
	if err != nil {
		return nil, sum, false
	}
	d := json.NewDecoder(bytes.NewReader(in))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return nil, sum, false
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, sum, false
	}
	return v, sum, true
}

// exactNumber is a number's value as coef × 10^exp, coef without leading or trailing zeros
// ("" for zero, with exp 0), and its sign.
type exactNumber struct {
	neg  bool
	coef string
	exp  *big.Int
}

func parseExact(s string) exactNumber {
	n := exactNumber{exp: new(big.Int)}
	s, n.neg = strings.CutPrefix(s, "-")
	mant, e, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		if _, ok := n.exp.SetString(e, 10); !ok {
			panic("bad exponent in " + s)
		}
	}
	ip, frac, _ := strings.Cut(mant, ".")
	n.exp.Sub(n.exp, big.NewInt(int64(len(frac))))
	coef := strings.TrimLeft(ip+frac, "0")
	n.coef = strings.TrimRight(coef, "0")
	n.exp.Add(n.exp, big.NewInt(int64(len(coef)-len(n.coef))))
	if n.coef == "" {
		n.exp.SetInt64(0)
	}
	return n
}

func (n exactNumber) equal(m exactNumber) bool {
	return n.neg == m.neg && n.coef == m.coef && n.exp.Cmp(m.exp) == 0
}

// equalExact reports whether two decoded values are the same, numbers compared exactly.
func equalExact(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || !equalExact(va, vb) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, equalExact)
	case json.Number:
		b, ok := b.(json.Number)
		return ok && parseExact(string(a)).equal(parseExact(string(b)))
	default: // string, bool, nil
		return a == b
	}
}

// chooser hands out the bytes of src as choices, then zeros.
type chooser struct {
	src []byte
	i   int
}

func (c *chooser) next(n int) int {
	if c.i >= len(c.src) {
		c.i++
		return c.i % n
	}
	c.i++
	return int(c.src[c.i-1]) % n
}

// respell writes v as JSON, each member order, space, escape and number spelling chosen by c.
func respell(dst []byte, v any, c *chooser) []byte {
	space := func() {
		for range c.next(4) / 2 {
			dst = append(dst, " \t\n\r"[c.next(4)])
		}
	}
	space()
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if c.next(2) == 0 {
			slices.Reverse(keys)
		}
		for i := len(keys) - 1; i > 0; i-- {
			j := c.next(i + 1)
			keys[i], keys[j] = keys[j], keys[i]
		}
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = respellString(dst, k, c)
			space()
			dst = append(dst, ':')
			dst = respell(dst, v[k], c)
		}
		dst = append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = respell(dst, e, c)
		}
		dst = append(dst, ']')
	case json.Number:
		dst = respellNumber(dst, parseExact(string(v)), c)
	case string:
		dst = respellString(dst, v, c)
	case bool:
		dst = strconv.AppendBool(dst, v)
	case nil:
		dst = append(dst, "null"...)
	}
	space()
	return dst
}

func respellString(dst []byte, s string, c *chooser) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r < 0x20 || c.next(8) == 0:
			if r == '/' && c.next(2) == 0 {
				dst = append(dst, '\\', '/')
				continue
			}
			for _, u := range utf16.Encode([]rune{r}) {
				dst = append(dst, `\u`...)
				h := strconv.FormatUint(uint64(u), 16)
				dst = append(dst, strings.Repeat("0", 4-len(h))...)
				if c.next(2) == 0 {
					h = strings.ToUpper(h)
				}
				dst = append(dst, h...)
			}
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}

// respellNumber writes n in one of several spellings of its exact value.
func respellNumber(dst []byte, n exactNumber, c *chooser) []byte {
	if n.neg {
		dst = append(dst, '-')
	}
	exponent := func(e *big.Int) {
		dst = append(dst, "eE"[c.next(2)])
		switch {
		case e.Sign() < 0:
			dst = append(dst, '-')
		case c.next(2) == 0:
			dst = append(dst, '+')
		}
		dst = append(dst, strings.Repeat("0", c.next(3))...)
		dst = append(dst, new(big.Int).Abs(e).String()...)
	}
	if n.coef == "" {
		dst = append(dst, '0')
		if c.next(2) == 0 {
			dst = append(dst, ".000"[:2+c.next(3)]...)
		}
		if c.next(2) == 0 {
			exponent(big.NewInt(int64(c.next(600) - 300)))
		}
		return dst
	}
	zeros := c.next(5)
	switch c.next(3) {
	case 0: // an integer coefficient with trailing zeros, and an exponent
		dst = append(dst, n.coef...)
		dst = append(dst, strings.Repeat("0", zeros)...)
		exponent(new(big.Int).Sub(n.exp, big.NewInt(int64(zeros))))
	case 1: // 0.000ddd and an exponent
		dst = append(dst, "0."...)
		dst = append(dst, strings.Repeat("0", zeros)...)
		dst = append(dst, n.coef...)
		exponent(new(big.Int).Add(n.exp, big.NewInt(int64(zeros+len(n.coef)))))
	default: // plain, when the exponent is small
		if !n.exp.IsInt64() || n.exp.Int64() < -40 || n.exp.Int64() > 40 {
			dst = append(dst, n.coef[:1]...)
			if len(n.coef) > 1 || zeros > 0 {
				dst = append(dst, '.')
				dst = append(dst, n.coef[1:]...)
				dst = append(dst, strings.Repeat("0", zeros)...)
			}
			exponent(new(big.Int).Add(n.exp, big.NewInt(int64(len(n.coef)-1))))
			return dst
		}
		e := int(n.exp.Int64())
		digits := n.coef
		if e >= 0 {
			digits += strings.Repeat("0", e)
			e = 0
		}
		point := len(digits) + e // digits[:point] . digits[point:]
		if point <= 0 {
			dst = append(dst, "0."...)
			dst = append(dst, strings.Repeat("0", -point)...)
			dst = append(dst, digits...)
		} else {
			dst = append(dst, digits[:point]...)
			if point < len(digits) || zeros > 0 {
				dst = append(dst, '.')
			}
			dst = append(dst, digits[point:]...)
		}
		if point < len(digits) || zeros > 0 {
			dst = append(dst, strings.Repeat("0", zeros)...)
		}
	}
	return dst
}

// perturb returns a copy of v with one number, chosen by c, changed: its last significant digit
// moved by one, a digit added below it, or its sign flipped. ok is false when v has no number.
func perturb(v any, c *chooser) (any, bool) {
	var numbers int
	count(v, &numbers)
	if numbers == 0 {
		return nil, false
	}
	target := c.next(numbers)
	return replaceNumber(v, &target, func(n exactNumber) exactNumber {
		m := exactNumber{neg: n.neg, coef: n.coef, exp: new(big.Int).Set(n.exp)}
		switch {
		case c.next(8) == 0 || n.coef == "":
			m.neg = !m.neg
			if n.coef == "" && c.next(2) == 0 {
				m.neg, m.coef, m.exp = n.neg, "1", big.NewInt(int64(c.next(800)-400))
			}
		case c.next(2) == 0:
			// The next digit down: 2^53+1 against 2^53 + 1.5, and 1e-400 against 1.1e-400.
			d := c.next(9)
			m.coef += "123456789"[d : d+1]
			m.exp.Sub(m.exp, big.NewInt(1))
		default:
			// The last digit up or down: 2^53+1 against 2^53, or 2^53+2.
			d := m.coef[len(m.coef)-1]
			switch {
			case d == '9' || d > '1' && c.next(2) == 0:
				d--
			default:
				d++
			}
			m.coef = m.coef[:len(m.coef)-1] + string(d)
			// A last digit of 0 or a coefficient of "" is not written: normalize as parseExact does.
			m = parseExact(string(respellNumber(nil, m, &chooser{})))
			m.neg = n.neg
		}
		return m
	}), true
}

func count(v any, n *int) {
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			count(e, n)
		}
	case []any:
		for _, e := range v {
			count(e, n)
		}
	case json.Number:
		*n++
	}
}

// replaceNumber copies v, with the number at *target (in the order count meets them) changed
// by change. Maps are visited in key order, so that the order is the same for the copy.
func replaceNumber(v any, target *int, change func(exactNumber) exactNumber) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out[k] = replaceNumber(v[k], target, change)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = replaceNumber(e, target, change)
		}
		return out
	case json.Number:
		*target--
		if *target != -1 {
			return v
		}
		m := change(parseExact(string(v)))
		return json.Number(respellNumber(nil, m, &chooser{}))
	}
	return v
}
