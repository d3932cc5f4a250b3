package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/remedy-go/remedy/internal/boundread"
	"github.com/remedy-go/remedy/internal/httpop"
	"github.com/remedy-go/remedy/internal/oadoc"
)

// maxOpenAPIDocument bounds the document LoadOpenAPI reads: 8 MiB.
const maxOpenAPIDocument = 8 << 20

// openAPIAccept asks for the document in JSON, else in YAML under any of the media types in
// use for it, else as whatever the server has: what arrives is read by its content.
const openAPIAccept = "application/json, application/yaml;q=0.9, application/x-yaml;q=0.9, text/yaml;q=0.9, */*;q=0.5"

// openAPIMethods are the Path Item members that are operations, in the order
// OperationsFromOpenAPI lists them.
var openAPIMethods = [...]string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// oaMaxRefHops bounds a chain of $refs (to parameters, to path items), so that a cycle ends.
const oaMaxRefHops = 16

// ErrExternalRef is wrapped by the error for a document with a $ref (of a path item or a
// parameter) to another document, a file or a URL: only references inside the document
// ("#/components/...") are followed, so a document split over several files must be bundled
// into one first.
var ErrExternalRef = errors.New("a $ref to another document (a file or a URL) is not followed: bundle the document into one file")

// OpenAPISyntaxError is the error for an OpenAPI document that cannot be read: JSON that is
// not valid, or YAML that is not, or that has no JSON equivalent (a key that is a list, an
// infinite number, an alias inside the anchor it names).
type OpenAPISyntaxError struct {
	// Format is what the document was read as: "JSON" when its text starts with "{",
	// "YAML" otherwise (a JSON document is YAML too).
	Format string
	// Line and Column say where the reader stopped, counted from 1; 0 when it does not say
	// (YAML's parser names the line only).
	Line, Column int
	// Msg is the reader's reason.
	Msg string
}

// Error says what is wrong and where: "the document is not valid YAML: line 3: ...".
func (e *OpenAPISyntaxError) Error() string {
	return (&oadoc.SyntaxError{Format: e.Format, Line: e.Line, Column: e.Column, Msg: e.Msg}).Error()
}

// OperationsFromOpenAPI reads the operations of an OpenAPI 3.0 or 3.1 document written in
// JSON or YAML, one Operation per method of every path, sorted by path and then by method
// (get, put, post, delete, options, head, patch, trace).
//
// The notation is told by the content: a document whose text starts with "{" is JSON (or,
// when it is not valid JSON, a YAML flow mapping), anything else is YAML, one document of it
// (YAML 1.2: keys as written, so a status 200 is "200"; anchors and merge keys expanded).
//
// Name is the operationId; an operation without one is named as the reference server names
// it: the lower-case method, then "_" and each path segment (a {param} by its name), every
// character outside [a-z0-9] lower-cased or replaced by "_" (GET /v1/orders/{order-id} →
// get_v1_orders_order_id). Path is the template as written. Query lists the parameters that
// are "in": "query", path-item-level and operation-level merged, $refs to
// #/components/parameters resolved. The template decides which arguments go into the path:
// a declared path parameter the template lacks is ignored, and so is a query parameter that
// the template names. Header and cookie parameters are left out (the loop sets its own
// headers); servers are not read.
//
// Keys is KeysHonoured when the operation declares that it honours idempotency keys: an
// Idempotency-Key header parameter (the name in any case; path-item-level or the operation's
// own, $refs resolved), or an x-idempotency-key extension on the operation that is true,
// "optional" or "required" (remedy lint and the conformance kit read both signals the same
// way). Otherwise it is KeysUnknown: a header of another name (X-Idempotency-Key) is not the
// one the loop sends.
//
// For a model (see package tools), Description is the summary, else the description; Parameters is
// one object schema of the arguments: the path and query parameters' schemas and the JSON
// request body's properties, with local $refs inlined (a reference that cycles or does not
// resolve becomes an empty schema: any value); Errors are x-agent-error-codes, each with its
// status, retryability and hint from the document's x-agent-errors catalog or, without one,
// the status of the response that lists it. A schema the document gets wrong is left out,
// never a reason to refuse the document.
//
// A path item that is a $ref is read where it points: #/components/pathItems/<name> (OpenAPI
// 3.1) or anywhere else in the same document.
//
// The document is refused, with an error saying why, when it is neither JSON nor YAML (an
// *OpenAPISyntaxError naming the line, and the column where the reader gives one), it is not
// an object, its openapi member is missing or not 3.x (a Swagger 2.0 document included), a
// path does not start with "/" or has a malformed {parameter}, two operations share a name,
// a path item's $ref does not resolve in the document, or a parameter's $ref points anywhere
// but to an existing #/components/parameters entry (or the references go round in a cycle).
// A $ref to another document, a file or a URL, is not followed: the error wraps
// ErrExternalRef. Other members, extensions included, are ignored.
func OperationsFromOpenAPI(doc []byte) ([]Operation, error) {
	ops, err := parseOpenAPI(doc, "")
	if err != nil {
		return nil, fmt.Errorf("remedy: OpenAPI: %w", err)
	}
	return ops, nil
}

// LoadOpenAPI fetches the OpenAPI document at docURL with the client's http.Client (GET,
// Accept: JSON first, then YAML), reads its operations as OperationsFromOpenAPI does (JSON or
// YAML, told by the content; a Content-Type naming YAML only decides which error is reported
// for a document that neither reads), registers each (replacing an operation already
// registered under the same name) and returns how many it registered.
//
// A relative docURL is resolved against the client's base URL by RFC 3986: "/openapi.json"
// is at the root of the base URL's host, "openapi.json" under the base URL's path when that
// ends in "/". A client without a base URL loads nothing: its operations would have nowhere to
// go (OperationsFromOpenAPI reads a document's operations without a client).
//
// The document's servers are ignored: operations are sent under the client's base URL, which
// must therefore include any path prefix the servers entry names ("https://api.example.com/v2"
// for servers: [{"url": "/v2"}]).
//
// A status other than 2xx, a document larger than 8 MiB or one that
// OperationsFromOpenAPI refuses is an error, and then no operation is registered.
func (c *Client) LoadOpenAPI(ctx context.Context, docURL string) (int, error) {
	u, err := url.Parse(docURL)
	if err != nil {
		return 0, fmt.Errorf("remedy: OpenAPI document URL %q: %w", docURL, err)
	}
	if c.base == nil {
		return 0, errors.New("remedy: the client has no base URL (WithBaseURL): the document's operations would have nowhere to go")
	}
	u = c.base.ResolveReference(u)
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 0, fmt.Errorf("remedy: OpenAPI document URL %q is not an http(s) URL", docURL)
	}
	where := u.Redacted()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, fmt.Errorf("remedy: OpenAPI document %s: %w", where, err)
	}
	req.Header.Set("Accept", openAPIAccept)
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("remedy: fetching the OpenAPI document: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		discard(resp.Body)
		return 0, fmt.Errorf("remedy: OpenAPI document %s: status %s", where, resp.Status)
	}
	tooLarge := fmt.Errorf("remedy: OpenAPI document %s is larger than the %d MiB limit", where, maxOpenAPIDocument>>20)
	if resp.ContentLength > maxOpenAPIDocument {
		resp.Body.Close()
		return 0, tooLarge
	}
	doc, err := boundread.Read(resp.Body, maxOpenAPIDocument+1, resp.ContentLength)
	resp.Body.Close()
	if err != nil {
		return 0, fmt.Errorf("remedy: reading the OpenAPI document %s: %w", where, err)
	}
	if len(doc) > maxOpenAPIDocument {
		return 0, tooLarge
	}
	ops, err := parseOpenAPI(doc, resp.Header.Get("Content-Type"))
	if err != nil {
		return 0, fmt.Errorf("remedy: OpenAPI document %s: %w", where, err)
	}
	// parseOpenAPI checked everything Register checks, so no operation is refused halfway.
	for i, op := range ops {
		if err := c.Register(op); err != nil {
			return i, err
		}
	}
	return len(ops), nil
}

// oaParam is what a parameter contributes to an Operation: its name and where it goes, and
// for a model, whether it is required, its description and its schema.
type oaParam struct {
	name, in    string
	required    bool
	description string
	schema      json.RawMessage
}

// oaDoc is a document being read: its members, and the parameters its $refs may point to.
type oaDoc struct {
	top    map[string]json.RawMessage
	comps  map[string]json.RawMessage // components.parameters, once read
	compOK bool
	root   map[string]any // the whole document decoded, once a schema's $ref needs it
	work   int            // what is left of the inlining budget of the operation being read
}

// parseOpenAPI reads a document in JSON or YAML; contentType is the media type it was served
// with, or "".
func parseOpenAPI(doc []byte, contentType string) ([]Operation, error) {
	doc, format, err := oadoc.ToJSON(doc, contentType)
	if err != nil {
		var syn *oadoc.SyntaxError
		if errors.As(err, &syn) {
			return nil, &OpenAPISyntaxError{Format: syn.Format, Line: syn.Line, Column: syn.Column, Msg: syn.Msg}
		}
		return nil, err
	}
	if t := bytes.TrimLeft(doc, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("the document must be one object (a JSON object or a YAML mapping), and this %s document is not", format)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, fmt.Errorf("the document is not valid JSON: %w", err)
	}
	if err := checkOpenAPIVersion(top); err != nil {
		return nil, err
	}
	paths, err := oaMembers(top["paths"], "paths")
	if err != nil {
		return nil, err
	}
	d := &oaDoc{top: top}
	var ops []Operation
	owner := map[string]string{} // name → "METHOD /path" of the operation that has it
	for _, path := range slices.Sorted(maps.Keys(paths)) {
		if !strings.HasPrefix(path, "/") {
			return nil, fmt.Errorf("path %q must start with /", path)
		}
		tmpl, err := pathParams(path)
		if err != nil {
			return nil, err
		}
		item, err := d.pathItem(paths[path], path)
		if err != nil {
			return nil, err
		}
		for _, method := range openAPIMethods {
			raw, ok := item[method]
			if !ok || oaNull(raw) {
				continue
			}
			where := strings.ToUpper(method) + " " + path
			obj, err := oaMembers(raw, "operation "+where)
			if err != nil {
				return nil, err
			}
			name, err := oaOperationName(obj, method, path)
			if err != nil {
				return nil, fmt.Errorf("operation %s: %w", where, err)
			}
			if prev, ok := owner[name]; ok {
				return nil, fmt.Errorf("operationId %q is used by both %s and %s", name, prev, where)
			}
			owner[name] = where
			params, err := d.mergedParams(item["parameters"], obj["parameters"])
			if err != nil {
				return nil, fmt.Errorf("operation %q (%s): %w", name, where, err)
			}
			var query []string
			var keyHeader, keyRequired bool
			for _, p := range params {
				if p.in == "query" && p.name != "" && !slices.Contains(tmpl, p.name) && !slices.Contains(query, p.name) {
					query = append(query, p.name)
				}
				if oadoc.KeyHeader(p.in, p.name) {
					keyHeader, keyRequired = true, keyRequired || p.required
				}
			}
			keys := KeysUnknown
			if oadoc.KeyMode(decodeAny(obj["x-idempotency-key"]), keyHeader, keyRequired) != oadoc.KeyNone {
				keys = KeysHonoured
			}
			ops = append(ops, Operation{Name: name, Method: strings.ToUpper(method), Path: path, Query: query,
				Description: oaDescription(obj), Parameters: d.arguments(params, tmpl, obj["requestBody"]),
				Errors: d.errorCodes(obj), Keys: keys})
		}
	}
	return ops, nil
}

// pathItem reads the path item of path, following its $ref: a Path Item Object may be a
// reference, to #/components/pathItems/<name> (OpenAPI 3.1) or anywhere else in the same
// document. Members written beside the $ref (a summary, parameters) add to the item
// referred to, which wins where both have one.
func (d *oaDoc) pathItem(raw json.RawMessage, path string) (map[string]json.RawMessage, error) {
	what := fmt.Sprintf("path item %q", path)
	item, err := oaMembers(raw, what)
	if err != nil {
		return nil, err
	}
	var seen []string
	for {
		refRaw, ok := item["$ref"]
		if !ok {
			return item, nil
		}
		var ref string
		if json.Unmarshal(refRaw, &ref) != nil {
			return nil, fmt.Errorf("%s: $ref is not a string", what)
		}
		if slices.Contains(seen, ref) || len(seen) >= oaMaxRefHops {
			return nil, fmt.Errorf("%s: $ref %q: the references go round in a cycle or too deep", what, ref)
		}
		seen = append(seen, ref)
		targetRaw, err := d.lookup(ref)
		if err != nil {
			return nil, fmt.Errorf("%s: $ref %q: %w", what, ref, err)
		}
		target, err := oaMembers(targetRaw, fmt.Sprintf("%s: $ref %q", what, ref))
		if err != nil {
			return nil, err
		}
		if target == nil {
			return nil, fmt.Errorf("%s: $ref %q names null, not a path item", what, ref)
		}
		merged := maps.Clone(target)
		for k, v := range item {
			if _, has := merged[k]; !has && k != "$ref" {
				merged[k] = v
			}
		}
		item = merged
	}
}

// lookup finds what a local reference names: "#" then a JSON Pointer (RFC 6901) into the
// document, percent-encoding allowed as in any URI fragment. A reference to another document
// wraps ErrExternalRef.
func (d *oaDoc) lookup(ref string) (json.RawMessage, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, ErrExternalRef
	}
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, errors.New("not a JSON Pointer into the document (#/...)")
	}
	var cur json.RawMessage
	obj := d.top
	for i, tok := range strings.Split(frag[1:], "/") {
		name, err := oaUnescape(tok)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			if t := bytes.TrimSpace(cur); len(t) > 0 && t[0] == '[' {
				var elems []json.RawMessage
				n, err := strconv.Atoi(name)
				if json.Unmarshal(cur, &elems) != nil || err != nil || n < 0 || n >= len(elems) {
					return nil, errors.New("the document has nothing there")
				}
				cur = elems[n]
				continue
			}
			if obj, err = oaMembers(cur, "a step of the reference"); err != nil {
				return nil, errors.New("the document has nothing there")
			}
		}
		var ok bool
		if cur, ok = obj[name]; !ok {
			return nil, errors.New("the document has nothing there")
		}
	}
	return cur, nil
}

func checkOpenAPIVersion(top map[string]json.RawMessage) error {
	raw, ok := top["openapi"]
	if !ok {
		if sw, ok := top["swagger"]; ok {
			return fmt.Errorf("the document is Swagger %s; only OpenAPI 3.x is read", oaVersionText(sw))
		}
		return errors.New("the document has no openapi member; only OpenAPI 3.x is read")
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("the openapi member is %s, not a version string; only OpenAPI 3.x is read", oaVersionText(raw))
	}
	if !strings.HasPrefix(v, "3.") {
		return fmt.Errorf("the document is OpenAPI %q; only OpenAPI 3.x is read", v)
	}
	return nil
}

// oaVersionText is a version member for a message: a string's text, anything else as written,
// cut short.
func oaVersionText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		s = string(raw)
	}
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// oaOperationName is an operation's operationId or, without one, the name the reference server
// derives.
func oaOperationName(obj map[string]json.RawMessage, method, path string) (string, error) {
	if raw, ok := obj["operationId"]; ok && !oaNull(raw) {
		var id string
		if err := json.Unmarshal(raw, &id); err != nil {
			return "", errors.New("operationId is not a string")
		}
		if id != "" {
			return id, nil
		}
	}
	return httpop.Name(method, path), nil
}

// mergedParams is the path item's parameters with the operation's. One of the operation's
// replaces the path item's of the same name and location.
func (d *oaDoc) mergedParams(itemRaw, opRaw json.RawMessage) ([]oaParam, error) {
	merged, err := d.params(itemRaw, "the path item's parameters")
	if err != nil {
		return nil, err
	}
	own, err := d.params(opRaw, "parameters")
	if err != nil {
		return nil, err
	}
	for _, p := range own {
		// The operation's replaces the path item's of the same name and location.
		merged = slices.DeleteFunc(merged, func(q oaParam) bool { return q.name == p.name && q.in == p.in })
		merged = append(merged, p)
	}
	return merged, nil
}

// params reads a parameters array, resolving $refs.
func (d *oaDoc) params(raw json.RawMessage, what string) ([]oaParam, error) {
	if len(raw) == 0 || oaNull(raw) {
		return nil, nil
	}
	var elems []json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '[' {
		return nil, fmt.Errorf("%s is not an array", what)
	}
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out := make([]oaParam, 0, len(elems))
	for i, el := range elems {
		p, err := d.param(el)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", what, i, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// param reads one Parameter Object, following a chain of $refs to components.parameters.
func (d *oaDoc) param(raw json.RawMessage) (oaParam, error) {
	var seen []string
	for {
		obj, err := oaMembers(raw, "the parameter")
		if err != nil {
			return oaParam{}, err
		}
		refRaw, ok := obj["$ref"]
		if !ok {
			name, err := oaString(obj, "name")
			if err != nil {
				return oaParam{}, err
			}
			in, err := oaString(obj, "in")
			if err != nil {
				return oaParam{}, err
			}
			p := oaParam{name: name, in: in, schema: obj["schema"]}
			// For a model only: a description or required flag of the wrong type is left out.
			_ = json.Unmarshal(obj["required"], &p.required)
			_ = json.Unmarshal(obj["description"], &p.description)
			return p, nil
		}
		var ref string
		if json.Unmarshal(refRaw, &ref) != nil {
			return oaParam{}, errors.New("$ref is not a string")
		}
		if slices.Contains(seen, ref) || len(seen) >= oaMaxRefHops {
			return oaParam{}, fmt.Errorf("$ref %q: the references go round in a cycle or too deep", ref)
		}
		seen = append(seen, ref)
		if raw, err = d.resolve(ref); err != nil {
			return oaParam{}, fmt.Errorf("$ref %q: %w", ref, err)
		}
	}
}

func oaString(obj map[string]json.RawMessage, name string) (string, error) {
	raw, ok := obj[name]
	if !ok || oaNull(raw) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("the parameter's %s is not a string", name)
	}
	return s, nil
}

// resolve finds the component a $ref names: only "#/components/parameters/<name>", the name
// a JSON Pointer token (RFC 6901: ~1 for "/", ~0 for "~").
func (d *oaDoc) resolve(ref string) (json.RawMessage, error) {
	const prefix = "#/components/parameters/"
	if !strings.HasPrefix(ref, "#") {
		return nil, ErrExternalRef
	}
	tok, ok := strings.CutPrefix(ref, prefix)
	if !ok || strings.Contains(tok, "/") {
		return nil, errors.New("only references to " + prefix + "<name> in the same document are read")
	}
	name, err := oaUnescape(tok)
	if err != nil {
		return nil, err
	}
	if !d.compOK {
		comps, err := oaMembers(d.top["components"], "components")
		if err != nil {
			return nil, err
		}
		if d.comps, err = oaMembers(comps["parameters"], "components.parameters"); err != nil {
			return nil, err
		}
		d.compOK = true
	}
	raw, ok := d.comps[name]
	if !ok {
		return nil, fmt.Errorf("components.parameters has no %q", name)
	}
	return raw, nil
}

// oaUnescape decodes a JSON Pointer reference token.
func oaUnescape(tok string) (string, error) {
	if !strings.Contains(tok, "~") {
		return tok, nil
	}
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		if tok[i] != '~' {
			b.WriteByte(tok[i])
			continue
		}
		if i+1 == len(tok) || (tok[i+1] != '0' && tok[i+1] != '1') {
			return "", errors.New("a ~ in a JSON Pointer must be followed by 0 or 1")
		}
		if tok[i+1] == '0' {
			b.WriteByte('~')
		} else {
			b.WriteByte('/')
		}
		i++
	}
	return b.String(), nil
}

// oaMembers reads a JSON object's members; absent and null are empty.
func oaMembers(raw json.RawMessage, what string) (map[string]json.RawMessage, error) {
	if len(raw) == 0 || oaNull(raw) {
		return nil, nil
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("%s is not an object", what)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return m, nil
}

func oaNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }
