package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/httpop"
	"github.com/tidwall/gjson"
)

// DefaultMCPPath is where an API serves MCP unless WithMCP says otherwise.
const DefaultMCPPath = "/mcp"

// MCPOptions configures the MCP surface: the API's operations as tools over streamable HTTP.
type MCPOptions struct {
	// Path is where it is served (default DefaultMCPPath). No operation may be registered there.
	Path string
	// Disabled serves no MCP endpoint (MCPServer still builds the tools).
	Disabled bool
	// Stateless gives every HTTP request a session of its own, so that instances behind a load
	// balancer need not share sessions (with shared stores for confirmation and idempotency,
	// any instance can answer any call). The server can then send no requests to the client:
	// a client of a protocol before 2026-07-28 is not asked to confirm (MCP elicitation) but
	// gets the token flow, or person_required for an operation registered with RequirePerson;
	// one of 2026-07-28 is asked in the tool's result.
	//
	// A stateful endpoint (the default) speaks the protocol versions that have sessions,
	// 2025-11-25 and before: a client that asks for 2026-07-28, which has none, is answered
	// unsupported protocol version with that list, and initializes a session at one of them
	// (the go-sdk's, mcp-go's and the TypeScript SDKs' clients do so by themselves). A
	// stateless endpoint speaks 2026-07-28 as well.
	Stateless bool
	// JSONResponse answers calls with application/json instead of an event stream. The server
	// can then send no request within a call: a client of a protocol before 2026-07-28 is not
	// asked to confirm (MCP elicitation) but gets the token flow, or person_required for an
	// operation registered with RequirePerson, as on a Stateless endpoint.
	JSONResponse bool
	// MaxSessions is how many sessions the endpoint holds at once (default
	// DefaultMaxMCPSessions; negative: no limit). An initialize beyond it is answered 503
	// unavailable with Retry-After, until a client closes its session or one expires.
	MaxSessions int
	// SessionsPerPrincipal is how many of those sessions one principal may hold (default
	// DefaultMCPSessionsPerPrincipal; negative: any number up to MaxSessions), so that one
	// caller cannot take them all. Without an Authenticator every caller is one principal,
	// who may hold MaxSessions. A session is bound to the principal that opened it: its id,
	// sent by another, is refused 403 forbidden.
	SessionsPerPrincipal int
	// SessionIdleTimeout is how long a session may go without a request before it is closed
	// and its memory freed (default DefaultMCPSessionIdle; negative: never). A client that
	// only listens on its event stream must ping within it to keep its session.
	SessionIdleTimeout time.Duration
	// AllowedHosts are the host names the endpoint answers to (HostAllowed): a request whose
	// Host header names another is refused 403 forbidden, against DNS rebinding. Empty, those
	// of WithHostCheck; without them too, the endpoint refuses only a request that arrived on
	// a loopback address under a name that is not loopback, as the MCP SDK does by default.
	AllowedHosts []string
}

// sessionlessVersion is the first MCP protocol version without sessions (SEP-2575, no
// initialize either): only a stateless endpoint speaks it.
const sessionlessVersion = "2026-07-28"

// refuseSessionlessDiscover answers a server/discover (body, whose method rpcMethod read) that
// asks a stateful endpoint for a protocol version without sessions, as the MCP SDK answers
// every other request of such a version there: 400 with the JSON-RPC error unsupported protocol version (-32022), whose data
// lists the versions the endpoint speaks, all of them with sessions. It reports whether it
// answered.
//
// The SDK answers such a discover itself with a result listing those versions, which leaves
// the choice to the client. Clients that read the list fall back to initialize (the go-sdk's,
// the TypeScript SDK v2's); mcp-go's (v1.2.1) takes any discover result as agreement, stays
// on 2026-07-28, and every request it sends after is refused. The error is understood by
// all three, and is what mcp-go's own server sends when it does not serve the version.
func refuseSessionlessDiscover(w http.ResponseWriter, r *http.Request, body []byte) bool {
	msg := gjson.ParseBytes(body) // a server/discover message (rpcMethod)
	id := msg.Get("id")
	if id.Type != gjson.String && id.Type != gjson.Number {
		return false // a notification: the SDK's to refuse
	}
	requested := msg.Get(`params._meta.io\.modelcontextprotocol/protocolVersion`).String()
	if requested == "" {
		requested = r.Header.Get("Mcp-Protocol-Version")
	}
	if requested < sessionlessVersion || len(requested) > 32 {
		return false // a version with sessions, or not a version: the SDK's to answer
	}
	supported := slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= sessionlessVersion })
	data, err := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: supported, Requested: requested})
	if err != nil {
		return false
	}
	answer, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", json.RawMessage(id.Raw), struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}{mcp.CodeUnsupportedProtocolVersion, "protocol version " + strconv.Quote(requested) +
		" has no sessions, and this endpoint keeps them: initialize with one of the supported versions", data}})
	if err != nil {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write(answer)
	return true
}

// WithMCP configures the MCP surface (default: stateful streamable HTTP at DefaultMCPPath).
// A Path that does not begin with "/" is an error.
func WithMCP(c MCPOptions) Option {
	return func(a *API) error {
		if c.Path != "" && !strings.HasPrefix(c.Path, "/") {
			return fmt.Errorf("WithMCP: the path %q does not begin with /", c.Path)
		}
		a.mcpConf = c
		return nil
	}
}

// MCPServer returns the API's operations as an MCP server, for transports other than the
// streamable HTTP endpoint the API serves itself (stdio, in-memory). It is built once, at the
// first call or request, from the operations registered by then.
//
// Each operation is a tool named by its operation id, whose input schema is the operation's
// (InputSchema: body members and URL parameters in one object) with confirmationToken on
// operations registered with Confirm and idempotencyKey on idempotent ones; its annotations
// say readOnlyHint for GET, destructiveHint for Confirm and DELETE operations, idempotentHint
// where a repeated call has no further effect; its description ends with the protocol it
// follows and an "## Errors" block listing every code it may return (API.Emits).
//
// A call runs through the same pipeline as the REST request it maps to (authentication from
// the HTTP request's headers, rate limits, idempotency and confirmation with the same stores
// and scopes, validation, the handler), so that a token or a key means the same on both
// surfaces. A call of an operation registered with Confirm or RequirePerson, from a client that
// declares the elicitation capability, asks the client's user instead of answering with a
// token: a form showing the operation and the exact arguments, with one boolean, approve;
// approved, the call runs within the same tools/call (see RequirePerson, and the README's "A
// confirmation a person gives"). A success is a result whose text is the JSON result and whose structuredContent is
// the same when it is an object; a failure is a result with isError whose text content is the
// canonical envelope JSON and whose structuredContent is the same envelope. Arguments that
// cannot be placed in the URL (a path parameter missing, an object where a query parameter
// goes) are answered 400 invalid_parameter before the pipeline runs.
func (a *API) MCPServer() *mcp.Server {
	a.start()
	return a.mcpServer
}

// buildMCP makes the MCP server and its HTTP handler.
func (a *API) buildMCP() {
	impl := &mcp.Implementation{Name: a.info.Title, Version: a.info.Version}
	if impl.Name == "" {
		impl.Name = "remedy"
	}
	if impl.Version == "" {
		impl.Version = "0.0.0"
	}
	s := mcp.NewServer(impl, &mcp.ServerOptions{Instructions: a.info.Description})
	for _, op := range a.ops {
		s.AddTool(a.tool(op), a.toolHandler(op))
	}
	a.mcpServer = s
	if !a.mcpConf.Disabled {
		a.gate = a.newMCPGate()
		s.AddReceivingMiddleware(a.gate.countSessions)
		// The Host rule is the endpoint's own (serveMCP), applied before authentication.
		a.mcpHandler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
			&mcp.StreamableHTTPOptions{Stateless: a.mcpConf.Stateless, JSONResponse: a.mcpConf.JSONResponse,
				MaxRequestBodyBytes: a.maxBody + mcpBodySlack, SessionTimeout: max(a.mcpConf.SessionIdleTimeout, 0),
				DisableLocalhostProtection: true})
		if a.auth != nil {
			a.mcpHandler = boundHandler(a.mcpHandler) // sessions bound to their principal
		}
	}
}

// tool describes op as an MCP tool.
func (a *API) tool(op *Operation) *mcp.Tool {
	s := *op.schema
	s.Properties = make(map[string]*jsonschema.Schema, len(op.schema.Properties)+2)
	for k, v := range op.schema.Properties {
		s.Properties[k] = v
	}
	if op.Confirm && !op.Person {
		s.Properties[remedy.ArgConfirmationToken] = &jsonschema.Schema{Type: "string", MaxLength: ptr(256),
			Description: "Leave out on the first call. The confirmationToken of a confirmation_required answer, once the user approved the call; send it with the identical arguments."}
	}
	if op.Idempotency != IdempotencyOff {
		s.Properties[remedy.ArgIdempotencyKey] = &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(255),
			Description: "One unique key per logical call (printable ASCII), reused for every retry of that call."}
		if op.Idempotency == IdempotencyRequired {
			s.Required = append(s.Required[:len(s.Required):len(s.Required)], remedy.ArgIdempotencyKey)
		}
	}
	readOnly := op.Method == http.MethodGet || op.Method == http.MethodHead
	ann := &mcp.ToolAnnotations{
		Title:        op.Summary,
		ReadOnlyHint: readOnly,
		// Repeating a call has no further effect only when every call carries a key the
		// operation replays: with an optional key, a call without one runs again.
		IdempotentHint: httpop.Idempotent(op.Method) || op.Idempotency == IdempotencyRequired,
	}
	if !readOnly {
		ann.DestructiveHint = ptr(op.Confirm || op.Method == http.MethodDelete)
	}
	t := &mcp.Tool{
		Name:        op.ID,
		Title:       op.Summary,
		Description: a.toolDescription(op),
		InputSchema: &s,
		Annotations: ann,
	}
	// No outputSchema: a failure's structuredContent is the envelope, and the TypeScript SDK's
	// client (v1) checks every result's structuredContent against the output schema, failures
	// included, and refuses the call. The result's schema is in the OpenAPI document.
	return t
}

// toolDescription is the summary, the protocol the tool follows, and its error catalog.
func (a *API) toolDescription(op *Operation) string {
	var b strings.Builder
	if op.Summary != "" {
		b.WriteString(op.Summary)
	} else {
		b.WriteString(op.Method + " " + op.Path)
	}
	b.WriteString(".")
	if notes := a.protocolNotes(op, "the "+remedy.ArgConfirmationToken+" argument", "the "+remedy.ArgIdempotencyKey+" argument"); notes != "" {
		b.WriteString("\n\n")
		b.WriteString(notes)
	}
	b.WriteString("\n\n## Errors\nA failed call returns isError with the error envelope (code, message, issues with the field and what it accepts, retryable, retry_after_ms, next_operation). Codes:")
	for _, c := range a.Emits(op) {
		if remedy.HTTPOnly(c.Code) {
			continue // a tool call cannot meet it, nor its caller act on it
		}
		b.WriteString("\n- ")
		b.WriteString(catalogLine(c))
	}
	return b.String()
}

// toolHandler runs a call of op's tool through the pipeline.
func (a *API) toolHandler(op *Operation) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var header http.Header
		if req.Extra != nil {
			header = req.Extra.Header
		}
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		var ask *asking
		if op.Confirm {
			ask = a.newAsking(req, args)
		}
		res := a.runTool(ctx, op, args, header, ask)
		if ask == nil || ask.question == nil {
			return res, nil
		}
		if ask.inResult {
			return ask.inputRequired(), nil
		}
		// An older client, on a session: the question goes to it now, and the call runs again
		// with the answer, as it would come back from a client of 2026-07-28.
		return a.runTool(ctx, op, args, header, ask.elicit(ctx, req.Session, a.confirm.TTL, a.stopping)), nil
	}
}

// runTool runs a call of op's tool through the pipeline. ask, when op needs confirmation, is
// what the confirmation gate learns about asking a person, through the request's context.
func (a *API) runTool(ctx context.Context, op *Operation, args json.RawMessage, header http.Header, ask *asking) *mcp.CallToolResult {
	if ask != nil {
		ctx = context.WithValue(ctx, askingKey{}, ask)
	}
	rec := &recorder{h: http.Header{}}
	hreq, err := op.toolRequest(ctx, args, header)
	x := &exchange{api: a, w: rec, r: hreq, tool: true}
	if err != nil {
		x.ctx = ctx
		x.op = op
		x.fail(err)
	} else {
		x.run()
	}
	return rec.result()
}

// tokenAt and keyAt name where the exchange's caller sends a confirmation token and an
// idempotency key.
func (x *exchange) tokenAt() string {
	if x.tool {
		return "the " + remedy.ArgConfirmationToken + " argument"
	}
	return remedy.HeaderConfirmationToken
}

func (x *exchange) keyAt() string {
	if x.tool {
		return "an " + remedy.ArgIdempotencyKey + " argument"
	}
	return "an " + remedy.HeaderIdempotencyKey + " header"
}

// notInherited are the headers of the MCP HTTP request that its tool calls do not inherit: they
// describe the MCP exchange, not the call, or are set from the arguments.
var notInherited = map[string]bool{
	"Content-Type": true, "Content-Length": true, "Accept": true, "Accept-Encoding": true,
	"Connection": true, "Transfer-Encoding": true, "Mcp-Session-Id": true,
	"Mcp-Protocol-Version": true, "Last-Event-Id": true,
	remedy.HeaderIdempotencyKey: true, remedy.HeaderConfirmationToken: true,
}

// toolRequest is the REST request a tool call maps to: path parameters into the path, query
// parameters into the query, confirmationToken and idempotencyKey into their headers, the
// other arguments into the JSON body; the MCP request's other headers (Authorization,
// traceparent) are kept. It returns the request (with the template path when the arguments
// cannot be placed) and, then, the problem.
func (op *Operation) toolRequest(ctx context.Context, args json.RawMessage, from http.Header) (*http.Request, error) {
	hreq, err := http.NewRequestWithContext(ctx, op.Method, "/", nil)
	if err != nil {
		return nil, err
	}
	hreq.URL.Path = op.Path
	for k, vs := range from {
		if !notInherited[k] {
			hreq.Header[k] = vs
		}
	}
	obj := map[string]any{}
	if len(bytes.TrimSpace(args)) > 0 && string(bytes.TrimSpace(args)) != "null" {
		v, err := decodeBody(args)
		if err != nil {
			return hreq, err
		}
		o, ok := v.(map[string]any)
		if !ok {
			// As REST answers a body that is not an object: the schema's refusal, at the root.
			msg := "the arguments must be a JSON object, not " + jsonKind(v)
			return hreq, Error(CodeInvalidBody, msg).with(remedy.Issue{Code: "type", Message: msg,
				Expected: json.RawMessage(`"object"`)})
		}
		obj = o
	}
	var issues []remedy.Issue
	moved := false
	text := func(name string) (string, bool) {
		v, ok := obj[name]
		if !ok {
			return "", false
		}
		delete(obj, name)
		moved = true
		s, ok := v.(string)
		if !ok {
			issues = append(issues, remedy.Issue{Path: "/" + pointerEscape(name), Code: "type",
				Message: name + " must be a string", Expected: json.RawMessage(`{"type":"string"}`)})
		}
		return s, ok
	}
	if op.Confirm {
		if t, ok := text(remedy.ArgConfirmationToken); ok {
			hreq.Header.Set(remedy.HeaderConfirmationToken, t)
		}
	}
	if op.Idempotency != IdempotencyOff {
		if k, ok := text(remedy.ArgIdempotencyKey); ok {
			hreq.Header.Set(remedy.HeaderIdempotencyKey, headerKey(k))
		}
	}
	path, query := op.Path, url.Values{}
	for _, p := range op.params {
		v, present := obj[p.Name]
		if !present || (v == nil && p.In == "query") {
			if p.In == "path" {
				issues = append(issues, remedy.Issue{Path: "/" + pointerEscape(p.Name), Code: "required",
					Message: p.Name + " is required"})
			}
			delete(obj, p.Name)
			continue
		}
		delete(obj, p.Name)
		moved = true
		vals, ok := paramTexts(v, p.In == "query")
		if !ok || (p.In == "path" && (len(vals) != 1 || vals[0] == "" || vals[0] == "." || vals[0] == "..")) {
			issues = append(issues, remedy.Issue{Path: "/" + pointerEscape(p.Name), Code: "type",
				Message: p.Name + " is a " + p.In + " parameter: it must be a non-empty string, a number or a boolean"})
			continue
		}
		if p.In == "path" {
			path = strings.Replace(path, "{"+p.Name+"}", url.PathEscape(vals[0]), 1)
			continue
		}
		query[p.Name] = vals
	}
	if len(issues) > 0 {
		p := Error(CodeInvalidParameter, "the arguments cannot be sent: "+issues[0].Message)
		p.Issues = issues
		return hreq, p
	}
	var body []byte
	switch {
	case !moved && len(obj) > 0:
		body = args
	case len(obj) > 0 || !httpop.Bodyless(op.Method):
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(obj); err != nil {
			return hreq, err
		}
		body = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	u, err := url.Parse(target)
	if err != nil {
		return hreq, Error(CodeInvalidParameter, "the arguments do not make a valid URL")
	}
	hreq.URL = u
	if body != nil {
		hreq.Body, hreq.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		hreq.Header.Set("Content-Type", "application/json")
	}
	return hreq, nil
}

func ptr[T any](v T) *T { return &v }

// headerKey is an idempotency key argument as the header carries it: bare, or as an RFC 8941
// string when it holds a space, a quote or a backslash (as a key with spaces is sent over REST),
// so that a key means the same on both surfaces.
func headerKey(k string) string {
	if !strings.ContainsAny(k, " \"\\") {
		return k
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(k) + `"`
}

// paramTexts is an argument as URL text: a string as is, a number or boolean as written; for a
// query parameter, an array of those as repeated values.
func paramTexts(v any, list bool) ([]string, bool) {
	switch v := v.(type) {
	case string:
		return []string{v}, true
	case json.Number:
		return []string{v.String()}, true
	case bool:
		if v {
			return []string{"true"}, true
		}
		return []string{"false"}, true
	case []any:
		if !list {
			return nil, false
		}
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := paramTexts(e, false)
			if !ok {
				return nil, false
			}
			out = append(out, s...)
		}
		return out, true
	}
	return nil, false
}

// recorder keeps the response of a tool call's pipeline run.
type recorder struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.h }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

// result is the tool result of the recorded response.
func (r *recorder) result() *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{}, IsError: r.status >= 400}
	body := r.body.Bytes()
	if len(body) > 0 {
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(body)}}
		if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '{' {
			res.StructuredContent = json.RawMessage(body)
		}
	}
	if strings.EqualFold(r.h.Get(remedy.HeaderReplayed), "true") {
		res.Meta = mcp.Meta{remedy.MetaReplayed: true}
	}
	return res
}

// jsonKind names the kind of a decoded JSON value, with its article: "an array".
func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "an object"
}
