package remedy

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits on what Parse accepts as structured JSON. A body beyond them is not guessed at: it is
// classified by status and headers alone.
const (
	maxDepth     = 64 // nesting of objects and arrays
	maxNumberLen = 64 // bytes in one number literal; no error body needs more
	smallObject  = 16 // objects up to this many members are checked for duplicates without allocating
)

// The JSON reader: one pass over the body validates it and records every value as a token on a
// tape, so that readers then move between members and elements by index, never rescanning text.
// It is strict where lenient readers disagree (duplicate keys, invalid UTF-8, trailing data) and
// runs in time linear in the input.

type kind uint8

const (
	kNone kind = iota
	kObject
	kArray
	kString
	kNumber
	kTrue
	kFalse
	kNull
)

// tok is one value: s[start:end] is its text (strings with their quotes); next is the index of
// the token after its whole subtree, so that siblings are one step apart.
type tok struct {
	start, end int32
	next       int32
	kind       kind
	esc        bool  // a string holding escapes
	height     uint8 // nesting inside the value: 0 for scalars, 1 for a flat object or array
}

type tape struct {
	s    string
	toks []tok
	i    int   // scan position
	h    uint8 // height of the value scanned last
}

var tapes = sync.Pool{New: func() any { return &tape{toks: make([]tok, 0, 256)} }}

func getTape() *tape { return tapes.Get().(*tape) }

func putTape(t *tape) {
	if cap(t.toks) > 1<<16 { // do not keep what one huge body grew
		return
	}
	t.s, t.toks = "", t.toks[:0]
	tapes.Put(t)
}

// validJSON reports whether s is exactly one JSON value in valid UTF-8, nested at most maxDepth
// deep, with no number longer than maxNumberLen and no object holding the same key twice.
func validJSON(s string) bool {
	t := getTape()
	ok := t.parse(s)
	putTape(t)
	return ok
}

// parse scans s onto the tape and reports whether it is valid (see validJSON).
func (t *tape) parse(s string) bool {
	t.s, t.toks, t.i = s, t.toks[:0], 0
	if len(s) >= 1<<31-1 {
		return false
	}
	t.ws()
	if !t.value(0) {
		return false
	}
	t.ws()
	return t.i == len(t.s)
}

func (t *tape) ws() {
	for t.i < len(t.s) {
		switch t.s[t.i] {
		case ' ', '\t', '\n', '\r':
			t.i++
		default:
			return
		}
	}
}

func (t *tape) push(k kind, start int) int {
	n := len(t.toks)
	if n == cap(t.toks) {
		t.toks = append(t.toks, tok{})
	} else {
		t.toks = t.toks[:n+1]
	}
	t.toks[n] = tok{kind: k, start: int32(start)}
	return n
}

func (t *tape) close(idx int) {
	t.toks[idx].end = int32(t.i)
	t.toks[idx].next = int32(len(t.toks))
}

func (t *tape) closeContainer(idx int, h uint8) {
	t.close(idx)
	t.toks[idx].height = h
	t.h = h
}

func (t *tape) value(depth int) bool {
	if t.i >= len(t.s) {
		return false
	}
	t.h = 0
	start := t.i
	switch c := t.s[t.i]; {
	case c == '{':
		return depth < maxDepth && t.object(depth+1)
	case c == '[':
		return depth < maxDepth && t.array(depth+1)
	case c == '"':
		idx := t.push(kString, start)
		esc, ok := t.str()
		t.toks[idx].esc = esc
		t.close(idx)
		return ok
	case c == '-' || (c >= '0' && c <= '9'):
		idx := t.push(kNumber, start)
		ok := t.number()
		t.close(idx)
		return ok
	case c == 't':
		return t.lit("true", kTrue)
	case c == 'f':
		return t.lit("false", kFalse)
	case c == 'n':
		return t.lit("null", kNull)
	}
	return false
}

func (t *tape) lit(w string, k kind) bool {
	if len(t.s)-t.i < len(w) || t.s[t.i:t.i+len(w)] != w {
		return false
	}
	idx := t.push(k, t.i)
	t.i += len(w)
	t.close(idx)
	return true
}

func (t *tape) object(depth int) bool {
	obj := t.push(kObject, t.i)
	t.i++ // {
	t.ws()
	height := uint8(1)
	if t.i < len(t.s) && t.s[t.i] == '}' {
		t.i++
		t.closeContainer(obj, height)
		return true
	}
	// Duplicate keys: a cheap hash filters the comparisons in small objects; large ones
	// fall back to a map.
	var (
		hs   [smallObject]uint32
		ks   [smallObject]string
		seen map[string]struct{}
		n    int
	)
	for {
		if t.i >= len(t.s) || t.s[t.i] != '"' {
			return false
		}
		key := t.push(kString, t.i)
		esc, ok := t.str()
		if !ok {
			return false
		}
		t.toks[key].esc = esc
		t.close(key)
		// Keys are compared as written; two spellings of one key through escapes are rare
		// enough that the first one read is accepted.
		k := t.s[t.toks[key].start+1 : t.i-1]
		h := keyHash(k)
		switch {
		case n < smallObject:
			for j := 0; j < n; j++ {
				if hs[j] == h && ks[j] == k {
					return false
				}
			}
			hs[n], ks[n] = h, k
		default:
			if seen == nil {
				seen = make(map[string]struct{}, 2*smallObject)
				for _, prev := range ks {
					seen[prev] = struct{}{}
				}
			}
			if _, dup := seen[k]; dup {
				return false
			}
			seen[k] = struct{}{}
		}
		n++
		t.ws()
		if t.i >= len(t.s) || t.s[t.i] != ':' {
			return false
		}
		t.i++
		t.ws()
		if !t.value(depth) {
			return false
		}
		height = max(height, t.h+1)
		if closed, ok := t.after('}', obj, height); closed || !ok {
			return ok
		}
	}
}

// after reads what follows a member or element: a comma (ok, not closed) or the container's
// closer (closed). Anything else is invalid.
func (t *tape) after(closer byte, idx int, height uint8) (closed, ok bool) {
	t.ws()
	if t.i >= len(t.s) {
		return false, false
	}
	switch t.s[t.i] {
	case ',':
		t.i++
		t.ws()
		return false, true
	case closer:
		t.i++
		t.closeContainer(idx, height)
		return true, true
	}
	return false, false
}

func (t *tape) array(depth int) bool {
	arr := t.push(kArray, t.i)
	t.i++ // [
	t.ws()
	h := uint8(1)
	if t.i < len(t.s) && t.s[t.i] == ']' {
		t.i++
		t.closeContainer(arr, h)
		return true
	}
	for {
		if !t.value(depth) {
			return false
		}
		h = max(h, t.h+1)
		if closed, ok := t.after(']', arr, h); closed || !ok {
			return ok
		}
	}
}

// plainByte marks the bytes a string holds without a second look: printable ASCII other
// than '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str consumes a string literal; esc reports whether it holds escapes.
func (t *tape) str() (esc, ok bool) {
	t.i++ // "
	s := t.s
	for t.i < len(s) {
		i := t.i
		for i < len(s) && plainByte[s[i]] {
			i++
		}
		t.i = i
		if i >= len(s) {
			break
		}
		c := s[i]
		switch {
		case c == '"':
			t.i++
			return esc, true
		case c == '\\':
			esc = true
			t.i++
			if t.i >= len(t.s) {
				return esc, false
			}
			switch t.s[t.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				t.i++
			case 'u':
				if len(t.s)-t.i < 5 || !isHex4(t.s[t.i+1:t.i+5]) {
					return esc, false
				}
				t.i += 5
			default:
				return esc, false
			}
		case c < 0x20:
			return esc, false
		case c < utf8.RuneSelf:
			t.i++
		default:
			r, size := utf8.DecodeRuneInString(t.s[t.i:])
			if r == utf8.RuneError && size <= 1 {
				return esc, false
			}
			t.i += size
		}
	}
	return esc, false
}

func keyHash(k string) uint32 {
	if k == "" {
		return 0
	}
	return uint32(len(k))<<16 | uint32(k[0])<<8 | uint32(k[len(k)-1])
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

func (t *tape) number() bool {
	start := t.i
	if t.s[t.i] == '-' {
		t.i++
	}
	if t.i >= len(t.s) {
		return false
	}
	if t.s[t.i] == '0' {
		t.i++
	} else if !t.digits() {
		return false
	}
	if t.i < len(t.s) && t.s[t.i] == '.' {
		t.i++
		if !t.digits() {
			return false
		}
	}
	if t.i < len(t.s) && (t.s[t.i] == 'e' || t.s[t.i] == 'E') {
		t.i++
		if t.i < len(t.s) && (t.s[t.i] == '+' || t.s[t.i] == '-') {
			t.i++
		}
		if !t.digits() {
			return false
		}
	}
	return t.i-start <= maxNumberLen
}

func (t *tape) digits() bool {
	start := t.i
	for t.i < len(t.s) && t.s[t.i] >= '0' && t.s[t.i] <= '9' {
		t.i++
	}
	return t.i > start
}

// --- reading the tape ---

// val is one value on a tape; the zero val is absent.
type val struct {
	t *tape
	i int32 // token index + 1, so that the zero value is "absent"
}

func (t *tape) root() val {
	if len(t.toks) == 0 {
		return val{}
	}
	return val{t: t, i: 1}
}

func (v val) tok() *tok { return &v.t.toks[v.i-1] }

// height is how deeply the value nests (0 for a scalar).
func (v val) height() int {
	if v.i == 0 {
		return 0
	}
	return int(v.tok().height)
}

// Exists reports whether the value is present (null is present).
func (v val) Exists() bool { return v.i > 0 }

func (v val) kind() kind {
	if v.i == 0 {
		return kNone
	}
	return v.tok().kind
}

func (v val) IsObject() bool { return v.kind() == kObject }
func (v val) IsArray() bool  { return v.kind() == kArray }
func (v val) IsString() bool { return v.kind() == kString }
func (v val) IsNumber() bool { return v.kind() == kNumber }
func (v val) IsNull() bool   { return v.kind() == kNull }

// Raw is the value's JSON text.
func (v val) Raw() string {
	if v.i == 0 {
		return ""
	}
	tk := v.tok()
	return v.t.s[tk.start:tk.end]
}

// Str is a string's value (unescaped); "" for anything else.
func (v val) Str() string {
	if v.kind() != kString {
		return ""
	}
	tk := v.tok()
	s := v.t.s[tk.start+1 : tk.end-1]
	if tk.esc {
		return unescape(s)
	}
	return s
}

// Num is a number's value; 0 for anything else. Out-of-range values are ±Inf.
func (v val) Num() float64 {
	if v.kind() != kNumber {
		return 0
	}
	f, _ := strconv.ParseFloat(v.Raw(), 64)
	return f
}

// Text is a string's value or a number's literal: how codes are spelled in either form.
func (v val) Text() string {
	switch v.kind() {
	case kString:
		return v.Str()
	case kNumber:
		return v.Raw()
	}
	return ""
}

// len is the number of an array's elements or an object's members.
func (v val) len() int {
	n := 0
	for it := v.iter(); it.next(); {
		n++
	}
	return n
}

// Get reads a member by name, or a dotted path of names and array indexes ("links.0.url").
func (v val) Get(path string) val {
	for path != "" && v.i > 0 {
		name := path
		if i := strings.IndexByte(path, '.'); i >= 0 {
			name, path = path[:i], path[i+1:]
		} else {
			path = ""
		}
		v = v.member(name)
	}
	return v
}

func (v val) member(name string) val {
	switch v.kind() {
	case kObject:
		for it := v.iter(); it.next(); {
			if it.keyIs(name) {
				return it.val
			}
		}
	case kArray:
		n, err := strconv.Atoi(name)
		if err != nil || n < 0 {
			return val{}
		}
		for it := v.iter(); it.next(); n-- {
			if n == 0 {
				return it.val
			}
		}
	}
	return val{}
}

// iter walks an object's members or an array's elements.
type iter struct {
	t        *tape
	pos, end int32 // token indexes
	obj      bool
	key, val val
}

func (v val) iter() iter {
	k := v.kind()
	if k != kObject && k != kArray {
		return iter{}
	}
	tk := v.tok()
	return iter{t: v.t, pos: v.i, end: tk.next, obj: k == kObject}
}

func (it *iter) next() bool {
	if it.pos >= it.end {
		return false
	}
	if it.obj {
		it.key = val{t: it.t, i: it.pos + 1}
		it.pos++
	}
	it.val = val{t: it.t, i: it.pos + 1}
	it.pos = it.t.toks[it.pos].next
	return true
}

// keyIs compares the current key with name without unescaping (keys with escapes are
// compared after unescaping).
func (it *iter) keyIs(name string) bool {
	tk := it.key.tok()
	raw := it.t.s[tk.start+1 : tk.end-1]
	if tk.esc {
		return unescape(raw) == name
	}
	return raw == name
}

// Key is the current member's name.
func (it *iter) Key() string { return it.key.Str() }

// unescape decodes a JSON string's escapes (the text was validated by the scanner).
func unescape(s string) string {
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
