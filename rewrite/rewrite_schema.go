package rewrite

import (
	"math"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/remedy-go/remedy/internal/jsonw"
)

// What Default reads from a JSON Schema: the schema of one field in the envelope's
// inline Schema, and the facts its rules need (allowed values, bounds, type, default). Only
// what can be decided without a validator is read; where a schema leaves a choice open (a
// union of several kinds of value), it says nothing, and the rules that need it do not apply.

const (
	// maxSchemaHops bounds the $ref, allOf, anyOf and oneOf links followed from one schema,
	// and maxSchemaParts the schemas they gather: a schema can refer to itself, and allOf can
	// fan out at every level.
	maxSchemaHops  = 8
	maxSchemaParts = 32
)

// expand appends s and every schema that applies to the same value as s: the target of a
// local $ref, the members of allOf, and the one branch of an anyOf or oneOf that is not null
// (a nullable value, ["X", null], is an X whenever it is repaired). The branches of a union
// of several kinds of value are left out: which one the value was meant to match is a guess.
func (env *envelopeJSON) expand(out []gjson.Result, s gjson.Result, hops int) []gjson.Result {
	return expandIn(env.schema, out, s, hops)
}

// expandIn is expand for a schema whose local $refs resolve in root.
func expandIn(root gjson.Result, out []gjson.Result, s gjson.Result, hops int) []gjson.Result {
	if !s.IsObject() || len(out) >= maxSchemaParts {
		return out
	}
	out = append(out, s)
	if hops >= maxSchemaHops {
		return out
	}
	// One pass over the members rather than a lookup per keyword: most schemas have none of
	// these, and a lookup of an absent key reads the whole object.
	s.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "$ref":
			if t, ok := resolveRef(root, v.Str); v.Type == gjson.String && ok {
				out = expandIn(root, out, t, hops+1)
			}
		case "allOf":
			v.ForEach(func(_, m gjson.Result) bool {
				out = expandIn(root, out, m, hops+1)
				return len(out) < maxSchemaParts
			})
		case "anyOf", "oneOf":
			if b, ok := onlyBranch(v); ok {
				out = expandIn(root, out, b, hops+1)
			}
		}
		return len(out) < maxSchemaParts
	})
	return out
}

// resolveRef finds a local reference ("#", "#/$defs/Currency") in root, the schema document it
// was written in (the envelope's Schema, the operation's). A reference to another document, or
// one root (perhaps only the violated part of a larger schema) does not hold, resolves to
// nothing.
func resolveRef(root gjson.Result, ref string) (gjson.Result, bool) {
	if ref == "" || ref[0] != '#' || !root.Exists() {
		return gjson.Result{}, false
	}
	segs, ok := pointerSegments(ref[1:])
	if !ok {
		return gjson.Result{}, false
	}
	s := root
	for _, seg := range segs {
		switch {
		case s.IsObject():
			s = s.Get(escapeKey(seg))
		case s.IsArray():
			if _, isIndex := arrayIndex(seg); !isIndex {
				return gjson.Result{}, false
			}
			s = s.Get(seg)
		default:
			return gjson.Result{}, false
		}
	}
	return s, s.IsObject()
}

// onlyBranch is the one branch of a union that is not the null type.
func onlyBranch(union gjson.Result) (gjson.Result, bool) {
	if !union.IsArray() {
		return gjson.Result{}, false
	}
	var only gjson.Result
	n := 0
	union.ForEach(func(_, b gjson.Result) bool {
		if !nullSchema(b) {
			only = b
			n++
		}
		return n < 2
	})
	return only, n == 1 && only.IsObject()
}

// nullSchema reports whether s admits null and nothing else.
func nullSchema(s gjson.Result) bool {
	if t := s.Get("type"); t.Type == gjson.String && t.Str == "null" {
		return true
	}
	if c := s.Get("const"); c.Exists() && c.Type == gjson.Null {
		return true
	}
	e := s.Get("enum")
	return e.IsArray() && e.Get("#").Int() == 1 && e.Get("0").Type == gjson.Null
}

// fieldSchemas returns what describes the field at pointer, most specific first: the objects
// among the Expected of its issues, then the envelope's Schema found for the field, each with
// the schemas it brings in (see expand).
func (env *envelopeJSON) fieldSchemas(expected []gjson.Result, pointer string) []gjson.Result {
	var out []gjson.Result
	for _, x := range expected {
		out = env.expand(out, x, 0)
	}
	if s, ok := env.fieldSchema(pointer); ok {
		out = env.expand(out, s, 0)
	}
	return out
}

// fieldSchema finds the schema of the field at pointer in the envelope's Schema. Servers
// inline the violated subschema, which may be rooted at the request or at any object on the
// way to the field (the item of an array, say), so the path is matched from its longest
// suffix to its shortest, until a suffix's first segment is one the schema declares: the
// schema is rooted there, and if the rest of the path is not in it, nothing describes the
// field (a shorter suffix would only match a namesake). A schema that is no object schema is
// the field's own, but only when there is one path it could belong to.
func (env *envelopeJSON) fieldSchema(pointer string) (gjson.Result, bool) {
	root := env.schema
	if !root.Exists() {
		return gjson.Result{}, false
	}
	if !env.objectRoot {
		return root, env.paths == 1
	}
	segs, ok := pointerSegments(pointer)
	if !ok {
		return gjson.Result{}, false
	}
	for k := range segs {
		s, consumed, ok := env.navigate(root, segs[k:])
		if ok {
			return s, true
		}
		if consumed > 0 {
			break
		}
	}
	return gjson.Result{}, false
}

// hasProperties reports whether s, or a schema that applies with it, declares properties.
func (env *envelopeJSON) hasProperties(s gjson.Result) bool {
	if s.Get("properties").IsObject() {
		return true
	}
	var buf [8]gjson.Result
	for _, m := range env.expand(buf[:0], s, 0) {
		if m.Get("properties").IsObject() {
			return true
		}
	}
	return false
}

// navigate follows properties by key and items by array index, through the schemas that
// apply with each (see expand). consumed counts the segments it followed before it stopped.
func (env *envelopeJSON) navigate(s gjson.Result, segs []string) (_ gjson.Result, consumed int, _ bool) {
	return navigateIn(env.schema, s, segs)
}

// navigateIn is navigate for a schema whose local $refs resolve in root.
func navigateIn(root, s gjson.Result, segs []string) (_ gjson.Result, consumed int, _ bool) {
	var buf [8]gjson.Result
	for i, seg := range segs {
		if n := s.Get("properties").Get(escapeKey(seg)); n.IsObject() {
			s = n // the common case, without gathering what applies with s
			continue
		}
		parts := expandIn(root, buf[:0], s, 0)
		var next gjson.Result
		for _, m := range parts {
			if p := m.Get("properties"); p.IsObject() {
				if n := p.Get(escapeKey(seg)); n.IsObject() {
					next = n
					break
				}
			}
		}
		if _, isIndex := arrayIndex(seg); !next.Exists() && isIndex {
			for _, m := range parts {
				if items := m.Get("items"); items.IsObject() {
					next = items
					break
				}
			}
		}
		if !next.Exists() {
			return gjson.Result{}, i, false
		}
		s = next
	}
	return s, len(segs), true
}

// keyword is the first of the schemas that has key.
func keyword(schemas []gjson.Result, key string) gjson.Result {
	for _, s := range schemas {
		if v := s.Get(key); v.Exists() {
			return v
		}
	}
	return gjson.Result{}
}

// schemaAllowed reads the values the schemas allow: an enum, a const, or a union whose every
// branch is an enum, a const or null (zod writes a union of literals so). Nil when they allow
// any value of their type.
func (env *envelopeJSON) schemaAllowed(schemas []gjson.Result) []string {
	return schemaAllowedIn(env.schema, schemas)
}

// schemaAllowedIn is schemaAllowed for schemas whose local $refs resolve in root.
func schemaAllowedIn(root gjson.Result, schemas []gjson.Result) []string {
	if out := listed(schemas); out != nil {
		return out
	}
	var out []string
	for _, s := range schemas {
		s.ForEach(func(k, v gjson.Result) bool {
			if k.Str == "anyOf" || k.Str == "oneOf" {
				out = unionAllowedIn(root, v)
			}
			return out == nil
		})
		if out != nil {
			return out
		}
	}
	return nil
}

// listed is the first enum or const of the schemas, as compact JSON texts.
func listed(schemas []gjson.Result) []string {
	if e := keyword(schemas, "enum"); e.IsArray() {
		var out []string
		e.ForEach(func(_, v gjson.Result) bool {
			out = append(out, string(jsonw.Compact(v.Raw)))
			return true
		})
		return out
	}
	if c := keyword(schemas, "const"); c.Exists() {
		return []string{string(jsonw.Compact(c.Raw))}
	}
	return nil
}

// unionAllowedIn is every value a union of enums, consts and null allows, its local $refs
// resolved in root; nil when a branch allows something else. Unions nested in a branch are
// not followed.
func unionAllowedIn(root, union gjson.Result) []string {
	if !union.IsArray() {
		return nil
	}
	var out []string
	ok := true
	union.ForEach(func(_, b gjson.Result) bool {
		if nullSchema(b) {
			out = append(out, "null")
			return true
		}
		var buf [4]gjson.Result
		vals := listed(expandIn(root, buf[:0], b, maxSchemaHops-1))
		if vals == nil {
			ok = false
			return false
		}
		out = append(out, vals...)
		return true
	})
	if !ok || len(out) == 0 {
		return nil
	}
	return out
}

// bound reads the lower (or upper) bound of a range: the inclusive keyword, the exclusive one
// (a number since draft 6, a boolean beside the inclusive one in draft 4), whichever binds.
// An exclusive bound only has a nearest valid value among integers (stepExclusive), one past
// it; for an integer an inclusive fractional bound is rounded inward. It returns the nearest
// valid value and its JSON text.
func bound(schemas []gjson.Result, incl, excl string, lower, integer, stepExclusive bool) (float64, string, bool) {
	var (
		b, exclusive bool
		v            float64
		raw          string
	)
	if x := keyword(schemas, incl); x.Type == gjson.Number {
		b, v, raw = true, x.Num, x.Raw
		exclusive = keyword(schemas, excl).Type == gjson.True
	}
	if x := keyword(schemas, excl); x.Type == gjson.Number {
		if !b || (lower && x.Num >= v) || (!lower && x.Num <= v) {
			b, v, raw, exclusive = true, x.Num, x.Raw, true
		}
	}
	if !b || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, "", false
	}
	if exclusive && !stepExclusive {
		return 0, "", false
	}
	if !integer && !exclusive {
		return v, raw, true
	}
	n := v
	switch {
	case lower && exclusive:
		n = math.Floor(v) + 1
	case lower:
		n = math.Ceil(v)
	case exclusive:
		n = math.Ceil(v) - 1
	default:
		n = math.Floor(v)
	}
	if math.Abs(n) > 1<<53 {
		return 0, "", false // past exact integers in a float64: the bound cannot be written exactly
	}
	return n, strconv.FormatFloat(n, 'f', -1, 64), true
}

// schemaType is the JSON type the schemas ask for, "" when they do not say or allow several.
// "null" beside one other type (["integer", "null"]) is that type: a repair never aims at null.
func schemaType(schemas []gjson.Result) string {
	t := keyword(schemas, "type")
	if t.Type == gjson.String {
		return normType(t.Str)
	}
	if !t.IsArray() {
		return ""
	}
	only := ""
	for _, x := range t.Array() {
		if x.Type != gjson.String || x.Str == "null" {
			continue
		}
		if only != "" {
			return ""
		}
		only = normType(x.Str)
	}
	return only
}

// allowedType is the one JSON type of the allowed values, besides null: a value that must be
// one of "eur" and "usd" must be a string. "" when they are of several types.
func allowedType(allowed []string) string {
	typ := ""
	for _, a := range allowed {
		t := ""
		switch a[0] {
		case '"':
			t = "string"
		case 't', 'f':
			t = "boolean"
		case 'n':
			continue
		case '{', '[':
			return ""
		default:
			t = "integer"
			if strings.ContainsAny(a, ".eE") {
				if f, err := strconv.ParseFloat(a, 64); err != nil || f != math.Trunc(f) {
					t = "number"
				}
			}
		}
		switch {
		case typ == "" || typ == t:
			typ = t
		case typ == "integer" && t == "number" || typ == "number" && t == "integer":
			typ = "number"
		default:
			return ""
		}
	}
	return typ
}

// normType folds the type names servers write in Expected onto JSON Schema's.
func normType(t string) string {
	switch strings.ToLower(t) {
	case "integer", "int", "int32", "int64", "long":
		return "integer"
	case "number", "float", "double", "decimal":
		return "number"
	case "boolean", "bool":
		return "boolean"
	case "string", "str":
		return "string"
	}
	return ""
}
