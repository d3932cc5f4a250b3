package rewrite

import (
	"encoding/json"

	"github.com/tidwall/gjson"

	"github.com/remedy-go/remedy/internal/jsonw"
)

// diffArgs lists what changed between two argument objects, for a rewriter that does not
// describe its own changes: members added, removed, or given another value, by JSON Pointer,
// in the order they appear (the old document's first). Objects are compared member by
// member; any other value, arrays included, is one change when it differs.
func Diff(old, new json.RawMessage) []Change {
	var out []Change
	diffValue(&out, "", gjson.ParseBytes(old), gjson.ParseBytes(new))
	return out
}

func diffValue(out *[]Change, path string, a, b gjson.Result) {
	if a.IsObject() && b.IsObject() {
		seen := map[string]bool{}
		a.ForEach(func(k, av gjson.Result) bool {
			seen[k.Str] = true
			p := appendPointer(path, k.Str)
			bv := b.Get(escapeKey(k.Str))
			if !bv.Exists() {
				*out = append(*out, Change{Path: p, Old: jsonw.Compact(av.Raw), Rule: "rewriter"})
				return true
			}
			diffValue(out, p, av, bv)
			return true
		})
		b.ForEach(func(k, bv gjson.Result) bool {
			if !seen[k.Str] {
				*out = append(*out, Change{Path: appendPointer(path, k.Str), New: jsonw.Compact(bv.Raw), Rule: "rewriter"})
			}
			return true
		})
		return
	}
	if oa, ob := jsonw.Compact(a.Raw), jsonw.Compact(b.Raw); string(oa) != string(ob) {
		*out = append(*out, Change{Path: path, Old: oa, New: ob, Rule: "rewriter"})
	}
}
