package server

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/remedy-go/remedy/internal/jsonscan"
)

// Binding from the text. A body the schema accepted is decoded into the operation's input
// type by encoding/json, which first reads the whole text once more to check its syntax, then
// decodes it through its general machinery. For input types made of plain parts (structs
// without embedded fields, strings, booleans, numbers, pointers and slices of those), a
// textBinder decodes the text straight into the value, with the same result: each of its
// rules is encoding/json's for that kind, and whatever it meets that it has no rule for (a key
// that names no field exactly, a value of another type than the field's, a number the field
// cannot hold as written) makes it give up, and the body is decoded by encoding/json as
// before, which then says what it says. TestTextBinderAgrees and FuzzTextBinder hold the two
// together.

// textBinder binds JSON text to one Go type.
type textBinder struct {
	typ    reflect.Type
	kind   reflect.Kind
	elem   *textBinder           // a pointer's or a slice's element
	fields map[string]boundField // a struct's, by JSON name
}

// boundField is a struct field encoding/json decodes: its index and how its value is bound.
type boundField struct {
	index int
	b     *textBinder
}

var (
	jsonNumberType   = reflect.TypeFor[json.Number]()
	jsonUnmarshaler  = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler  = reflect.TypeFor[encoding.TextUnmarshaler]()
	maxTextBindDepth = 64
)

// newTextBinder returns the binder of t, or nil when t holds a part it has no rule for.
func newTextBinder(t reflect.Type) *textBinder {
	return makeTextBinder(t, map[reflect.Type]bool{})
}

func makeTextBinder(t reflect.Type, open map[reflect.Type]bool) *textBinder {
	if t == jsonNumberType || t.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) ||
		reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil // its own decoding
	}
	b := &textBinder{typ: t, kind: t.Kind()}
	switch b.kind {
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return b
	case reflect.Pointer:
		if b.elem = makeTextBinder(t.Elem(), open); b.elem == nil || b.elem.kind == reflect.Pointer {
			return nil
		}
		return b
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // base64
		}
		if b.elem = makeTextBinder(t.Elem(), open); b.elem == nil {
			return nil
		}
		return b
	case reflect.Struct:
		if open[t] {
			return nil
		}
		open[t] = true
		defer delete(open, t)
		b.fields = map[string]boundField{}
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				return nil // promoted fields: encoding/json's rules for them are not repeated here
			}
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if !validTagName(name) {
				name = f.Name
			}
			if jsonTagHas(opts, "string") {
				return nil
			}
			if _, dup := b.fields[name]; dup {
				return nil // encoding/json ignores both
			}
			fb := makeTextBinder(f.Type, open)
			if fb == nil {
				return nil
			}
			b.fields[name] = boundField{index: i, b: fb}
		}
		// A key that equals no name, which encoding/json may match to a field whose name
		// differs in case, is left to it when it is met.
		return b
	}
	return nil
}

// validTagName is encoding/json's rule for the name a json tag gives a field.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// bind decodes the JSON text s, one value that the schema accepted, into v (settable, zero);
// ok is false when a rule is missing, and v must then be thrown away.
func (b *textBinder) bind(s string, v reflect.Value) bool {
	i, ok := b.value(s, jsonscan.SkipWS(s, 0), v, 0)
	return ok && jsonscan.SkipWS(s, i) == len(s)
}

// value binds the value at s[i:] to v and returns the position after it.
func (b *textBinder) value(s string, i int, v reflect.Value, depth int) (int, bool) {
	if i >= len(s) || depth > maxTextBindDepth {
		return i, false
	}
	c := s[i]
	if c == 'n' { // null leaves a value as it is, and a pointer or a slice nil
		if !strings.HasPrefix(s[i:], "null") {
			return i, false
		}
		return i + 4, true
	}
	switch b.kind {
	case reflect.Bool:
		switch {
		case strings.HasPrefix(s[i:], "true"):
			v.SetBool(true)
			return i + 4, true
		case strings.HasPrefix(s[i:], "false"):
			return i + 5, true
		}
		return i, false
	case reflect.String:
		if c != '"' {
			return i, false
		}
		end, esc, ok := jsonscan.String(s, i+1)
		if !ok {
			return end, false
		}
		if esc {
			v.SetString(jsonscan.Unescape(s[i+1 : end-1])) // a string of its own
		} else {
			v.SetString(strings.Clone(s[i+1 : end-1])) // the input keeps nothing of the body
		}
		return end, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		end, ok := jsonscan.Number(s, i)
		if !ok {
			return end, false
		}
		n, err := strconv.ParseInt(s[i:end], 10, 64)
		if err != nil || v.OverflowInt(n) {
			return end, false
		}
		v.SetInt(n)
		return end, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		end, ok := jsonscan.Number(s, i)
		if !ok {
			return end, false
		}
		n, err := strconv.ParseUint(s[i:end], 10, 64)
		if err != nil || v.OverflowUint(n) {
			return end, false
		}
		v.SetUint(n)
		return end, true
	case reflect.Float32, reflect.Float64:
		end, ok := jsonscan.Number(s, i)
		if !ok {
			return end, false
		}
		n, err := strconv.ParseFloat(s[i:end], v.Type().Bits())
		if err != nil || v.OverflowFloat(n) {
			return end, false
		}
		v.SetFloat(n)
		return end, true
	case reflect.Pointer:
		p := reflect.New(b.elem.typ)
		end, ok := b.elem.value(s, i, p.Elem(), depth+1)
		if ok {
			v.Set(p)
		}
		return end, ok
	case reflect.Slice:
		return b.slice(s, i, v, depth+1)
	case reflect.Struct:
		return b.object(s, i, v, depth+1)
	}
	return i, false
}

// slice binds the array at s[i:]: its elements are counted first, so that the slice is made
// once, at its length ([] makes an empty slice, not nil, as encoding/json does).
func (b *textBinder) slice(s string, i int, v reflect.Value, depth int) (int, bool) {
	if s[i] != '[' {
		return i, false
	}
	n, ok := countElements(s, i)
	if !ok {
		return i, false
	}
	v.Set(reflect.MakeSlice(b.typ, n, n))
	i = jsonscan.SkipWS(s, i+1)
	if n == 0 {
		return i + 1, true
	}
	for k := 0; ; k++ {
		if i, ok = b.elem.value(s, i, v.Index(k), depth); !ok {
			return i, false
		}
		var more bool
		if i, more, ok = jsonscan.Next(s, i, ']'); !ok {
			return i, false
		} else if !more {
			return i, true
		}
	}
}

// object binds the object at s[i:] to the struct v.
func (b *textBinder) object(s string, i int, v reflect.Value, depth int) (int, bool) {
	if s[i] != '{' {
		return i, false
	}
	if i = jsonscan.SkipWS(s, i+1); i < len(s) && s[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return i, false
		}
		end, esc, ok := jsonscan.String(s, i+1)
		if !ok || esc {
			return end, false
		}
		f, known := b.fields[s[i+1:end-1]]
		if !known {
			return i, false
		}
		if i = jsonscan.SkipWS(s, end); i >= len(s) || s[i] != ':' {
			return i, false
		}
		if i, ok = f.b.value(s, jsonscan.SkipWS(s, i+1), v.Field(f.index), depth); !ok {
			return i, false
		}
		var more bool
		if i, more, ok = jsonscan.Next(s, i, '}'); !ok {
			return i, false
		} else if !more {
			return i, true
		}
	}
}

// countElements counts the elements of the array at s[i:], which is JSON the schema accepted:
// it reads only what tells one element from the next (strings, brackets, commas).
func countElements(s string, i int) (int, bool) {
	depth, n, some := 0, 0, false
	for ; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if depth == 1 && c != ']' {
			some = true // an element, or a comma between two
		}
		switch c {
		case '"':
			end, _, ok := jsonscan.String(s, i+1)
			if !ok {
				return 0, false
			}
			i = end - 1
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth == 0 {
				if some {
					n++
				}
				return n, true
			}
		case ',':
			if depth == 1 {
				n++
			}
		}
	}
	return 0, false
}
