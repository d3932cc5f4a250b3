// Package mcp runs remedy's loop over the Model Context Protocol: each attempt is a tools/call
// on a session of the official go-sdk client, and each failure — a result with isError, or a
// JSON-RPC error — is read as a remedy.Envelope, the same as over HTTP. With the reference
// server's tools, the confirmation token and the idempotency key travel as the
// confirmationToken and idempotencyKey arguments each tool advertises, and next_operation runs
// as another tool call.
//
// A tool call is sent again after a lost answer only when that cannot run it twice: the tool's
// annotations say readOnlyHint or idempotentHint, or it takes an idempotencyKey (and gets one),
// or the request was certainly not written. What a success's Body holds when a result has
// several content items, or images and resources, is said at Transport.RoundTrip. A session
// does not outlive its server's memory of it: once the server answers 404 for it (it expired,
// the server restarted) or its connection closed, its calls fail with ErrSessionClosed, unless
// Transport.SetReconnect says how to open a new one.
//
// Over streamable HTTP, give the session an HTTPClient. The go-sdk keeps only the status text
// of an answer it refuses (a 429, a 503) and drops its headers and body, so that without it
// the HTTP facts of a failed exchange — its Retry-After above all — are not visible: the loop
// then retries on its own backoff where the server asked for a wait, and does not stop at once
// when the server asks for a wait longer than MaxWait (client.ErrWaitTooLong), as it does
// over REST.
//
//	cs, _ := sdk.NewClient(impl, nil).Connect(ctx,
//		&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: mcp.HTTPClient(nil)}, nil)
//	c, _ := mcp.NewClient(ctx, cs)
//	resp, err := c.Call(ctx, "create_invoice", map[string]any{"customer_id": "cus_1", "amount": 1200})
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/sent"
)

// Transport sends the loop's attempts as tool calls on one session. It learns from tools/list
// which tools take an idempotency key (an idempotencyKey property in their input schema) and
// sends a key only to those, so that a tool whose schema refuses unknown arguments is not
// sent one. It is safe for concurrent use.
//
// It reads a failed call's HTTP answer (status, headers, body) only when the session's HTTP
// client is one of HTTPClient's; with any other, an answer the go-sdk refuses is known by its
// status alone, and a wait it asked for (Retry-After, RateLimit-Reset) is not visible.
type Transport struct {
	dial sync.Mutex // held while a new session is opened

	mu        sync.RWMutex
	session   *sdk.ClientSession
	gone      bool // the session is known to be gone
	reconnect func(context.Context) (*sdk.ClientSession, error)
	tools     map[string]tool
	names     []string // the tools' names, in the order listed
	loaded    bool
}

// tool is what the transport knows of one listed tool.
type tool struct {
	takesKey, takesToken, idempotent bool
	description                      string
	schema                           json.RawMessage // the input schema, less the arguments the loop sends itself
}

// NewTransport returns a transport over the session. It lists the tools at its first
// attempt, or when Load is called. From then on, ElicitationHandler answers a question on the
// session only about a call the transport has in flight on it.
func NewTransport(session *sdk.ClientSession) *Transport {
	inFlight.drive(session)
	return &Transport{session: session}
}

// Load lists the server's tools (every page) and returns their names. Call it again when the
// server says its tools changed.
func (t *Transport) Load(ctx context.Context) ([]string, error) {
	tools := map[string]tool{}
	var names []string // in the server's order
	for tl, err := range t.Session().Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("remedy/mcp: listing the tools: %w", err)
		}
		props := schemaProperties(tl.InputSchema)
		info := tool{takesKey: props[remedy.ArgIdempotencyKey], takesToken: props[remedy.ArgConfirmationToken],
			description: tl.Description, schema: modelSchema(tl.InputSchema)}
		if a := tl.Annotations; a != nil {
			// A tool that only reads, or whose repeated calls with the same arguments have no
			// further effect, is as safe to send again as an idempotent HTTP method.
			info.idempotent = a.ReadOnlyHint || a.IdempotentHint
		}
		tools[tl.Name] = info
		names = append(names, tl.Name)
	}
	t.mu.Lock()
	t.tools, t.names, t.loaded = tools, names, true
	t.mu.Unlock()
	return names, nil
}

// Operations are the listed tools as remedy operations, for tools.New: each tool's
// name, its description (the reference server's ends with its errors), and its input schema
// without the confirmationToken and idempotencyKey arguments, which the loop sends itself.
// Before Load, there are none.
func (t *Transport) Operations() []client.Operation {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ops := make([]client.Operation, 0, len(t.names))
	for _, name := range t.names {
		info := t.tools[name]
		ops = append(ops, client.Operation{Name: name, Description: info.description, Parameters: info.schema})
	}
	return ops
}

// argsSchema is the input schema of the tool name, as last listed, less the arguments the
// loop sends itself: what the caller's arguments are checked against before the call is sent
// (client.Call.Schema). Without those members, a schema that refuses unknown members refuses
// them in the caller's arguments too, where the transport refuses them anyway (reserved). Nil
// for a tool not listed.
func (t *Transport) argsSchema(name string) json.RawMessage {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.tools[name].schema
}

// modelSchema is a tool's input schema as a model is offered it: without the arguments the
// loop sends itself. Nil when the schema is not an object.
func modelSchema(schema any) json.RawMessage {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return nil
	}
	protocol := []string{remedy.ArgIdempotencyKey, remedy.ArgConfirmationToken}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, name := range protocol {
			delete(props, name)
		}
	}
	if req, ok := m["required"].([]any); ok {
		kept := req[:0]
		for _, r := range req {
			if s, _ := r.(string); s != remedy.ArgIdempotencyKey && s != remedy.ArgConfirmationToken {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			delete(m, "required")
		} else {
			m["required"] = kept
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return out
}

// schemaProperties lists the property names of an input schema as the client holds it (the
// go-sdk decodes it into a map).
func schemaProperties(schema any) map[string]bool {
	out := map[string]bool{}
	var m map[string]any
	switch s := schema.(type) {
	case map[string]any:
		m = s
	default:
		b, err := json.Marshal(schema)
		if err != nil || json.Unmarshal(b, &m) != nil {
			return out
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for k := range props {
			out[k] = true
		}
	}
	return out
}

// lookup returns what the transport knows of a tool, listing the tools first if it has not.
func (t *Transport) lookup(ctx context.Context, name string) (tool, bool, error) {
	t.mu.RLock()
	info, ok := t.tools[name]
	loaded := t.loaded
	t.mu.RUnlock()
	if loaded {
		return info, ok, nil
	}
	if _, err := t.Load(ctx); err != nil {
		return tool{}, false, err
	}
	t.mu.RLock()
	info, ok = t.tools[name]
	t.mu.RUnlock()
	return info, ok, nil
}

// Registered reports whether name is a tool the server listed, for a loop's next operations
// (client.WithNextOperations; NewClient uses it): a failure's next_operation then runs only
// tools this session offers. Before Load, it approves nothing. To allow fewer, wrap it, or
// give NewClient client.WithNextOperations(Only(...)).
//
// idempotent is true for a tool whose annotations say readOnlyHint or idempotentHint and
// that takes no idempotencyKey: the loop sends it again after a lost answer, with no key. A
// tool that takes a key is sent one even when it says idempotentHint (the reference server
// says so of the tools its key makes idempotent, and may require the key); the key it
// declares is what makes it safe to send again.
func (t *Transport) Registered(name string) (ok, idempotent bool) {
	t.mu.RLock()
	info, ok := t.tools[name]
	t.mu.RUnlock()
	return ok, ok && info.idempotent && !info.takesKey
}

// RoundTrip calls the tool req.Operation with req.Args, plus confirmationToken when the
// attempt carries a token and idempotencyKey when it carries a key and the tool takes one. A
// result with isError is read as an envelope (its structuredContent, else its text, as
// remedy.Parse reads MCP results); a JSON-RPC error (an unknown tool, invalid params) is read
// as a JSON-RPC envelope, whether it came in a 200 or, as protocol 2026-07-28 has stateless
// servers send it, in a 400 or 404 (the envelope's Status is then that status, and the
// failure is not retried: the same call would fail the same way); a session that is gone is
// ErrSessionClosed (see SetReconnect); any other error means no response came, and is
// returned. When the session's HTTP client is one of HTTPClient's, a call the go-sdk failed
// because its HTTP answer was 400 or more is read from that answer instead, as remedy.Parse
// reads one over REST: its status, its headers (Retry-After and the rate-limit reset headers
// give the wait) and its body (a JSON-RPC error, an envelope), so that the loop waits what the
// server asked; a session that is gone, and a context that ended, take precedence over it. A
// tool that takes no idempotencyKey gets none, and the attempt's IdempotencyKey is cleared so
// that the loop does not count on it; a tool that takes one declares that it honours it, and
// the attempt says so (Request.KeysHonoured), so that a lost answer is retried with the same
// key.
//
// A success's Body is, first match wins:
//
//  1. its structuredContent, when it has one (the bytes of its text rendering when the only
//     content item is that same JSON, else its encoding); the content items are then its
//     rendering for a model, and are not kept;
//  2. its text, when every content item is text (or there is none): the texts joined by
//     newlines, a single item's exactly as sent;
//  3. otherwise (an image, audio, a resource link or an embedded resource among them), the
//     JSON array of every content item, in order, as MCP encodes them:
//     [{"type":"text","text":"a chart"},{"type":"image","data":"iVBORw==","mimeType":"image/png"}].
//
// A call that got no response is marked remedy.NotSent only when it certainly was not
// written: the session's HTTP client reported (through net/http/httptrace, on the call's
// context) that it reached for a connection and never wrote the header block of the request
// — a refused connection, a failed TLS handshake. Over a transport that reports no such
// events (stdio, in-memory), nothing is marked, and a call that is not safe to repeat stops
// with remedy.ErrOutcomeUnknown.
func (t *Transport) RoundTrip(ctx context.Context, req *client.Request) (*client.Response, error) {
	req.Method, req.Target = "tools/call", req.Operation
	info, _, err := t.lookup(ctx, req.Operation)
	if err != nil {
		return nil, err
	}
	if !info.takesKey {
		req.IdempotencyKey = "" // not sent: a retry is not made safe by it
	}
	req.KeysHonoured = req.IdempotencyKey != ""
	args, err := withProtocolArgs(req, info)
	if err != nil {
		return nil, err
	}
	var watch *sent.Watch
	if !info.idempotent && !req.KeysHonoured {
		ctx, watch = sent.Start(ctx)
	}
	ctx, ans := withAnswer(ctx)
	res, err := t.callTool(ctx, &sdk.CallToolParams{Name: req.Operation, Arguments: args}, req.Args, info.idempotent || req.KeysHonoured)
	answered := ans.take()
	if err != nil {
		return t.failed(err, watch, answered)
	}
	return readResult(res)
}

// failed reads the error of a tools/call: the server's answer when it sent one, else the
// reason no answer came. answered is the HTTP answer HTTPClient's RoundTripper saw for the
// call, when the session's client is one of HTTPClient's and the answer was a failure.
func (t *Transport) failed(err error, watch *sent.Watch, answered *client.Response) (*client.Response, error) {
	if errors.Is(err, ErrSessionClosed) {
		return nil, err
	}
	if answered != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		// The go-sdk fails a call whose POST was answered 400 or more with an error made of
		// that answer (its status text, or the JSON-RPC error in its body); the answer itself
		// says more: the headers (Retry-After) and the body the go-sdk drops for a 429 or a
		// 5xx. A call whose context ended stops for that, whatever came back.
		return answered, nil
	}
	status := answeredStatus(err)
	if we := serverError(err); we != nil {
		// The server answered with a JSON-RPC error: in a 200 (protocol 2025-11-25 and
		// before), or in the 4xx a stateless server of protocol 2026-07-28 sends (400 for
		// invalid params, 404 for an unknown method). The go-sdk joins its "rejected by
		// transport" to the latter; the answer is the server's all the same.
		return protocolFailure(we, status), nil
	}
	if strings.HasSuffix(err.Error(), lostAnswer) {
		return nil, fmt.Errorf("the call's answer is lost (%w): %w", io.ErrUnexpectedEOF, err)
	}
	if cause, ok := transportCause(err); ok {
		return nil, markNotSent(watch, cause)
	}
	if status != 0 {
		return httpFailure(status), nil
	}
	return nil, err
}

// lostAnswer is how the go-sdk (v1.8.0) words the error of a call whose event stream the
// server ended before the call's answer, with no event id to resume it from: the request
// arrived and may have run, so the loop reads it as an answer cut off (io.ErrUnexpectedEOF),
// which it resends only when that is safe. Were the words to change, the call would stop as
// not retryable: never sent twice.
const lostAnswer = "request terminated without response"

// codeRejected is the JSON-RPC code the go-sdk joins to the error of a request its transport
// could not deliver, whose response it lost, or whose HTTP status was not a success
// ("rejected by transport").
const codeRejected = -32005

// serverError is the JSON-RPC error the server answered with, found in the error the go-sdk
// returned for a call, or nil when it holds none (only the go-sdk's own "rejected by
// transport", or no JSON-RPC error at all).
func serverError(err error) *jsonrpc.Error {
	return findRPC(err, func(we *jsonrpc.Error) bool { return we.Code != codeRejected })
}

// findRPC is the first JSON-RPC error in err's tree (depth first, as errors.As walks it) that
// match accepts, or nil.
func findRPC(err error, match func(*jsonrpc.Error) bool) *jsonrpc.Error {
	for err != nil {
		if we, ok := err.(*jsonrpc.Error); ok && match(we) {
			return we
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				if we := findRPC(x, match); we != nil {
					return we
				}
			}
			return nil
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return nil
		}
	}
	return nil
}

// transportCause returns the cause of a call that got no response: what the go-sdk joined to
// its "rejected by transport" error (the HTTP request's own failure, such as a connection
// reset), so that the loop judges that, and not a JSON-RPC code.
func transportCause(err error) (error, bool) {
	for e := err; e != nil; {
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			var rejected bool
			var rest []error
			for _, x := range u.Unwrap() {
				if we, ok := x.(*jsonrpc.Error); ok && we.Code == codeRejected {
					rejected = true
					continue
				}
				rest = append(rest, x)
			}
			switch {
			case rejected && len(rest) == 1:
				return rest[0], true
			case rejected && len(rest) > 1:
				return errors.Join(rest...), true
			}
			return nil, false
		case interface{ Unwrap() error }:
			e = u.Unwrap()
		default:
			return nil, false
		}
	}
	return nil, false
}

// withProtocolArgs adds the token and the key to the arguments, keeping their bytes
// otherwise. Arguments that carry either member themselves are refused
// (client.ErrInvalidArguments, nothing sent): the loop alone sends them, the token only for a
// payload the caller's ConfirmPolicy approved — a model that wrote one into its arguments
// would confirm on its own.
func withProtocolArgs(req *client.Request, info tool) (json.RawMessage, error) {
	args := req.Args
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	var extra []string
	if req.ConfirmationToken != "" {
		extra = append(extra, remedy.ArgConfirmationToken, req.ConfirmationToken)
	}
	if req.IdempotencyKey != "" {
		extra = append(extra, remedy.ArgIdempotencyKey, req.IdempotencyKey)
	}
	// A member named by an escape ("confirmation\u0054oken") is the same member: look for
	// the names, or for any escape, before decoding.
	mayCarry := bytes.IndexByte(args, '\\') >= 0 || bytes.Contains(args, []byte(remedy.ArgConfirmationToken)) ||
		bytes.Contains(args, []byte(remedy.ArgIdempotencyKey))
	if len(extra) == 0 && !mayCarry {
		return args, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil || m == nil {
		return nil, &client.ArgumentsError{Issues: []remedy.Issue{{Code: "not_object", Message: "the arguments are not a JSON object"}}}
	}
	for _, name := range []string{remedy.ArgConfirmationToken, remedy.ArgIdempotencyKey} {
		if _, ok := m[name]; ok {
			return nil, &client.ArgumentsError{Issues: []remedy.Issue{{Path: "/" + name, Code: "reserved",
				Message: name + " is sent by the client's loop, not by the arguments"}}}
		}
	}
	if len(extra) == 0 {
		return args, nil
	}
	for i := 0; i < len(extra); i += 2 {
		v, _ := json.Marshal(extra[i+1])
		m[extra[i]] = v
	}
	return json.Marshal(m)
}

// protocolFailure is the envelope of a JSON-RPC error the server answered with, under the
// HTTP status it came with (0 when that was a success, or unknown). The status decides
// whether it is retryable when the error's data does not say: a 400 or 404 is not (the same
// request would fail the same way).
func protocolFailure(we *jsonrpc.Error, status int) *client.Response {
	msg := struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", nil, we}
	b, _ := json.Marshal(msg)
	env, ok := remedy.Parse(status, nil, b)
	if !ok {
		env = &remedy.Envelope{Status: status, Code: "protocol_error", Message: we.Message, Category: remedy.CategoryInternal,
			Severity: remedy.SeverityError}
	}
	return &client.Response{Status: env.Status, Envelope: env}
}

// answeredStatus is the HTTP status the MCP endpoint answered a call with, when the go-sdk
// refused the answer for it ("...: rejected by transport: Service Unavailable"), or 0. The
// go-sdk keeps only the status text of such an answer (and closes its body, so a
// retry_after_ms in it is lost); the status is what tells a 503 from a 400. It serves a
// session whose HTTP client is not HTTPClient's, which sees the answer itself.
func answeredStatus(err error) int {
	if findRPC(err, func(we *jsonrpc.Error) bool { return we.Code == codeRejected }) == nil {
		return 0
	}
	msg := err.Error()
	for status := 400; status < 600; status++ {
		if text := http.StatusText(status); text != "" && strings.HasSuffix(msg, ": "+text) {
			return status
		}
	}
	return 0
}

// httpFailure is the failure of an HTTP status with no body to read: classified by the
// status alone, as remedy.Parse classifies an empty answer (a 503 is retried, a 400 is not).
func httpFailure(status int) *client.Response {
	env, _ := remedy.Parse(status, nil, nil)
	return &client.Response{Status: status, Envelope: env}
}

// readResult turns a tool result into the loop's response.
func readResult(res *sdk.CallToolResult) (*client.Response, error) {
	resp := &client.Response{Status: 200}
	if v, ok := res.Meta[remedy.MetaReplayed].(bool); ok && v {
		resp.Replayed = true
	}
	if res.IsError {
		b, err := json.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("remedy/mcp: re-encoding the result: %w", err)
		}
		env, ok := remedy.Parse(0, nil, b)
		if !ok {
			env = &remedy.Envelope{Code: "tool_error", Message: text(res), Severity: remedy.SeverityError}
		}
		env.Replayed = env.Replayed || resp.Replayed
		resp.Status, resp.Envelope = env.Status, env
		return resp, nil
	}
	body, err := resultBody(res)
	if err != nil {
		return nil, err
	}
	resp.Body = body
	return resp, nil
}

// resultBody is a success's Body (see RoundTrip).
func resultBody(res *sdk.CallToolResult) ([]byte, error) {
	if res.StructuredContent != nil {
		if len(res.Content) == 1 {
			if tc, ok := res.Content[0].(*sdk.TextContent); ok && sameJSON(tc.Text, res.StructuredContent) {
				// The structured result serialized, as the spec asks text content to carry
				// it: the server's own bytes, where re-encoding the decoded value would
				// reorder them.
				return []byte(tc.Text), nil
			}
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("remedy/mcp: re-encoding the structured content: %w", err)
		}
		return b, nil
	}
	for _, c := range res.Content {
		if _, ok := c.(*sdk.TextContent); !ok {
			b, err := json.Marshal(res.Content)
			if err != nil {
				return nil, fmt.Errorf("remedy/mcp: re-encoding the content: %w", err)
			}
			return b, nil
		}
	}
	return []byte(text(res)), nil
}

// sameJSON reports whether s is the JSON of v, a value the go-sdk decoded.
func sameJSON(s string, v any) bool {
	t := strings.TrimSpace(s)
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	var w any
	return json.Unmarshal([]byte(t), &w) == nil && reflect.DeepEqual(w, v)
}

// text joins a result's text contents.
func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
