package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/remedy-go/remedy"
	"github.com/tidwall/gjson"
)

// CodeInvalidRequest is the code of a request that does not follow the MCP transport: a
// header missing or naming what the endpoint does not support, a JSON-RPC message it does not
// handle. Sending it again unchanged cannot succeed.
const CodeInvalidRequest = "invalid_request"

// Defaults of MCPOptions's session limits.
const (
	// DefaultMaxMCPSessions is how many sessions the MCP endpoint holds at once: about 16 KiB
	// each while idle.
	DefaultMaxMCPSessions = 1000
	// DefaultMCPSessionIdle is how long a session may go without a request before it is
	// closed.
	DefaultMCPSessionIdle = 10 * time.Minute
	// DefaultMCPSessionsPerPrincipal is how many of the sessions one principal may hold.
	DefaultMCPSessionsPerPrincipal = 100
)

// mcpGate is the state of the MCP endpoint: its sessions, and what its shutdown waits for
// and ends.
type mcpGate struct {
	sessions *mcpSessions

	// mu orders the start of a request (calls.Add) with the shutdown (closed, then
	// calls.Wait).
	mu         sync.Mutex
	closed     bool
	calls      sync.WaitGroup  // the requests being answered, event streams aside
	streams    context.Context // the event streams' contexts end with it
	endStreams context.CancelFunc
}

// newMCPGate completes the MCP configuration's defaults and makes the endpoint's state.
func (a *API) newMCPGate() *mcpGate {
	c := &a.mcpConf
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxMCPSessions
	}
	if c.SessionIdleTimeout == 0 {
		c.SessionIdleTimeout = DefaultMCPSessionIdle
	}
	if c.SessionsPerPrincipal == 0 {
		c.SessionsPerPrincipal = DefaultMCPSessionsPerPrincipal
	}
	per := c.SessionsPerPrincipal
	if a.auth == nil {
		per = -1 // every caller is one principal, who may hold them all
	}
	g := &mcpGate{sessions: &mcpSessions{max: c.MaxSessions, perPrincipal: per,
		live: map[*mcp.ServerSession]Principal{}, held: map[Principal]int{}}}
	g.streams, g.endStreams = context.WithCancel(context.Background())
	return g
}

// admit lets r in, or reports that the endpoint has shut down (ok false). An event stream
// (a GET, or a subscriptions/listen) gets a context that ends with the shutdown; any other
// request is counted until done is called, so that the shutdown answers it before it closes
// its session. Once the shutdown has begun only GETs are let in: their streams end with the
// others, and the SDK answers a closed session's id 404.
func (g *mcpGate) admit(r *http.Request, method string) (_ *http.Request, done func(), ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed && r.Method != http.MethodGet {
		return r, nil, false
	}
	if r.Method == http.MethodGet || method == "subscriptions/listen" {
		ctx, cancel := context.WithCancel(r.Context())
		stop := context.AfterFunc(g.streams, cancel)
		return r.WithContext(ctx), func() { stop(); cancel() }, true
	}
	g.calls.Add(1)
	return r, g.calls.Done, true
}

// shutdown refuses the endpoint's new requests, lets those under way be answered, then ends
// its event streams and closes its sessions; the channel it returns is closed once they are.
func (g *mcpGate) shutdown() <-chan struct{} {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A session's Close drops the answers it has not written yet: the requests under way
		// are answered first.
		g.calls.Wait()
		g.endStreams()
		g.sessions.closeAll()
	}()
	return done
}

// serveMCP answers a request of the MCP path. Before the MCP SDK reads anything of it, the
// request goes through the same first stages as a REST request: the Host check, then
// authentication (every JSON-RPC method included, with op nil), then the principal's rate
// limit; on a stateful endpoint, a server/discover for a protocol version without sessions is
// refused (refuseSessionlessDiscover), and a request that would open a session beyond
// MCPOptions.MaxSessions is refused. Only then does the SDK see it, and only once the SDK has
// opened an event stream are the http.Server's read and write limits lifted for it. Once
// the API shuts down, every request but a GET is refused (see API.Shutdown).
//
// A tools/call is not charged to the rate limit here: the pipeline charges it as the REST
// request it maps to, and answers an empty bucket with a tool result the client can act on.
func (a *API) serveMCP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{api: a, w: w, r: r, ctx: r.Context()}
	hosts := a.mcpConf.AllowedHosts
	if len(hosts) == 0 {
		hosts = a.hosts
	}
	if !HostAllowed(r, hosts) {
		x.fail(errHostRefused())
		return
	}
	if err := a.identify(x, nil); err != nil {
		x.fail(err)
		return
	}
	var body []byte
	if r.Method == http.MethodPost && r.Body != nil {
		// The SDK reads the whole body anyway; it is read here first, within the same bound,
		// to learn whether it is a tool call.
		var err error
		lim := a.maxBody + mcpBodySlack + 1 // one byte over: the SDK refuses what is too large
		body, err = readAll(io.LimitReader(r.Body, lim), r.ContentLength, lim)
		if err != nil {
			x.fail(Error(CodeInvalidJSON, "the request body could not be read").with(
				remedy.Issue{Code: "syntax", Message: "the request body could not be read"}))
			return
		}
		r2 := *r
		r2.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		r = &r2
	}
	method := rpcMethod(body)
	if l := a.limiter; l != nil && method != "tools/call" {
		if ok, wait := l.take(string(x.principal)); !ok {
			x.fail(l.limited("too many requests", wait))
			return
		}
	}
	r, done, ok := a.gate.admit(r, method)
	if !ok {
		p := Error(CodeUnavailable, "the server is shutting down: its MCP endpoint takes no more requests; nothing was done")
		p.RetryAfter = time.Second
		x.fail(p)
		return
	}
	defer done()
	if !a.mcpConf.Stateless && method == "server/discover" && refuseSessionlessDiscover(w, r, body) {
		return
	}
	if !a.mcpConf.Stateless && r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
		s := a.gate.sessions
		if full, mine := s.reserve(x.principal); full || mine {
			msg := "the MCP endpoint holds as many sessions as it can"
			if mine {
				msg = "this caller holds as many MCP sessions as one caller may"
			}
			p := Error(CodeUnavailable, msg+"; one frees when its client closes it or leaves it idle for "+
				a.mcpConf.SessionIdleTimeout.String())
			p.RetryAfter = min(a.mcpConf.SessionIdleTimeout, 30*time.Second)
			x.fail(p)
			return
		}
		defer s.release(x.principal)
	}
	if a.auth != nil {
		r = a.gate.bind(r, x.principal)
	}
	sw := &sdkResponse{ResponseWriter: w, x: x, stream: r.Method == http.MethodGet}
	a.mcpHandler.ServeHTTP(sw, r)
	sw.finish()
}

// mcpBodySlack is what the MCP endpoint reads beyond the API's body limit: the JSON-RPC
// envelope around a tool call's arguments.
const mcpBodySlack = 64 << 10

// rpcMethod is the method of body when it is one JSON-RPC message (an object), or "". It is
// read once, for every stage that asks.
func rpcMethod(body []byte) string {
	t := bytes.TrimSpace(body)
	if len(t) == 0 || t[0] != '{' {
		return ""
	}
	return gjson.GetBytes(t, "method").String()
}

// mcpSessions counts the endpoint's live sessions, and the requests that may be opening one,
// in all and per principal.
type mcpSessions struct {
	max          int // negative: no cap
	perPrincipal int // negative: none but max

	mu      sync.Mutex
	live    map[*mcp.ServerSession]Principal
	opening int
	held    map[Principal]int // live and opening, per principal
}

// reserve holds a place for a session p's request may open, if there is one: full says the
// endpoint has none, mine that p holds its share.
func (s *mcpSessions) reserve(p Principal) (full, mine bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.max >= 0 && len(s.live)+s.opening >= s.max {
		return true, false
	}
	if s.perPrincipal >= 0 && s.held[p] >= s.perPrincipal {
		return false, true
	}
	s.opening++
	s.held[p]++
	return false, false
}

// release gives p's place back once the request is answered: the session it opened, if
// any, is counted live by then.
func (s *mcpSessions) release(p Principal) {
	s.mu.Lock()
	s.opening--
	s.drop(p)
	s.mu.Unlock()
}

// drop counts one place fewer for p. s.mu is held.
func (s *mcpSessions) drop(p Principal) {
	if s.held[p]--; s.held[p] <= 0 {
		delete(s.held, p)
	}
}

// closeAll closes the live sessions, side by side (a session's Close waits for the requests
// it is handling), and returns once they are closed.
func (s *mcpSessions) closeAll() {
	s.mu.Lock()
	live := slices.Collect(maps.Keys(s.live))
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, ss := range live {
		wg.Go(func() { ss.Close() })
	}
	wg.Wait()
}

// add counts ss, opened by p, live until it closes.
func (s *mcpSessions) add(ss *mcp.ServerSession, p Principal) {
	s.mu.Lock()
	_, dup := s.live[ss]
	if !dup {
		s.live[ss] = p
		s.held[p]++
	}
	s.mu.Unlock()
	if dup {
		return
	}
	go func() {
		ss.Wait()
		s.mu.Lock()
		delete(s.live, ss)
		s.drop(p)
		s.mu.Unlock()
	}()
}

// bind hands the MCP SDK the principal r was authenticated as, as the user of its TokenInfo:
// the SDK binds a session to the user that opened it and refuses the session's id to anyone
// else (403), so that a leaked id opens no other caller's event stream. The SDK takes a
// TokenInfo only from its bearer-token middleware, which reads an Authorization header: r
// passes through it with one, and reaches the SDK's handler with the caller's own headers.
func (g *mcpGate) bind(r *http.Request, p Principal) *http.Request {
	h := r.Header.Clone()
	h.Set("Authorization", "Bearer principal")
	r2 := r.WithContext(context.WithValue(r.Context(), boundKey{}, bound{p, r.Header}))
	r2.Header = h
	return r2
}

// bound is what bind passes through the SDK's middleware: the principal, and the caller's
// headers.
type bound struct {
	principal Principal
	header    http.Header
}

type boundKey struct{}

// boundHandler is the SDK's handler behind its bearer-token middleware, which takes the
// principal from the request's context (see bind).
func boundHandler(sdk http.Handler) http.Handler {
	verify := func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		b, _ := r.Context().Value(boundKey{}).(bound)
		if b.principal == "" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: string(b.principal)}, nil
	}
	restore := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := r.Context().Value(boundKey{}).(bound); ok {
			r.Header = b.header
		}
		sdk.ServeHTTP(w, r)
	})
	return auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(restore)
}

// countSessions is the receiving middleware that counts a session of the endpoint live once
// its initialize succeeded (a session that fails to initialize is closed by the SDK at the
// end of its request). Sessions without an id are not the endpoint's: a stateless request's,
// or another transport's (MCPServer).
func (g *mcpGate) countSessions(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method == "initialize" && err == nil {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
				p := Anonymous
				if e := req.GetExtra(); e != nil && e.TokenInfo != nil {
					p = Principal(e.TokenInfo.UserID)
				}
				g.sessions.add(ss, p)
			}
		}
		return res, err
	}
}

// sdkResponse stands between the MCP SDK and the client. The SDK's own plain-text refusals
// (a body that is not JSON-RPC, an unknown session, a wrong method, header or media type)
// are answered with the API's envelope instead, chosen by their status and text; the error
// messages of its JSON-RPC answers are rewritten in plain words where they hold the Go
// decoder's text, which names the SDK's types; an event stream, once open, is exempted from
// the http.Server's read and write limits. Everything else passes through.
type sdkResponse struct {
	http.ResponseWriter
	x      *exchange
	stream bool // a GET: the response is a session's event stream

	wrote   bool
	refusal int    // the status of a refusal held until the SDK's text is read
	text    []byte // the refusal's text, bounded
	format  byte   // 'j' for application/json, 's' for text/event-stream
}

func (w *sdkResponse) WriteHeader(code int) {
	if w.wrote || w.refusal != 0 {
		return
	}
	h := w.Header()
	ct := h.Get("Content-Type")
	if code >= 400 && strings.HasPrefix(ct, "text/plain") {
		w.refusal = code
		h.Del("Content-Type")
		return
	}
	w.wrote = true
	switch {
	case strings.HasPrefix(ct, "application/json"):
		w.format = 'j'
	case strings.HasPrefix(ct, "text/event-stream"):
		w.format = 's'
		if w.stream && code == http.StatusOK {
			// A client's event stream lasts as long as its session: the http.Server's read
			// and write limits would cut it, at the first message sent once they have passed.
			rc := http.NewResponseController(w.ResponseWriter)
			rc.SetReadDeadline(time.Time{})
			rc.SetWriteDeadline(time.Time{})
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sdkResponse) Write(b []byte) (int, error) {
	if !w.wrote && w.refusal == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.refusal != 0 {
		if room := 1024 - len(w.text); room > 0 {
			w.text = append(w.text, b[:min(room, len(b))]...)
		}
		return len(b), nil
	}
	if w.format != 0 && bytes.Contains(b, rpcErrorMark) {
		if _, err := w.ResponseWriter.Write(plainRPCErrors(b, w.format)); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *sdkResponse) Flush() {
	if w.refusal != 0 {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *sdkResponse) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish sends the envelope of a refusal once the SDK is done.
func (w *sdkResponse) finish() {
	if w.refusal != 0 {
		w.x.fail(mcpRefusal(w.refusal, string(w.text), w.Header(), w.x.api.mcpConf))
	}
}

// mcpRefusal is the envelope for a refusal of the MCP SDK's, by its status and text: what
// the caller must change, and not retryable when sending it again unchanged cannot succeed.
func mcpRefusal(status int, text string, h http.Header, conf MCPOptions) *Problem {
	has := func(s string) bool { return strings.Contains(text, s) }
	switch status {
	case http.StatusNotFound:
		return Error(CodeNotFound, "no MCP session has this Mcp-Session-Id (it was closed, or expired after "+
			conf.SessionIdleTimeout.String()+" without a request): initialize a new session")
	case http.StatusMethodNotAllowed:
		allow := h.Get("Allow")
		if allow == "" {
			allow = "POST"
		}
		p := Error(CodeMethodNotAllowed, "the MCP endpoint takes "+allow)
		p.Header = map[string]string{"Allow": allow}
		return p
	case http.StatusUnsupportedMediaType:
		return Error(CodeUnsupportedMediaType, "send the JSON-RPC message with Content-Type: application/json")
	case http.StatusRequestEntityTooLarge:
		return Error(CodePayloadTooLarge, "the JSON-RPC message is larger than the MCP endpoint accepts")
	case http.StatusForbidden:
		if has("user mismatch") {
			return Error(CodeForbidden, "this MCP session was opened by another caller")
		}
		return Error(CodeForbidden, "the MCP endpoint refuses this request")
	case http.StatusConflict:
		return Error(CodeConflict, "another request holds this event stream")
	}
	if status >= 500 {
		return Error(CodeInternalError, "")
	}
	var msg string
	switch {
	case has("malformed payload"), has("non-empty body"), has("failed to read body"):
		// The body is not JSON-RPC at all (not JSON, not an object, empty): as REST answers a
		// body that is not JSON.
		msg = "the request is not a valid MCP message (JSON-RPC 2.0)"
		return Error(CodeInvalidJSON, msg).with(remedy.Issue{Code: "syntax", Message: msg})
	case has("Unsupported protocol version"):
		msg = "the MCP-Protocol-Version header names a version this server does not speak"
		if _, v, ok := strings.Cut(text, "supported versions: "); ok {
			v, _, _ = strings.Cut(v, ")")
			msg += "; supported versions: " + strings.ReplaceAll(v, ",", ", ")
		}
	case has("Accept must contain 'text/event-stream'"):
		msg = "a GET of the MCP endpoint opens an event stream: send Accept: text/event-stream"
	case has("Accept must contain both"):
		msg = "send Accept: application/json, text/event-stream"
	case has("GET requires an Mcp-Session-Id"):
		msg = "a GET of the MCP endpoint opens the event stream of a session: initialize one, then send its Mcp-Session-Id"
	case has("DELETE requires an Mcp-Session-Id"):
		msg = "a DELETE of the MCP endpoint closes a session: send its Mcp-Session-Id"
	case has("batching is not supported"):
		msg = "send one JSON-RPC message per request: this protocol version has no batches"
	case has("Last-Event-ID"), has("replay"):
		msg = "the Last-Event-ID header is not one this stream can resume from"
	case has("not handled"), has("unsupported"):
		msg = "the server does not handle this JSON-RPC method"
	case has("id for"):
		msg = "a JSON-RPC request needs an id, and a notification has none"
	case has(`"params"`):
		msg = "this JSON-RPC method needs params"
	default:
		msg = "the request is not one the MCP endpoint accepts"
	}
	return Error(CodeInvalidRequest, msg)
}

// rpcErrorMark starts the error member of a JSON-RPC response as the SDK encodes it.
var rpcErrorMark = []byte(`"error":{"code":`)

// plainRPCErrors rewrites the error messages of the JSON-RPC responses in b, a JSON body
// (format 'j') or one server-sent event (format 's').
func plainRPCErrors(b []byte, format byte) []byte {
	if format == 'j' {
		return plainRPCBody(b)
	}
	i := bytes.Index(b, []byte("data: "))
	if i < 0 || (i > 0 && b[i-1] != '\n') {
		return b
	}
	start := i + len("data: ")
	end := bytes.IndexByte(b[start:], '\n')
	if end < 0 {
		return b
	}
	end += start
	out := make([]byte, 0, len(b))
	out = append(out, b[:start]...)
	out = append(out, plainRPCBody(b[start:end])...)
	return append(out, b[end:]...)
}

// plainRPCBody rewrites a JSON-RPC message, or a batch of them.
func plainRPCBody(b []byte) []byte {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(t, &batch) != nil {
			return b
		}
		for i, m := range batch {
			batch[i] = plainRPCMessage(m)
		}
		out, err := json.Marshal(batch)
		if err != nil {
			return b
		}
		return out
	}
	return plainRPCMessage(b)
}

// plainRPCMessage rewrites the error message of one JSON-RPC response when it holds the Go
// decoder's text, and gives it the code invalid params (-32602) when it had none.
func plainRPCMessage(b []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m["error"] == nil {
		return b
	}
	var e struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}
	if json.Unmarshal(m["error"], &e) != nil {
		return b
	}
	plain, ok := plainDecodeError(e.Message)
	if !ok {
		return b
	}
	e.Message = plain
	if e.Code == 0 {
		e.Code = -32602
	}
	var err error
	if m["error"], err = json.Marshal(e); err != nil {
		return b
	}
	out, err := json.Marshal(m)
	if err != nil {
		return b
	}
	return out
}

// plainDecodeError says in plain words what a JSON-RPC error message from the Go decoder
// says ("handling 'tools/call': invalid params: unmarshaling ... into a
// *mcp.CallToolParamsRaw: json: cannot unmarshal ... into Go struct field
// mcp.CallToolParamsRaw.name of type string"): which member of params has the wrong kind of
// value. It reports false for a message that needs no rewriting.
func plainDecodeError(msg string) (string, bool) {
	if !strings.Contains(msg, "unmarshal") && !strings.Contains(msg, "Go struct field") && !strings.Contains(msg, "*mcp.") {
		return msg, false
	}
	what := "invalid params"
	if rest, ok := strings.CutPrefix(msg, "handling '"); ok {
		if method, _, ok := strings.Cut(rest, "'"); ok && isMethodName(method) {
			what += " for " + method
		}
	}
	_, field, ok := strings.Cut(msg, "Go struct field ")
	if !ok {
		return what + ": the params are not the object this method takes", true
	}
	field, goType, _ := strings.Cut(field, " of type ")
	if parts := strings.Split(field, "."); len(parts) > 2 {
		field = strings.Join(parts[2:], ".")
	} else if len(parts) == 2 {
		field = parts[1]
	}
	if !isMethodName(field) {
		return what + ": the params are not the object this method takes", true
	}
	out := what + ": params." + field + " must be " + goKind(goType)
	if got := arrivedKind(msg); got != "" {
		out += ", not " + got
	}
	return out, true
}

// isMethodName reports whether s is made of the characters of method and member names, so
// that nothing else of the decoder's text is repeated.
func isMethodName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '/' || c == '.' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// goKind is the JSON kind a Go type decodes, with its article.
func goKind(t string) string {
	t = strings.TrimLeft(strings.TrimSpace(t), "*")
	switch {
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	}
	return "an object"
}

// arrivedKind is the kind of value the decoder found, from its "cannot unmarshal X into"
// (a kind name, or the start of the value, quoted).
func arrivedKind(msg string) string {
	_, rest, ok := strings.Cut(msg, "cannot unmarshal ")
	if !ok {
		return ""
	}
	if strings.HasPrefix(rest, `"`) {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return ""
		}
		v, err := strconv.Unquote(q)
		if err != nil || strings.TrimSpace(v) == "" {
			return ""
		}
		switch c := strings.TrimSpace(v)[0]; {
		case c == '{':
			return "an object"
		case c == '[':
			return "an array"
		case c == '"':
			return "a string"
		case c == 't' || c == 'f':
			return "a boolean"
		case c == 'n':
			return "null"
		default:
			return "a number"
		}
	}
	word, _, _ := strings.Cut(rest, " ")
	switch word {
	case "object", "array", "string", "number", "bool":
		return jsonKindWord(word)
	}
	return ""
}

func jsonKindWord(w string) string {
	switch w {
	case "object", "array":
		return "an " + w
	case "bool":
		return "a boolean"
	}
	return "a " + w
}
