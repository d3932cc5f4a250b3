package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/jsonscan"
)

// readBody reads the request's JSON body, bounded: 415 unsupported_media_type for a body that
// is not JSON, 413 payload_too_large past the limit. A request without a body (or with an
// empty one) goes on with none. The validate stage reads the JSON.
func readBody(next handler) handler {
	return func(x *exchange) error {
		r := x.r
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			return next(x)
		}
		if !isJSONMedia(r.Header.Get("Content-Type")) {
			p := Error(CodeUnsupportedMediaType, "the body must be JSON (Content-Type: application/json), not "+quoteOr(r.Header.Get("Content-Type"), "an unlabeled body"))
			p.Header = map[string]string{"Accept-Post": "application/json"}
			return p
		}
		limit := x.api.maxBody
		if r.ContentLength > limit {
			return tooLarge(limit)
		}
		body, err := readAll(r.Body, r.ContentLength, limit)
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.Is(err, errTooLarge) || errors.As(err, &mbe) {
				return tooLarge(limit)
			}
			// The sender stopped before its declared length, or too slowly for the server's
			// read timeout: what arrived is not the whole JSON text.
			msg := "the body could not be read completely: it ended early or arrived too slowly"
			return Error(CodeInvalidJSON, msg).with(remedy.Issue{Code: "incomplete_body", Message: msg})
		}
		if len(body) > 0 {
			x.body = body
			x.text = unsafe.String(unsafe.SliceData(body), len(body))
		}
		return next(x)
	}
}

var errTooLarge = errors.New("body too large")

// readFirst is the most readAll allocates before the body's bytes arrive.
const readFirst = 64 << 10

// readAll reads at most limit bytes. A declared length sizes the first buffer up to
// readFirst only: a client declaring the limit and sending one byte gets no limit-sized
// buffer; an honest large body grows to its length by doubling.
func readAll(r io.Reader, declared, limit int64) ([]byte, error) {
	size := int64(512)
	if declared > 0 {
		size = min(declared, readFirst)
	}
	buf := make([]byte, 0, min(size, limit)+1) // one byte more, to see the end without growing
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(len(buf), 1<<20))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		if buf = buf[:len(buf)+n]; int64(len(buf)) > limit {
			return nil, errTooLarge
		}
		switch {
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return nil, err
		}
	}
}

// invalidUTF8 is the offset of the first byte of b that is not UTF-8, or -1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

func tooLarge(limit int64) *Problem {
	return Error(CodePayloadTooLarge, "the body is larger than "+strconv.FormatInt(limit, 10)+" bytes")
}

func quoteOr(s, empty string) string {
	if s == "" {
		return empty
	}
	return strconv.Quote(s)
}

// isJSONMedia reports whether a Content-Type is JSON: application/json or any +json type.
func isJSONMedia(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// decodeBody decodes a body as the validator reads it (numbers as json.Number, as
// jsonschema.UnmarshalJSON decodes them), or says where it stops being JSON. A body naming one
// member twice in an object is refused too: decoders disagree on which one counts, and the
// one validated must be the one bound.
func decodeBody(body []byte) (any, error) {
	if v, ok := decodeFast(body); ok {
		return v, nil
	}
	return decodeSlow(body)
}

// decodeSlow is decodeBody by encoding/json, which says where the body stops being JSON.
func decodeSlow(body []byte) (any, error) {
	if off := invalidUTF8(body); off >= 0 {
		// RFC 8259 §8.1: JSON text is UTF-8. encoding/json would replace the bytes with U+FFFD,
		// and the value validated, bound and stored would differ from the one sent. (The fast
		// check's scanner refuses such text, so a valid body never pays for this pass.)
		return nil, syntaxProblem(body, int64(off), "invalid UTF-8")
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	if err == nil {
		if _, terr := d.Token(); terr != io.EOF {
			return nil, syntaxProblem(body, d.InputOffset(), "more data after the JSON value")
		}
		if ptr, off, found := repeatedMember(string(body)); found {
			p := syntaxProblem(body, int64(off), "a member named twice in one object ("+strconv.Quote(ptr)+")")
			p.Issues[0].Path, p.Issues[0].Code = ptr, "duplicate_member"
			return nil, p
		}
		return v, nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := se.Offset - 1
		if off < 0 {
			off = 0
		}
		return nil, syntaxProblem(body, off, "")
	}
	return nil, syntaxProblem(body, int64(len(body)), "")
}

// syntaxProblem is 400 invalid_json pointing at the byte where the body stops being JSON.
func syntaxProblem(body []byte, off int64, what string) *Problem {
	off = min(off, int64(len(body)))
	line, col := 1, 1
	for _, c := range body[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	if what == "" {
		if off >= int64(len(body)) {
			what = "unexpected end of the body"
		} else {
			what = "unexpected " + strconv.QuoteRune(rune(body[off]))
			if body[off] >= 0x80 {
				what = "unexpected byte " + strconv.Itoa(int(body[off]))
			}
		}
	}
	pos := "byte " + strconv.FormatInt(off, 10) + " (line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col) + ")"
	p := Error(CodeInvalidJSON, "the body is not valid JSON: "+what+" at "+pos)
	p.Issues = []remedy.Issue{{Code: "syntax", Message: what + " at " + pos}}
	return p
}

// repeatedMember finds the first member, in JSON text s that encoding/json accepted, whose
// name (unescaped) its object has already: ptr is its JSON Pointer and off the offset of its
// name. A string that jsonscan refuses (invalid UTF-8, which encoding/json lets through) ends
// the search with nothing found.
func repeatedMember(s string) (ptr string, off int, found bool) {
	var path []string
	var walk func(i int) int // the position after the value at s[i:], or -1 to stop
	walk = func(i int) int {
		if i = jsonscan.SkipWS(s, i); i >= len(s) {
			return -1
		}
		switch c := s[i]; c {
		case '{', '[':
			closer := byte(']')
			var names map[string]bool
			if c == '{' {
				closer, names = '}', map[string]bool{}
			}
			if i = jsonscan.SkipWS(s, i+1); i < len(s) && s[i] == closer {
				return i + 1
			}
			for n := 0; ; n++ {
				var tok string
				if names == nil {
					tok = strconv.Itoa(n)
				} else {
					if i >= len(s) || s[i] != '"' {
						return -1
					}
					end, esc, ok := jsonscan.String(s, i+1)
					if !ok {
						return -1
					}
					if tok = s[i+1 : end-1]; esc {
						tok = jsonscan.Unescape(tok)
					}
					if names[tok] {
						ptr, off, found = pointerJoin(append(path, tok)), i, true
						return -1
					}
					names[tok] = true
					if i = jsonscan.SkipWS(s, end); i >= len(s) || s[i] != ':' {
						return -1
					}
					i++
				}
				path = append(path, tok)
				i = walk(i)
				path = path[:len(path)-1]
				if i < 0 {
					return -1
				}
				var more, ok bool
				if i, more, ok = jsonscan.Next(s, i, closer); !ok {
					return -1
				} else if !more {
					return i
				}
			}
		case '"':
			if end, _, ok := jsonscan.String(s, i+1); ok {
				return end
			}
			return -1
		}
		if end, ok := jsonscan.Number(s, i); ok {
			return end
		}
		if end, t := literalText(s, i); t != 0 {
			return end
		}
		return -1
	}
	walk(0)
	return ptr, off, found
}

// maxDecodeDepth is the deepest nesting decodeFast reads: encoding/json refuses deeper.
const maxDecodeDepth = 10000

// decodeFast decodes a body as decodeSlow does, for the text it reads (one JSON value, strict
// UTF-8, no object naming a member twice); ok is false for any other, which decodeSlow then
// reads to say what is wrong. It costs a fraction of what encoding/json does, which matters
// for the bodies that are decoded: invalid ones, a hostile client's included. Strings and
// numbers share the body's text, short ones met again share one value, and an array is
// built in a buffer shared by all of them and then copied at its exact length.
func decodeFast(body []byte) (any, bool) {
	if !utf8.Valid(body) {
		return nil, false
	}
	return decodeFastString(string(body))
}

// decodeFastString is decodeFast for text that is valid UTF-8.
func decodeFastString(s string) (any, bool) {
	d := fastDecoder{s: s}
	v, i, ok := d.value(0, 0)
	if !ok || jsonscan.SkipWS(d.s, i) != len(d.s) {
		return nil, false
	}
	return v, true
}

// fastDecoder is the state of one decodeFast.
type fastDecoder struct {
	s     string
	stack []any // the elements of the arrays being read
	// short strings and numbers decoded already, by a hash of their text
	strs, nums [256]struct {
		text string
		v    any
	}
}

// value reads the value at s[i:] and returns the position after it.
func (d *fastDecoder) value(i, depth int) (any, int, bool) {
	s := d.s
	if i = jsonscan.SkipWS(s, i); i >= len(s) || depth > maxDecodeDepth {
		return nil, i, false
	}
	switch c := s[i]; {
	case c == '{':
		return d.object(i, depth+1)
	case c == '[':
		return d.array(i, depth+1)
	case c == '"':
		end, esc, ok := jsonscan.String(s, i+1)
		if !ok {
			return nil, end, false
		}
		if esc {
			return jsonscan.Unescape(s[i+1 : end-1]), end, true
		}
		return d.short(&d.strs, s[i+1:end-1], false), end, true
	case c == '-' || (c >= '0' && c <= '9'):
		end, ok := jsonscan.Number(s, i)
		return d.short(&d.nums, s[i:end], true), end, ok
	}
	end, t := literalText(s, i)
	switch t {
	case tBool:
		return s[i] == 't', end, true
	case tNull:
		return nil, end, true
	}
	return nil, i, false
}

// short is text as a value (a json.Number when num is set), shared with the last one of the
// same text and hash when text is short: a body of a million zeros holds one.
func (d *fastDecoder) short(cache *[256]struct {
	text string
	v    any
}, text string, num bool) any {
	if len(text) == 0 || len(text) > 16 {
		if num {
			return json.Number(text)
		}
		return text
	}
	e := &cache[(len(text)*131+int(text[0])*31+int(text[len(text)-1]))&255]
	if e.v != nil && e.text == text {
		return e.v
	}
	e.text = text
	if num {
		e.v = json.Number(text)
	} else {
		e.v = text
	}
	return e.v
}

func (d *fastDecoder) object(i, depth int) (any, int, bool) {
	s := d.s
	m := map[string]any{}
	if i = jsonscan.SkipWS(s, i+1); i < len(s) && s[i] == '}' {
		return m, i + 1, true
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return nil, i, false
		}
		end, esc, ok := jsonscan.String(s, i+1)
		if !ok {
			return nil, end, false
		}
		key := s[i+1 : end-1]
		if esc {
			key = jsonscan.Unescape(key)
		}
		if i = jsonscan.SkipWS(s, end); i >= len(s) || s[i] != ':' {
			return nil, i, false
		}
		var v any
		if v, i, ok = d.value(i+1, depth); !ok {
			return nil, i, false
		}
		if _, dup := m[key]; dup {
			return nil, i, false
		}
		m[key] = v
		var more bool
		if i, more, ok = jsonscan.Next(s, i, '}'); !ok {
			return nil, i, false
		} else if !more {
			return m, i, true
		}
	}
}

func (d *fastDecoder) array(i, depth int) (any, int, bool) {
	s := d.s
	if i = jsonscan.SkipWS(s, i+1); i < len(s) && s[i] == ']' {
		return []any{}, i + 1, true
	}
	if d.stack == nil {
		d.stack = make([]any, 0, min(len(s)/2+1, 1<<10))
	}
	base := len(d.stack)
	defer func() {
		clear(d.stack[base:])
		d.stack = d.stack[:base]
	}()
	for {
		v, next, ok := d.value(i, depth)
		if !ok {
			return nil, next, false
		}
		if len(d.stack) == cap(d.stack) {
			// Grown at once to what the rest of the body can hold at most (an element and a
			// comma are two bytes at least), so that a huge array does not double its way there.
			d.stack = slices.Grow(d.stack, (len(s)-next)/2+1)
		}
		d.stack = append(d.stack, v)
		var more bool
		if i, more, ok = jsonscan.Next(s, next, ']'); !ok {
			return nil, i, false
		} else if !more {
			return slices.Clone(d.stack[base:]), i, true
		}
	}
}
