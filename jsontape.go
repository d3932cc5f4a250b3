package remedy

import (
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
	keys  []key // the keys of the open objects (see duplicate)
	stack [maxDepth]frame
	seen  [maxDepth]map[string]struct{} // the keys of open objects too large for keys, by depth
	maps  bool                          // seen holds a map (and maybe keys a failed parse left)
}

var tapes = sync.Pool{New: func() any { return &tape{toks: make([]tok, 0, 256), keys: make([]key, 0, 64)} }}

func getTape() *tape { return tapes.Get().(*tape) }

func putTape(t *tape) {
	if cap(t.toks) > 1<<16 || t.maps { // do not keep what one huge body grew, nor its keys
		return
	}
	t.s, t.toks, t.keys = "", t.toks[:0], t.keys[:0]
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

// parse scans s onto the tape and reports whether it is valid (see validJSON). It is one loop
// over the text with the open containers on a stack (no recursion, no call per value), and the
// position in a local, so that it stays in a register.
func (t *tape) parse(s string) bool {
	t.s, t.toks, t.keys = s, t.toks[:0], t.keys[:0]
	if len(s) >= 1<<31-1 {
		return false
	}
	var (
		stack = &t.stack // on the tape, which is pooled, rather than cleared for every parse
		depth int        // open containers
		i     = jsonscan.SkipWS(s, 0)
		top   *frame
	)
value: // a value starts at s[i]
	if i >= len(s) {
		return false
	}
	if top != nil {
		top.count++
	}
	switch c := s[i]; {
	case c == '"':
		end, esc, ok := t.str(s, i)
		if !ok {
			return false
		}
		t.leaf(kString, i, end, esc)
		i = end
	case c == '{' || c == '[':
		if depth == maxDepth {
			return false
		}
		k, closer := kObject, byte('}')
		if c == '[' {
			k, closer = kArray, ']'
		}
		top = &stack[depth]
		depth++
		*top = frame{tok: int32(t.open(k, i)), keys: int32(len(t.keys)), height: 1, obj: k == kObject}
		if i = jsonscan.SkipWS(s, i+1); i < len(s) && s[i] == closer {
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
			return false
		}
		t.leaf(kNumber, i, end, false)
		i = end
	case c == 't' && strings.HasPrefix(s[i:], "true"):
		t.leaf(kTrue, i, i+4, false)
		i += 4
	case c == 'f' && strings.HasPrefix(s[i:], "false"):
		t.leaf(kFalse, i, i+5, false)
		i += 5
	case c == 'n' && strings.HasPrefix(s[i:], "null"):
		t.leaf(kNull, i, i+4, false)
		i += 4
	default:
		return false
	}
next: // a value ended just before s[i]: what follows it?
	if depth == 0 {
		return jsonscan.SkipWS(s, i) == len(s)
	}
	{
		closer := byte(']')
		if top.obj {
			closer = '}'
		}
		var more, ok bool
		if i, more, ok = jsonscan.Next(s, i, closer); !ok {
			return false
		}
		if more {
			if top.obj {
				goto key
			}
			goto value
		}
	}
closed: // the container on top of the stack ended just before s[i]
	{
		h := top.height
		t.closeAt(int(top.tok), i, h, top.count)
		t.keys = t.keys[:top.keys]
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
		return false
	}
	{
		end, esc, ok := t.str(s, i)
		if !ok {
			return false
		}
		t.leaf(kString, i, end, esc)
		if t.duplicate(top, depth-1, i+1, end-1) {
			return false
		}
		if i = jsonscan.SkipWS(s, end); i >= len(s) || s[i] != ':' {
			return false
		}
		i = jsonscan.SkipWS(s, i+1)
	}
	goto value
}

// push adds a token and returns it to be filled in. Its fields are stored one by one in place:
// a token built whole and copied in is written to the stack in parts and read back in one
// piece, which the processor cannot forward and stalls on, once for every token.
func (t *tape) push() (*tok, int) {
	n := len(t.toks)
	if n == cap(t.toks) {
		t.toks = append(t.toks, tok{})[:n]
	}
	t.toks = t.toks[:n+1]
	return &t.toks[n], n
}

// leaf pushes a scalar's token.
func (t *tape) leaf(k kind, start, end int, esc bool) {
	tk, n := t.push()
	tk.start, tk.end, tk.next = int32(start), int32(end), int32(n+1)
	tk.kind, tk.esc, tk.height, tk.count = k, esc, 0, 0
}

// open pushes a container's token; closeAt completes it once its last member is read.
func (t *tape) open(k kind, start int) int {
	tk, n := t.push()
	tk.start, tk.kind, tk.esc = int32(start), k, false
	return n
}

func (t *tape) closeAt(idx, end int, h uint8, count int32) {
	tk := &t.toks[idx]
	tk.end, tk.next, tk.height, tk.count = int32(end), int32(len(t.toks)), h, uint8(min(count, 255))
}

// frame is an open container.
type frame struct {
	tok    int32 // its token
	keys   int32 // where its keys start in tape.keys
	count  int32 // members or elements so far
	height uint8
	obj    bool
	big    bool   // its keys are in tape.seen, for it has more than smallObject
	bloom  uint64 // a bit for each key hash seen: most keys need no comparison
}

// key is a member name seen in an open object, for finding duplicates: where it is in the
// text (no pointers, so that the scan stores none, and is spared the GC's write barrier).
type key struct {
	hash       uint32
	start, end int32
}

// duplicate records k as a key of the object on top and reports whether it already has it.
// Keys are compared as written; two spellings of one key through escapes are rare enough that
// the first one read is accepted. A cheap hash, and a bit per hash, filter the comparisons in
// small objects; large ones fall back to a map.
func (t *tape) duplicate(top *frame, level, start, end int) bool {
	k := t.s[start:end]
	if top.big {
		seen := t.seen[level]
		if _, dup := seen[k]; dup {
			return true
		}
		seen[k] = struct{}{}
		return false
	}
	h := keyHash(k)
	own := t.keys[top.keys:]
	if bit := uint64(1) << (h * 0x9e3779b1 >> 26); top.bloom&bit == 0 {
		top.bloom |= bit // a key never seen: nothing to compare it with
	} else {
		for _, o := range own {
			if o.hash == h && t.s[o.start:o.end] == k {
				return true
			}
		}
	}
	if len(own) < smallObject {
		t.keys = append(t.keys, key{h, int32(start), int32(end)})
		return false
	}
	t.maps = true
	if t.seen[level] == nil {
		t.seen[level] = make(map[string]struct{}, 2*smallObject)
	}
	seen := t.seen[level]
	for _, o := range own {
		seen[t.s[o.start:o.end]] = struct{}{}
	}
	seen[k] = struct{}{}
	top.big = true
	return false
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
