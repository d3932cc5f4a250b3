// Package tape is the JSON reader of remedy's Parse, shared with the packages built on it: one
// pass over the text validates it and records every value as a token on a tape, so that readers
// then move between members and elements by index, never rescanning text. It is strict where
// lenient readers disagree (duplicate keys, invalid UTF-8, trailing data) and runs in time
// linear in the input.
package tape

import (
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/remedy-go/remedy/internal/jsonscan"
)

// Limits on what Parse accepts as structured JSON. A body beyond them is not guessed at: it is
// classified by status and headers alone.
const (
	MaxDepth     = 64 // nesting of objects and arrays
	MaxNumberLen = 64 // bytes in one number literal; no error body needs more
	smallObject  = 16 // objects up to this many members are checked for duplicates without allocating
)

// Kind is a JSON value's kind.
type Kind uint8

const (
	None Kind = iota
	Object
	Array
	String
	Number
	True
	False
	Null
)

// tok is one value: s[start:end] is its text (strings with their quotes); next is the index of
// the token after its whole subtree, so that siblings are one step apart.
type Token struct {
	Start, End int32
	Next       int32
	Kind       Kind
	Esc        bool  // a string holding escapes
	Height     uint8 // nesting inside the value: 0 for scalars, 1 for a flat object or array
	Count      uint8 // a container's members or elements, up to 255 (more are counted again)
}

// Tape is one parse: the text read (Src) and a token for each of its values (Toks).
type Tape struct {
	Src   string
	Toks  []Token
	stack [MaxDepth]frame
	seen  [MaxDepth]map[string]struct{} // the keys of open objects too large for the bloom filter, by depth
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
func Get() *Tape { return For(0) }

// tapeFor is a tape for a document of size bytes. Error bodies hold about one token for every
// ten bytes: the tape is taken from that class or the two above it, else made for it.
func For(size int) *Tape {
	want := max(size/10, minTape)
	c := tapeClass(want)
	if minTape<<c < want && c < tapeClasses-1 {
		c++
	}
	for k := c; k < min(c+3, tapeClasses); k++ {
		if t, ok := tapes[k].Get().(*Tape); ok {
			return t
		}
	}
	return &Tape{Toks: make([]Token, 0, minTape<<c)}
}

// Put gives t back to its pool, for Get or For to hand out again; t must not be used after.
func Put(t *Tape) {
	if t.maps { // do not keep the keys of a huge object
		return
	}
	t.Src, t.Toks = "", t.Toks[:0]
	tapes[tapeClass(cap(t.Toks))].Put(t)
}

// validJSON reports whether s is exactly one JSON value in valid UTF-8, nested at most maxDepth
// deep, with no number longer than maxNumberLen and no object holding the same key twice.
func Valid(s string) bool {
	t := Get()
	ok := t.Parse(s)
	Put(t)
	return ok
}

// parse scans s onto the tape and reports whether it is valid (see validJSON). It is one loop
// over the text with the open containers on a stack (no recursion, no call per value), the
// position and the tokens in locals, so that they stay in registers, and the common cases
// written out in place: a key of printable ASCII is passed over eight bytes at a time here
// and checked for duplicates without a call when it is new, a value followed at once by a
// comma or its container's end takes no call, and only the rest (escapes, other bytes,
// whitespace, numbers, string values) is handed to jsonscan.
func (t *Tape) Parse(s string) bool {
	t.Src = s
	toks, ok := t.scan(s, t.Toks[:0])
	t.Toks = toks
	return ok
}

func (t *Tape) scan(s string, toks []Token) ([]Token, bool) {
	if len(s) >= 1<<31-1 {
		return toks, false
	}
	var (
		stack = &t.stack // on the tape, which is pooled, rather than cleared for every parse
		depth int        // open containers
		i     = jsonscan.SkipWS(s, 0)
		top   *frame
		tk    *Token
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
	tk.Start, tk.Next, tk.Height, tk.Count, tk.Esc = int32(i), int32(len(toks)), 0, 0, false
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
			tk.Esc = esc
		}
		tk.Kind, tk.End = String, int32(i)
	case c == '{' || c == '[':
		if depth == MaxDepth {
			return toks, false
		}
		tk.Kind = Object
		closer := byte('}')
		if c == '[' {
			tk.Kind, closer = Array, ']'
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
		if !ok || end-i > MaxNumberLen {
			return toks, false
		}
		tk.Kind, tk.End = Number, int32(end)
		i = end
	case c == 't' && strings.HasPrefix(s[i:], "true"):
		tk.Kind, tk.End = True, int32(i+4)
		i += 4
	case c == 'f' && strings.HasPrefix(s[i:], "false"):
		tk.Kind, tk.End = False, int32(i+5)
		i += 5
	case c == 'n' && strings.HasPrefix(s[i:], "null"):
		tk.Kind, tk.End = Null, int32(i+4)
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
		tk.End, tk.Next, tk.Height, tk.Count = int32(i), int32(len(toks)), h, uint8(min(top.count, 255))
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
	tk.Start, tk.Next, tk.Height, tk.Count, tk.Esc, tk.Kind = int32(i), int32(len(toks)), 0, 0, false, String
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
		tk.Esc = esc
	}
	tk.End = int32(i)
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
func grow(toks []Token) []Token {
	bigger := make([]Token, len(toks), max(2*cap(toks), minTape))
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
func (t *Tape) duplicate(toks []Token, top *frame, level, start, end int) bool {
	k := t.Src[start:end]
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
		for it := t.members(toks, top); it.Next(); {
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
	for it := t.members(toks, top); it.Next(); {
		seen[it.key()] = struct{}{}
	}
	seen[k] = struct{}{}
	return false
}

// members walks the keys of the open object top read so far, but the last key of toks.
func (t *Tape) members(toks []Token, top *frame) keyIter {
	return keyIter{src: t.Src, toks: toks, pos: top.tok + 1, end: int32(len(toks) - 1), first: true}
}

type keyIter struct {
	src      string
	toks     []Token
	pos, end int32
	first    bool
}

// Next moves to the next key, and reports whether there is one.
func (it *keyIter) Next() bool {
	if !it.first {
		it.pos = it.toks[it.pos+1].Next // past the value of the key at pos
	}
	it.first = false
	return it.pos < it.end
}

// key is the current key as written.
func (it *keyIter) key() string {
	kt := &it.toks[it.pos]
	return it.src[kt.Start+1 : kt.End-1]
}

// str reads the string literal at s[i] and returns the position after it: printable ASCII
// is passed over here, and the rest handed to jsonscan.String.
func (t *Tape) str(s string, i int) (end int, esc, ok bool) {
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

// Val is one value on a tape; the zero val is absent.
type Val struct {
	t *Tape
	i int32 // token index + 1, so that the zero value is "absent"
}

// Root is the value the text is, after a successful Parse.
func (t *Tape) Root() Val {
	if len(t.Toks) == 0 {
		return Val{}
	}
	return Val{t: t, i: 1}
}

// Tok is v's token.
func (v Val) Tok() *Token { return &v.t.Toks[v.i-1] }

// Height is how deeply the value nests (0 for a scalar).
func (v Val) Height() int {
	if v.i == 0 {
		return 0
	}
	return int(v.Tok().Height)
}

// Exists reports whether the value is present (null is present).
func (v Val) Exists() bool { return v.i > 0 }

// Kind is v's kind; None when v is absent.
func (v Val) Kind() Kind {
	if v.i == 0 {
		return None
	}
	return v.Tok().Kind
}

// IsObject, IsArray, IsString, IsNumber and IsNull report v's kind.
func (v Val) IsObject() bool { return v.Kind() == Object }
func (v Val) IsArray() bool  { return v.Kind() == Array }
func (v Val) IsString() bool { return v.Kind() == String }
func (v Val) IsNumber() bool { return v.Kind() == Number }
func (v Val) IsNull() bool   { return v.Kind() == Null }

// Raw is the value's JSON text.
func (v Val) Raw() string {
	if v.i == 0 {
		return ""
	}
	tk := v.Tok()
	return v.t.Src[tk.Start:tk.End]
}

// Str is a string's value (unescaped); "" for anything else.
func (v Val) Str() string {
	if v.Kind() != String {
		return ""
	}
	tk := v.Tok()
	s := v.t.Src[tk.Start+1 : tk.End-1]
	if tk.Esc {
		return jsonscan.Unescape(s)
	}
	return s
}

// Num is a number's value; 0 for anything else. Out-of-range values are ±Inf.
func (v Val) Num() float64 {
	if v.Kind() != Number {
		return 0
	}
	f, _ := strconv.ParseFloat(v.Raw(), 64)
	return f
}

// Text is a string's value or a number's literal: how codes are spelled in either form.
func (v Val) Text() string {
	switch v.Kind() {
	case String:
		return v.Str()
	case Number:
		return v.Raw()
	}
	return ""
}

// Len is the number of an array's elements or an object's members.
func (v Val) Len() int {
	if v.i == 0 {
		return 0
	}
	if n := v.Tok().Count; n < 255 {
		return int(n)
	}
	n := 0
	for it := v.Iter(); it.Next(); {
		n++
	}
	return n
}

// Get reads a member by name, or a dotted path of names and array indexes ("links.0.url").
func (v Val) Get(path string) Val {
	for path != "" && v.i > 0 {
		name := path
		if i := strings.IndexByte(path, '.'); i >= 0 {
			name, path = path[:i], path[i+1:]
		} else {
			path = ""
		}
		v = v.Member(name)
	}
	return v
}

// Member is the member of object v named name; absent when there is none or v is no object.
func (v Val) Member(name string) Val {
	switch v.Kind() {
	case Object:
		for it := v.Iter(); it.Next(); {
			if it.KeyIs(name) {
				return it.Val()
			}
		}
	case Array:
		n, err := strconv.Atoi(name)
		if err != nil || n < 0 {
			return Val{}
		}
		for it := v.Iter(); it.Next(); n-- {
			if n == 0 {
				return it.Val()
			}
		}
	}
	return Val{}
}

// Iter walks an object's members or an array's elements.
type Iter struct {
	t        *Tape
	toks     []Token // t.Toks, at hand
	pos, end int32   // token indexes
	cur      int32   // the current value's token index + 1 (a val's i)
	obj      bool
}

// Ref returns v's tape and its token index + 1 (0 when v is absent), for a reader that walks
// the tokens itself; At makes a Val of them again.
func (v Val) Ref() (*Tape, int32) { return v.t, v.i }

// At is the value whose token index + 1 is i.
func (t *Tape) At(i int32) Val { return Val{t: t, i: i} }

// Iter walks v's members (an object) or elements (an array); nothing for a scalar.
func (v Val) Iter() (it Iter) {
	if v.i == 0 {
		return
	}
	tk := v.Tok()
	if tk.Kind == Object || tk.Kind == Array {
		it.t, it.toks, it.pos, it.end, it.obj = v.t, v.t.Toks, v.i, tk.Next, tk.Kind == Object
	}
	return
}

// Next moves to the next member or element, and reports whether there is one.
func (it *Iter) Next() bool {
	if it.pos >= it.end {
		return false
	}
	if it.obj {
		it.pos++ // the key
	}
	it.cur = it.pos + 1
	it.pos = it.toks[it.pos].Next
	return true
}

// Val is the current element or member value.
func (it *Iter) Val() Val { return Val{t: it.t, i: it.cur} }

// KeyTok is the current member's key.
func (it *Iter) KeyTok() *Token { return &it.toks[it.cur-2] }

// keyIs compares the current key with name without unescaping (keys with escapes are
// compared after unescaping).
func (it *Iter) KeyIs(name string) bool {
	tk := it.KeyTok()
	raw := it.t.Src[tk.Start+1 : tk.End-1]
	if tk.Esc {
		return jsonscan.Unescape(raw) == name
	}
	return raw == name
}

// More reports whether an element or member follows the current one.
func (it *Iter) More() bool { return it.pos < it.end }

// Key is the current member's name.
func (it *Iter) Key() string { return Val{t: it.t, i: it.cur - 1}.Str() }

// IsNumber reports whether s is exactly a JSON number, without surrounding space, of at most
// MaxNumberLen bytes.
func IsNumber(s string) bool { return len(s) <= MaxNumberLen && jsonscan.IsNumber(s) }

// View reads b as a string without copying; the string must not outlive b's contents.
func View(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
