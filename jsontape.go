package remedy

import (
	"math/bits"
	"strconv"
	"strings"
	"sync"

	"github.com/remedy-go/remedy/internal/jsonscan"
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
	count      uint8 // a container's members or elements, up to 255 (more are counted again)
}

type tape struct {
	s     string
	toks  []tok
	stack [maxDepth]frame
	seen  [maxDepth]map[string]struct{} // the keys of open objects too large for the bloom filter, by depth
	maps  bool                          // seen holds a map (which a failed parse may have left filled)
}

// Tapes are pooled in size classes, so that a large body finds a tape already grown to its
// size and the cost per byte stays flat up to the body bound: class c holds tapes with room
// for at least minTape<<c tokens. A tape is put back in the class of its capacity, which
// grows when a body holds more tokens than the class it was taken from. What the pools hold
// is no more than what was in use at once, and the garbage collector empties them within two
// cycles, so that a burst of large bodies leaves nothing behind.
const (
	minTape     = 256
	tapeClasses = 13 // up to minTape<<12 = 2^20 tokens, more than a 1 MiB body holds (a token takes two bytes at least)
)

var tapes [tapeClasses]sync.Pool

// tapeClass is the class of a tape with room for n tokens: the largest c with minTape<<c <= n.
func tapeClass(n int) int {
	if n < minTape {
		return 0
	}
	return min(bits.Len(uint(n/minTape))-1, tapeClasses-1)
}

// getTape is a tape for a small document.
func getTape() *tape { return tapeFor(0) }

// tapeFor is a tape for a document of size bytes. Error bodies hold about one token for every
// ten bytes: the tape is taken from that class or the two above it, else made for it.
func tapeFor(size int) *tape {
	want := max(size/10, minTape)
	c := tapeClass(want)
	if minTape<<c < want && c < tapeClasses-1 {
		c++
	}
	for k := c; k < min(c+3, tapeClasses); k++ {
		if t, ok := tapes[k].Get().(*tape); ok {
			return t
		}
	}
	return &tape{toks: make([]tok, 0, minTape<<c)}
}

func putTape(t *tape) {
	if t.maps { // do not keep the keys of a huge object
		return
	}
	t.s, t.toks = "", t.toks[:0]
	tapes[tapeClass(cap(t.toks))].Put(t)
}

// validJSON reports whether s is exactly one JSON value in valid UTF-8, nested at most maxDepth
// deep, with no number longer than maxNumberLen and no object holding the same key twice.
func validJSON(s string) bool {
	t := getTape()
	ok := t.parse(s)
	putTape(t)
	return ok
}

// parse scans s onto the tape and reports whether it is valid (see validJSON). It is one loop
// over the text with the open containers on a stack (no recursion, no call per value), the
// position and the tokens in locals, so that they stay in registers, and the common cases
// written out in place: a key of printable ASCII is passed over eight bytes at a time here
// and checked for duplicates without a call when it is new, a value followed at once by a
// comma or its container's end takes no call, and only the rest (escapes, other bytes,
// whitespace, numbers, string values) is handed to jsonscan.
func (t *tape) parse(s string) bool {
	t.s = s
	toks, ok := t.scan(s, t.toks[:0])
	t.toks = toks
	return ok
}

func (t *tape) scan(s string, toks []tok) ([]tok, bool) {
	if len(s) >= 1<<31-1 {
		return toks, false
	}
	var (
		stack = &t.stack // on the tape, which is pooled, rather than cleared for every parse
		depth int        // open containers
		i     = jsonscan.SkipWS(s, 0)
		top   *frame
		tk    *tok
		start int
	)
value: // a value starts at s[i]
	if i >= len(s) {
		return toks, false
	}
	if top != nil {
		top.count++
	}
	if len(toks) == cap(toks) {
		toks = grow(toks)
	}
	toks = toks[:len(toks)+1]
	tk = &toks[len(toks)-1]
	// The token's fields are stored one by one in place: a token built whole and copied in
	// is written in parts and read back in one piece, which the processor cannot forward
	// and stalls on, once for every token.
	tk.start, tk.next, tk.height, tk.count, tk.esc = int32(i), int32(len(toks)), 0, 0, false
	switch c := s[i]; {
	case c == '"':
		j := jsonscan.SkipPlain(s, i+1)
		if j < len(s) && s[j] == '"' {
			i = j + 1
		} else {
			var esc, ok bool
			if i, esc, ok = jsonscan.String(s, j); !ok {
				return toks, false
			}
			tk.esc = esc
		}
		tk.kind, tk.end = kString, int32(i)
	case c == '{' || c == '[':
		if depth == maxDepth {
			return toks, false
		}
		tk.kind = kObject
		closer := byte('}')
		if c == '[' {
			tk.kind, closer = kArray, ']'
		}
		top = &stack[depth]
		depth++
		*top = frame{tok: int32(len(toks) - 1), height: 1, obj: c == '{'}
		i++
		if i < len(s) && s[i] <= ' ' {
			i = jsonscan.SkipWS(s, i)
		}
		if i < len(s) && s[i] == closer {
			i++
			goto closed
		}
		if top.obj {
			goto key
		}
		goto value
	case c == '-' || (c >= '0' && c <= '9'):
		end, ok := jsonscan.Number(s, i)
		if !ok || end-i > maxNumberLen {
			return toks, false
		}
		tk.kind, tk.end = kNumber, int32(end)
		i = end
	case c == 't' && strings.HasPrefix(s[i:], "true"):
		tk.kind, tk.end = kTrue, int32(i+4)
		i += 4
	case c == 'f' && strings.HasPrefix(s[i:], "false"):
		tk.kind, tk.end = kFalse, int32(i+5)
		i += 5
	case c == 'n' && strings.HasPrefix(s[i:], "null"):
		tk.kind, tk.end = kNull, int32(i+4)
		i += 4
	default:
		return toks, false
	}
next: // a value ended just before s[i]: what follows it?
	if depth == 0 {
		return toks, jsonscan.SkipWS(s, i) == len(s)
	}
	if i < len(s) && s[i] <= ' ' {
		i = jsonscan.SkipWS(s, i)
	}
	if i >= len(s) {
		return toks, false
	}
	switch c := s[i]; {
	case c == ',':
		i++
		if i < len(s) && s[i] <= ' ' {
			i = jsonscan.SkipWS(s, i)
		}
		if top.obj {
			goto key
		}
		goto value
	case c == '}' && top.obj || c == ']' && !top.obj:
		i++
	default:
		return toks, false
	}
closed: // the container on top of the stack ended just before s[i]
	{
		h := top.height
		tk = &toks[top.tok]
		tk.end, tk.next, tk.height, tk.count = int32(i), int32(len(toks)), h, uint8(min(top.count, 255))
		if top.big {
			clear(t.seen[depth-1])
		}
		depth--
		if depth == 0 {
			top = nil
			goto next
		}
		top = &stack[depth-1]
		top.height = max(top.height, h+1)
	}
	goto next
key: // a member starts at s[i]
	if i >= len(s) || s[i] != '"' {
		return toks, false
	}
	if len(toks) == cap(toks) {
		toks = grow(toks)
	}
	toks = toks[:len(toks)+1]
	tk = &toks[len(toks)-1]
	start = i
	tk.start, tk.next, tk.height, tk.count, tk.esc, tk.kind = int32(i), int32(len(toks)), 0, 0, false, kString
	j := i + 1
	for ; j+8 <= len(s); j += 8 {
		x := jsonscan.Word(s[j : j+8])
		if m := jsonscan.Special(x); m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			goto keyEnd
		}
	}
	j = jsonscan.SkipPlain(s, j)
keyEnd:
	if j < len(s) && s[j] == '"' {
		i = j + 1
	} else {
		var esc, ok bool
		if i, esc, ok = jsonscan.String(s, j); !ok {
			return toks, false
		}
		tk.esc = esc
	}
	tk.end = int32(i)
	// A key whose hash bit is not yet set in a small object is new: no call (see duplicate).
	if bit := keyBit(s[start+1 : i-1]); top.bloom&bit == 0 && top.count < smallObject {
		top.bloom |= bit
	} else if t.duplicate(toks, top, depth-1, start+1, i-1) {
		return toks, false
	}
	if i < len(s) && s[i] == ':' {
		i++
	} else if i = jsonscan.SkipWS(s, i); i < len(s) && s[i] == ':' {
		i++
	} else {
		return toks, false
	}
	if i < len(s) && s[i] <= ' ' {
		i = jsonscan.SkipWS(s, i)
	}
	goto value
}

// grow makes room for more tokens: twice as many, so that a tape grows through the classes
// in as few steps as possible.
func grow(toks []tok) []tok {
	bigger := make([]tok, len(toks), max(2*cap(toks), minTape))
	copy(bigger, toks)
	return bigger
}

// frame is an open container.
type frame struct {
	tok    int32 // its token
	count  int32 // members or elements so far
	height uint8
	obj    bool
	big    bool   // its keys are in tape.seen, for it has more than smallObject
	bloom  uint64 // a bit for each key hash seen: most keys need no comparison
}

// duplicate reports whether the object on top already has the key s[start:end], whose token
// is the last of toks. Keys are compared as written; two spellings of one key through escapes
// are rare enough that the first one read is accepted. A bit per key hash filters the
// comparisons: most keys are new and compared with nothing, and a key whose bit is already set
// is compared with the object's earlier keys, which are on the tape. Objects of more than
// smallObject members keep their keys in a map instead.
func (t *tape) duplicate(toks []tok, top *frame, level, start, end int) bool {
	k := t.s[start:end]
	if top.big {
		seen := t.seen[level]
		if _, dup := seen[k]; dup {
			return true
		}
		seen[k] = struct{}{}
		return false
	}
	bit := keyBit(k)
	if top.bloom&bit != 0 {
		for it := t.members(toks, top); it.next(); {
			if it.key() == k {
				return true
			}
		}
	}
	top.bloom |= bit
	if top.count < smallObject {
		return false
	}
	t.maps, top.big = true, true
	if t.seen[level] == nil {
		t.seen[level] = make(map[string]struct{}, 2*smallObject)
	}
	seen := t.seen[level]
	for it := t.members(toks, top); it.next(); {
		seen[it.key()] = struct{}{}
	}
	seen[k] = struct{}{}
	return false
}

// members walks the keys of the open object top read so far, but the last key of toks.
func (t *tape) members(toks []tok, top *frame) keyIter {
	return keyIter{s: t.s, toks: toks, pos: top.tok + 1, end: int32(len(toks) - 1), first: true}
}

type keyIter struct {
	s        string
	toks     []tok
	pos, end int32
	first    bool
}

func (it *keyIter) next() bool {
	if !it.first {
		it.pos = it.toks[it.pos+1].next // past the value of the key at pos
	}
	it.first = false
	return it.pos < it.end
}

// key is the current key as written.
func (it *keyIter) key() string {
	kt := &it.toks[it.pos]
	return it.s[kt.start+1 : kt.end-1]
}

// str reads the string literal at s[i] and returns the position after it: printable ASCII
// is passed over here, and the rest handed to jsonscan.String.
func (t *tape) str(s string, i int) (end int, esc, ok bool) {
	j := jsonscan.SkipPlain(s, i+1)
	if j < len(s) && s[j] == '"' {
		return j + 1, false, true
	}
	return jsonscan.String(s, j)
}

// keyBit is k's bit in a frame's bloom filter.
func keyBit(k string) uint64 { return uint64(1) << (keyHash(k) * 0x9e3779b1 >> 26) }

func keyHash(k string) uint32 {
	if k == "" {
		return 0
	}
	return uint32(len(k))<<16 | uint32(k[0])<<8 | uint32(k[len(k)-1])
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
		return jsonscan.Unescape(s)
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
	if v.i == 0 {
		return 0
	}
	if n := v.tok().count; n < 255 {
		return int(n)
	}
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
				return it.val()
			}
		}
	case kArray:
		n, err := strconv.Atoi(name)
		if err != nil || n < 0 {
			return val{}
		}
		for it := v.iter(); it.next(); n-- {
			if n == 0 {
				return it.val()
			}
		}
	}
	return val{}
}

// iter walks an object's members or an array's elements.
type iter struct {
	t        *tape
	toks     []tok // t.toks, at hand
	pos, end int32 // token indexes
	cur      int32 // the current value's token index + 1 (a val's i)
	obj      bool
}

func (v val) iter() (it iter) {
	if v.i == 0 {
		return
	}
	tk := v.tok()
	if tk.kind == kObject || tk.kind == kArray {
		it.t, it.toks, it.pos, it.end, it.obj = v.t, v.t.toks, v.i, tk.next, tk.kind == kObject
	}
	return
}

func (it *iter) next() bool {
	if it.pos >= it.end {
		return false
	}
	if it.obj {
		it.pos++ // the key
	}
	it.cur = it.pos + 1
	it.pos = it.toks[it.pos].next
	return true
}

// val is the current element or member value.
func (it *iter) val() val { return val{t: it.t, i: it.cur} }

// keyTok is the current member's key.
func (it *iter) keyTok() *tok { return &it.toks[it.cur-2] }

// keyIs compares the current key with name without unescaping (keys with escapes are
// compared after unescaping).
func (it *iter) keyIs(name string) bool {
	tk := it.keyTok()
	raw := it.t.s[tk.start+1 : tk.end-1]
	if tk.esc {
		return jsonscan.Unescape(raw) == name
	}
	return raw == name
}

// Key is the current member's name.
func (it *iter) Key() string { return val{t: it.t, i: it.cur - 1}.Str() }
