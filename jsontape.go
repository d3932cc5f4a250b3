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
}

type tape struct {
	s    string
	toks []tok
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

// parse scans s onto the tape and reports whether it is valid (see validJSON). Positions are
// passed and returned in locals rather than kept on the tape, so that they stay in registers.
func (t *tape) parse(s string) bool {
	t.s, t.toks = s, t.toks[:0]
	if len(s) >= 1<<31-1 {
		return false
	}
	i, _, ok := t.value(s, jsonscan.SkipWS(s, 0), 0)
	return ok && jsonscan.SkipWS(s, i) == len(s)
}

// value scans the value at s[i:] and returns the position after it and its height.
func (t *tape) value(s string, i, depth int) (int, uint8, bool) {
	if i >= len(s) {
		return i, 0, false
	}
	start := i
	var k kind
	switch c := s[i]; {
	case c == '"':
		end, esc, ok := jsonscan.String(s, i+1)
		t.toks = append(t.toks, tok{kind: kString, start: int32(start), end: int32(end), next: int32(len(t.toks) + 1), esc: esc})
		return end, 0, ok
	case c == '{':
		if depth >= maxDepth {
			return i, 0, false
		}
		return t.object(s, i, depth+1)
	case c == '[':
		if depth >= maxDepth {
			return i, 0, false
		}
		return t.array(s, i, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
		var ok bool
		if i, ok = jsonscan.Number(s, i); !ok || i-start > maxNumberLen {
			return i, 0, false
		}
		k = kNumber
	case c == 't' && strings.HasPrefix(s[i:], "true"):
		i, k = i+4, kTrue
	case c == 'f' && strings.HasPrefix(s[i:], "false"):
		i, k = i+5, kFalse
	case c == 'n' && strings.HasPrefix(s[i:], "null"):
		i, k = i+4, kNull
	default:
		return i, 0, false
	}
	t.toks = append(t.toks, tok{kind: k, start: int32(start), end: int32(i), next: int32(len(t.toks) + 1)})
	return i, 0, true
}

// open pushes a container's token; closeAt completes it once its last member is read.
func (t *tape) open(k kind, start int) int {
	t.toks = append(t.toks, tok{kind: k, start: int32(start)})
	return len(t.toks) - 1
}

func (t *tape) closeAt(idx, end int, h uint8) {
	tk := &t.toks[idx]
	tk.end, tk.next, tk.height = int32(end), int32(len(t.toks)), h
}

func (t *tape) object(s string, i, depth int) (int, uint8, bool) {
	obj := t.open(kObject, i)
	i = jsonscan.SkipWS(s, i+1)
	height := uint8(1)
	if i < len(s) && s[i] == '}' {
		t.closeAt(obj, i+1, height)
		return i + 1, height, true
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
		if i >= len(s) || s[i] != '"' {
			return i, 0, false
		}
		end, esc, ok := jsonscan.String(s, i+1)
		if !ok {
			return end, 0, false
		}
		t.toks = append(t.toks, tok{kind: kString, start: int32(i), end: int32(end), next: int32(len(t.toks) + 1), esc: esc})
		// Keys are compared as written; two spellings of one key through escapes are rare
		// enough that the first one read is accepted.
		k := s[i+1 : end-1]
		h := keyHash(k)
		if n < smallObject {
			for j := 0; j < n; j++ {
				if hs[j] == h && ks[j] == k {
					return end, 0, false
				}
			}
			hs[n], ks[n] = h, k
		} else {
			if seen == nil {
				seen = make(map[string]struct{}, 2*smallObject)
				for _, prev := range ks {
					seen[prev] = struct{}{}
				}
			}
			if _, dup := seen[k]; dup {
				return end, 0, false
			}
			seen[k] = struct{}{}
		}
		n++
		i = jsonscan.SkipWS(s, end)
		if i >= len(s) || s[i] != ':' {
			return i, 0, false
		}
		var vh uint8
		if i, vh, ok = t.value(s, jsonscan.SkipWS(s, i+1), depth); !ok {
			return i, 0, false
		}
		height = max(height, vh+1)
		var closed bool
		if i, closed, ok = t.after(s, i, '}', obj, height); closed || !ok {
			return i, height, ok
		}
	}
}

// after reads what follows a member or element: a comma (more follow) or the container's
// closer, which completes its token (closed). Anything else is invalid.
func (t *tape) after(s string, i int, closer byte, idx int, height uint8) (next int, closed, ok bool) {
	next, more, ok := jsonscan.Next(s, i, closer)
	if ok && !more {
		t.closeAt(idx, next, height)
	}
	return next, ok && !more, ok
}

func (t *tape) array(s string, i, depth int) (int, uint8, bool) {
	arr := t.open(kArray, i)
	i = jsonscan.SkipWS(s, i+1)
	height := uint8(1)
	if i < len(s) && s[i] == ']' {
		t.closeAt(arr, i+1, height)
		return i + 1, height, true
	}
	for {
		var (
			vh uint8
			ok bool
		)
		if i, vh, ok = t.value(s, i, depth); !ok {
			return i, 0, false
		}
		height = max(height, vh+1)
		var closed bool
		if i, closed, ok = t.after(s, i, ']', arr, height); closed || !ok {
			return i, height, ok
		}
	}
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
		it.t, it.pos, it.end, it.obj = v.t, v.i, tk.next, tk.kind == kObject
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
	it.pos = it.t.toks[it.pos].next
	return true
}

// val is the current element or member value.
func (it *iter) val() val { return val{t: it.t, i: it.cur} }

// keyTok is the current member's key.
func (it *iter) keyTok() *tok { return &it.t.toks[it.cur-2] }

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
