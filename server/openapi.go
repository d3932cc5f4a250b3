package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/httpop"
)

// Info describes the API in its OpenAPI document and to MCP clients.
type Info struct {
	Title       string // default "API"
	Version     string // default "0.0.0"
	Description string
}

// WithInfo sets the API's title, version and description.
func WithInfo(i Info) Option { return func(a *API) error { a.info = i; return nil } }

// DefaultOpenAPIPath is where an API serves its OpenAPI document unless WithOpenAPIPath says
// otherwise.
const DefaultOpenAPIPath = "/openapi.json"

// WithOpenAPIPath serves the OpenAPI document at path (default DefaultOpenAPIPath); "" does not
// serve it. No operation may be registered at that path. A path that does not begin with "/"
// is an error.
func WithOpenAPIPath(path string) Option {
	return func(a *API) error {
		if path != "" && !strings.HasPrefix(path, "/") {
			return fmt.Errorf("WithOpenAPIPath: the path %q does not begin with /", path)
		}
		a.openapiPath = path
		return nil
	}
}

// OpenAPI returns the API's OpenAPI 3.1.0 document, as served at its OpenAPI path: every
// operation with its operationId, summary, parameters and body (the schemas that validate
// them), its success, and every error it may be answered with (API.Emits) grouped by status,
// each described by the envelope schema of components. Operations carry the agent
// extensions: x-agent-error-codes (the code list), x-confirmation-required, x-ax-idempotent
// (a retry cannot repeat the effect: the method is idempotent, or the operation replays calls
// that carry an Idempotency-Key), x-ax-retryable (a failed call may be retried unchanged
// without risk of a second effect: the method is idempotent, or every call must carry a key
// the operation replays) and, for the confirmation flow, the description of the
// 409 handshake and the X-Confirmation-Token header. The document is built once, at the first
// call, from the operations registered by then. An error says a schema would not encode.
func (a *API) OpenAPI() ([]byte, error) {
	a.docOnce.Do(func() { a.doc, a.docErr = a.buildOpenAPI() })
	return a.doc, a.docErr
}

// serveOpenAPI answers GET and HEAD of the document path.
func (a *API) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		x := &exchange{api: a, w: w, r: r, ctx: r.Context()}
		p := Error(CodeMethodNotAllowed, r.Method+" is not allowed at "+r.URL.Path+"; allowed: GET, HEAD")
		p.Header = map[string]string{"Allow": "GET, HEAD"}
		x.fail(p)
		return
	}
	doc, err := a.OpenAPI()
	if err != nil {
		x := &exchange{api: a, w: w, r: r, ctx: r.Context()}
		x.fail(err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(doc)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		w.Write(doc)
	}
}

type oaDoc struct {
	OpenAPI    string                      `json:"openapi"`
	Info       oaInfo                      `json:"info"`
	Paths      map[string]map[string]*oaOp `json:"paths"`
	Components oaComponents                `json:"components"`
	Codes      []string                    `json:"x-agent-error-codes"`
	Errors     map[string]oaCode           `json:"x-agent-errors"`
}

// oaCode is one code of the x-agent-errors catalog.
type oaCode struct {
	Status    int    `json:"status"`
	Retryable bool   `json:"retryable"`
	Severity  string `json:"severity"`
	Category  string `json:"category,omitempty"`
	Hint      string `json:"hint,omitempty"`
}

type oaInfo struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
}

type oaComponents struct {
	Schemas    map[string]json.RawMessage `json:"schemas"`
	Parameters map[string]*oaParam        `json:"parameters"`
	Headers    map[string]*oaHeader       `json:"headers"`
}

type oaOp struct {
	OperationID string                 `json:"operationId"`
	Summary     string                 `json:"summary,omitempty"`
	Description string                 `json:"description,omitempty"`
	Parameters  []*oaParam             `json:"parameters,omitempty"`
	RequestBody *oaBody                `json:"requestBody,omitempty"`
	Responses   map[string]*oaResponse `json:"responses"`
	Codes       []string               `json:"x-agent-error-codes"`
	Confirm     bool                   `json:"x-confirmation-required"`
	Person      bool                   `json:"x-person-required,omitempty"` // RequirePerson: no token confirms it
	Idempotent  bool                   `json:"x-ax-idempotent"`
	Retryable   bool                   `json:"x-ax-retryable"`
	KeyMode     string                 `json:"x-idempotency-key,omitempty"`
	Async       bool                   `json:"x-remedy-async,omitempty"` // answered 202, polled (async.go)
}

type oaParam struct {
	Ref         string          `json:"$ref,omitempty"`
	Name        string          `json:"name,omitempty"`
	In          string          `json:"in,omitempty"`
	Description string          `json:"description,omitempty"`
	Required    bool            `json:"required,omitempty"`
	Explode     *bool           `json:"explode,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
}

type oaBody struct {
	Required bool                   `json:"required"`
	Content  map[string]oaMediaType `json:"content"`
}

type oaMediaType struct {
	Schema json.RawMessage `json:"schema,omitempty"`
}

type oaResponse struct {
	Description string                 `json:"description"`
	Headers     map[string]*oaHeader   `json:"headers,omitempty"`
	Content     map[string]oaMediaType `json:"content,omitempty"`
	Codes       []string               `json:"x-agent-error-codes,omitempty"`
}

type oaHeader struct {
	Ref         string          `json:"$ref,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
}

func (a *API) buildOpenAPI() ([]byte, error) {
	doc := oaDoc{
		OpenAPI: "3.1.0",
		Info:    oaInfo{Title: a.info.Title, Version: a.info.Version, Description: a.info.Description},
		Paths:   map[string]map[string]*oaOp{},
		Components: oaComponents{
			Schemas: map[string]json.RawMessage{
				"Envelope": json.RawMessage(envelopeSchema),
				"Problem":  json.RawMessage(problemSchema),
				"Failure":  json.RawMessage(failureSchema),
				"Issue":    json.RawMessage(issueSchema),
			},
			Parameters: map[string]*oaParam{
				"IdempotencyKey": {Name: remedy.HeaderIdempotencyKey, In: "header",
					Description: "One unique key per logical call, reused for every retry of that call (1 to 255 printable ASCII characters; bare or an RFC 8941 string).",
					Schema:      json.RawMessage(`{"type":"string","minLength":1}`)},
				"IdempotencyKeyRequired": {Name: remedy.HeaderIdempotencyKey, In: "header", Required: true,
					Description: "One unique key per logical call, reused for every retry of that call (1 to 255 printable ASCII characters; bare or an RFC 8941 string).",
					Schema:      json.RawMessage(`{"type":"string","minLength":1}`)},
				"ConfirmationToken": {Name: remedy.HeaderConfirmationToken, In: "header",
					Description: "The confirmationToken of a 409 confirmation_required answer, sent with the identical call once the user approved it. Single-use.",
					Schema:      json.RawMessage(`{"type":"string","maxLength":256}`)},
			},
			Headers: map[string]*oaHeader{
				"RetryAfter": {Description: "Seconds to wait before retrying (the envelope's retry_after_ms says it to the millisecond).",
					Schema: json.RawMessage(`{"type":"integer","minimum":0}`)},
				"IdempotencyReplayed": {Description: "true when the response is the stored result of an earlier call with the same Idempotency-Key, not a new execution.",
					Schema: json.RawMessage(`{"type":"string","enum":["true"]}`)},
			},
		},
		Errors: map[string]oaCode{},
	}
	if doc.Info.Title == "" {
		doc.Info.Title = "API"
	}
	if doc.Info.Version == "" {
		doc.Info.Version = "0.0.0"
	}
	all := []string{CodeNotFound, CodeMethodNotAllowed}
	for _, op := range a.ops {
		o, codes := a.openAPIOperation(op)
		item := doc.Paths[op.Path]
		if item == nil {
			item = map[string]*oaOp{}
			doc.Paths[op.Path] = item
		}
		item[strings.ToLower(op.Method)] = o
		for _, c := range codes {
			all = appendNew(all, c.Code)
		}
	}
	for _, n := range all {
		if c, ok := a.reg.Lookup(n); ok {
			doc.Errors[c.Code] = oaCode{Status: c.Status, Retryable: c.Retryable, Severity: string(c.severity()),
				Category: string(c.Category), Hint: c.Hint}
		}
	}
	slices.Sort(all)
	doc.Codes = all
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("server: encoding the OpenAPI document: %w", err)
	}
	return b, nil
}

// openAPIOperation describes one operation, and returns the codes it may emit.
func (a *API) openAPIOperation(op *Operation) (*oaOp, []Code) {
	codes := a.Emits(op)
	o := &oaOp{
		OperationID: op.ID,
		Summary:     op.Summary,
		Description: a.protocolNotes(op, "the "+remedy.HeaderConfirmationToken+" header", "the "+remedy.HeaderIdempotencyKey+" header"),
		Responses:   map[string]*oaResponse{},
		Codes:       codeNames(codes),
		Confirm:     op.Confirm,
		Person:      op.Person,
		Idempotent:  httpop.Idempotent(op.Method) || op.Idempotency != IdempotencyOff,
	}
	// Retried unchanged, a call without a key runs again where the key is optional.
	o.Retryable = httpop.Idempotent(op.Method) || op.Idempotency == IdempotencyRequired
	switch op.Idempotency {
	case IdempotencyOptional:
		o.KeyMode = "optional"
		o.Parameters = append(o.Parameters, &oaParam{Ref: "#/components/parameters/IdempotencyKey"})
	case IdempotencyRequired:
		o.KeyMode = "required"
		o.Parameters = append(o.Parameters, &oaParam{Ref: "#/components/parameters/IdempotencyKeyRequired"})
	}
	if op.Confirm && !op.Person {
		o.Parameters = append(o.Parameters, &oaParam{Ref: "#/components/parameters/ConfirmationToken"})
	}
	for _, p := range op.params {
		s := op.schema.Properties[p.Name]
		param := &oaParam{Name: p.Name, In: p.In, Required: p.In == "path" || slices.Contains(op.schema.Required, p.Name), Schema: mustJSON(s)}
		if s != nil {
			param.Description = s.Description
		}
		if p.In == "query" && s != nil && s.Type == "array" {
			param.Explode = ptr(true)
		}
		o.Parameters = append(o.Parameters, param)
	}
	if body := bodySchema(op); body != nil {
		o.RequestBody = &oaBody{Required: len(body.Required) > 0,
			Content: map[string]oaMediaType{"application/json": {Schema: mustJSON(body)}}}
	}
	success := &oaResponse{Description: "Success."}
	if op.Idempotency != IdempotencyOff {
		success.Headers = map[string]*oaHeader{remedy.HeaderReplayed: {Ref: "#/components/headers/IdempotencyReplayed"}}
	}
	if op.Status != http.StatusNoContent {
		success.Content = map[string]oaMediaType{"application/json": {Schema: outputSchema(op)}}
	}
	o.Responses[strconv.Itoa(op.Status)] = success
	asyncDoc(o, op)
	for i := 0; i < len(codes); {
		j := i
		for j < len(codes) && codes[j].Status == codes[i].Status {
			j++
		}
		o.Responses[strconv.Itoa(codes[i].Status)] = errorResponse(codes[i:j])
		i = j
	}
	return o, codes
}

// errorResponse describes the codes that share one status.
func errorResponse(codes []Code) *oaResponse {
	var b strings.Builder
	fmt.Fprintf(&b, "%s. The body is the error envelope; its code is one of:", http.StatusText(codes[0].Status))
	retryAfter := false
	for _, c := range codes {
		b.WriteString("\n- ")
		b.WriteString(catalogLine(c))
		retryAfter = retryAfter || c.Status == http.StatusTooManyRequests || c.Status == http.StatusServiceUnavailable || c.Code == CodeIdempotencyInFlight
	}
	r := &oaResponse{
		Description: b.String(),
		Content: map[string]oaMediaType{
			"application/json":        {Schema: json.RawMessage(`{"$ref":"#/components/schemas/Envelope"}`)},
			remedy.ProblemContentType: {Schema: json.RawMessage(`{"$ref":"#/components/schemas/Problem"}`)},
		},
		Codes: codeNames(codes),
	}
	if retryAfter {
		r.Headers = map[string]*oaHeader{"Retry-After": {Ref: "#/components/headers/RetryAfter"}}
	}
	return r
}

// bodySchema is the schema of op's request body: its input schema without the URL
// parameters, or nil when no member is left.
func bodySchema(op *Operation) *jsonschema.Schema {
	if len(op.params) == 0 {
		if len(op.schema.Properties) == 0 {
			return nil
		}
		return op.schema
	}
	s := *op.schema
	s.Properties = make(map[string]*jsonschema.Schema, len(op.schema.Properties))
	for name, p := range op.schema.Properties {
		if !op.isParam(name) {
			s.Properties[name] = p
		}
	}
	if len(s.Properties) == 0 {
		return nil
	}
	s.Required = slices.DeleteFunc(slices.Clone(s.Required), op.isParam)
	s.PropertyOrder = slices.DeleteFunc(slices.Clone(s.PropertyOrder), op.isParam)
	return &s
}

// outputSchema is the schema of op's result type, or an empty schema (anything) when the type
// has none a JSON Schema can state.
func outputSchema(op *Operation) json.RawMessage {
	if s, err := jsonschema.ForType(op.out, nil); err == nil {
		if b, err := json.Marshal(s); err == nil {
			return b
		}
	}
	return json.RawMessage(`{}`)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// The envelope's JSON Schemas: the canonical {"error":{...}} form and RFC 9457 problem details
// with the same members as extensions.
const (
	issueSchema = `{"type":"object","required":["pointer"],"properties":{` +
		`"path":{"type":"array","items":{"type":["string","integer"]},"description":"The field at fault, as segments."},` +
		`"pointer":{"type":"string","description":"The field at fault, as an RFC 6901 JSON Pointer into the arguments."},` +
		`"code":{"type":"string","description":"The rule broken (required, enum, maximum, ...)."},` +
		`"message":{"type":"string"},` +
		`"expected":{"description":"What the field must be: a schema fragment."},` +
		`"received":{"description":"What was sent."},` +
		`"allowed_values":{"type":"array","description":"The values the field accepts."},` +
		`"suggested_value":{"description":"A value that would be accepted and keeps what the caller meant; never a violated bound (see expected)."}}}`
	sharedMembers = `"code":{"type":"string","description":"Stable machine code; see x-agent-errors."},` +
		`"issues":{"type":"array","items":{"$ref":"#/components/schemas/Issue"}},` +
		`"schema":{"description":"The violated section of the input schema."},` +
		`"retryable":{"type":"boolean","description":"Whether the same request, sent again unchanged, can succeed later. False when the failure names fields to fix (issues): the request has to change."},` +
		`"retry_after_ms":{"type":"number","minimum":0,"description":"How long to wait before retrying."},` +
		`"hint":{"type":"string"},"suggestions":{"type":"array","items":{"type":"string"}},` +
		`"severity":{"type":"string","enum":["error","fatal"]},` +
		`"category":{"type":"string","enum":["validation","auth","rate_limit","state","dependency","internal"]},` +
		`"next_operation":{"type":"string","description":"The operation to run first, by operationId."},` +
		`"next_operation_args":{"type":"object","description":"Its arguments."},` +
		`"confirmationToken":{"type":"string","description":"The single-use token of a confirmation_required answer."},` +
		`"current_status":{"type":"string"},"required_status":{"type":"string"},` +
		`"trace_id":{"type":"string"},"request_id":{"type":"string"},"docs_url":{"type":"string"},` +
		`"related_codes":{"type":"array","items":{"type":"string"}},"example_request":{}`
	failureSchema = `{"type":"object","required":["code","message"],"properties":{` +
		`"statusCode":{"type":"integer"},"type":{"type":"string"},"title":{"type":"string"},"message":{"type":"string"},` +
		sharedMembers + `,"errors":{"type":"array","items":{"$ref":"#/components/schemas/Failure"}}}}`
	envelopeSchema = `{"type":"object","required":["error"],"description":"The error envelope: one failure an agent can act on.",` +
		`"properties":{"error":{"$ref":"#/components/schemas/Failure"}}}`
	problemSchema = `{"type":"object","description":"RFC 9457 problem details with the envelope's members as extensions (sent when Accept asks for application/problem+json).",` +
		`"properties":{"type":{"type":"string"},"title":{"type":"string"},"status":{"type":"integer"},"detail":{"type":"string"},"instance":{"type":"string"},` +
		sharedMembers + `,"errors":{"type":"array","items":{"$ref":"#/components/schemas/Problem"}}}}`
)
