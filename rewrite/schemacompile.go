package rewrite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/remedy-go/remedy"
	jsv "github.com/santhosh-tekuri/jsonschema/v6"
)

// Bounds on the schemas the loop checks arguments against, and on what it checks. A schema
// comes from the server (an OpenAPI document, tools/list): what it makes the client do is
// bounded as a response body is.
const (
	// schemaMaxBytes bounds a schema: a larger one is not compiled, and the arguments are
	// sent unchecked.
	schemaMaxBytes = 256 << 10
	// schemaCacheEntries and schemaCacheBytes bound the compiled schemas kept: a few hundred
	// operations' worth, whatever the schemas a server lists.
	schemaCacheEntries = 256
	schemaCacheBytes   = 8 << 20
	// checkMaxArgs bounds the arguments checked: larger ones are sent unchecked.
	checkMaxArgs = 1 << 20
	// checkNumberMaxLen and checkNumberMaxExp bound the numbers the validator computes with
	// (exact rationals: a thousand-digit exponent costs seconds), as the server bounds them.
	checkNumberMaxLen = 128
	checkNumberMaxExp = 1000
	// schemaMaxDepth bounds how deep a schema nests (JSON levels): the compiler's work grows
	// much faster than the depth (5000 levels took minutes), and no real schema nears it.
	schemaMaxDepth = 128
)

// argsSchemaURL names the one resource an arguments schema is compiled as. Nothing is ever
// loaded from it or from any other URL (see noLoader).
const argsSchemaURL = "mem:///arguments.json"

// compiledSchema is an arguments schema compiled once, or why it could not be.
type compiledSchema struct {
	sch *jsv.Schema // nil when it did not compile: arguments are sent unchecked
	err error
}

// schemaCache keeps compiled schemas by their bytes, so that each schema is compiled once
// however many calls carry it. A full cache forgets an arbitrary entry (Go's map order) for
// each new one: no schema a server lists can pin the cache, and a working set of a few
// hundred operations stays compiled.
type schemaCache struct {
	mu    sync.RWMutex
	m     map[string]*compiledSchema
	bytes int
}

var argsSchemas = schemaCache{m: map[string]*compiledSchema{}}

// get is raw compiled, from the cache or now.
func (c *schemaCache) get(raw []byte) *compiledSchema {
	c.mu.RLock()
	s := c.m[string(raw)] // no copy of raw: the compiler spots the conversion
	c.mu.RUnlock()
	if s != nil {
		return s
	}
	s = compileArgsSchema(raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[string(raw)]; old != nil {
		return old
	}
	for k := range c.m {
		if len(c.m) < schemaCacheEntries && c.bytes+len(raw) <= schemaCacheBytes {
			break
		}
		delete(c.m, k)
		c.bytes -= len(k)
	}
	c.m[string(raw)] = s
	c.bytes += len(raw)
	return s
}

// compileArgsSchema compiles an arguments schema as draft 2020-12 (unless it names another
// draft), read as OpenAPI 3.0 writes it too (see openAPI30), formats as annotations only, and
// nothing loaded from anywhere: a schema that refers outside itself does not compile. It never
// panics: a schema the compiler chokes on is one that did not compile.
func compileArgsSchema(raw []byte) (out *compiledSchema) {
	if len(raw) > schemaMaxBytes {
		return &compiledSchema{err: fmt.Errorf("the schema is larger than %d bytes", schemaMaxBytes)}
	}
	defer func() {
		if p := recover(); p != nil {
			out = &compiledSchema{err: fmt.Errorf("the schema validator failed: %v", p)}
		}
	}()
	doc, err := jsv.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return &compiledSchema{err: fmt.Errorf("the schema is not JSON: %w", err)}
	}
	if !boundedNumbers(doc) {
		return &compiledSchema{err: errors.New("the schema holds a number beyond the validator's bounds")}
	}
	if !shallow(doc, schemaMaxDepth) {
		return &compiledSchema{err: fmt.Errorf("the schema nests deeper than %d levels", schemaMaxDepth)}
	}
	doc = openAPI30(doc)
	c := jsv.NewCompiler()
	c.DefaultDraft(jsv.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(argsSchemaURL, doc); err != nil {
		return &compiledSchema{err: err}
	}
	sch, err := c.Compile(argsSchemaURL)
	if err != nil {
		return &compiledSchema{err: err}
	}
	return &compiledSchema{sch: sch}
}

// noLoader loads nothing: the compiler's default would read file: URLs, and a schema is the
// server's word, not a licence to read the client's disk (or the network).
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is not loaded: an arguments schema is checked on its own", url)
}

// openAPI30 reads the keywords OpenAPI 3.0 gives another meaning than JSON Schema 2020-12, so
// that a schema from a 3.0 document (OperationsFromOpenAPI keeps its schemas as written) checks
// what the document means: nullable: true adds null to the type (and to an enum), and a
// boolean exclusiveMinimum or exclusiveMaximum makes minimum or maximum exclusive. Nothing else
// in a 3.0 schema refuses a value 2020-12 would accept. It edits doc in place.
func openAPI30(doc any) any {
	switch x := doc.(type) {
	case map[string]any:
		for _, v := range x {
			openAPI30(v)
		}
		if x["nullable"] == true {
			switch t := x["type"].(type) {
			case string:
				if t != "null" {
					x["type"] = []any{t, "null"}
				}
			case []any:
				if !containsValue(t, "null") {
					x["type"] = append(t, "null")
				}
			}
			if e, ok := x["enum"].([]any); ok && !containsValue(e, nil) {
				x["enum"] = append(e, nil)
			}
		}
		for _, kw := range [...][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
			excl, ok := x[kw[0]].(bool)
			if !ok {
				continue
			}
			delete(x, kw[0])
			if bound, has := x[kw[1]]; excl && has {
				x[kw[0]] = bound
				delete(x, kw[1])
			}
		}
	case []any:
		for _, v := range x {
			openAPI30(v)
		}
	}
	return doc
}

func containsValue(list []any, v any) bool {
	for _, e := range list {
		if e == v {
			return true
		}
	}
	return false
}

// boundedNumbers reports whether every number in v (as jsv.UnmarshalJSON decodes it) is within
// what the validator computes with quickly: at most 128 characters, an exponent within ±1000.
func boundedNumbers(v any) bool {
	switch x := v.(type) {
	case json.Number:
		return boundedNumber(string(x))
	case map[string]any:
		for _, e := range x {
			if !boundedNumbers(e) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !boundedNumbers(e) {
				return false
			}
		}
	}
	return true
}

// shallow reports whether v nests no deeper than depth levels.
func shallow(v any, depth int) bool {
	if depth < 0 {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if !shallow(e, depth-1) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !shallow(e, depth-1) {
				return false
			}
		}
	}
	return true
}

func boundedNumber(s string) bool {
	if len(s) > checkNumberMaxLen {
		return false
	}
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return true
	}
	exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	return err == nil && exp >= -checkNumberMaxExp && exp <= checkNumberMaxExp
}

// Violations are the issues of args against schema, as the loop checks a call's arguments
// before sending them: none when they are valid. unchecked says why they were not checked (a
// schema that does not compile, arguments larger than the check reads, a number beyond the
// validator's bounds, a validator that failed); "" when they were.
func Violations(schema, args json.RawMessage) (issues []remedy.Issue, unchecked string) {
	s := argsSchemas.get(schema)
	if s.sch == nil {
		return nil, "the schema does not compile: " + s.err.Error()
	}
	if len(args) > checkMaxArgs {
		return nil, "the arguments are larger than the check reads"
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	inst, err := jsv.UnmarshalJSON(bytes.NewReader(args))
	if err != nil || !boundedNumbers(inst) {
		return nil, "the arguments hold a number beyond the validator's bounds"
	}
	issues, ok := validateArgs(s.sch, inst)
	if !ok {
		return issues, "the schema validator failed"
	}
	return issues, ""
}

// validateArgs validates inst against sch and lists the violations; ok is false when the
// validator panicked (a bug of its own, which must not end the call).
func validateArgs(sch *jsv.Schema, inst any) (issues []remedy.Issue, ok bool) {
	defer func() {
		if recover() != nil {
			issues, ok = nil, false
		}
	}()
	err := sch.Validate(inst)
	if err == nil {
		return nil, true
	}
	var ve *jsv.ValidationError
	if !errors.As(err, &ve) {
		return []remedy.Issue{{Code: "invalid", Message: "the arguments are invalid: " + err.Error()}}, true
	}
	return schemaIssues(ve, inst), true
}
