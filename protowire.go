package remedy

import "github.com/remedy-go/remedy/internal/prose"

// A reader of protobuf's binary wire format, as small as reading google.rpc's error details
// needs (connect sends them so when it has no JSON form for them), so that the core module
// does not depend on google.golang.org/protobuf. It reads a well-formed message's fields in
// order and stops at the first byte that is not: it never reads past its input, and never
// allocates but for the strings it returns.

type wireType uint8

const (
	wireVarint  wireType = 0
	wireFixed64 wireType = 1
	wireBytes   wireType = 2
	wireFixed32 wireType = 5
)

// wireField is one field: its number, its wire type, and its value (varint for the varint and
// fixed types, bytes for the length-delimited one).
type wireField struct {
	num    uint64
	typ    wireType
	varint uint64
	bytes  []byte
}

type wireReader struct {
	b   []byte
	err bool // the input is not a well-formed message
}

// next returns the next field; ok is false at the end of the input or at the first malformed
// byte (then err is set).
func (r *wireReader) next() (f wireField, ok bool) {
	if len(r.b) == 0 || r.err {
		return f, false
	}
	key, ok := r.varint()
	if !ok || key>>3 == 0 {
		r.err = true
		return f, false
	}
	f.num, f.typ = key>>3, wireType(key&7)
	switch f.typ {
	case wireVarint:
		f.varint, ok = r.varint()
	case wireFixed64:
		f.varint, ok = r.fixed(8)
	case wireFixed32:
		f.varint, ok = r.fixed(4)
	case wireBytes:
		var n uint64
		if n, ok = r.varint(); ok && n <= uint64(len(r.b)) {
			f.bytes, r.b = r.b[:n:n], r.b[n:]
		} else {
			ok = false
		}
	default: // groups (3, 4) are deprecated and never in these messages; 6 and 7 do not exist
		ok = false
	}
	if !ok {
		r.err = true
	}
	return f, ok
}

func (r *wireReader) varint() (uint64, bool) {
	var v uint64
	for i := 0; i < 10 && i < len(r.b); i++ {
		c := r.b[i]
		if i == 9 && c > 1 {
			return 0, false // more than 64 bits
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			r.b = r.b[i+1:]
			return v, true
		}
	}
	return 0, false
}

func (r *wireReader) fixed(n int) (uint64, bool) {
	if len(r.b) < n {
		return 0, false
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(r.b[i])
	}
	r.b = r.b[n:]
	return v, true
}

// wireMessage is the first length-delimited field numbered num in b: a string's or a
// message's bytes, or a repeated field's first element (the JSON readers of the details take
// the first too). An encoder writes a singular field once. A b that is not a well-formed
// message has no fields: a parser of protobuf refuses it whole.
func wireMessage(b []byte, num uint64) (out []byte, found bool) {
	r := wireReader{b: b}
	for {
		f, ok := r.next()
		if !ok {
			break
		}
		if !found && f.num == num && f.typ == wireBytes {
			out, found = f.bytes, true
		}
	}
	return out, found && !r.err
}

// wireValid reports whether b is a well-formed message (its fields; the messages inside are
// checked where they are read).
func wireValid(b []byte) bool {
	r := wireReader{b: b}
	for {
		if _, ok := r.next(); !ok {
			return !r.err
		}
	}
}

// wireString is the string field numbered num in b ("" when absent), bounded and made valid
// UTF-8.
func wireString(b []byte, num uint64) string {
	s, ok := wireMessage(b, num)
	if !ok {
		return ""
	}
	return clipUTF8(s)
}

// clipUTF8 is s as a string, bounded and with invalid UTF-8 replaced, as clip does.
func clipUTF8(s []byte) string { return prose.Clip(string(s), 1000) }
