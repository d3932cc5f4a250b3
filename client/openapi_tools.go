package client

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/remedy-go/remedy"
)

// What OperationsFromOpenAPI reads for a model: an operation's description, one schema of its
// arguments, and the errors it may answer with. None of it can refuse a document.

// oaMaxInline bounds how deep $refs are inlined into an arguments schema; a deeper or
// cyclic reference becomes an empty schema (any value). oaInlineBudget bounds how many nodes
// one operation's schema may have once inlined: references that fan out at every level
// would otherwise make it exponential.
const (
	oaMaxInline    = 12
	oaInlineBudget = 20_000
)

// oaDescription is the operation's summary, else its description: the summary says what the
// operation does, where the description often speaks to the HTTP client (headers, keys) about
// what the loop does itself.
func oaDescription(obj map[string]json.RawMessage) string {
	var summary, desc string
	_ = json.Unmarshal(obj["summary"], &summary)
	_ = json.Unmarshal(obj["description"], &desc)
	if summary = strings.TrimSpace(summary); summary != "" {
		return summary
	}
	return strings.TrimSpace(desc)
}

// arguments is one object schema of an operation's arguments, as Client.Call takes them: the
// path and query parameters by name, and the members of a JSON object body.
func (d *oaDoc) arguments(params []oaParam, tmpl []string, bodyRaw json.RawMessage) json.RawMessage {
	d.work = oaInlineBudget
	props := map[string]any{}
	var required []string
	add := func(name string, schema any, req bool) {
		props[name] = schema
		if req && !slices.Contains(required, name) {
			required = append(required, name)
		}
	}
	for _, p := range params {
		inPath := p.in == "path" && slices.Contains(tmpl, p.name)
		if p.name == "" || (p.in != "query" && !inPath) {
			continue
		}
		schema, _ := d.inline(decodeAny(p.schema), 0, nil).(map[string]any)
		if schema == nil {
			schema = map[string]any{}
		}
		if p.description != "" {
			if _, has := schema["description"]; !has {
				schema["description"] = p.description
			}
		}
		add(p.name, schema, p.required || inPath)
	}
	for _, name := range tmpl {
		// A path parameter the document does not declare is still an argument.
		if _, ok := props[name]; !ok {
			add(name, map[string]any{"type": "string"}, true)
		}
	}
	additional := true
	if body, ok := d.inline(decodeAny(bodyRaw), 0, nil).(map[string]any); ok {
		content, _ := body["content"].(map[string]any)
		for _, mt := range slices.Sorted(maps.Keys(content)) {
			if !strings.Contains(mt, "json") {
				continue
			}
			media, _ := content[mt].(map[string]any)
			schema, _ := media["schema"].(map[string]any)
			bodyProps, _ := schema["properties"].(map[string]any)
			for _, name := range slices.Sorted(maps.Keys(bodyProps)) {
				add(name, bodyProps[name], false)
			}
			for _, r := range asStrings(schema["required"]) {
				if _, ok := bodyProps[r]; ok && !slices.Contains(required, r) {
					required = append(required, r)
				}
			}
			if ap, ok := schema["additionalProperties"].(bool); ok && !ap {
				additional = false
			}
			break
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	if !additional {
		out["additionalProperties"] = false
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}

// inline replaces local $refs in v by what they name, recursively; seen holds the references
// being inlined, so that a cycle ends in an empty schema.
func (d *oaDoc) inline(v any, depth int, seen []string) any {
	if d.work--; d.work < 0 {
		return map[string]any{}
	}
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			if depth >= oaMaxInline || slices.Contains(seen, ref) {
				return map[string]any{}
			}
			target := d.pointer(ref)
			if target == nil {
				return map[string]any{}
			}
			return d.inline(target, depth+1, append(seen, ref))
		}
		if depth >= oaMaxInline*4 {
			return map[string]any{}
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = d.inline(e, depth+1, seen)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = d.inline(e, depth+1, seen)
		}
		return out
	}
	return v
}

// pointer is the value a local reference ("#/components/schemas/Order") names, decoded; nil
// when there is none.
func (d *oaDoc) pointer(ref string) any {
	frag, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil
	}
	if d.root == nil {
		d.root = map[string]any{}
		for k, raw := range d.top {
			d.root[k] = decodeAny(raw)
		}
	}
	var cur any = d.root
	for tok := range strings.SplitSeq(frag, "/") {
		name, err := oaUnescape(tok)
		if err != nil {
			return nil
		}
		switch x := cur.(type) {
		case map[string]any:
			cur = x[name]
		case []any:
			i, err := strconv.Atoi(name)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			cur = x[i]
		default:
			return nil
		}
	}
	return cur
}

// errorCodes are the operation's x-agent-error-codes, described by the document's
// x-agent-errors catalog, or by the response that lists each.
func (d *oaDoc) errorCodes(obj map[string]json.RawMessage) []ErrorCode {
	var codes []string
	if json.Unmarshal(obj["x-agent-error-codes"], &codes) != nil || len(codes) == 0 {
		return nil
	}
	var catalog map[string]ErrorCode
	_ = json.Unmarshal(d.top["x-agent-errors"], &catalog)
	var responses map[string]struct {
		Codes []string `json:"x-agent-error-codes"`
	}
	_ = json.Unmarshal(obj["responses"], &responses)
	out := make([]ErrorCode, 0, len(codes))
	for _, code := range codes {
		if code == "" || slices.ContainsFunc(out, func(e ErrorCode) bool { return e.Code == code }) {
			continue
		}
		e, ok := catalog[code]
		e.Code = code
		if !ok {
			for status, r := range responses {
				if n, err := strconv.Atoi(status); err == nil && slices.Contains(r.Codes, code) {
					e.Status = n
				}
			}
			e.Retryable = remedy.RetryableStatus(e.Status)
		}
		out = append(out, e)
	}
	return out
}

func decodeAny(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

func asStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
