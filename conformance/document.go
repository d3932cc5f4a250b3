package conformance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/remedy-go/remedy/internal/httpop"
	"github.com/remedy-go/remedy/internal/oadoc"
)

// operation is what the probe knows of one operation from the document.
type operation struct {
	ID      string // operationId, or the name derived as the reference server derives it
	Method  string // upper case
	Path    string // the template
	Params  []param
	Body    map[string]any // the request body's schema, $refs resolved; nil without a body
	Codes   []string       // x-agent-error-codes
	Confirm bool           // x-confirmation-required
	// KeyMode is how the operation takes an Idempotency-Key: "", "optional" or "required".
	KeyMode string
	Example map[string]any // an example of the request body, when the document gives one
	// Secured: the document says the operation needs credentials (security), and lets no
	// caller in without them.
	Secured bool
}

type param struct {
	Name, In string
	Required bool
	Schema   map[string]any
}

func (o *operation) String() string { return o.Method + " " + o.Path + " (" + o.ID + ")" }

// readOnly reports whether the method promises no side effect.
func (o *operation) readOnly() bool { return o.Method == "GET" || o.Method == "HEAD" }

// document is the parts of an OpenAPI document the probe reads.
type document struct {
	root map[string]any
	ops  []*operation
	// work is what is left of the budget of one generation or lookup: a schema whose
	// branches refer back to itself would otherwise make either exponential.
	work int
}

// workLimit is how many schema nodes one generation or lookup may visit.
const workLimit = 2000

// spend takes one node from the budget, and reports whether there was one.
func (d *document) spend() bool {
	d.work--
	return d.work >= 0
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// maxRefDepth bounds the nesting of allOf, anyOf and oneOf followed to a field.
const maxRefDepth = 32

// readDocument reads an OpenAPI 3.x document in JSON or YAML (told by its content;
// contentType, the media type it was served with or "", only decides which error is
// reported for a document neither reads).
func readDocument(b []byte, contentType string) (*document, error) {
	b, format, err := oadoc.ToJSON(b, contentType)
	if err != nil {
		return nil, err
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("the document is not an object (a JSON object or a YAML mapping): this %s document is %v", format, err)
	}
	v, _ := root["openapi"].(string)
	if !strings.HasPrefix(v, "3.") {
		if _, ok := root["swagger"]; ok {
			return nil, fmt.Errorf("the document is Swagger 2.0, not OpenAPI 3.x")
		}
		return nil, fmt.Errorf("the document has no openapi member naming a 3.x version")
	}
	d := &document{root: root}
	paths, _ := root["paths"].(map[string]any)
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, p := range keys {
		resolved, err := resolveRef(root, paths[p])
		if err != nil {
			// A path item elsewhere (another file) cannot be probed: say so rather than
			// leave its operations out unseen.
			return nil, fmt.Errorf("path %s: %v", p, err)
		}
		item, _ := resolved.(map[string]any)
		if item == nil {
			continue
		}
		shared := d.params(item["parameters"])
		for _, m := range methods {
			raw, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			d.ops = append(d.ops, d.operation(strings.ToUpper(m), p, raw, shared))
		}
	}
	if len(d.ops) == 0 {
		return d, fmt.Errorf("the document lists no operation")
	}
	return d, nil
}

func (d *document) operation(method, path string, raw map[string]any, shared []param) *operation {
	op := &operation{Method: method, Path: path}
	op.ID, _ = raw["operationId"].(string)
	if op.ID == "" {
		op.ID = httpop.Name(method, path)
	}
	// Operation-level parameters override path-level ones of the same name and location.
	own := d.params(raw["parameters"])
	op.Params = own
	for _, s := range shared {
		dup := false
		for _, o := range own {
			dup = dup || (o.Name == s.Name && o.In == s.In)
		}
		if !dup {
			op.Params = append(op.Params, s)
		}
	}
	for _, c := range asSlice(raw["x-agent-error-codes"]) {
		if s, ok := c.(string); ok {
			op.Codes = append(op.Codes, s)
		}
	}
	op.Confirm, _ = raw["x-confirmation-required"].(bool)
	// An operation's own security replaces the document's, even when it is empty.
	security, declared := raw["security"]
	if !declared {
		security = d.root["security"]
	}
	op.Secured = secured(security)
	var keyHeader, keyRequired bool
	for _, p := range op.Params {
		if oadoc.KeyHeader(p.In, p.Name) {
			keyHeader, keyRequired = true, keyRequired || p.Required
		}
	}
	op.KeyMode = oadoc.KeyMode(raw["x-idempotency-key"], keyHeader, keyRequired)
	if body, ok := d.resolve(raw["requestBody"]).(map[string]any); ok {
		content, _ := body["content"].(map[string]any)
		for ct, media := range content {
			if !strings.Contains(ct, "json") {
				continue
			}
			m, _ := media.(map[string]any)
			op.Body, _ = d.resolve(m["schema"]).(map[string]any)
			if ex, ok := m["example"].(map[string]any); ok {
				op.Example = ex
			}
			if exs, ok := m["examples"].(map[string]any); ok && op.Example == nil {
				for _, name := range sortedKeys(exs) {
					e, _ := d.resolve(exs[name]).(map[string]any)
					if v, ok := e["value"].(map[string]any); ok {
						op.Example = v
						break
					}
				}
			}
			break
		}
	}
	return op
}

// secured reports whether a list of security requirements demands credentials: at least one
// requirement, and none the empty one ({}) that lets a caller in without any.
func secured(v any) bool {
	reqs := asSlice(v)
	for _, r := range reqs {
		if m, ok := r.(map[string]any); !ok || len(m) == 0 {
			return false
		}
	}
	return len(reqs) > 0
}

func (d *document) params(v any) []param {
	var out []param
	for _, raw := range asSlice(v) {
		m, ok := d.resolve(raw).(map[string]any)
		if !ok {
			continue
		}
		p := param{}
		p.Name, _ = m["name"].(string)
		p.In, _ = m["in"].(string)
		p.Required, _ = m["required"].(bool)
		p.Schema, _ = d.resolve(m["schema"]).(map[string]any)
		if p.Name != "" && p.In != "" {
			out = append(out, p)
		}
	}
	return out
}

// resolve follows a local $ref ("#/components/schemas/X"), and the refs it leads to; an
// unresolvable or cyclic reference gives nil.
func (d *document) resolve(v any) any {
	out, err := resolveRef(d.root, v)
	if err != nil {
		return nil
	}
	return out
}

// sub returns the schema at key of schema s (properties/name, items, ...), resolved.
func (d *document) sub(s map[string]any, keys ...string) map[string]any {
	var cur any = s
	for _, k := range keys {
		m, ok := d.resolve(cur).(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	out, _ := d.resolve(cur).(map[string]any)
	return out
}

// fieldSchema finds the schema of the field at a JSON Pointer under s, through properties,
// items and the branches of allOf, anyOf and oneOf.
func (d *document) fieldSchema(s map[string]any, pointer string) (map[string]any, bool) {
	if pointer == "" {
		return s, s != nil
	}
	d.work = workLimit
	if !strings.HasPrefix(pointer, "/") {
		return nil, false
	}
	cur := s
	for seg := range strings.SplitSeq(pointer[1:], "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		next := d.step(cur, seg, 0)
		if next == nil {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

func (d *document) step(s map[string]any, seg string, depth int) map[string]any {
	if s == nil || depth > maxRefDepth || !d.spend() {
		return nil
	}
	if p := d.sub(s, "properties", seg); p != nil {
		return p
	}
	if isIndex(seg) {
		if it := d.sub(s, "items"); it != nil {
			return it
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		for _, b := range asSlice(s[k]) {
			if m, ok := d.resolve(b).(map[string]any); ok {
				if r := d.step(m, seg, depth+1); r != nil {
					return r
				}
			}
		}
	}
	if ap := d.sub(s, "additionalProperties"); ap != nil {
		return ap
	}
	return nil
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
