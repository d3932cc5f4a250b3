package tape

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/remedy-go/remedy/internal/jsonscan"
)

// The tape's reader is one loop with an explicit stack. The recursive reader below states
// the same grammar the plain way, and is the oracle it is fuzzed against: both must accept
// the same texts and record the same tokens.

func refParse(t *Tape, s string) bool {
	t.Src, t.Toks = s, t.Toks[:0]
	if len(s) >= 1<<31-1 {
		return false
	}
	i, _, ok := t.refValue(s, jsonscan.SkipWS(s, 0), 0)
	if !ok || jsonscan.SkipWS(s, i) != len(s) {
		return false
	}
	// Counts of members and elements, by walking each container's children.
	for idx := range t.Toks {
		tk := &t.Toks[idx]
		if tk.Kind != Object && tk.Kind != Array {
			continue
		}
		n := 0
		for c := idx + 1; c < int(tk.Next); c = int(t.Toks[c].Next) {
			if tk.Kind == Object {
				c++ // the key
			}
			n++
		}
		tk.Count = uint8(min(n, 255))
	}
	return true
}

// value scans the value at s[i:] and returns the position after it and its height.
func (t *Tape) refValue(s string, i, depth int) (int, uint8, bool) {
	if i >= len(s) {
		return i, 0, false
	}
	start := i
	var k Kind
	switch c := s[i]; {
	case c == '"':
		end, esc, ok := jsonscan.String(s, i+1)
		t.leaf(String, start, end, esc)
		return end, 0, ok
	case c == '{':
		if depth >= MaxDepth {
			return i, 0, false
		}
		return t.refObject(s, i, depth+1)
	case c == '[':
		if depth >= MaxDepth {
			return i, 0, false
		}
		return t.refArray(s, i, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
		var ok bool
		if i, ok = jsonscan.Number(s, i); !ok || i-start > MaxNumberLen {
			return i, 0, false
		}
		k = Number
	case c == 't' && strings.HasPrefix(s[i:], "true"):
		i, k = i+4, True
	case c == 'f' && strings.HasPrefix(s[i:], "false"):
		i, k = i+5, False
	case c == 'n' && strings.HasPrefix(s[i:], "null"):
		i, k = i+4, Null
	default:
		return i, 0, false
	}
	t.leaf(k, start, i, false)
	return i, 0, true
}

func (t *Tape) refObject(s string, i, depth int) (int, uint8, bool) {
	obj := t.open(Object, i)
	i = jsonscan.SkipWS(s, i+1)
	height := uint8(1)
	if i < len(s) && s[i] == '}' {
		t.closeAt(obj, i+1, height, 0)
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
		t.leaf(String, i, end, esc)
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
		if i, vh, ok = t.refValue(s, jsonscan.SkipWS(s, i+1), depth); !ok {
			return i, 0, false
		}
		height = max(height, vh+1)
		var closed bool
		if i, closed, ok = t.refAfter(s, i, '}', obj, height); closed || !ok {
			return i, height, ok
		}
	}
}

// after reads what follows a member or element: a comma (more follow) or the container's
// closer, which completes its token (closed). Anything else is invalid.
func (t *Tape) refAfter(s string, i int, closer byte, idx int, height uint8) (next int, closed, ok bool) {
	next, more, ok := jsonscan.Next(s, i, closer)
	if ok && !more {
		t.closeAt(idx, next, height, 0)
	}
	return next, ok && !more, ok
}

func (t *Tape) refArray(s string, i, depth int) (int, uint8, bool) {
	arr := t.open(Array, i)
	i = jsonscan.SkipWS(s, i+1)
	height := uint8(1)
	if i < len(s) && s[i] == ']' {
		t.closeAt(arr, i+1, height, 0)
		return i + 1, height, true
	}
	for {
		var (
			vh uint8
			ok bool
		)
		if i, vh, ok = t.refValue(s, i, depth); !ok {
			return i, 0, false
		}
		height = max(height, vh+1)
		var closed bool
		if i, closed, ok = t.refAfter(s, i, ']', arr, height); closed || !ok {
			return i, height, ok
		}
	}
}

func checkTape(t *testing.T, s string) {
	t.Helper()
	got, want := Get(), &Tape{}
	defer Put(got)
	okGot, okWant := got.Parse(s), refParse(want, s)
	if okGot != okWant {
		t.Fatalf("parse(%q) = %v, the recursive reader says %v", s, okGot, okWant)
	}
	if okGot && !slices.Equal(got.Toks, want.Toks) {
		t.Fatalf("parse(%q): tokens\n%v\nthe recursive reader's\n%v", s, got.Toks, want.Toks)
	}
}

func tapeSeeds(tb testing.TB) []string {
	seeds := []string{
		`{}`, `[]`, `[[]]`, `{"a":{}}`, `{"a":[1,{"b":[]}],"c":"d"}`, ` {"a" : 1 } `, `{"a":1,"a":2}`,
		`{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{1:2}`, `{"a":1]`, `[1}`, `"x"`, `1`, `-0.5e+3`, `true`,
		`{"k":"\u00e9\"\\"}`, "{\"k\":\"\xff\"}", `{"a":[1,2,3],"b":{"c":{"d":null}}} x`, `[`, `{"a":`,
		strings.Repeat("[", 64) + strings.Repeat("]", 64), strings.Repeat("[", 65) + strings.Repeat("]", 65),
		`{` + strings.Repeat(`"k":1,`, 0) + `"a0":0,"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":9,"b0":0,"b1":1,"b2":2,"b3":3,"b4":4,"b5":5,"b6":6,"a3":3}`,
		`{"a0":0,"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":9,"b0":0,"b1":1,"b2":2,"b3":3,"b4":4,"b5":5,"b6":6,"b7":{"a0":0,"a0":1}}`,
		`[{"a":1,"b":2},{"a":1,"b":2}]`, `{"a":{"x":1},"b":{"x":1}}`,
		"[" + strings.Repeat("1,", 300) + "1]", "[" + strings.Repeat("1,", 254) + "1]", "[" + strings.Repeat("1,", 253) + "1]",
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "envelopes", "*", "*.http"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		if _, body, ok := strings.Cut(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n\n"); ok {
			seeds = append(seeds, body)
		}
	}
	return seeds
}

func TestTapeMatchesRecursiveReader(t *testing.T) {
	t.Parallel()
	for _, s := range tapeSeeds(t) {
		checkTape(t, s)
		for cut := range len(s) { // every prefix, and every text with one byte dropped
			checkTape(t, s[:cut])
			checkTape(t, s[:cut]+s[cut+1:])
		}
	}
}

func FuzzTape(f *testing.F) {
	for _, s := range tapeSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(checkTape)
}

// push adds a token and returns it to be filled in (for the reference reader). Its fields are stored one by one in place:
// a token built whole and copied in is written to the stack in parts and read back in one
// piece, which the processor cannot forward and stalls on, once for every token.
func (t *Tape) push() (*Token, int) {
	n := len(t.Toks)
	if n == cap(t.Toks) {
		t.Toks = append(t.Toks, Token{})[:n]
	}
	t.Toks = t.Toks[:n+1]
	return &t.Toks[n], n
}

// leaf pushes a scalar's token.
func (t *Tape) leaf(k Kind, start, end int, esc bool) {
	tk, n := t.push()
	tk.Start, tk.End, tk.Next = int32(start), int32(end), int32(n+1)
	tk.Kind, tk.Esc, tk.Height, tk.Count = k, esc, 0, 0
}

// open pushes a container's token; closeAt completes it once its last member is read.
func (t *Tape) open(k Kind, start int) int {
	tk, n := t.push()
	tk.Start, tk.Kind, tk.Esc = int32(start), k, false
	return n
}

func (t *Tape) closeAt(idx, end int, h uint8, count int32) {
	tk := &t.Toks[idx]
	tk.End, tk.Next, tk.Height, tk.Count = int32(end), int32(len(t.Toks)), h, uint8(min(count, 255))
}

// TestTapeClasses: a tape is made with room for the tokens its body likely holds (one for
// every ten bytes), and put back in the class of its capacity, where a body of that size
// finds it again.
func TestTapeClasses(t *testing.T) {
	for _, c := range []struct{ n, class int }{
		{0, 0}, {minTape - 1, 0}, {minTape, 0}, {2*minTape - 1, 0}, {2 * minTape, 1},
		{minTape << 5, 5}, {minTape<<12 + 1, tapeClasses - 1}, {1 << 40, tapeClasses - 1},
	} {
		if got := tapeClass(c.n); got != c.class {
			t.Errorf("tapeClass(%d) = %d, want %d", c.n, got, c.class)
		}
	}
	for _, size := range []int{0, 1 << 10, 100 << 10, 1 << 20} {
		tp := For(size)
		if cap(tp.Toks) < size/10 {
			t.Errorf("tapeFor(%d): room for %d tokens, want %d at least", size, cap(tp.Toks), size/10)
		}
		Put(tp)
	}
	big := For(1 << 20)
	big.Toks = grow(big.Toks[:cap(big.Toks)])
	want := cap(big.Toks)
	Put(big)
	if raceBuild {
		return // the race detector makes sync.Pool drop items at random
	}
	if got := For(want * 5); cap(got.Toks) != want { // from the class of its capacity, or the one below
		t.Errorf("a grown tape (room for %d) was not found again: got room for %d", want, cap(got.Toks))
	}
}
