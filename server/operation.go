package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/remedy-go/remedy/internal/httpop"
)

// Operation is one registered operation, as the pipeline, the OpenAPI document and the MCP
// tools see it.
type Operation struct {
	ID      string // the operation id (default: method and path in snake_case)
	Method  string
	Path    string // the path template, with {name} for each path parameter
	Summary string
	Status  int // the success status (default 200)
	// Confirm: the operation runs only on a second, confirmed request (see the Confirm option).
	Confirm bool
	// Person: only a person may confirm the operation, over MCP elicitation; the token
	// handshake is refused (see the RequirePerson option). Person implies Confirm.
	Person bool
	// Idempotency: whether the operation replays a retried request's result (see Idempotent).
	Idempotency IdempotencyMode
	// Async: the operation runs in the background, its call answered 202 Accepted with a
	// status resource to poll (see the Async option).
	Async bool

	in, out   reflect.Type
	schema    *jsonschema.Schema
	params    []param
	validator *validator
	binder    *textBinder // binds the body's text to in; nil when in holds a part it has no rule for
	codes     []string    // the codes the operation may emit, beyond the pipeline's own
	// undeclared are the codes the handler emitted that Errors did not declare, each warned
	// of once.
	undeclared sync.Map
	route      []segment
	call       func(ctx context.Context, in any) (any, error)
}

// InputSchema is the JSON Schema of the operation's input: its body members and its
// parameters, one flat object (what MCP tools take as arguments).
func (o *Operation) InputSchema() *jsonschema.Schema { return o.schema }

// Codes are the error codes the operation declared it may emit.
func (o *Operation) Codes() []string { return slices.Clone(o.codes) }

func (o *Operation) emits(code string) bool { return slices.Contains(o.codes, code) }

// OpOption declares something of an operation at registration (Get, Post, …). Each is named
// by what it declares: a field of the operation's OpenAPI document (OperationID, Summary,
// SuccessStatus, Errors) or a behaviour the operation has (Idempotent, RequireIdempotencyKey,
// Confirm, RequirePerson, Async). A behaviour's settings are the API's, shared by every
// operation that has it: WithIdempotency, WithConfirmation, WithAsync.
type OpOption func(*Operation)

// OperationID names the operation (the REST operationId and the MCP tool name); it must
// match [A-Za-z][A-Za-z0-9_.-]* and be unique in the API.
func OperationID(id string) OpOption { return func(o *Operation) { o.ID = id } }

// Summary is the operation's one-line description.
func Summary(s string) OpOption { return func(o *Operation) { o.Summary = s } }

// Errors declares the codes the handler may emit, beyond those of the pipeline (validation,
// authentication, rate limiting, internal errors). Each must be in the registry. The OpenAPI
// document and the MCP tool descriptions list the declared codes, and only those: a handler
// that returns a code it did not declare is answered all the same, and the API's logger warns
// of it once per operation and code, so that the gap is found before a client meets it.
func Errors(codes ...string) OpOption {
	return func(o *Operation) { o.codes = append(o.codes, codes...) }
}

// IdempotencyMode says how an operation treats the Idempotency-Key header.
type IdempotencyMode int

const (
	// IdempotencyOff: the header is ignored, every request executes.
	IdempotencyOff IdempotencyMode = iota
	// IdempotencyOptional: a request with a key executes once per key; one without executes.
	IdempotencyOptional
	// IdempotencyRequired: a request without a key is refused (400 idempotency_key_required).
	IdempotencyRequired
)

// Confirm makes the operation a two-step handshake, for what is destructive, costly or
// irreversible: a request without a token is answered 409 confirmation_required with a
// single-use token bound to the caller, the operation and the payload as sent (method, path,
// query and the body in canonical JSON, numbers exact); the identical request with the token in
// X-Confirmation-Token executes. A token that is unknown, expired, spent or bound to anything
// else is refused with 409 confirmation_invalid, and spent.
func Confirm() OpOption {
	return func(o *Operation) { o.Confirm = true }
}

// RequirePerson is Confirm for what is truly destructive: the confirmation must come from a
// person, asked by MCP elicitation, and never from a token the caller replays (which a model
// can do by itself). A call over MCP from a client that declared the elicitation capability
// asks the client's user (see Confirm and the README's "A confirmation a person gives"); any
// other call — over REST, from an MCP client without elicitation, or on a stateless MCP
// endpoint with a client of a protocol version before 2026-07-28, where the server cannot
// send requests — is refused with 403 person_required, and no token is ever issued or
// accepted for the operation.
func RequirePerson() OpOption {
	return func(o *Operation) { o.Confirm, o.Person = true, true }
}

// Idempotent makes a request carrying an Idempotency-Key execute once: its retries with the
// same key and payload get the stored success (status, body and the headers that describe
// it) with Idempotency-Replayed: true, and duplicates arriving while it runs wait for it. The
// key is scoped by principal and operation; the same key with another payload is refused
// with 422 idempotency_key_reused. Failures are never stored: a retry after one executes
// again. Requests without a key execute as usual; see RequireIdempotencyKey.
func Idempotent() OpOption {
	return func(o *Operation) { o.Idempotency = max(o.Idempotency, IdempotencyOptional) }
}

// RequireIdempotencyKey is Idempotent, and refuses a request without a key with 400
// idempotency_key_required.
func RequireIdempotencyKey() OpOption {
	return func(o *Operation) { o.Idempotency = IdempotencyRequired }
}

// SuccessStatus sets the status of a success (default 200; 201 for a creation, 202, 204).
func SuccessStatus(status int) OpOption { return func(o *Operation) { o.Status = status } }

// Handler is an operation's implementation: a typed input, already validated against its
// schema, and a typed result or an error (a *Problem, a *remedy.Envelope, or anything else,
// which is answered as internal_error).
type Handler[In, Out any] func(ctx context.Context, in In) (Out, error)

// Get registers a GET operation. See Post.
func Get[In, Out any](a *API, path string, h Handler[In, Out], opts ...OpOption) error {
	return register(a, http.MethodGet, path, h, opts)
}

// Post registers a POST operation at path, a template whose {name} segments bind to In's
// fields tagged `path:"name"`; fields tagged `query:"name"` bind to query parameters, and
// the rest to the JSON body. In must be a struct. The input schema, the route and the
// operation id are checked here, and an error says what is wrong.
func Post[In, Out any](a *API, path string, h Handler[In, Out], opts ...OpOption) error {
	return register(a, http.MethodPost, path, h, opts)
}

// Put registers a PUT operation. See Post.
func Put[In, Out any](a *API, path string, h Handler[In, Out], opts ...OpOption) error {
	return register(a, http.MethodPut, path, h, opts)
}

// Patch registers a PATCH operation. See Post.
func Patch[In, Out any](a *API, path string, h Handler[In, Out], opts ...OpOption) error {
	return register(a, http.MethodPatch, path, h, opts)
}

// Delete registers a DELETE operation. See Post.
func Delete[In, Out any](a *API, path string, h Handler[In, Out], opts ...OpOption) error {
	return register(a, http.MethodDelete, path, h, opts)
}

// appendNew appends the codes list does not hold yet.
func appendNew(list []string, codes ...string) []string {
	for _, c := range codes {
		if !slices.Contains(list, c) {
			list = append(list, c)
		}
	}
	return list
}

var validID = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)

func register[In, Out any](a *API, method, path string, h Handler[In, Out], opts []OpOption) error {
	if h == nil {
		return fmt.Errorf("server: %s %s: the handler is nil", method, path)
	}
	op := &Operation{Method: method, Path: path, Status: http.StatusOK,
		in: reflect.TypeFor[In](), out: reflect.TypeFor[Out]()}
	for _, o := range opts {
		o(op)
	}
	if err := a.add(op); err != nil {
		return fmt.Errorf("server: %s %s: %w", method, path, err)
	}
	op.call = func(ctx context.Context, in any) (any, error) {
		return h(ctx, *in.(*In))
	}
	return nil
}

// add checks an operation and routes to it.
func (a *API) add(op *Operation) error {
	if a.run != nil {
		return errors.New("registered after the API started serving")
	}
	route, err := parseRoute(op.Path)
	if err != nil {
		return err
	}
	if op.Path == a.openapiPath || (op.Path == a.mcpConf.Path && !a.mcpConf.Disabled) {
		return fmt.Errorf("%s is where the API serves its OpenAPI document or MCP (see WithOpenAPIPath, WithMCP)", op.Path)
	}
	op.route = route
	if op.ID == "" {
		op.ID = httpop.Name(op.Method, op.Path)
	}
	if op.Confirm {
		op.codes = appendNew(op.codes, CodeConfirmationRequired, CodeConfirmationInvalid, CodeConfirmationDeclined)
	}
	if op.Person {
		op.codes = appendNew(op.codes, CodePersonRequired)
	}
	if op.Idempotency != IdempotencyOff {
		op.codes = appendNew(op.codes, CodeIdempotencyKeyInvalid, CodeIdempotencyKeyReused, CodeIdempotencyInFlight)
	}
	if op.Idempotency == IdempotencyRequired {
		op.codes = appendNew(op.codes, CodeIdempotencyKeyRequired)
	}
	if !validID.MatchString(op.ID) {
		return fmt.Errorf("operation id %q: want a letter, then letters, digits, '_', '.' or '-'", op.ID)
	}
	for _, o := range a.ops {
		if o.ID == op.ID {
			return fmt.Errorf("operation id %q is taken by %s %s", op.ID, o.Method, o.Path)
		}
	}
	if op.Status < 200 || op.Status > 299 {
		return fmt.Errorf("success status %d is not a 2xx", op.Status)
	}
	for _, c := range op.codes {
		if _, ok := a.reg.Lookup(c); !ok {
			return fmt.Errorf("error code %q is not in the registry", c)
		}
	}
	in := op.in
	for in.Kind() == reflect.Pointer {
		in = in.Elem()
	}
	if in.Kind() != reflect.Struct {
		return fmt.Errorf("the input type %s is not a struct", op.in)
	}
	if op.schema, op.params, err = inputSchema(op.in); err != nil {
		return err
	}
	if err := checkParams(op); err != nil {
		return err
	}
	if op.validator, err = newValidator(op.schema); err != nil {
		return fmt.Errorf("compiling the input schema: %w", err)
	}
	if op.validator.fast != nil {
		op.validator.fast.markParams(op.params)
	}
	op.binder = newTextBinder(op.in)
	if op.Async {
		if err := a.addStatusRoute(); err != nil {
			return fmt.Errorf("registering the status resource of background operations: %w", err)
		}
	}
	if err := a.routes.add(op); err != nil {
		return err
	}
	a.ops = append(a.ops, op)
	return nil
}

// checkParams matches the route's path parameters with the input's path fields, both ways.
func checkParams(op *Operation) error {
	for _, s := range op.route {
		if s.param != "" && !slices.ContainsFunc(op.params, func(p param) bool { return p.In == "path" && p.Name == s.param }) {
			return fmt.Errorf("path parameter {%s} has no field tagged path:%q in %s", s.param, s.param, op.in)
		}
	}
	for _, p := range op.params {
		if p.In == "path" && !slices.ContainsFunc(op.route, func(s segment) bool { return s.param == p.Name }) {
			return fmt.Errorf("field tagged path:%q in %s has no {%s} in the path", p.Name, op.in, p.Name)
		}
	}
	return nil
}
