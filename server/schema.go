package server

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// param is a field bound from the URL rather than the body.
type param struct {
	Name  string       // the URL name, which is also its property name in the schema
	In    string       // "path" or "query"
	Index []int        // reflect field index path within the struct (for FieldByIndex)
	Type  reflect.Type // the field's type
}

// inputSchema returns the JSON Schema (draft 2020-12) of an operation's input type t (a struct,
// or pointer to one), and the fields of t bound from the URL.
//
// The rules are the package doc's ("Input types" and "The schema tag").
func inputSchema(t reflect.Type) (*jsonschema.Schema, []param, error) {
	if t == nil {
		return nil, nil, errors.New("server: input type is nil")
	}
	st := t
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("server: input type %s is not a struct or a pointer to one", t)
	}
	if reflect.PointerTo(st).Implements(schemaJSONUnmarshaler) {
		return nil, nil, fmt.Errorf("server: input type %s implements json.Unmarshaler: its schema cannot be derived from its fields", t)
	}
	b := &schemaBuilder{input: t, overrides: map[reflect.Type]*jsonschema.Schema{}}
	if err := b.check(st, "", true, nil); err != nil {
		return nil, nil, err
	}
	s, err := jsonschema.ForType(st, &jsonschema.ForOptions{TypeSchemas: b.overrides})
	if err != nil {
		return nil, nil, fmt.Errorf("server: input type %s: %w", t, err)
	}
	params, err := b.top(st, s)
	if err != nil {
		return nil, nil, err
	}
	if _, err := compileSchema(s); err != nil {
		return nil, nil, fmt.Errorf("server: input type %s: the derived schema does not compile: %w", t, err)
	}
	return s, params, nil
}

// inputTypeError is a registration error: what is wrong with one field of an input type.
type inputTypeError struct {
	Input reflect.Type // the operation's input type
	Field string       // the field's Go path from the input type: Items[].Quantity
	Key   string       // the tag and key at fault ("schema tag minimum", "query tag"), or ""
	Msg   string
}

// Error implements error: "server: input type T: field F: key: what is wrong".
func (e *inputTypeError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("server: input type %s: field %s: %s", e.Input, e.Field, e.Msg)
	}
	return fmt.Sprintf("server: input type %s: field %s: %s: %s", e.Input, e.Field, e.Key, e.Msg)
}

// The interfaces and types whose JSON form is not their Go structure.
var (
	schemaJSONUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	schemaTextUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	schemaTimeType        = reflect.TypeFor[time.Time]()
)

// schemaBuilder carries what one inputSchema call learns about the input type.
type schemaBuilder struct {
	input reflect.Type
	// overrides holds the schemas of types ForType would get wrong (their JSON form is not
	// their Go structure); walks do not descend into them.
	overrides map[reflect.Type]*jsonschema.Schema
}

// errorf returns an *inputTypeError for field and key.
func (b *schemaBuilder) errorf(field, key, format string, args ...any) error {
	return &inputTypeError{Input: b.input, Field: field, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// schemaField is a struct field as encoding/json (and ForType) see it.
type schemaField struct {
	f    reflect.StructField
	pos  int    // its position in reflect.VisibleFields
	name string // JSON name
	opts string // what follows the name in the json tag
}

// optional reports whether ForType leaves the field out of required.
func (sf schemaField) optional() bool {
	return jsonTagHas(sf.opts, "omitempty") || jsonTagHas(sf.opts, "omitzero")
}

// jsonTagHas reports whether a tag's comma-separated options hold want.
func jsonTagHas(opts, want string) bool {
	for opt := range strings.SplitSeq(opts, ",") {
		if opt == want {
			return true
		}
	}
	return false
}

// schemaJSONFields lists t's fields the way ForType does: visible, exported, not embedded (an embedded
// struct's fields are promoted), not tagged json:"-".
func schemaJSONFields(t reflect.Type) []schemaField {
	var out []schemaField
	for pos, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, opts, found := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && !found {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, schemaField{f: f, pos: pos, name: name, opts: opts})
	}
	return out
}

// schemaParamTag reads a field's path or query tag; in is "" when it has neither.
func schemaParamTag(f reflect.StructField) (name, in, opts string, both bool) {
	p, okPath := f.Tag.Lookup("path")
	q, okQuery := f.Tag.Lookup("query")
	switch {
	case okPath && okQuery:
		return "", "", "", true
	case okPath:
		name, opts, _ = strings.Cut(p, ",")
		return name, "path", opts, false
	case okQuery:
		name, opts, _ = strings.Cut(q, ",")
		return name, "query", opts, false
	}
	return "", "", "", false
}

// schemaDeref follows pointers to the type they point to.
func schemaDeref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// check walks the type before ForType sees it: it rejects what ForType would reject or get
// wrong, with the field named, and records the types whose JSON form is not their structure.
func (b *schemaBuilder) check(t reflect.Type, path string, top bool, stack []reflect.Type) error {
	base := schemaDeref(t)
	if b.override(base) {
		return nil
	}
	where := path
	if where == "" {
		where = "(input)"
	}
	switch base.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String, reflect.Interface:
		return nil
	case reflect.Slice, reflect.Array:
		return b.check(base.Elem(), path+"[]", false, stack)
	case reflect.Map:
		k := base.Key()
		if k.Kind() != reflect.String && !k.Implements(reflect.TypeFor[encoding.TextMarshaler]()) {
			return b.errorf(where, "", "map key type %s is not supported: use string keys", k)
		}
		return b.check(base.Elem(), path+"[key]", false, stack)
	case reflect.Struct:
		if slices.Contains(stack, base) {
			return b.errorf(where, "", "recursive type %s is not supported", base)
		}
		return b.checkStruct(base, path, top, append(stack, base))
	}
	return b.errorf(where, "", "type %s cannot be represented in JSON", t)
}

// override records the schema of a type whose JSON form is not its Go structure, and reports
// whether t is such a type.
func (b *schemaBuilder) override(t reflect.Type) bool {
	if _, ok := b.overrides[t]; ok {
		return true
	}
	var s *jsonschema.Schema
	switch pt := reflect.PointerTo(t); {
	case t == schemaTimeType:
		s = &jsonschema.Schema{Type: "string", Format: "date-time"}
	case pt.Implements(schemaJSONUnmarshaler):
		s = &jsonschema.Schema{} // its own decoder decides what it accepts
	case pt.Implements(schemaTextUnmarshaler):
		s = &jsonschema.Schema{Type: "string"}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		s = &jsonschema.Schema{Types: []string{"null", "string"}, ContentEncoding: "base64"}
	default:
		return false
	}
	b.overrides[t] = s
	return true
}

// checkStruct checks the fields of struct t, found at Go path path: embedded fields, tags,
// names, URL parameters (only when top, the input itself), then each body field's type.
func (b *schemaBuilder) checkStruct(t reflect.Type, path string, top bool, stack []reflect.Type) error {
	fieldPath := func(f reflect.StructField) string {
		if path == "" {
			return f.Name
		}
		return path + "." + f.Name
	}
	for _, f := range reflect.VisibleFields(t) {
		// Tags that would be ignored are mistakes worth naming.
		for _, key := range []string{"path", "query", "schema", "doc"} {
			if _, ok := f.Tag.Lookup(key); !ok {
				continue
			}
			switch {
			case f.Anonymous:
				return b.errorf(fieldPath(f), key+" tag", "an embedded field takes no %s tag: tag the fields it holds", key)
			case !f.IsExported():
				return b.errorf(fieldPath(f), key+" tag", "an unexported field is neither decoded nor bound: export it")
			}
		}
		if !f.Anonymous {
			continue
		}
		// encoding/json names an embedded field that has a json name, and skips one tagged
		// "-"; ForType promotes its fields in both cases. Rather than a schema that lies:
		if tag, ok := f.Tag.Lookup("json"); ok && tag != "" && !strings.HasPrefix(tag, ",") {
			return b.errorf(fieldPath(f), "json tag", "an embedded field with a json tag is not supported: give the field a name, or drop the tag")
		}
		if et := schemaDeref(f.Type); et.Kind() != reflect.Struct && f.IsExported() {
			return b.errorf(fieldPath(f), "", "an embedded %s is not supported: give the field a name", et)
		}
	}
	names := map[string]string{} // JSON or URL name → Go path of the field holding it
	claim := func(name, field string) error {
		if other, ok := names[name]; ok {
			return b.errorf(field, "", "its name %q is also the name of field %s", name, other)
		}
		names[name] = field
		return nil
	}
	var bodyJSON []schemaField
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		fp := fieldPath(f)
		name, in, opts, both := schemaParamTag(f)
		if both {
			return b.errorf(fp, "path tag", "a field cannot have both a path and a query tag")
		}
		if in != "" {
			if !top {
				return b.errorf(fp, in+" tag", "only a field of the input struct itself can be a URL parameter")
			}
			if err := b.checkParam(f, fp, name, in, opts); err != nil {
				return err
			}
			if err := claim(name, fp); err != nil {
				return err
			}
			continue
		}
		if tag, ok := f.Tag.Lookup("jsonschema"); ok {
			if tag == "" {
				return b.errorf(fp, "jsonschema tag", "the description is empty")
			}
			if jsonschemaWordPrefix.MatchString(tag) {
				return b.errorf(fp, "jsonschema tag", "the description must not begin with WORD= (constraints go in the schema tag)")
			}
		}
		if _, ok := f.Tag.Lookup("doc"); ok {
			if _, ok := f.Tag.Lookup("jsonschema"); ok {
				return b.errorf(fp, "doc tag", "use either a doc or a jsonschema tag, not both")
			}
		}
	}
	for _, sf := range schemaJSONFields(t) {
		if _, in, _, _ := schemaParamTag(sf.f); in != "" {
			continue
		}
		fp := fieldPath(sf.f)
		if jsonTagHas(sf.opts, "string") {
			return b.errorf(fp, "json tag", "the ,string option is not supported")
		}
		if err := claim(sf.name, fp); err != nil {
			return err
		}
		bodyJSON = append(bodyJSON, sf)
	}
	if top {
		// A parameter's json name must not shadow a body field: ForType would list both under
		// one name.
		for _, sf := range schemaJSONFields(t) {
			if _, in, _, _ := schemaParamTag(sf.f); in == "" {
				continue
			}
			for _, body := range bodyJSON {
				if body.name == sf.name {
					return b.errorf(fieldPath(sf.f), "json tag", "its json name %q is also field %s's: tag the parameter json:\"-\"", sf.name, body.f.Name)
				}
			}
		}
	}
	for _, sf := range bodyJSON {
		if err := b.check(sf.f.Type, fieldPath(sf.f), false, stack); err != nil {
			return err
		}
	}
	return nil
}

// jsonschemaWordPrefix is what ForType refuses at the start of a jsonschema tag.
var jsonschemaWordPrefix = regexp.MustCompile("^[^ \t\n]*=")

// checkParam checks a URL parameter's tag and type.
func (b *schemaBuilder) checkParam(f reflect.StructField, fp, name, in, opts string) error {
	key := in + " tag"
	if name == "" {
		return b.errorf(fp, key, "the parameter name is empty")
	}
	for opt := range strings.SplitSeq(opts, ",") {
		switch {
		case opt == "":
		case opt == "omitempty" && in == "query":
		case opt == "omitempty":
			return b.errorf(fp, key, "a path parameter is always required: omitempty does not apply")
		default:
			return b.errorf(fp, key, "unknown option %q", opt)
		}
	}
	t := f.Type
	switch {
	case t.Kind() == reflect.Pointer:
		t = t.Elem()
	case t.Kind() == reflect.Slice && in == "query":
		t = t.Elem()
		if t.Kind() == reflect.Uint8 {
			return b.errorf(fp, key, "a byte slice is not a parameter type: use a string")
		}
	}
	if !paramScalarKind(t.Kind()) {
		return b.errorf(fp, key, "a %s parameter cannot be a %s: it must be a string, bool, integer or float, a pointer to one%s",
			in, f.Type, map[bool]string{true: ", or a slice of them", false: ""}[in == "query"])
	}
	return nil
}

// paramScalarKind reports whether a URL parameter can hold a value of kind k.
func paramScalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// top finishes the input's own object: body fields get their tags applied (and their types
// walked), parameters replace whatever ForType made of them, and the property order and the
// required list follow the fields.
func (b *schemaBuilder) top(t reflect.Type, s *jsonschema.Schema) ([]param, error) {
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	// ForType listed parameters under their json names (checkStruct made sure no body field
	// has one of those names); those entries go.
	for _, sf := range schemaJSONFields(t) {
		if _, in, _, _ := schemaParamTag(sf.f); in != "" {
			delete(s.Properties, sf.name)
		}
	}
	var (
		params   []param
		order    []string
		required []string
	)
	body := map[int]schemaField{} // position in VisibleFields → the body field there
	for _, sf := range schemaJSONFields(t) {
		body[sf.pos] = sf
	}
	for pos, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, in, opts, _ := schemaParamTag(f)
		if in == "" {
			sf, ok := body[pos]
			if !ok {
				continue // json:"-"
			}
			fs := s.Properties[sf.name]
			if fs == nil {
				return nil, b.errorf(f.Name, "", "ForType made no schema for it")
			}
			if err := b.field(f, fs, f.Name); err != nil {
				return nil, err
			}
			order = append(order, sf.name)
			if !sf.optional() {
				required = append(required, sf.name)
			}
			continue
		}
		ps, err := jsonschema.ForType(f.Type, &jsonschema.ForOptions{TypeSchemas: b.overrides})
		if err != nil {
			return nil, b.errorf(f.Name, in+" tag", "%v", err)
		}
		// A URL cannot carry null: a parameter's schema is its value's.
		if slices.Contains(ps.Types, "null") {
			schemaDropNull(ps)
		}
		if err := b.field(f, ps, f.Name); err != nil {
			return nil, err
		}
		s.Properties[name] = ps
		params = append(params, param{Name: name, In: in, Index: slices.Clone(f.Index), Type: f.Type})
		order = append(order, name)
		if in == "path" || (f.Type.Kind() != reflect.Pointer && f.Type.Kind() != reflect.Slice && !jsonTagHas(opts, "omitempty")) {
			required = append(required, name)
		}
	}
	s.PropertyOrder = order
	s.Required = required
	return params, nil
}

// schemaDropNull removes null from the types s allows.
func schemaDropNull(s *jsonschema.Schema) {
	s.Types = slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
	if len(s.Types) == 1 {
		s.Type, s.Types = s.Types[0], nil
	}
}

// field applies a field's tags to its schema fs, walks its type, then checks that every value
// its tags name is valid for it.
func (b *schemaBuilder) field(f reflect.StructField, fs *jsonschema.Schema, fp string) error {
	if doc, ok := f.Tag.Lookup("doc"); ok {
		fs.Description = doc
	} else if doc, ok := f.Tag.Lookup("jsonschema"); ok {
		fs.Description = doc // ForType already did this for body fields, not for parameters
	}
	c, err := b.applyTag(f, fs, fp)
	if err != nil {
		return err
	}
	if err := b.walkType(f.Type, fs, fp); err != nil {
		return err
	}
	return b.checkValues(fs, c, fp)
}

// walkType applies the tags of the struct fields found in t (through pointers, slices, arrays
// and maps) to their schemas within s.
func (b *schemaBuilder) walkType(t reflect.Type, s *jsonschema.Schema, path string) error {
	base := schemaDeref(t)
	if o, ok := b.overrides[base]; ok {
		if s != nil && o.Type == "" && o.Types == nil {
			// ForType's pointer handling turns "any value" into "null only".
			s.Type, s.Types = "", nil
		}
		return nil
	}
	if s == nil {
		return nil
	}
	switch base.Kind() {
	case reflect.Struct:
		for _, sf := range schemaJSONFields(base) {
			fs := s.Properties[sf.name]
			if fs == nil {
				return b.errorf(path+"."+sf.f.Name, "", "ForType made no schema for it")
			}
			if err := b.field(sf.f, fs, path+"."+sf.f.Name); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		return b.walkType(base.Elem(), s.Items, path+"[]")
	case reflect.Map:
		return b.walkType(base.Elem(), s.AdditionalProperties, path+"[key]")
	}
	return nil
}

// schemaKind is the one JSON type a schema allows besides null, "" when it allows any or several.
func schemaKind(s *jsonschema.Schema) string {
	if s == nil {
		return ""
	}
	if s.Type != "" {
		return s.Type
	}
	k := ""
	for _, t := range s.Types {
		if t == "null" {
			continue
		}
		if k != "" {
			return ""
		}
		k = t
	}
	return k
}

// schemaTagValues is what a tag named, kept for checking once the field's schema is complete.
type schemaTagValues struct {
	values   *jsonschema.Schema // where enum and const went (the items' schema for a slice)
	defaults []schemaTagValue   // default and example values
}

// schemaTagValue is a value a tag gave, and the key that gave it.
type schemaTagValue struct {
	key string
	v   any
}

// schemaTagKeys are the keys the schema tag knows.
var schemaTagKeys = []string{
	"enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"minLength", "maxLength", "pattern", "format", "minItems", "maxItems", "uniqueItems",
	"default", "example",
}

// schemaTagGrammar is what an error says of a tag that looks written with another separator.
const schemaTagGrammar = `a schema tag is key=value items separated by semicolons, as in schema:"minimum=1;maximum=100"`

// misseparated reports whether a schema tag's item looks like several items joined by another
// separator than the semicolon ("minimum=1,maximum=100", "minimum=1 maximum=100"), or a key
// written with another sign than = ("minimum:1").
func misseparated(key, val string) bool {
	if strings.ContainsAny(key, ":, ") {
		return true
	}
	for _, k := range schemaTagKeys {
		if strings.Contains(val, k+"=") || strings.Contains(val, k+":") {
			return true
		}
	}
	return false
}

// schemaFormats are the formats the validator asserts.
var schemaFormats = []string{
	"date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uri",
	"uri-reference", "iri", "iri-reference", "uri-template", "uuid", "json-pointer",
	"relative-json-pointer", "regex", "period", "semver",
}

// schemaTagSplit splits s at every sep not preceded by a backslash; `\sep` becomes sep, and every
// other backslash stays.
func schemaTagSplit(s string, sep byte) []string {
	var (
		out []string
		cur strings.Builder
	)
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == sep:
			cur.WriteByte(sep)
			i++
		case s[i] == sep:
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	return append(out, cur.String())
}

// applyTag applies the schema tag of field f to its schema fs.
func (b *schemaBuilder) applyTag(f reflect.StructField, fs *jsonschema.Schema, fp string) (schemaTagValues, error) {
	tv := schemaTagValues{values: fs}
	tag, ok := f.Tag.Lookup("schema")
	if !ok {
		return tv, nil
	}
	// A slice's value constraints apply to its items; the slice itself takes the array keys.
	base := schemaDeref(f.Type)
	_, opaque := b.overrides[base]
	array := !opaque && (base.Kind() == reflect.Slice || base.Kind() == reflect.Array)
	vs, vt := fs, base
	if array && fs.Items != nil {
		vs, vt = fs.Items, schemaDeref(base.Elem())
		tv.values = vs
	}
	seen := map[string]bool{}
	for _, item := range schemaTagSplit(tag, ';') {
		if strings.TrimSpace(item) == "" {
			continue
		}
		key, val, hasVal := strings.Cut(item, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		name := "schema tag " + key
		fail := func(format string, args ...any) (schemaTagValues, error) {
			if misseparated(key, val) {
				format += "; " + schemaTagGrammar
			}
			return tv, b.errorf(fp, name, format, args...)
		}
		if !slices.Contains(schemaTagKeys, key) {
			return fail("unknown key (known: %s)", strings.Join(schemaTagKeys, ", "))
		}
		if seen[key] {
			return fail("the key appears twice")
		}
		seen[key] = true
		if !hasVal && key != "uniqueItems" {
			return fail("the key needs a value: %s=...", key)
		}
		vk := schemaKind(vs)
		needKind := func(kinds ...string) bool { return slices.Contains(kinds, vk) }
		what := func() string {
			if vk == "" {
				return fmt.Sprintf("a %s field (any JSON value)", f.Type)
			}
			return fmt.Sprintf("a %s field (JSON %s)", f.Type, vk)
		}
		switch key {
		case "enum":
			if !needKind("string", "integer", "number", "boolean") {
				return fail("enum applies to strings, numbers and booleans, not to %s", what())
			}
			var values []any
			for _, raw := range schemaTagSplit(val, ',') {
				v, err := schemaTagScalar(strings.TrimSpace(raw), vk, vt)
				if err != nil {
					return fail("%v", err)
				}
				for _, prev := range values {
					if prev == v {
						return fail("the value %s appears twice", strings.TrimSpace(raw))
					}
				}
				values = append(values, v)
			}
			vs.Enum = values
		case "const":
			if !needKind("string", "integer", "number", "boolean") {
				return fail("const applies to strings, numbers and booleans, not to %s", what())
			}
			v, err := schemaTagScalar(val, vk, vt)
			if err != nil {
				return fail("%v", err)
			}
			vs.Const = &v
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
			if !needKind("integer", "number") {
				return fail("%s applies to numbers, not to %s", key, what())
			}
			n, err := strconv.ParseFloat(val, 64)
			if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
				return fail("%q is not a number", val)
			}
			switch key {
			case "minimum":
				if vs.Minimum != nil && n < *vs.Minimum {
					return fail("%s is below the smallest %s (%v)", val, vt, *vs.Minimum)
				}
				vs.Minimum = &n
			case "maximum":
				if vs.Maximum != nil && n > *vs.Maximum {
					return fail("%s is above the largest %s (%v)", val, vt, *vs.Maximum)
				}
				vs.Maximum = &n
			case "exclusiveMinimum":
				vs.ExclusiveMinimum = &n
			case "exclusiveMaximum":
				vs.ExclusiveMaximum = &n
			case "multipleOf":
				if n <= 0 {
					return fail("%s is not greater than 0", val)
				}
				vs.MultipleOf = &n
			}
		case "minLength", "maxLength":
			if !needKind("string") {
				return fail("%s applies to strings, not to %s", key, what())
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return fail("%q is not a non-negative integer", val)
			}
			if key == "minLength" {
				vs.MinLength = &n
			} else {
				vs.MaxLength = &n
			}
		case "pattern":
			if !needKind("string") {
				return fail("pattern applies to strings, not to %s", what())
			}
			if _, err := regexp.Compile(val); err != nil {
				return fail("%q does not compile: %v", val, err)
			}
			vs.Pattern = val
		case "format":
			if !needKind("string") {
				return fail("format applies to strings, not to %s", what())
			}
			if !slices.Contains(schemaFormats, val) {
				return fail("unknown format %q (known: %s)", val, strings.Join(schemaFormats, ", "))
			}
			vs.Format = val
		case "minItems", "maxItems", "uniqueItems":
			if !array || base.Kind() != reflect.Slice {
				return fail("%s applies to slices, not to a %s field", key, f.Type)
			}
			if key == "uniqueItems" {
				switch val {
				case "", "true":
					fs.UniqueItems = true
				case "false":
				default:
					return fail("%q is neither true nor false", val)
				}
				continue
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return fail("%q is not a non-negative integer", val)
			}
			if key == "minItems" {
				fs.MinItems = &n
				if n > 0 && slices.Contains(fs.Types, "null") {
					schemaDropNull(fs)
				}
			} else {
				fs.MaxItems = &n
			}
		case "default", "example":
			fk := schemaKind(fs)
			var v any
			if slices.Contains([]string{"string", "integer", "number", "boolean"}, fk) {
				sv, err := schemaTagScalar(val, fk, base)
				if err != nil {
					return fail("%v", err)
				}
				v = sv
			} else {
				dec := json.NewDecoder(strings.NewReader(val))
				dec.UseNumber()
				if err := dec.Decode(&v); err != nil || dec.More() {
					return fail("%q is not a JSON value (a %s field takes its %s as JSON)", val, f.Type, key)
				}
			}
			if key == "default" {
				raw, err := json.Marshal(v)
				if err != nil {
					return fail("%v", err)
				}
				fs.Default = raw
			} else {
				fs.Examples = append(fs.Examples, v)
			}
			tv.defaults = append(tv.defaults, schemaTagValue{key, v})
		}
	}
	if err := schemaCheckBounds(vs, fs); err != nil {
		return tv, b.errorf(fp, "schema tag", "%v", err)
	}
	return tv, nil
}

// schemaTagScalar reads a tag value as a JSON value of kind k for a field of Go type t: a number
// (json.Number, in t's range) for integer and number, a bool, or the text itself.
func schemaTagScalar(s, k string, t reflect.Type) (any, error) {
	switch k {
	case "string":
		return s, nil
	case "boolean":
		switch s {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is neither true nor false", s)
	case "integer":
		switch t.Kind() {
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			n, err := strconv.ParseUint(s, 10, t.Bits())
			if err != nil {
				return nil, fmt.Errorf("%q is not a %s", s, t)
			}
			return json.Number(strconv.FormatUint(n, 10)), nil
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(s, 10, t.Bits())
			if err != nil {
				return nil, fmt.Errorf("%q is not a %s", s, t)
			}
			return json.Number(strconv.FormatInt(n, 10)), nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return json.Number(strconv.FormatInt(n, 10)), nil
	case "number":
		bits := 64
		if t.Kind() == reflect.Float32 {
			bits = 32
		}
		n, err := strconv.ParseFloat(s, bits)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return json.Number(strconv.FormatFloat(n, 'g', -1, bits)), nil
	}
	return nil, fmt.Errorf("no value can be given for a field of JSON type %q", k)
}

// schemaCheckBounds refuses ranges no value satisfies: bounds that cross, or meet where one of
// them is exclusive, and lengths or item counts whose minimum exceeds their maximum.
func schemaCheckBounds(vs, fs *jsonschema.Schema) error {
	type bound struct {
		name string
		v    *float64
		excl bool
	}
	// tighter picks the binding bound of two: the larger lower bound (less is true for the
	// upper bounds), or at a tie the exclusive one.
	tighter := func(a, b bound, less bool) bound {
		switch {
		case a.v == nil:
			return b
		case b.v == nil:
			return a
		case *a.v == *b.v:
			if b.excl {
				return b
			}
			return a
		case (*b.v > *a.v) != less:
			return b
		}
		return a
	}
	lo := tighter(bound{"minimum", vs.Minimum, false}, bound{"exclusiveMinimum", vs.ExclusiveMinimum, true}, false)
	hi := tighter(bound{"maximum", vs.Maximum, false}, bound{"exclusiveMaximum", vs.ExclusiveMaximum, true}, true)
	if lo.v != nil && hi.v != nil && (*lo.v > *hi.v || (*lo.v == *hi.v && (lo.excl || hi.excl))) {
		return fmt.Errorf("no number satisfies %s=%v and %s=%v", lo.name, *lo.v, hi.name, *hi.v)
	}
	if vs.MinLength != nil && vs.MaxLength != nil && *vs.MinLength > *vs.MaxLength {
		return fmt.Errorf("minLength=%d exceeds maxLength=%d", *vs.MinLength, *vs.MaxLength)
	}
	if fs.MinItems != nil && fs.MaxItems != nil && *fs.MinItems > *fs.MaxItems {
		return fmt.Errorf("minItems=%d exceeds maxItems=%d", *fs.MinItems, *fs.MaxItems)
	}
	return nil
}

// checkValues makes sure every value the tags named satisfies the field's complete schema: an
// enum member its pattern refuses, or a default above its maximum, is a mistake in the tag.
func (b *schemaBuilder) checkValues(fs *jsonschema.Schema, tv schemaTagValues, fp string) error {
	if len(tv.defaults) == 0 && (tv.values == nil || (tv.values.Enum == nil && tv.values.Const == nil)) {
		return nil
	}
	check := func(s *jsonschema.Schema, v any, key string) error {
		c, err := compileSchema(s)
		if err != nil {
			return b.errorf(fp, "schema tag", "the field's schema does not compile: %v", err)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return b.errorf(fp, "schema tag "+key, "%v", err)
		}
		inst, err := decodeInstance(raw)
		if err != nil {
			return b.errorf(fp, "schema tag "+key, "%v", err)
		}
		if err := c.Validate(inst); err != nil {
			return b.errorf(fp, "schema tag "+key, "the value %s does not satisfy the field's schema: %s", raw, firstCause(err))
		}
		return nil
	}
	if vs := tv.values; vs != nil {
		// The values are checked against the other constraints alone.
		rest := *vs
		rest.Enum, rest.Const = nil, nil
		for _, v := range vs.Enum {
			if err := check(&rest, v, "enum"); err != nil {
				return err
			}
		}
		if vs.Const != nil {
			if err := check(&rest, *vs.Const, "const"); err != nil {
				return err
			}
		}
	}
	for _, d := range tv.defaults {
		if err := check(fs, d.v, d.key); err != nil {
			return err
		}
	}
	return nil
}
