package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/boundread"
	"github.com/remedy-go/remedy/internal/closest"
	"github.com/remedy-go/remedy/internal/httpop"
	"github.com/remedy-go/remedy/internal/sent"
	"github.com/remedy-go/remedy/internal/tape"
)

// DefaultMaxResult bounds the success body Client.Call reads into Response.Body.
const DefaultMaxResult = 64 << 20

// Operation is an HTTP operation registered with a Client, callable by name.
type Operation struct {
	Name   string // what Call and next_operation name it by
	Method string // default POST
	// Path is the path under the client's base URL; {name} takes the argument of that name
	// (which then leaves the body): "/v1/orders/{id}".
	Path string
	// Query names the arguments sent in the query string. For GET, HEAD, DELETE and OPTIONS
	// every argument not in the path goes there anyway.
	Query []string

	// What a model is told of the operation when it is offered as a tool (package tools). The loop
	// reads Parameters too. LoadOpenAPI fills them from the document.

	// Description says what the operation does.
	Description string
	// Parameters is the JSON Schema of the arguments: one object, whose properties are the
	// body's members and the path and query parameters by name. Nil: any object. A call's
	// arguments are checked against it before they are sent (see WithSchemaCheck), and the
	// Rewriter reads it (rewrite.Request.Schema).
	Parameters json.RawMessage
	// Errors are the failures the operation may answer with.
	Errors []ErrorCode

	// Keys is what is known of the server's support for idempotency keys on this operation.
	// KeysUnknown (the zero value) takes the client's default (WithIdempotencyKeys); any
	// other value wins over it. KeysHonoured: a request whose answer was lost is sent again
	// with its key. KeysOff: no key is sent — not even to a next operation — except one the
	// caller gives (WithIdempotencyKey). LoadOpenAPI sets KeysHonoured for an operation
	// whose document declares the Idempotency-Key header or x-idempotency-key. An
	// operation left at KeysUnknown is counted as honouring keys once the server shows it
	// does: an answer replayed from the key (Idempotency-Replayed: true), or a key it holds
	// in flight or for another payload.
	Keys KeySupport

	// NoPoll returns the operation's accepted answers (202) as they are, instead of polling
	// the status resource they name until the operation ends (see WithoutPolling, which turns
	// polling off for one call).
	NoPoll bool
}

// ErrorCode is a failure an operation may answer with, as a model is told of it before it
// calls: the code, the status, whether a retry can succeed, and what to do.
type ErrorCode struct {
	Code      string `json:"code"`
	Status    int    `json:"status,omitempty"`
	Retryable bool   `json:"retryable"`
	Hint      string `json:"hint,omitempty"`
}

// idempotent reports whether the method may run twice with the same effect (RFC 9110 9.2.2).
func (op *Operation) idempotent() bool { return httpop.Idempotent(op.Method) }

func (op *Operation) bodyless() bool { return httpop.Bodyless(op.Method) }

// Client runs calls over HTTP through the loop: Call for registered operations, Do for raw
// requests. It is safe for concurrent use.
type Client struct {
	loop      Loop
	hc        *http.Client
	base      *url.URL
	baseStr   string // base without a trailing slash or query, to which paths are appended
	baseQuery string // the base URL's query, kept on every request ("api-version=2024-06-01")
	origin    string // the base URL's scheme and host, the key its calls are paced under
	maxResult int64

	// keys is the default support for operations whose Keys is KeysUnknown, and for raw
	// requests (WithIdempotencyKeys).
	keys KeySupport

	mu  sync.RWMutex
	ops map[string]*registered
}

// registered is an operation with its path parameters listed once. It is not changed once
// registered (Register replaces it whole).
type registered struct {
	Operation
	params []string
	// shown: the server showed that it honours keys for the operation (a replayed answer, a
	// key held); one flag per registered operation, shared by the client's calls.
	shown atomic.Bool
	// scope is the rate limit the server last said the operation counts against, when it
	// names one (GitHub's X-RateLimit-Resource): the operation's calls are paced under it.
	scope atomic.Pointer[string]
	// fixed is the request of an operation whose URL does not depend on its arguments (no
	// path parameter), without a context, header or body: an attempt whose arguments leave
	// nothing in the query is a copy of it, so that it costs neither building nor parsing the
	// URL. Nil when the URL does not parse: the attempt then fails as any other would.
	fixed *http.Request
}

// New returns a client with the defaults every entry point has (see Option), changed by
// opts.
func New(opts ...Option) (*Client, error) {
	cfg, err := configure(scopeClient, opts)
	if err != nil {
		return nil, err
	}
	c := &Client{loop: cfg.loop, hc: guardRedirects(cfg.hc), maxResult: cfg.maxResult, keys: cfg.keys, ops: map[string]*registered{}}
	if cfg.base != "" {
		u, err := url.Parse(cfg.base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("remedy: base URL %q is not an absolute http(s) URL", cfg.base)
		}
		c.base = u
		c.baseQuery = u.RawQuery
		u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
		c.baseStr = strings.TrimSuffix(u.String(), "/")
		c.origin = originOf(u)
	}
	seen := make(map[string]bool, len(cfg.ops))
	for _, op := range cfg.ops {
		if seen[op.Name] {
			// Two registrations of one name: the second would replace the first, and a call
			// by that name would run whichever came last — refused rather than guessed.
			return nil, fmt.Errorf("remedy: operation %q is given twice (WithOperations)", op.Name)
		}
		seen[op.Name] = true
		if err := c.Register(op); err != nil {
			return nil, err
		}
	}
	c.loop.Transport = opTransport{c}
	c.loop.Registered = c.registered
	if allow := cfg.next; allow != nil {
		c.loop.Registered = func(name string) (ok, idempotent bool) {
			ok, idempotent = c.registered(name)
			if a, _ := allow(name); !a {
				return false, false
			}
			return ok, idempotent
		}
	}
	return c, nil
}

// Register adds an operation, sent under the client's base URL: a client without one (made
// for Do's raw requests) refuses it. Registered operations are also the only ones a failure's
// next_operation can run.
func (c *Client) Register(op Operation) error {
	if op.Name == "" {
		return errors.New("remedy: an operation needs a name")
	}
	if c.base == nil {
		return fmt.Errorf("remedy: operation %q: the client has no base URL to send it to (WithBaseURL)", op.Name)
	}
	if op.Method == "" {
		op.Method = http.MethodPost
	}
	op.Method = strings.ToUpper(op.Method)
	params, err := pathParams(op.Path)
	if err != nil {
		return fmt.Errorf("remedy: operation %q: %w", op.Name, err)
	}
	if !strings.HasPrefix(op.Path, "/") {
		return fmt.Errorf("remedy: operation %q: path %q must start with /", op.Name, op.Path)
	}
	if op.Keys > KeysOff {
		return fmt.Errorf("remedy: operation %q: Keys %v is not a KeySupport", op.Name, op.Keys)
	}
	r := &registered{Operation: op, params: params}
	if c.base != nil && len(params) == 0 {
		target := c.baseStr + op.Path
		if c.baseQuery != "" {
			target += "?" + c.baseQuery
		}
		r.fixed, _ = http.NewRequest(op.Method, target, nil)
	}
	c.mu.Lock()
	c.ops[op.Name] = r
	c.mu.Unlock()
	return nil
}

func (c *Client) op(name string) (*registered, bool) {
	c.mu.RLock()
	op, ok := c.ops[name]
	c.mu.RUnlock()
	return op, ok
}

// unknown says that name is not a registered operation, the one it was probably meant to be,
// and the operations there are (the first few, when there are many).
func (c *Client) unknown(name string) string {
	c.mu.RLock()
	names := make([]string, 0, len(c.ops))
	for n := range c.ops {
		names = append(names, n)
	}
	c.mu.RUnlock()
	if len(names) == 0 {
		return "operation not registered with the client, which has none (WithOperations, LoadOpenAPI)"
	}
	slices.Sort(names)
	msg := "operation not registered with the client"
	if near, ok := closest.Name(name, names); ok {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	const shown = 20
	if len(names) > shown {
		return msg + fmt.Sprintf(" (%d operations: %s, …)", len(names), strings.Join(names[:shown], ", "))
	}
	return msg + fmt.Sprintf(" (operations: %s)", strings.Join(names, ", "))
}

func (c *Client) registered(name string) (ok, idempotent bool) {
	op, ok := c.op(name)
	return ok, ok && op.idempotent()
}

// keysFor is the operation's key support: its own, else the client's, and honoured once the
// server showed it.
func (c *Client) keysFor(op *registered) KeySupport {
	k := op.Keys
	if k == KeysUnknown {
		k = c.keys
	}
	if k == KeysUnknown && op.shown.Load() {
		k = KeysHonoured
	}
	return k
}

// Call runs the registered operation name with args: nil (no arguments, as is a nil
// json.RawMessage or []byte), a JSON object as json.RawMessage or []byte, or any value that
// encodes to a JSON object. It returns the success (Body is the
// result as sent), or a *CallError saying why it stopped.
//
// opts are the options of one call (WithIdempotencyKey, WithConfirmationToken, WithLimits,
// WithRewriter, …: see Option), on top of the client's.
func (c *Client) Call(ctx context.Context, name string, args any, opts ...Option) (*Response, error) {
	op, ok := c.op(name)
	if !ok {
		return nil, &CallError{Operation: name, Cause: ErrNotRetryable, Detail: c.unknown(name)}
	}
	call, err := NewCall(name, args)
	if err != nil {
		return nil, err
	}
	call.Idempotent = op.idempotent()
	call.Keys = c.keysFor(op)
	call.NoPoll = call.NoPoll || op.NoPoll
	call.Schema = op.Parameters
	call.Origin = c.origin
	if s := op.scope.Load(); s != nil {
		call.scope = *s
	}
	return c.loop.Do(ctx, call, opts...)
}

// NewCall makes the Call of operation with args (as Client.Call takes them: nil, a JSON
// object as json.RawMessage or []byte, or any value that encodes to a JSON object), for a
// Loop of the caller's own (package mcp's, for one). Arguments that are not a JSON object are
// a *CallError wrapping ErrInvalidArguments.
func NewCall(operation string, args any) (Call, error) {
	raw, err := encodeArgs(args)
	if err != nil {
		return Call{}, &CallError{Operation: operation, Cause: ErrInvalidArguments, Detail: "the arguments are not a JSON object",
			Err: &ArgumentsError{Issues: []remedy.Issue{{Code: "not_object", Message: err.Error()}}}}
	}
	return Call{Operation: operation, Args: raw, checked: true}, nil
}

func encodeArgs(args any) (json.RawMessage, error) {
	var raw []byte
	switch a := args.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if a == nil {
			return nil, nil // a nil RawMessage in an interface is not nil, but means no arguments all the same
		}
		raw = a
	case []byte:
		if a == nil {
			return nil, nil
		}
		raw = a
	default:
		b, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	if !isJSONObject(raw) {
		return nil, errors.New("want a JSON object")
	}
	return raw, nil
}

// Do runs a raw request through the loop. A JSON object body is what a rewrite edits; any
// other body is resent as is. The request's own Idempotency-Key is kept; otherwise one is
// minted for methods that are not idempotent, unless WithIdempotencyKeys turned keys off.
// Either is counted on to make a repeat safe only when WithIdempotencyKeys declares keys
// honoured, or the server shows it during the call. Its own X-Confirmation-Token is sent
// with the first attempt. The success is returned with its body unread; a failure is a
// *CallError.
//
// As http.Client.Do, the request's context bounds the call.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	t, call, err := newRawTransport(c.hc, req, c.loop.Limits.withDefaults().MaxBody, false, c.keys)
	if err != nil {
		return nil, err
	}
	r := newRun(&c.loop)
	resp, err := r.call(req.Context(), t, call, 0)
	r.lent.release()
	if err != nil {
		return nil, err
	}
	return resp.http, nil
}

// opTransport sends registered operations.
type opTransport struct{ c *Client }

// RoundTrip sends one attempt of a registered operation. It applies the operation's key
// support: no key for KeysOff (a next operation's, which the loop mints without knowing),
// Request.KeysHonoured for KeysHonoured. A request that is not safe to repeat (its method is
// not idempotent, and its key is not known honoured) is watched, so that a failure before
// any of it was written is marked NotSent, and spelled so that net/http does not send it
// again on its own. An answer that shows the server honours keys is remembered for the
// operation's later attempts and calls.
func (t opTransport) RoundTrip(ctx context.Context, req *Request) (*Response, error) {
	c := t.c
	op, ok := c.op(req.Operation)
	if !ok {
		return nil, fmt.Errorf("operation %q is not registered", req.Operation)
	}
	if c.base == nil {
		return nil, errors.New("the client has no base URL (WithBaseURL)")
	}
	switch c.keysFor(op) {
	case KeysOff:
		if req.Depth > 0 {
			req.IdempotencyKey = "" // a next operation's key is minted, never the caller's
		}
	case KeysHonoured:
		req.KeysHonoured = req.IdempotencyKey != ""
	}
	unsafe := !op.idempotent() && !req.KeysHonoured
	var (
		watch *sent.Watch
		err   error
	)
	if unsafe {
		ctx, watch = req.borrow().watch(ctx)
	}
	l := req.borrow()
	hreq := l.resend(ctx, op, req, unsafe)
	if hreq == nil {
		hreq, err = buildRequest(ctx, c.baseStr, c.baseQuery, op, req.Args)
		if err != nil {
			return nil, err
		}
		hreq.Header["Accept"] = acceptJSON
		setKeyAndToken(hreq.Header, req, unsafe)
		l.remember(hreq, op, req, unsafe)
	}
	req.Method, req.Target = op.Method, hreq.URL.Path
	hresp, err := c.hc.Do(hreq)
	if err != nil {
		return nil, markNotSent(watch, err)
	}
	maxBody := c.loop.Limits.MaxBody
	if maxBody <= 0 {
		maxBody = remedy.DefaultMaxBody
	}
	resp, err := readResponse(hresp, maxBody, c.maxResult, l.response())
	if err == nil && req.IdempotencyKey != "" && showsKeysHonoured(resp) {
		op.shown.Store(true)
	}
	if s := scopeOf(hresp.Header); s != "" {
		op.learnScope(s)
	}
	return resp, err
}

// learnScope records the rate limit the server said the operation counts against, when it
// changed.
func (op *registered) learnScope(s string) {
	if old := op.scope.Load(); old == nil || *old != s {
		op.scope.Store(&s)
	}
}

// Header values shared by every request; net/http only reads them.
var (
	acceptJSON      = []string{"application/json, application/problem+json"}
	jsonContentType = []string{"application/json"}
)

// readResponse turns an HTTP response into the loop's, in resp: a failure's body is read with
// a bound and closed; a success's body is read whole (up to maxResult) and checked for a failure
// carried inside it.
func readResponse(hresp *http.Response, maxBody, maxResult int64, resp *Response) (*Response, error) {
	*resp = Response{Status: hresp.StatusCode, Header: hresp.Header, Replayed: remedy.Replayed(hresp.Header)}
	if hresp.StatusCode >= 400 || hresp.StatusCode < 200 {
		read, err := boundread.Read(hresp.Body, maxBody+1, hresp.ContentLength)
		resp.Envelope = parseFailure(hresp, read, maxBody)
		if sev := severity(resp.Envelope); sev != remedy.SeverityInfo && sev != remedy.SeverityWarning {
			if err == nil && int64(len(read)) <= maxBody {
				hresp.Body.Close() // read to its end: nothing left to discard
			} else {
				discard(hresp.Body)
			}
			return resp, nil
		}
		// A failure status the server calls a notice is returned by the loop: its body is
		// read as a result's, from its start.
		hresp.Body = readAgain(read, err, hresp.Body)
	}
	body, err := boundread.Read(hresp.Body, maxResult+1, hresp.ContentLength)
	hresp.Body.Close()
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > maxResult {
		return nil, fmt.Errorf("the result is larger than %d bytes", maxResult)
	}
	resp.Body = body
	if resp.Envelope == nil && (isJSONType(hresp.Header) || isEventStreamType(hresp.Header)) {
		if env, ok := remedy.Parse(hresp.StatusCode, hresp.Header, body); ok {
			resp.Envelope = env
		}
	}
	return resp, nil
}

// parseFailure parses a failure's body, of which read is what boundread.Read read with the limit
// maxBody+1 (a read error is the end of the body, as ParseResponse has it). The body is read
// once: a body that fits the bound is parsed where it lies, and a longer one is handed to
// ParseResponse, which reads the decision members at its start.
func parseFailure(hresp *http.Response, read []byte, maxBody int64) *remedy.Envelope {
	if int64(len(read)) <= maxBody && len(read) <= remedy.DefaultMaxBody {
		env, _ := remedy.Parse(hresp.StatusCode, hresp.Header, read)
		return env
	}
	prefix := &http.Response{StatusCode: hresp.StatusCode, Header: hresp.Header, ContentLength: -1,
		Body: io.NopCloser(bytes.NewReader(read))}
	env, _ := remedy.ParseResponse(prefix, remedy.WithMaxBody(maxBody))
	return env
}

// readAgain is a body that yields read, then err or what rest has left.
func readAgain(read []byte, err error, rest io.ReadCloser) io.ReadCloser {
	r := io.MultiReader(bytes.NewReader(read), rest)
	if err != nil {
		r = io.MultiReader(bytes.NewReader(read), errReader{err})
	}
	return struct {
		io.Reader
		io.Closer
	}{r, rest}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func severity(e *remedy.Envelope) remedy.Severity {
	if e == nil {
		return ""
	}
	return e.Severity
}

// discard closes a body after reading a little of what is left, so that a small remainder
// does not cost the connection, and a large one is not read at all.
func discard(body io.ReadCloser) {
	io.CopyN(io.Discard, body, 4<<10)
	body.Close()
}

func isJSONType(h http.Header) bool {
	ct := httpop.Header(h, "Content-Type")
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(strings.ToLower(ct))
	return ct == "application/json" || strings.HasSuffix(ct, "+json") || ct == "text/json"
}

// isEventStreamType reports whether the Content-Type is text/event-stream, whose events may
// carry a failure (a JSON-RPC error, an MCP isError result), which Parse reads.
func isEventStreamType(h http.Header) bool {
	return httpop.IsEventStream(httpop.Header(h, "Content-Type"))
}

// guardRedirects copies hc with a redirect policy that drops the idempotency key and the
// confirmation token when a redirect leaves the original host (scheme, host and port).
func guardRedirects(hc *http.Client) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	cp := *hc
	inner := hc.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && !sameOrigin(req.URL, via[0].URL) && isPoll(req.Context()) {
			return errPollRedirect // a poll never takes the caller's credentials elsewhere
		}
		if len(via) > 0 && !sameOrigin(req.URL, via[0].URL) {
			// In every spelling: a key not safe to repeat is sent in lower case.
			delFold(req.Header, remedy.HeaderIdempotencyKey)
			delFold(req.Header, remedy.HeaderConfirmationToken)
		}
		if inner != nil {
			return inner(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cp
}

// originOf is u's scheme and host, lower-cased ("https://api.example.com:8443"): the key a
// server's calls are paced under. "" for a URL without a host.
func originOf(u *url.URL) string {
	if u == nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}

// buildRequest places an operation's arguments: path parameters into the path, query ones
// into the query, the rest into a JSON body. The body keeps the arguments' bytes: when no
// argument leaves it, it is exactly args.
func buildRequest(ctx context.Context, base, baseQuery string, op *registered, args json.RawMessage) (*http.Request, error) {
	names := op.params
	var (
		pathBuf  [4]string
		pathVals = pathBuf[:0]
		query    url.Values
		body     []byte
	)
	if len(names) <= len(pathBuf) {
		pathVals = pathBuf[:len(names)]
	} else {
		pathVals = make([]string, len(names))
	}
	switch {
	case len(args) > 0 && (len(names) > 0 || len(op.Query) > 0 || op.bodyless()):
		t := tape.Get()
		defer tape.Put(t)
		if !t.Parse(tape.View(args)) || t.Root().Kind() != tape.Object {
			return nil, argumentsError("", "not_object", "the arguments are not a JSON object")
		}
		var kept bytes.Buffer
		moved := false
		for it := t.Root().Iter(); it.Next(); {
			name, v := it.Key(), it.Val()
			switch {
			case slices.Contains(names, name):
				s, err := paramText(v)
				if err != nil {
					return nil, argumentsError(name, "type", "path parameter "+strconv.Quote(name)+": "+err.Error())
				}
				pathVals[slices.Index(names, name)] = s
				moved = true
			case op.bodyless() || slices.Contains(op.Query, name):
				if query == nil {
					query = url.Values{}
				}
				if err := addQuery(query, name, v); err != nil {
					return nil, argumentsError(name, "type", "query parameter "+strconv.Quote(name)+": "+err.Error())
				}
				moved = true
			default:
				if kept.Len() == 0 {
					kept.WriteByte('{')
				} else {
					kept.WriteByte(',')
				}
				kt := it.KeyTok()
				kept.WriteString(t.Src[kt.Start:kt.End])
				kept.WriteByte(':')
				kept.WriteString(v.Raw())
			}
		}
		switch {
		case op.bodyless():
		case !moved:
			body = args
		case kept.Len() == 0:
			body = []byte("{}")
		default:
			kept.WriteByte('}')
			body = kept.Bytes()
		}
	case op.bodyless():
	case len(args) > 0:
		body = args
	default:
		body = []byte("{}")
	}
	if len(query) == 0 && op.fixed != nil {
		return fixedRequest(ctx, op.fixed, body), nil
	}
	// The URL is written in one piece: the base, the path with its parameters, the query.
	var target strings.Builder
	target.Grow(len(base) + len(op.Path) + 32)
	target.WriteString(base)
	if err := expandPath(&target, op.Path, names, pathVals); err != nil {
		return nil, err
	}
	switch {
	case len(query) > 0 && baseQuery != "":
		target.WriteString("?" + baseQuery + "&" + query.Encode())
	case len(query) > 0:
		target.WriteString("?" + query.Encode())
	case baseQuery != "":
		target.WriteString("?" + baseQuery)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, op.Method, target.String(), rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		hreq.Header["Content-Type"] = jsonContentType
	}
	return hreq, nil
}

// fixedRequest is an attempt of an operation whose URL is fixed's, with body (nil: none).
func fixedRequest(ctx context.Context, fixed *http.Request, body []byte) *http.Request {
	o := &outgoing{url: *fixed.URL, data: body}
	hreq := fixed.WithContext(ctx)
	hreq.URL = &o.url
	hreq.Header = make(http.Header, 4)
	if body != nil {
		o.body.Reset(body)
		// A *bytes.Reader under io.NopCloser, as http.NewRequest makes it: net/http knows it
		// is in memory, and writes the header block and the body in one go.
		hreq.Body, hreq.GetBody, hreq.ContentLength = io.NopCloser(&o.body), o.getBody, int64(len(body))
		hreq.Header["Content-Type"] = jsonContentType
	}
	return hreq
}

// outgoing is what an attempt made by fixedRequest has of its own, in one allocation: its URL
// (a copy: a RoundTripper must not change the request it sends, but one that does must not
// change the next attempt's) and its body.
type outgoing struct {
	url  url.URL
	body bytes.Reader
	data []byte
}

// getBody is the request's GetBody, with which net/http sends the body again (a 307 or 308
// redirect, a retry of its own).
func (o *outgoing) getBody() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.data)), nil
}

// pathParams lists the {name} parameters of a path template.
func pathParams(tmpl string) ([]string, error) {
	var names []string
	for rest := tmpl; ; {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			return names, nil
		}
		if rest[i] == '}' {
			return nil, fmt.Errorf("path %q: unmatched }", tmpl)
		}
		j := strings.IndexAny(rest[i+1:], "{}")
		if j < 0 || rest[i+1+j] == '{' {
			return nil, fmt.Errorf("path %q: unclosed {", tmpl)
		}
		name := rest[i+1 : i+1+j]
		if name == "" {
			return nil, fmt.Errorf("path %q: empty parameter name", tmpl)
		}
		names = append(names, name)
		rest = rest[i+j+2:]
	}
}

// expandPath writes a template with its parameters (names, in order) filled with vals,
// escaped.
func expandPath(b *strings.Builder, tmpl string, names, vals []string) error {
	if len(names) == 0 {
		b.WriteString(tmpl)
		return nil
	}
	for n, rest := 0, tmpl; ; n++ {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			return nil
		}
		j := strings.IndexByte(rest, '}')
		v := vals[n]
		if v == "" {
			return argumentsError(names[n], "required", "missing path parameter "+strconv.Quote(names[n]))
		}
		if v == "." || v == ".." {
			// A dot segment is not escaped by PathEscape and would move the request to
			// another resource once the path is normalized.
			return argumentsError(names[n], "invalid_value", "path parameter "+strconv.Quote(names[n])+": "+strconv.Quote(v)+" is a dot segment")
		}
		b.WriteString(rest[:i])
		b.WriteString(url.PathEscape(v))
		rest = rest[j+1:]
	}
}

// paramText is an argument as a path segment: a string's text, a number or boolean as written.
func paramText(v tape.Val) (string, error) {
	switch v.Kind() {
	case tape.String:
		s := v.Str()
		if s == "" {
			return "", errors.New("empty")
		}
		return s, nil
	case tape.Number, tape.True, tape.False:
		return v.Raw(), nil
	}
	return "", errors.New("must be a string, number or boolean")
}

// addQuery adds an argument to the query: scalars as text, an array of scalars as repeated
// parameters, null as nothing, anything else as its JSON text.
func addQuery(q url.Values, name string, v tape.Val) error {
	switch v.Kind() {
	case tape.Null:
		return nil
	case tape.Array:
		for it := v.Iter(); it.Next(); {
			s, err := paramText(it.Val())
			if err != nil && it.Val().Kind() != tape.String {
				q.Add(name, it.Val().Raw())
				continue
			}
			q.Add(name, s)
		}
		return nil
	case tape.Object:
		q.Add(name, v.Raw())
		return nil
	case tape.String:
		q.Add(name, v.Str())
		return nil
	}
	s, err := paramText(v)
	q.Add(name, s)
	return err
}

// Operations returns the operations registered with c (by hand or from LoadOpenAPI), sorted by
// name.
func (c *Client) Operations() []Operation {
	c.mu.RLock()
	ops := make([]Operation, 0, len(c.ops))
	for _, r := range c.ops {
		ops = append(ops, r.Operation)
	}
	c.mu.RUnlock()
	slices.SortFunc(ops, func(a, b Operation) int { return strings.Compare(a.Name, b.Name) })
	return ops
}
