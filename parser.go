package remedy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unsafe"

	"github.com/remedy-go/remedy/internal/jsonscan"
	"github.com/remedy-go/remedy/internal/jsonw"
	"github.com/remedy-go/remedy/internal/prose"
	"github.com/remedy-go/remedy/internal/tape"
)

// parser holds one parse: the response, the envelope being filled, and the retry facts the
// dialect readers found. full is false on the classification path, where readers skip
// everything that would allocate (issues, raw JSON, nested errors).
type parser struct {
	status    int
	header    http.Header
	body      string
	full      bool
	truncated bool
	e         Envelope // filled in place: the parser lives on the caller's stack
	facts     retryFacts
	top       topMembers
	// bodyStatus is a status the body states (statusCode, status, code), used when the
	// transport gave none, or a success.
	bodyStatus int
	// field is the issue an object states at its own level; pending says it holds something.
	field   Issue
	pending bool
	depth   int // nesting of bodies inside bodies (MCP text holding an envelope)
	// needFull is set on the classification path when the decision needs what only the
	// full parse reads (nested failures, issues that namesFix must look into).
	needFull bool
	// unread is set on the classification path when a reader passed over field-level facts
	// (issues, an example request) that the full parse may keep; kept, when it could tell
	// that the full parse keeps at least one. They decide whether a failure names a fix, and
	// so whether it is retryable (parser.namesFix).
	unread, kept bool
	// alt are the codes besides Code the category may be read from (see related).
	alt  [4]string
	nalt int
	// arena holds the JSON values the envelope keeps (full parse only), shared with children.
	arena *arena
	// owned says that body is the parse's own copy of the caller's bytes (see ownedMax), so
	// that the envelope may keep views of it.
	owned bool
	lists []json.RawMessage // the block the lists of raw values are cut from (see rawList)
	h     headerFacts
}

// headerFacts are the headers the rules consult on every parse, read in one pass over the
// header map (cheaper than a lookup for each). Rarer ones are looked up when needed.
type headerFacts struct {
	shouldRetry, stripeShouldRetry, rateLimitRemaining, retryAfterMs, retryAfter string
	date, contentType, traceparent, replayed, amznErrorType, requestIDStripe     string
	openai                                                                       bool
	requestID                                                                    string
	requestIDRank                                                                int
}

func (h *headerFacts) read(header http.Header) {
	h.requestIDRank = 1 << 30
	for k, vs := range header {
		if len(vs) == 0 {
			continue
		}
		v := vs[0]
		rank := -1
		switch k {
		case "X-Should-Retry":
			h.shouldRetry = v
		case "Stripe-Should-Retry":
			h.stripeShouldRetry = v
		case "X-Ratelimit-Remaining":
			h.rateLimitRemaining = v
		case "Retry-After-Ms":
			h.retryAfterMs = v
		case "Retry-After":
			h.retryAfter = v
		case "Date":
			h.date = v
		case "Content-Type":
			h.contentType = v
		case "Traceparent":
			h.traceparent = v
		case "Idempotency-Replayed", "Idempotent-Replayed", "X-Idempotency-Replayed", "X-Idempotent-Replayed": // see Replayed
			if !replayTrue(h.replayed) {
				h.replayed = v
			}
		case "X-Amzn-Errortype":
			h.amznErrorType = v
		case "Openai-Version", "Openai-Processing-Ms":
			h.openai = true
		// Request ids, in order of preference when several are sent.
		case "X-Request-Id":
			rank = 0
		case "Request-Id":
			h.requestIDStripe, rank = v, 1
		case "X-Amzn-Requestid":
			rank = 2
		case "X-Amz-Request-Id":
			rank = 3
		case "X-Github-Request-Id":
			rank = 4
		case "X-Ms-Request-Id":
			rank = 5
		case "X-Slack-Req-Id":
			rank = 6
		case "Audit-Id":
			rank = 7
		case "Cf-Ray":
			rank = 8
		case "X-Goog-Request-Id":
			rank = 9
		case "X-Correlation-Id":
			rank = 10
		}
		if rank >= 0 && rank < h.requestIDRank {
			h.requestID, h.requestIDRank = v, rank
		}
	}
}

// ownedMax is the largest body a full parse copies whole before reading it. The envelope of
// such a body shares that one copy (strings and raw values are views of it); the envelope of a
// larger body copies out only what it keeps, so that it does not keep a large body alive for a
// few short strings.
const ownedMax = 16 << 10

// arena packs the raw JSON values of one envelope into few allocations. Each value handed out
// is a slice whose capacity ends where it ends: appending to it reallocates, and a new chunk is
// taken when one is full, so no value is ever written twice.
type arena struct {
	buf  []byte
	hint int
}

func (a *arena) compact(s string) json.RawMessage {
	if cap(a.buf)-len(a.buf) < len(s) {
		a.buf = make([]byte, 0, max(len(s), a.hint))
	}
	start := len(a.buf)
	a.buf = jsonw.AppendCompact(a.buf, s)
	return a.buf[start:len(a.buf):len(a.buf)]
}

// topMembers are the top-level members the readers test for their markers, found in one pass.
type topMembers struct {
	root                                                    tape.Val
	error, errors, message, messageCap, typ, title, status  tape.Val
	detail, code, statusCode, jsonrpc, result, isError      tape.Val
	content, kind, ok, success, awsType, errorCode, data    tape.Val
	extensions, documentationURL, reason, details, jsonapi  tape.Val
	errorDescription, errorURI, needed, provided, metadata  tape.Val
	requestID, reasonCap, moreInfo, msg, meta, errorMessage tape.Val
}

func (t *topMembers) read(root tape.Val) {
	*t = topMembers{root: root}
	if root.Kind() != tape.Object {
		return
	}
	tp, pos := root.Ref()
	for end := root.Tok().Next; pos < end; {
		kt, v := &tp.Toks[pos], tp.At(pos+2)
		pos = tp.Toks[pos+1].Next
		name := tp.Src[kt.Start+1 : kt.End-1]
		if kt.Esc {
			name = jsonscan.Unescape(name)
		}
		var dst *tape.Val
		switch name {
		case "error":
			dst = &t.error
		case "errors":
			dst = &t.errors
		case "message":
			dst = &t.message
		case "Message":
			dst = &t.messageCap
		case "type":
			dst = &t.typ
		case "title":
			dst = &t.title
		case "status":
			dst = &t.status
		case "detail":
			dst = &t.detail
		case "code":
			dst = &t.code
		case "statusCode":
			dst = &t.statusCode
		case "jsonrpc":
			dst = &t.jsonrpc
		case "result":
			dst = &t.result
		case "isError":
			dst = &t.isError
		case "content":
			dst = &t.content
		case "kind":
			dst = &t.kind
		case "ok":
			dst = &t.ok
		case "success":
			dst = &t.success
		case "__type":
			dst = &t.awsType
		case "error_code":
			dst = &t.errorCode
		case "data":
			dst = &t.data
		case "extensions":
			dst = &t.extensions
		case "documentation_url":
			dst = &t.documentationURL
		case "reason":
			dst = &t.reason
		case "Reason":
			dst = &t.reasonCap
		case "details":
			dst = &t.details
		case "jsonapi":
			dst = &t.jsonapi
		case "error_description":
			dst = &t.errorDescription
		case "error_uri":
			dst = &t.errorURI
		case "needed":
			dst = &t.needed
		case "provided":
			dst = &t.provided
		case "response_metadata":
			dst = &t.metadata
		case "request_id":
			dst = &t.requestID
		case "more_info":
			dst = &t.moreInfo
		case "msg":
			dst = &t.msg
		case "meta":
			dst = &t.meta
		case "error_message": // ogen's default error handler
			dst = &t.errorMessage
		default:
			continue
		}
		if !dst.Exists() {
			*dst = v
		}
	}
}

// run parses the body and reports whether the response is a failure.
func (p *parser) run() bool {
	if plainSuccess(p.status, p.body, p.truncated) {
		return false
	}
	p.h.read(p.header)
	if p.full && len(p.body) <= ownedMax {
		// One copy of a small body, which the envelope then keeps views of, costs less than
		// copying out each string and value it keeps.
		p.body, p.owned = strings.Clone(p.body), true
	}
	s := strings.TrimSpace(strings.TrimPrefix(p.body, "\ufeff"))
	truncated := p.truncated
	if s != "" && s[0] != '{' && eventStream(p.h.contentType, s) {
		// The JSON an event stream carries (sse.go); its events are whole even when the body
		// was cut at the bound, which cost the stream only its unfinished last event. A cut
		// stream is decided by a JSON-RPC response among the events read; without one its
		// answer lies past the bound, and at a status that is not a failure nothing read says
		// whether the call failed: that is not a success.
		data, rpc, ok := streamJSON(s, !truncated)
		switch {
		case ok && (rpc || !truncated || p.failureStatus()):
			s, truncated = data, false
		case truncated && !p.failureStatus():
			p.e.Message = fmt.Sprintf("the event stream is longer than the %d bytes read, and its answer "+
				"is not among them: whether the call failed is not known", len(p.body))
			p.finish(DialectTruncated)
			return true
		}
	}
	var d Dialect
	if s != "" && !truncated {
		switch s[0] {
		case '{':
			t := tape.For(len(s))
			if t.Parse(s) {
				d = p.readJSON(t.Root())
			}
			tape.Put(t)
		case '<':
			if p.failureStatus() {
				d = p.readXML(s)
			}
		}
	} else if s != "" && s[0] == '{' && p.failureStatus() {
		// Cut at the bound: not a document, but its start may say what decides (prefix.go).
		// Only a failure status is read so: the in-band dialects need the whole structure.
		d = p.readPrefix(s)
	}
	if d == "" {
		if !p.failureStatus() {
			return false
		}
		d = DialectUnstructured
		if !truncated { // a cut text may end anywhere: its facts would be guesses
			p.goText(s) // net/http's and fiber's default: a Go validator's or decoder's text
		}
		p.readText(s)
	}
	p.finish(d)
	return true
}

// plainSuccess reports whether a response is the common success, told apart without reading
// its body; Parse and Classify test it before they set anything up. A body cut at the bound is
// read on: the answer of an event stream may lie past the cut.
func plainSuccess(status int, body string, truncated bool) bool {
	return status >= 200 && status < 400 && status != 207 && !truncated && !inBandPossible(body)
}

// inBandPossible reports whether a success body could hold an in-band failure: every
// in-band reader needs a member named error, errors or isError, or Slack's ok (a name spelled
// with escapes is let through to the full read).
func inBandPossible(body string) bool {
	return strings.Contains(body, "rror") || strings.Contains(body, `"ok"`) || strings.Contains(body, `\u`)
}

// failureStatus reports whether the HTTP status alone makes the response a failure.
func (p *parser) failureStatus() bool { return p.status >= 400 }

// allowed reports whether a reader may claim the body given the status: a failure status
// admits every reader; a success admits only the dialects that carry failures inside a 2xx
// (and a 207 Multi-Status, whose body reports per-item failures); no status (0) lets the body
// decide.
func (p *parser) allowed(r *dialectReader) bool {
	return p.status >= 400 || p.status == 0 || p.status == 207 || r.inBand
}

// readJSON tries the readers in order on an object and returns the dialect that claimed it.
func (p *parser) readJSON(root tape.Val) Dialect {
	p.top.read(root)
	for i := range readers {
		r := &readers[i]
		if !p.allowed(r) {
			continue
		}
		if d := p.read(r.id); d != "" {
			return d
		}
	}
	return ""
}

// finish fills what every dialect shares: status, category, severity, the retry decision,
// request ids from headers, and a code when the body gave none.
func (p *parser) finish(d Dialect) {
	e := &p.e
	e.Dialect = d
	if e.Status == 0 {
		e.Status = p.status
	}
	if (e.Status == 0 && p.bodyStatus >= 100 || e.Status < 400 && p.bodyStatus >= 400) && p.bodyStatus <= 599 {
		// A failure carried inside a success (an MCP tool result, a 207) or without a
		// transport at all: the status the body states is the failure's.
		e.Status = p.bodyStatus
	}
	if len(e.Errors) > 0 {
		p.summarize()
	}
	if e.Code == "" {
		e.Code = statusCode(e.Status)
	}
	info := lookupCode(e.Code)
	if e.Category == "" {
		e.Category = p.category(info)
	}
	if e.Severity == "" {
		e.Severity = SeverityError
	}
	p.resolveRetry(info)
	if e.RequestID == "" {
		e.RequestID = p.h.requestID
	}
	if e.TraceID == "" {
		e.TraceID = traceparentID(p.h.traceparent)
	}
	if replayTrue(p.h.replayed) {
		e.Replayed = true
	}
}

// statusCode names a status as a code: 503 → "service_unavailable".
func statusCode(status int) string {
	if status < 400 {
		return "error" // no status, or a failure inside a success (200 "ok" names no failure)
	}
	t := http.StatusText(status)
	if t == "" {
		if status >= 500 {
			return "server_error"
		}
		return "client_error"
	}
	return statusCodeNames[status]
}

var statusCodeNames = func() map[int]string {
	m := make(map[int]string)
	snake := strings.NewReplacer(" ", "_", "-", "_", "'", "")
	for s := 100; s < 600; s++ {
		if t := http.StatusText(s); t != "" {
			m[s] = snake.Replace(strings.ToLower(t))
		}
	}
	return m
}()

// rateLimitExhausted: a 403 with X-RateLimit-Remaining: 0 is GitHub's primary rate limit, not
// a permission problem.
func (p *parser) rateLimitExhausted() bool {
	return p.e.Status == 403 && strings.TrimSpace(p.h.rateLimitRemaining) == "0"
}

// category decides the category when the body did not state one: a 403 with an exhausted
// rate limit is a rate limit; else the code (or a related code) if it is well known; else the
// status. A generic server-error code does not hide what a 502, 503 or 504 says: the
// dependency is down.
func (p *parser) category(info codeInfo) Category {
	e := &p.e
	if p.rateLimitExhausted() {
		return CategoryRateLimit
	}
	byStatus := statusCategory(e.Status)
	c := info.category
	for i := 0; c == "" && i < p.nalt; i++ {
		c = lookupCode(p.alt[i]).category
	}
	switch {
	case c == CategoryInternal && byStatus == CategoryDependency:
		return byStatus
	case c != "":
		return c
	case byStatus != "":
		return byStatus
	}
	if len(e.Errors) > 0 {
		return e.Errors[p.best()].Category
	}
	return ""
}

// summarize makes the top level of a list of failures speak for them: every issue is
// collected at the top, and the most actionable failure lends its code and message when the
// top level has none.
func (p *parser) summarize() {
	e := &p.e
	b := &e.Errors[p.best()]
	if e.Code == "" {
		e.Code = b.Code
	}
	if e.Message == "" {
		e.Message = b.Message
		if n := len(e.Errors); n > 1 {
			e.Message += " (and " + strconv.Itoa(n-1) + " more)"
		}
	}
	if e.NextOperation == "" && b.NextOperation != "" {
		e.NextOperation, e.NextOperationArgs = b.NextOperation, b.NextOperationArgs
	}
	if len(e.Issues) == 0 {
		n := 0
		for i := range e.Errors {
			n += len(e.Errors[i].Issues)
		}
		if n > 0 {
			e.Issues = make([]Issue, 0, n)
			for i := range e.Errors {
				e.Issues = append(e.Issues, e.Errors[i].Issues...)
			}
		}
	}
}

// best is the index of the most actionable nested failure (the first among equals).
func (p *parser) best() int {
	best := 0
	for i := range p.e.Errors {
		if actionability(&p.e.Errors[i]) > actionability(&p.e.Errors[best]) {
			best = i
		}
	}
	return best
}

// actionability ranks nested failures: one an agent can repair (it names fields) before one
// that names a prerequisite, before one that will pass on retry, before the rest.
func actionability(e *Envelope) int {
	switch {
	case len(e.Issues) > 0:
		return 3
	case e.NextOperation != "":
		return 2
	case e.Retryable:
		return 1
	}
	return 0
}

// reset readies c to read a failure nested in p's body.
func (p *parser) reset(c *parser) {
	*c = parser{status: p.status, header: p.header, full: p.full, arena: p.arena, owned: p.owned, h: p.h}
}

// done finishes a nested failure and returns it by value.
func (c *parser) done(d Dialect) Envelope {
	c.finish(d)
	return c.e
}

// --- small readers of JSON values shared by the dialects ---

// maxRawHeight bounds the nesting of the JSON values an envelope keeps (schemas, expected,
// received, arguments): deeper ones are dropped, so that every envelope's encodings, which nest
// them a few levels further, stay within what Parse reads back.
const maxRawHeight = tape.MaxDepth / 2

// raw keeps a value's JSON, compacted, when the parse wants details; null, absent and values
// nested deeper than maxRawHeight are nil.
func (p *parser) raw(v tape.Val) json.RawMessage {
	if !p.full || !v.Exists() || v.IsNull() || v.Height() > maxRawHeight {
		return nil
	}
	return p.keep(v.Raw())
}

// keep is a JSON value for the envelope: a view of it when it is compact (which the parse's
// own copy of the body holds, or detach moves out of the caller's), else a compacted copy in
// the envelope's arena.
func (p *parser) keep(raw string) json.RawMessage {
	if !jsonscan.HasControlOrSpace(raw) {
		return unsafe.Slice(unsafe.StringData(raw), len(raw))[:len(raw):len(raw)]
	}
	return p.arenaFor().compact(raw)
}

// arenaFor is the parse's arena, created on first use and shared with nested parsers so that
// their values pack into it too.
func (p *parser) arenaFor() *arena {
	if p.arena == nil {
		p.arena = &arena{hint: max(256, len(p.body)/4)}
	}
	return p.arena
}

func (p *parser) rawList(v tape.Val) []json.RawMessage {
	if !p.full || !v.IsArray() {
		return nil
	}
	if v.Height() > maxRawHeight {
		return nil
	}
	n := v.Len()
	if cap(p.lists)-len(p.lists) < n {
		// Lists are cut from one block, which doubles when full: a body of many issues with
		// allowed values costs a few allocations, not one per issue.
		p.lists = make([]json.RawMessage, 0, max(n, 8, 2*cap(p.lists), len(p.body)>>8))
	}
	out := p.lists[len(p.lists) : len(p.lists) : len(p.lists)+n]
	for it := v.Iter(); it.Next(); {
		out = append(out, p.keep(it.Val().Raw()))
	}
	p.lists = p.lists[:len(p.lists)+n]
	return out
}

func (p *parser) strList(v tape.Val) []string {
	if !p.full {
		return nil
	}
	if v.IsString() {
		if s := v.Str(); s != "" {
			return []string{s}
		}
		return nil
	}
	var out []string
	for it := v.Iter(); it.Next(); {
		if s := it.Val().Text(); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (p *parser) addIssue(is Issue) {
	if p.full {
		p.e.Issues = append(p.e.Issues, is)
	} else {
		p.unread, p.kept = true, true
	}
}

// flag reads an explicit boolean retry flag.
func (p *parser) flag(v tape.Val) {
	switch v.Kind() {
	case tape.True:
		p.facts.flag = 1
	case tape.False:
		p.facts.flag = -1
	}
}

// setStatus records a status the body states.
func (p *parser) setStatus(v tape.Val) {
	var n int
	switch v.Kind() {
	case tape.Number:
		f := v.Num()
		if f != float64(int(f)) {
			return
		}
		n = int(f)
	case tape.String:
		p.setStatusText(v.Str())
		return
	default:
		return
	}
	if n >= 100 && n <= 599 {
		p.bodyStatus = n
	}
}

// numericCode reads a numeric code: a number that is an HTTP status restates the status (it is
// recorded, and "" returned); any other is the API's own code, as text (Twilio's 21211,
// JSON-RPC's -32602).
func (p *parser) numericCode(v tape.Val) string {
	if n := v.Num(); n == float64(int(n)) && n >= 100 && n <= 599 {
		p.setStatus(v)
		return ""
	}
	return v.Raw()
}

// setStatusText records a status the body states as text: three digits.
func (p *parser) setStatusText(s string) {
	if len(s) != 3 {
		return
	}
	n := 0
	for i := 0; i < 3; i++ {
		if s[i] < '0' || s[i] > '9' {
			return
		}
		n = n*10 + int(s[i]-'0')
	}
	if n >= 100 && n <= 599 {
		p.bodyStatus = n
	}
}

// --- unstructured bodies ---

// readText takes what a human-readable body says: an HTML page's title, or the first line of
// plain text, bounded and made valid UTF-8.
func (p *parser) readText(s string) {
	if !p.full || s == "" {
		return
	}
	msg := s
	if s[0] == '<' {
		msg = htmlTitle(s)
	} else if s[0] == '{' || s[0] == '[' || s[0] == '"' {
		msg = "" // JSON we could not read: its text is not a message
	}
	if i := strings.IndexAny(msg, "\r\n"); i >= 0 {
		msg = msg[:i]
	}
	p.e.Message = prose.Clip(strings.TrimSpace(msg), 200)
}

func htmlTitle(s string) string {
	head := s[:min(len(s), 4096)]
	for _, tag := range [...]string{"<title>", "<h1>"} {
		if i := indexASCIIFold(head, tag); i >= 0 {
			rest := s[i+len(tag):]
			if j := strings.IndexByte(rest, '<'); j >= 0 {
				return strings.Join(strings.Fields(rest[:j]), " ")
			}
		}
	}
	return ""
}

// indexASCIIFold finds lower-case ASCII needle in s ignoring ASCII case, byte for byte (so
// that the index is valid in s whatever else s holds).
func indexASCIIFold(s, needle string) int {
	for i := 0; i+len(needle) <= len(s); i++ {
		j := 0
		for ; j < len(needle); j++ {
			c := s[i+j]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != needle[j] {
				break
			}
		}
		if j == len(needle) {
			return i
		}
	}
	return -1
}

// traceparentID is the trace id of a W3C traceparent header: "00-<trace-id>-<parent-id>-<flags>".
func traceparentID(h string) string {
	h = strings.TrimSpace(h)
	if len(h) < 55 || h[2] != '-' || h[35] != '-' {
		return ""
	}
	id := h[3:35]
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return ""
		}
	}
	if id == "00000000000000000000000000000000" {
		return ""
	}
	return id
}
