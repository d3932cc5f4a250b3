package remedy

import (
	"net/url"
	"strings"

	"github.com/remedy-go/remedy/internal/jsonw"
	"github.com/remedy-go/remedy/internal/tape"
)

// toPointer converts a field path, in whichever notation the server used, to an RFC 6901 JSON
// Pointer. It reads pointers as they are ("/a/b"), URI fragments ("#/a/b"), JSONPath ("$.a.b",
// "$['a'][0]"), dotted and bracketed paths ("items[0].sku", "card[number]"), and gojsonschema's
// "(root).a". A leading "body" segment followed by more (FastAPI's location prefix,
// "body.items[3].tags") is dropped: the pointer is into the request body.
func toPointer(path string) string {
	switch {
	case path == "" || path == "#" || path == "$" || path == "(root)":
		return ""
	case path[0] == '/':
		return path
	case path[0] == '#':
		frag := path[1:]
		if dec, err := url.PathUnescape(frag); err == nil {
			frag = dec
		}
		if frag == "" || frag[0] == '/' {
			return frag
		}
		return toPointer(frag)
	case path[0] == '$':
		return dottedPointer(strings.TrimPrefix(path[1:], "."), false)
	case strings.HasPrefix(path, "(root)"):
		return dottedPointer(strings.TrimPrefix(path[len("(root)"):], "."), false)
	}
	return dottedPointer(path, true)
}

// dottedPointer reads a.b[0]['c']["d"] notation. dropBody removes a location prefix "body".
func dottedPointer(path string, dropBody bool) string {
	if !strings.ContainsAny(path, ".[~/") {
		if path == "" {
			return ""
		}
		return "/" + path
	}
	b := pointerBuilder{first: true, dropBody: dropBody}
	b.Grow(len(path) + 4)
	for i := 0; i < len(path); {
		var seg string
		switch path[i] {
		case '.':
			i++
			continue
		case '[':
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				seg, i = path[i+1:], len(path)
			} else {
				seg, i = path[i+1:i+end], i+end+1
			}
			if len(seg) >= 2 && (seg[0] == '\'' || seg[0] == '"') && seg[len(seg)-1] == seg[0] {
				seg = seg[1 : len(seg)-1]
			}
		default:
			end := strings.IndexAny(path[i:], ".[")
			if end < 0 {
				seg, i = path[i:], len(path)
			} else {
				seg, i = path[i:i+end], i+end
			}
		}
		b.add(seg, i < len(path))
	}
	return b.String()
}

// pointerBuilder writes a pointer segment by segment, escaping each; with dropBody, a leading
// "body" segment followed by more is a location prefix, not a member, and is skipped.
type pointerBuilder struct {
	strings.Builder
	first, dropBody bool
}

func (b *pointerBuilder) add(seg string, more bool) {
	first := b.first
	b.first = false
	if first && b.dropBody && seg == "body" && more {
		return
	}
	b.WriteByte('/')
	jsonw.WriteSegment(&b.Builder, seg)
}

// arrayPointer converts a segment array (["items", 0, "sku"]) to a pointer; a leading "body"
// location followed by more segments is dropped, as in toPointer.
func arrayPointer(arr tape.Val) string {
	b := pointerBuilder{first: true, dropBody: true}
	for it := arr.Iter(); it.Next(); {
		b.add(it.Val().Text(), it.More())
	}
	return b.String()
}

// pathPointer reads a path that may be an array of segments or a string in any notation.
func pathPointer(v tape.Val) string {
	if v.IsArray() {
		return arrayPointer(v)
	}
	return toPointer(v.Text())
}
