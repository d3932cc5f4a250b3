package remedyhuma

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
)

// maxInline bounds how deep the $refs of an inlined subschema are followed: a recursive type
// (a tree of comments) would otherwise never end.
const maxInline = 8

// subschema is the violated section of op's input schema, inline and self-contained, as
// server's API sends it: the schema of the field the issues share (the deepest pointer they
// all start with), its $refs to Huma's registry replaced by what they name. It is nil when no
// such schema is found.
func subschema(oapi *huma.OpenAPI, op *huma.Operation, code string, issues []remedy.Issue) json.RawMessage {
	if op == nil || len(issues) == 0 || oapi.Components == nil || oapi.Components.Schemas == nil {
		return nil
	}
	segs := shared(issues)
	var root *huma.Schema
	if code == server.CodeInvalidParameter {
		if len(segs) == 0 {
			return nil
		}
		for _, p := range op.Parameters {
			if p != nil && p.Name == segs[0] && p.In != "header" {
				root = p.Schema
			}
		}
		segs = segs[1:]
	} else if op.RequestBody != nil {
		if mt := op.RequestBody.Content["application/json"]; mt != nil {
			root = mt.Schema
		}
	}
	if root == nil {
		return nil
	}
	reg := oapi.Components.Schemas
	node := resolve(reg, toAny(root))
	// A member the schema does not name (one additionalProperties refuses) is violated by its
	// object's schema: the walk stops at the deepest schema it finds.
	for _, seg := range segs {
		next := resolve(reg, step(node, seg))
		if next == nil {
			break
		}
		node = next
	}
	b, err := json.Marshal(inline(reg, node, 0))
	if err != nil {
		return nil
	}
	return b
}

// shared is the longest list of pointer segments every issue's path starts with.
func shared(issues []remedy.Issue) []string {
	var out []string
	for i, is := range issues {
		segs := split(is.Path)
		if i == 0 {
			out = segs
			continue
		}
		n := 0
		for n < len(out) && n < len(segs) && out[n] == segs[n] {
			n++
		}
		out = out[:n]
	}
	return out
}

func split(ptr string) []string {
	if ptr == "" || ptr[0] != '/' {
		return nil
	}
	segs := strings.Split(ptr[1:], "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return segs
}

// step is the schema of the member or item seg of the schema node.
func step(node map[string]any, seg string) any {
	if node == nil {
		return nil
	}
	if props, ok := node["properties"].(map[string]any); ok {
		if p, ok := props[seg]; ok {
			return p
		}
	}
	if _, err := strconv.Atoi(seg); err == nil {
		if it, ok := node["items"]; ok {
			return it
		}
	}
	if ap, ok := node["additionalProperties"].(map[string]any); ok {
		return ap
	}
	return nil
}

// resolve follows v's $ref into the registry, as a generic JSON value.
func resolve(reg huma.Registry, v any) map[string]any {
	m, _ := v.(map[string]any)
	for range maxInline {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		s := reg.SchemaFromRef(ref)
		if s == nil {
			return nil
		}
		m, _ = toAny(s).(map[string]any)
	}
	return m
}

// inline replaces, depth-first, every $ref under v by the schema it names.
func inline(reg huma.Registry, v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["$ref"].(string); ok {
			if depth >= maxInline {
				return map[string]any{}
			}
			return inline(reg, resolve(reg, x), depth+1)
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "properties" {
				// $schema is the link SchemaLinkTransformer adds: no member of the input.
				if props, ok := e.(map[string]any); ok {
					if _, ok := props["$schema"]; ok {
						cp := make(map[string]any, len(props))
						for pk, pv := range props {
							if pk != "$schema" {
								cp[pk] = pv
							}
						}
						e = cp
					}
				}
			}
			out[k] = inline(reg, e, depth)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = inline(reg, e, depth)
		}
		return out
	}
	return v
}

// toAny is s as a generic JSON value.
func toAny(s any) any {
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	return v
}
