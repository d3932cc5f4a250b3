// Package canon writes JSON in a canonical form, so that texts that differ only in key order,
// whitespace or the spelling of equal values ("\u0041" and "A", 1.0 and 1, 1E2 and 100) have one
// form and its hash fingerprints a payload: an idempotency key or a confirmation token bound to a
// request survives re-serialization by any client, but not a changed value.
//
// Append writes RFC 8785, the JSON Canonicalization Scheme (JCS), whose numbers are IEEE 754
// doubles: two literals that round to the same double (9007199254740993 and 9007199254740992,
// 1e-400 and 0) are one value there. AppendExact and Fingerprint keep every number's exact
// decimal value instead, since a payload's binding may hold digits a double does not (an int64
// beyond 2^53); they agree with Append on every number a double holds exactly in its shortest
// digits.
package canon

import (
	"crypto/sha256"
	"errors"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// ErrInvalid is the error every failure of Append and Fingerprint wraps, with the reason and
// the byte offset in src: the input is not one valid JSON value in valid UTF-8, or it is valid
// JSON that has no canonical form (a duplicate key, nesting deeper than 128, a lone surrogate,
// a number beyond the range of a double). Callers test for it with errors.Is.
var ErrInvalid = errors.New("canon: invalid JSON")

// maxDepth bounds the nesting of objects and arrays. The reader recurses once per level, so the
// bound keeps hostile input from growing the stack; no request payload nests this deep.
const maxDepth = 128

// maxPooled bounds the buffers a pooled canonicalizer keeps between calls, so that one huge
// payload does not pin its memory for the life of the process.
const maxPooled = 64 << 10

// syntaxError carries the detail; Unwrap lets errors.Is match ErrInvalid without callers
// depending on the message.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string {
	return ErrInvalid.Error() + ": " + e.msg + " at offset " + strconv.Itoa(e.off)
}

func (e *syntaxError) Unwrap() error { return ErrInvalid }

// Append appends the RFC 8785 canonical form of the JSON text src to dst and returns the
// extended buffer. Whitespace around the value is allowed.
//
// It returns an error wrapping ErrInvalid, and never panics, when src is not exactly one valid
// JSON value in valid UTF-8, holds an object with a duplicate key, nests deeper than 128, holds
// a lone surrogate escape, or holds a number whose magnitude overflows an IEEE 754 double
// (e.g. 1e400). It then returns dst as it was given, though it may have written to its spare
// capacity.
func Append(dst, src []byte) ([]byte, error) {
	c := pool.Get().(*canonicalizer)
	out, err := c.run(dst, src)
	c.release()
	if err != nil {
		return dst, err
	}
	return out, nil
}

// AppendExact appends the exact canonical form of the JSON text src to dst: the RFC 8785 form
// of Append, but with every number written by its exact decimal value, so that two texts have
// the same exact form if and only if they hold the same values. Numbers are equal when their
// decimal values are (1, 1.0, 1e0 and 10e-1 are one number), and -0 is a value of its own, not
// 0, since a float64 bound from it is not the 0 that 0 binds to. A number is written as
// ECMAScript writes a double, with the exact digits in place of the shortest ones that round
// to the double; its length stays within a few bytes of the literal's, whatever its exponent
// (1e999999999 is written 1e+999999999).
//
// It rejects, with an error wrapping ErrInvalid, what Append rejects, but for numbers: no
// magnitude is out of range here.
func AppendExact(dst, src []byte) ([]byte, error) {
	c := pool.Get().(*canonicalizer)
	c.exact = true
	out, err := c.run(dst, src)
	c.release()
	if err != nil {
		return dst, err
	}
	return out, nil
}

// Fingerprint is the SHA-256 of the exact canonical form of src (AppendExact), or an error
// wrapping ErrInvalid for the inputs AppendExact rejects: two texts share a fingerprint if and
// only if they hold the same values, numbers compared exactly. It reuses its buffers, so a
// fingerprint costs no allocation in the steady state.
func Fingerprint(src []byte) ([32]byte, error) {
	c := pool.Get().(*canonicalizer)
	c.exact = true
	out, err := c.run(c.buf[:0], src)
	var sum [32]byte
	if err == nil {
		sum = sha256.Sum256(out)
	}
	c.buf = out
	c.release()
	return sum, err
}

var pool = sync.Pool{New: func() any { return new(canonicalizer) }}

// canonicalizer reads src once, front to back, writing the canonical form as it goes. Members
// are written in source order and an object is put in order when it closes, by moving whole
// member ranges; nothing is decoded into intermediate values.
type canonicalizer struct {
	src []byte
	pos int
	dst []byte

	// members is a stack shared by all open objects: each object's members are the tail it
	// pushed, popped when it closes, so the nesting costs no allocation per object.
	members []member
	// scratch holds an object's members while they are written back in order.
	scratch []byte
	// buf is Fingerprint's output, kept between calls.
	buf []byte
	// exact writes numbers by their exact decimal value (AppendExact) instead of the double
	// they round to (Append).
	exact bool
}

// member locates one written member in dst, and its name in src for error messages.
type member struct {
	start int // the opening quote of the name
	colon int // the colon after the name
	end   int // just past the value
	off   int // the name's offset in src
}

func (c *canonicalizer) run(dst, src []byte) ([]byte, error) {
	c.src, c.pos, c.dst = src, 0, dst
	err := c.value(0)
	if err == nil {
		c.skipSpace()
		if c.pos < len(c.src) {
			err = c.fail(c.pos, "data after the value")
		}
	}
	return c.dst, err
}

// release returns c to the pool without references to the caller's memory.
func (c *canonicalizer) release() {
	c.src, c.dst, c.exact = nil, nil, false
	c.members = c.members[:0]
	if cap(c.members) > maxPooled/32 { // a member is 32 bytes
		c.members = nil
	}
	if cap(c.scratch) > maxPooled {
		c.scratch = nil
	}
	if cap(c.buf) > maxPooled {
		c.buf = nil
	}
	pool.Put(c)
}

func (c *canonicalizer) fail(off int, msg string) error {
	return &syntaxError{off: off, msg: msg}
}

func (c *canonicalizer) skipSpace() {
	for c.pos < len(c.src) {
		switch c.src[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// value writes the value at c.pos; depth is the number of containers around it.
func (c *canonicalizer) value(depth int) error {
	c.skipSpace()
	if c.pos >= len(c.src) {
		return c.fail(c.pos, "unexpected end of input")
	}
	switch b := c.src[c.pos]; b {
	case '{':
		return c.object(depth + 1)
	case '[':
		return c.array(depth + 1)
	case '"':
		return c.string()
	case 't':
		return c.literal("true")
	case 'f':
		return c.literal("false")
	case 'n':
		return c.literal("null")
	default:
		if b == '-' || b >= '0' && b <= '9' {
			return c.number()
		}
		return c.fail(c.pos, "unexpected character "+strconv.QuoteToASCII(string(c.src[c.pos:c.pos+1])))
	}
}

func (c *canonicalizer) literal(lit string) error {
	if len(c.src)-c.pos < len(lit) || string(c.src[c.pos:c.pos+len(lit)]) != lit {
		return c.fail(c.pos, "invalid literal")
	}
	c.pos += len(lit)
	c.dst = append(c.dst, lit...)
	return nil
}

func (c *canonicalizer) array(depth int) error {
	if depth > maxDepth {
		return c.fail(c.pos, "nesting deeper than "+strconv.Itoa(maxDepth))
	}
	c.pos++
	c.dst = append(c.dst, '[')
	c.skipSpace()
	if c.pos < len(c.src) && c.src[c.pos] == ']' {
		c.pos++
		c.dst = append(c.dst, ']')
		return nil
	}
	for {
		if err := c.value(depth); err != nil {
			return err
		}
		c.skipSpace()
		if c.pos >= len(c.src) {
			return c.fail(c.pos, "unexpected end of input in array")
		}
		switch c.src[c.pos] {
		case ',':
			c.pos++
			c.dst = append(c.dst, ',')
		case ']':
			c.pos++
			c.dst = append(c.dst, ']')
			return nil
		default:
			return c.fail(c.pos, "expected ',' or ']' in array")
		}
	}
}

func (c *canonicalizer) object(depth int) error {
	if depth > maxDepth {
		return c.fail(c.pos, "nesting deeper than "+strconv.Itoa(maxDepth))
	}
	c.pos++
	c.dst = append(c.dst, '{')
	c.skipSpace()
	if c.pos < len(c.src) && c.src[c.pos] == '}' {
		c.pos++
		c.dst = append(c.dst, '}')
		return nil
	}
	first, base := len(c.dst), len(c.members)
	for {
		c.skipSpace()
		if c.pos >= len(c.src) || c.src[c.pos] != '"' {
			return c.fail(c.pos, "expected a member name")
		}
		m := member{start: len(c.dst), off: c.pos}
		if err := c.string(); err != nil {
			return err
		}
		m.colon = len(c.dst)
		c.skipSpace()
		if c.pos >= len(c.src) || c.src[c.pos] != ':' {
			return c.fail(c.pos, "expected ':' after a member name")
		}
		c.pos++
		c.dst = append(c.dst, ':')
		if err := c.value(depth); err != nil {
			return err
		}
		m.end = len(c.dst)
		c.members = append(c.members, m)
		c.skipSpace()
		if c.pos >= len(c.src) {
			return c.fail(c.pos, "unexpected end of input in object")
		}
		switch c.src[c.pos] {
		case ',':
			c.pos++
			c.dst = append(c.dst, ',')
			continue
		case '}':
			c.pos++
		default:
			return c.fail(c.pos, "expected ',' or '}' in object")
		}
		break
	}
	err := c.order(first, c.members[base:])
	c.members = c.members[:base]
	c.dst = append(c.dst, '}')
	return err
}

// order puts the members of the object whose members start at dst[first] in canonical order
// and rejects duplicate names. Payloads are often already sorted (encoding/json sorts map keys),
// so a sorted object is detected and left in place without copying.
func (c *canonicalizer) order(first int, ms []member) error {
	for i := 1; i < len(ms); i++ {
		switch d := compareNames(c.name(ms[i-1]), c.name(ms[i])); {
		case d == 0:
			return c.fail(ms[i].off, "duplicate member name")
		case d > 0:
			return c.sort(first, ms)
		}
	}
	return nil
}

func (c *canonicalizer) sort(first int, ms []member) error {
	dst := c.dst
	byName := func(a, b member) int {
		return compareNames(dst[a.start+1:a.colon-1], dst[b.start+1:b.colon-1])
	}
	slices.SortFunc(ms, byName) // an insertion sort for the small objects payloads are made of
	for i := 1; i < len(ms); i++ {
		if byName(ms[i-1], ms[i]) == 0 {
			return c.fail(max(ms[i-1].off, ms[i].off), "duplicate member name")
		}
	}
	// The members end where the object's closing brace is about to go.
	c.scratch = append(c.scratch[:0], c.dst[first:]...)
	c.dst = c.dst[:first]
	for i, m := range ms {
		if i > 0 {
			c.dst = append(c.dst, ',')
		}
		c.dst = append(c.dst, c.scratch[m.start-first:m.end-first]...)
	}
	return nil
}

// name is a written member name without its quotes, in canonical escaped form.
func (c *canonicalizer) name(m member) []byte {
	return c.dst[m.start+1 : m.colon-1]
}

// compareNames orders two canonical (escaped) names as RFC 8785 requires: by their UTF-16 code
// units. It compares the escaped forms directly, since a canonical form spells each character
// one way, and decodes only the first character that differs.
func compareNames(a, b []byte) int {
	i := 0
	for {
		for i < len(a) && i < len(b) && a[i] == b[i] && a[i] != '\\' {
			i++
		}
		switch {
		case i == len(a) && i == len(b):
			return 0
		case i == len(a):
			return -1
		case i == len(b):
			return 1
		case a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf && a[i] != '\\' && b[i] != '\\':
			return int(a[i]) - int(b[i]) // the usual case: ASCII names differing in a plain byte
		}
		// Differing bytes inside a multi-byte character: compare from its first byte. Escapes
		// are ASCII, so this never backs into one.
		for a[i]&0xC0 == 0x80 {
			i--
		}
		ra, n := decodeCanonical(a[i:])
		rb, _ := decodeCanonical(b[i:])
		if ra != rb {
			return int(utf16Key(ra) - utf16Key(rb))
		}
		i += n // the same character, spelled the same way in both
	}
}

// utf16Key maps code points to an order that agrees with their UTF-16 encodings: a code point
// above U+FFFF is written as a surrogate pair, whose first unit (U+D800..U+DBFF) sorts below
// U+E000..U+FFFF, though the code point is greater. Code order and UTF-8 byte order would put
// them the other way round.
func utf16Key(r rune) rune {
	if r >= 0xE000 && r <= 0xFFFF {
		return r + 0x110000
	}
	return r
}

// decodeCanonical reads the first character of a canonical string body: a minimal escape, an
// ASCII byte or a UTF-8 sequence (already validated when it was written).
func decodeCanonical(s []byte) (rune, int) {
	switch b := s[0]; {
	case b == '\\':
		switch s[1] {
		case 'b':
			return '\b', 2
		case 'f':
			return '\f', 2
		case 'n':
			return '\n', 2
		case 'r':
			return '\r', 2
		case 't':
			return '\t', 2
		case 'u':
			return rune(unhex[s[4]])<<4 | rune(unhex[s[5]]), 6 // \u00XX
		default:
			return rune(s[1]), 2 // \" or \\
		}
	case b < utf8.RuneSelf:
		return rune(b), 1
	default:
		return utf8.DecodeRune(s)
	}
}

// plain marks the bytes a string copies through unchanged: printable ASCII but the quote and
// the backslash. Everything else needs a look: the end, an escape, a control character (invalid
// raw) or the first byte of a UTF-8 sequence to validate.
var plain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// unhex maps hex digits to their value and every other byte to 0xFF.
var unhex = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for b := '0'; b <= '9'; b++ {
		t[b] = byte(b - '0')
	}
	for b := 'a'; b <= 'f'; b++ {
		t[b] = byte(b - 'a' + 10)
		t[b-'a'+'A'] = byte(b - 'a' + 10)
	}
	return t
}()

// string writes the string at c.pos with every escape resolved and re-escaped minimally. Runs
// of characters that need no escaping, which are most strings, are copied in one append.
func (c *canonicalizer) string() error {
	src := c.src
	start := c.pos
	i := start + 1
	run := i
	c.dst = append(c.dst, '"')
	for {
		for i < len(src) && plain[src[i]] {
			i++
		}
		if i >= len(src) {
			return c.fail(start, "unterminated string")
		}
		switch b := src[i]; {
		case b == '"':
			c.dst = append(c.dst, src[run:i]...)
			c.dst = append(c.dst, '"')
			c.pos = i + 1
			return nil
		case b == '\\':
			c.dst = append(c.dst, src[run:i]...)
			n, err := c.escape(i)
			if err != nil {
				return err
			}
			i += n
			run = i
		case b < 0x20:
			return c.fail(i, "control character in string")
		default:
			r, n := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && n == 1 {
				return c.fail(i, "invalid UTF-8 in string")
			}
			i += n
		}
	}
}

// escape writes the character of the escape at src[i] and returns the escape's length.
func (c *canonicalizer) escape(i int) (int, error) {
	src := c.src
	if i+1 >= len(src) {
		return 0, c.fail(i, "unterminated string")
	}
	switch e := src[i+1]; e {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		// Already minimal: these are the only escapes canonical output has for them.
		c.dst = append(c.dst, '\\', e)
		return 2, nil
	case '/':
		c.dst = append(c.dst, '/')
		return 2, nil
	case 'u':
		r, ok := hex4(src[i+2:])
		if !ok {
			return 0, c.fail(i, "invalid \\u escape")
		}
		n := 6
		if r >= 0xD800 && r <= 0xDFFF {
			// I-JSON, which RFC 8785 requires, has no lone surrogates: a high one must be
			// followed by an escaped low one and they are one character.
			lo, ok := rune(0), false
			if r < 0xDC00 && len(src)-i >= 12 && src[i+6] == '\\' && src[i+7] == 'u' {
				lo, ok = hex4(src[i+8:])
			}
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return 0, c.fail(i, "lone surrogate escape")
			}
			r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
			n = 12
		}
		c.dst = appendRune(c.dst, r)
		return n, nil
	default:
		return 0, c.fail(i, "invalid escape")
	}
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	a, b, c, d := unhex[s[0]], unhex[s[1]], unhex[s[2]], unhex[s[3]]
	if a|b|c|d == 0xFF {
		return 0, false
	}
	return rune(a)<<12 | rune(b)<<8 | rune(c)<<4 | rune(d), true
}

// appendRune writes r as RFC 8785 spells it in a string: escaped only if it must be.
func appendRune(dst []byte, r rune) []byte {
	switch {
	case r == '"' || r == '\\':
		return append(dst, '\\', byte(r))
	case r >= 0x20:
		return utf8.AppendRune(dst, r)
	case r == '\b':
		return append(dst, '\\', 'b')
	case r == '\f':
		return append(dst, '\\', 'f')
	case r == '\n':
		return append(dst, '\\', 'n')
	case r == '\r':
		return append(dst, '\\', 'r')
	case r == '\t':
		return append(dst, '\\', 't')
	default:
		const hex = "0123456789abcdef"
		return append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xF])
	}
}

// number writes the number at c.pos as ECMAScript's Number.prototype.toString would write the
// double it denotes, or, in exact mode, by its exact value (appendExact).
func (c *canonicalizer) number() error {
	src := c.src
	start := c.pos
	i := start
	if src[i] == '-' {
		i++
	}
	digits := i
	switch {
	case i < len(src) && src[i] == '0':
		i++
	case i < len(src) && src[i] >= '1' && src[i] <= '9':
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
	default:
		return c.fail(start, "invalid number")
	}
	integer := i
	if i < len(src) && src[i] == '.' {
		i++
		if !isDigit(src, i) {
			return c.fail(start, "invalid number")
		}
		for isDigit(src, i) {
			i++
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if !isDigit(src, i) {
			return c.fail(start, "invalid number")
		}
		for isDigit(src, i) {
			i++
		}
	}
	c.pos = i
	lit := src[start:i]
	if c.exact {
		// An integer of at most 21 digits is its own exact form: the grammar forbids leading
		// zeros, and appendExact writes such an integer plainly.
		if i == integer && integer-digits <= 21 {
			c.dst = append(c.dst, lit...)
		} else {
			c.dst = appendExact(c.dst, lit)
		}
		return nil
	}
	// Most numbers in payloads are small integers. Below 10^15 every integer is a double and
	// the grammar already forbids leading zeros, so the literal is its own canonical form.
	if i == integer && integer-digits <= 15 {
		if len(lit) == 2 && lit[0] == '-' && lit[1] == '0' {
			lit = lit[1:] // -0 is 0
		}
		c.dst = append(c.dst, lit...)
		return nil
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		// The literal is well-formed, so the only failure is a magnitude beyond the largest
		// double. Underflow is not one: like JSON.parse, it rounds to zero.
		return c.fail(start, "number out of the range of a double")
	}
	c.dst = appendNumber(c.dst, f)
	return nil
}

func isDigit(s []byte, i int) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }

// appendNumber writes the finite double f as ECMAScript's Number.prototype.toString does
// (ECMA-262, Number::toString): the shortest digits that round-trip, placed by the decimal
// exponent. With digits d1..dk and value 0.d1..dk × 10^n, it writes the plain integer when
// k <= n <= 21, a plain decimal when -6 < n <= 21, and d1.d2..dk e±(n-1) otherwise.
func appendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // and -0, which ECMAScript also writes as 0
	}
	var buf [32]byte
	// strconv's shortest digits are the round-tripping digits ECMAScript asks for: -d.ddde±xx.
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	x := len(e) - 1
	for e[x] != 'e' {
		x--
	}
	exp := 0
	for _, b := range e[x+2:] {
		exp = exp*10 + int(b-'0')
	}
	if e[x+1] == '-' {
		exp = -exp
	}
	lead, rest := e[0], e[min(2, x):x] // the digits are lead followed by rest
	k, n := 1+len(rest), exp+1
	switch {
	case k <= n && n <= 21:
		dst = append(dst, lead)
		dst = append(dst, rest...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, lead)
		dst = append(dst, rest[:n-1]...)
		dst = append(dst, '.')
		dst = append(dst, rest[n-1:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, lead)
		dst = append(dst, rest...)
	default:
		dst = append(dst, lead)
		if len(rest) > 0 {
			dst = append(dst, '.')
			dst = append(dst, rest...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}
