package remedy

import (
	"encoding/json"
	"strings"

	"github.com/remedy-go/remedy/internal/tape"
)

// dialectReader recognizes one family of JSON error bodies and fills the envelope from it.
type dialectReader struct {
	id     readerID
	inBand bool // the family can report a failure inside a 2xx
}

type readerID uint8

const (
	rMCP        readerID = iota // jsonrpc result / bare CallToolResult with isError
	rJSONRPC                    // jsonrpc + error{code, message}
	rKubernetes                 // kind: Status, status: Failure
	rSlack                      // ok: false, error: "code"
	rCloudflare                 // success: false, errors[]
	rAnthropic                  // type: error, error{type, message}
	rGraphQL                    // errors[{message, path, locations, extensions}]
	rJSONAPI                    // errors[{status, title, detail, source}]
	rGitHub                     // message + documentation_url / errors[{resource, field, code}]
	rProblem                    // type/title/status/detail (+ agent extensions)
	rErrorObj                   // error{...}: agent, agent spec, Google, Stripe, OpenAI, OData
	rOAuth2                     // error: "invalid_grant", error_description
	rAX                         // error_code, message, suggestion, details[]
	rAWSJSON                    // __type / X-Amzn-ErrorType
	rRPC                        // grpc-gateway's google.rpc.Status, connect's and twirp's errors (dialects_rpc.go)
	rGeneric                    // message / detail / errors map
)

// readers are tried in this order, most specific markers first: a body that two readers could
// read goes to the one whose markers are least likely to appear by accident.
var readers = [...]dialectReader{
	{rMCP, true}, {rJSONRPC, true}, {rKubernetes, false}, {rSlack, true}, {rCloudflare, true},
	{rAnthropic, false}, {rGraphQL, true}, {rJSONAPI, false}, {rGitHub, false}, {rProblem, false},
	{rErrorObj, false}, {rOAuth2, false}, {rAX, false}, {rAWSJSON, false}, {rRPC, false}, {rGeneric, false},
}

// read runs one reader; it returns the dialect it recognized, or "" to let the next one try.
// (A switch rather than a table of funcs: calls through func values would move the parser to
// the heap, and the classification path allocates nothing.)
func (p *parser) read(id readerID) Dialect {
	switch id {
	case rMCP:
		return p.readMCP()
	case rJSONRPC:
		return p.readJSONRPC()
	case rKubernetes:
		return p.readKubernetes()
	case rSlack:
		return p.readSlack()
	case rCloudflare:
		return p.readCloudflare()
	case rAnthropic:
		return p.readAnthropic()
	case rGraphQL:
		return p.readGraphQL()
	case rJSONAPI:
		return p.readJSONAPI()
	case rGitHub:
		return p.readGitHub()
	case rProblem:
		return p.readProblem()
	case rErrorObj:
		return p.readErrorObj()
	case rOAuth2:
		return p.readOAuth2()
	case rAX:
		return p.readAX()
	case rAWSJSON:
		return p.readAWSJSON()
	case rRPC:
		return p.readRPC()
	case rGeneric:
		return p.readGenericJSON()
	}
	return ""
}

// agentField reads the members the agent dialects share (the agent envelope, the agent error
// spec, RFC 9457 agent extensions, AX), whichever object they sit in. It reports whether key
// was one of them.
func (p *parser) agentField(key string, v tape.Val) bool {
	e := &p.e
	switch key {
	case "code", "error_code", "errorCode":
		if e.Code == "" {
			e.Code = v.Text()
		}
	case "message", "detail", "error_description":
		if e.Message == "" && v.IsString() {
			e.Message = v.Str()
		}
	case "title":
		e.Title = v.Text()
	case "type":
		if s := v.Str(); isURI(s) {
			e.Type = s
		}
	case "statusCode", "status_code", "status":
		p.setStatus(v)
	case "issues", "invalid_fields", "details":
		p.issues(v)
	case "schema":
		e.Schema = p.raw(v)
	case "retryable", "is_retriable", "is_retryable", "retriable":
		p.flag(v)
	case "retry_after_ms", "retryAfterMs":
		p.facts.bodyMs = waitFromJSON(v, 1e6)
	case "retry_after_seconds", "retryAfterSeconds":
		p.facts.bodySec = waitFromJSON(v, 1e9)
	case "hint", "suggestion":
		if v.IsString() {
			e.Hint = v.Str()
		}
	case "suggestions":
		e.Suggestions = p.strList(v)
	case "severity":
		e.Severity = normSeverity(v.Text())
	case "category":
		e.Category = normCategory(v.Text())
	case "next_operation", "nextOperation":
		e.NextOperation = v.Text()
	case "next_operation_args", "nextOperationArgs":
		e.NextOperationArgs = p.raw(v)
	case "confirmationToken", "confirmation_token":
		e.ConfirmationToken = v.Text()
	case "current_status", "currentStatus":
		e.CurrentStatus = v.Text()
	case "required_status", "requiredStatus":
		e.RequiredStatus = v.Text()
	case "trace_id", "traceId":
		e.TraceID = v.Text()
		if id := traceparentID(e.TraceID); id != "" { // ASP.NET's traceId is a whole traceparent
			e.TraceID = id
		}
	case "request_id", "requestId":
		e.RequestID = v.Text()
	case "docs_url", "doc_uri", "doc_url", "documentation_url":
		e.DocsURL = v.Text()
	case "related_codes":
		for it := v.Iter(); it.Next(); {
			p.related(it.Val().Text(), false)
		}
	case "example_request":
		e.ExampleRequest = p.raw(v)
		if !p.full && v.Exists() && !v.IsNull() {
			p.unread = true
			p.kept = p.kept || v.Height() <= maxRawHeight // as raw keeps it
		}
	case "intent":
		e.Intent = v.Text()
	case "deprecated_type":
		e.DeprecatedType = v.Text()
	case "field", "pointer", "path":
		if p.full {
			p.field.Path = pathPointer(v)
		}
		p.pending = true
	case "allowed_values", "valid_values":
		p.field.AllowedValues = p.rawList(v)
		p.pending = true
	case "suggested_value":
		p.field.SuggestedValue = p.raw(v)
		p.pending = true
	case "expected":
		p.field.Expected = p.raw(v)
	case "received":
		p.field.Received = p.raw(v)
	default:
		return false
	}
	return true
}

// flushField adds the issue an object stated at its own level (the agent error spec's field,
// allowed_values and suggested_value), once the object is read.
func (p *parser) flushField() {
	if !p.pending {
		return
	}
	p.pending = false
	is := p.field
	p.field = Issue{}
	is.Code, is.Message = p.e.Code, p.e.Message
	p.addIssue(is)
}

// issues reads a list of field-level facts in any of the shapes the agent dialects use:
// {path|pointer|field|loc, code|keyword|reason, message|msg|detail|description, expected,
// received, allowed_values|valid_values|enum, suggested_value}.
func (p *parser) issues(v tape.Val) {
	if !v.IsArray() {
		return
	}
	if !p.full {
		for it := v.Iter(); it.Next(); {
			p.unread = true
			// Every object and string becomes an issue (below).
			p.kept = p.kept || it.Val().IsObject() || it.Val().IsString()
		}
		return
	}
	if p.e.Issues == nil {
		p.e.Issues = make([]Issue, 0, v.Len())
	}
	p.reserveLists(v)
	for it := v.Iter(); it.Next(); {
		if !it.Val().IsObject() {
			if it.Val().IsString() {
				p.addIssue(Issue{Message: it.Val().Str()})
			}
			continue
		}
		var (
			is                           Issue
			pointer, path, location, ctx tape.Val
			loc                          bool // path is FastAPI's loc, led by where the value travelled
		)
		for f := it.Val().Iter(); f.Next(); {
			x := f.Val()
			switch k := f.Key(); k {
			case "pointer":
				pointer = x
			case "path", "field", "loc", "name", "target", "param":
				path, loc = x, k == "loc"
			case "location":
				location = x
			case "field_as_written": // ours: a name that is no path (Issue.Field)
				is.Field = x.Str()
			case "ctx":
				ctx = x
			case "code", "keyword", "type", "rule":
				if is.Code == "" {
					is.Code = x.Text()
				}
			case "reason":
				if x.IsString() {
					if is.Message == "" {
						is.Message = x.Str()
					} else if is.Code == "" {
						is.Code = x.Str()
					}
				}
			case "message", "msg", "detail", "description":
				if x.IsString() {
					if is.Message != "" && is.Code == "" && k != "message" {
						is.Code = is.Message
					}
					is.Message = x.Str()
				}
			case "expected":
				is.Expected = p.raw(x)
			case "received", "input", "value", "rejected_value", "rejectedValue":
				is.Received = p.raw(x)
			case "suggested_value", "suggestedValue", "suggestion":
				is.SuggestedValue = p.raw(x)
			default:
				if allowedKey(k) {
					is.AllowedValues = p.rawList(x)
				}
			}
		}
		var in, name string
		switch {
		case pointer.Exists(): // the RFC 6901 form, when the server gave both
			is.Path = toPointer(pointer.Text())
		case loc && path.IsArray(): // FastAPI's loc: ["query", "limit"], ["body", "items", 3]
			is.Path, in, name = locPath(path)
		case path.Exists():
			is.Path = pathPointer(path)
			if l := location.Str(); paramIn(l) { // express-validator: {path, location}
				in, name = l, path.Text()
			}
		case location.IsString(): // Huma's form: "body.items[3].tags", "query.limit"
			is.Path, in, name = locationPath(location.Str())
		}
		p.pydanticFacts(&is, ctx)
		is.Message = paramMessage(in, name, is.Message)
		p.addIssue(is)
	}
}

// allowedKey reports whether an issue's member k lists the values the field allows.
func allowedKey(k string) bool {
	switch k {
	case "allowed_values", "valid_values", "allowedValues", "enum", "options", "values": // values: zod 4
		return true
	}
	return false
}

// reserveLists makes room in the block rawList cuts lists from for every list of allowed
// values the issues hold, counted first: a body of a thousand issues allocates the block
// once, as a body of three does, where a block grown on demand would double a few times.
func (p *parser) reserveLists(issues tape.Val) {
	n := 0
	for it := issues.Iter(); it.Next(); {
		if !it.Val().IsObject() {
			continue
		}
		for f := it.Val().Iter(); f.Next(); {
			if x := f.Val(); x.IsArray() && allowedKey(f.Key()) && x.Height() <= maxRawHeight {
				n += x.Len()
			}
		}
	}
	if n > 0 && cap(p.lists)-len(p.lists) < n {
		p.lists = make([]json.RawMessage, 0, max(n, 8))
	}
}

// nested reads a list of nested failures, each object read by the reader of dialect d
// (readNested). The child parser is a local the readers are called on directly, not through
// a func value, so that it stays on the stack: a parser is 1.7 KB, and a heap child was most
// of what Parse allocated for a body with nested failures.
func (p *parser) nested(v tape.Val, d Dialect) {
	if !v.IsArray() {
		return
	}
	if !p.full {
		// The decision depends on the nested failures (the most actionable one lends its
		// code): the classification path hands such bodies to the full parse.
		p.needFull = true
		return
	}
	if p.e.Errors == nil {
		p.e.Errors = make([]Envelope, 0, v.Len())
	}
	var c parser // one child, reset for each nested failure
	for it := v.Iter(); it.Next(); {
		if it.Val().IsObject() {
			p.reset(&c)
			c.readNested(d, it.Val())
			p.e.Errors = append(p.e.Errors, c.done(d))
		}
	}
}

// readNested reads one nested failure object of dialect d.
func (c *parser) readNested(d Dialect, item tape.Val) {
	switch d {
	case DialectAgent:
		c.readAgentObject(item)
	case DialectCloudflare:
		c.readCloudflareError(item)
	case DialectGraphQL:
		c.readGraphQLError(item)
	case DialectJSONAPI:
		c.readJSONAPIError(item)
	case DialectProblem:
		c.readProblemObject(item)
	}
}

// readAgentObject reads an object of agent members (and nested errors of the same shape).
func (c *parser) readAgentObject(obj tape.Val) {
	for it := obj.Iter(); it.Next(); {
		if k := it.Key(); k == "errors" {
			c.nested(it.Val(), DialectAgent)
		} else {
			c.agentField(k, it.Val())
		}
	}
	c.flushField()
}

// --- the {"error": {...}} family: agent envelope, agent error spec, Google, Stripe, OpenAI, OData ---

func (p *parser) readErrorObj() Dialect {
	obj := p.top.error
	if !obj.IsObject() || p.zodResult(obj) { // zod's result is read by readGenericJSON
		return ""
	}
	e := &p.e
	var (
		google, stripe, agent, spec, openai, odata bool
		vendorType, param, status                  string
		details                                    tape.Val
		sawIssues                                  bool
	)
	if p.h.stripeShouldRetry != "" {
		stripe = true
	}
	if p.h.openai {
		openai = true
	}
	for it := obj.Iter(); it.Next(); {
		k, v := it.Key(), it.Val()
		switch k {
		case "status":
			if s := v.Str(); isUpperSnake(s) { // google.rpc.Code name
				google, status = true, s
				continue
			}
		case "code":
			if v.IsNumber() {
				// Google's HTTP code; OData and others use strings. JSON-RPC's -32602 in an MCP
				// tool result, an application's 1001, are the code itself.
				if c := p.numericCode(v); c != "" && e.Code == "" {
					e.Code = c
				}
				continue
			}
		case "details":
			details = v
			continue
		case "type":
			if s := v.Str(); !isURI(s) {
				vendorType = s
				continue
			}
		case "param":
			param, openai = v.Text(), true
			continue
		case "doc_url", "request_log_url", "decline_code", "charge", "payment_intent", "setup_intent", "payment_method":
			stripe = true
			switch k {
			case "doc_url":
				e.DocsURL = v.Str()
			case "decline_code":
				p.related(v.Str(), false)
			}
			continue
		case "target":
			odata = true
			if t := v.Text(); t != "" {
				p.field.Path, p.pending = toPointer(t), true
			}
			continue
		case "innererror", "innerError":
			odata = true
			if id := v.Member("request-id").Str(); id != "" && e.RequestID == "" {
				e.RequestID = id
			} else if id := v.Member("requestId").Str(); id != "" && e.RequestID == "" {
				e.RequestID = id
			}
			continue
		case "errors":
			agent = true
			p.nested(v, DialectAgent)
			continue
		case "statusCode", "issues", "schema", "confirmationToken", "next_operation", "suggestions", "trace_id":
			agent = true
			sawIssues = sawIssues || k == "issues"
		case "field", "allowed_values", "suggested_value", "retryable", "retry_after_ms", "severity",
			"category", "hint", "request_id", "docs_url", "related_codes", "example_request":
			spec = true
		}
		p.agentField(k, v)
	}
	if details.IsArray() {
		if details.Member("0").Member("@type").Exists() {
			google = true
		} else {
			odata = true
		}
	}

	var d Dialect
	switch {
	case google:
		d = DialectGoogle
		p.googleDetails(details, status)
	case stripe || vendorType == "card_error" || vendorType == "idempotency_error" ||
		vendorType == "api_error" && !openai && strings.HasPrefix(p.h.requestIDStripe, "req_"):
		d = DialectStripe
	case agent:
		d = DialectAgent
	case spec:
		d = DialectAgentSpec
	case vendorType != "" || openai:
		d = DialectOpenAI
	case odata || isPascal(e.Code):
		d = DialectOData
	default:
		d = DialectAgentSpec
	}
	switch d {
	case DialectStripe, DialectOpenAI:
		if vendorType != "" {
			if e.Code == "" {
				e.Code = vendorType
			} else {
				p.related(vendorType, true)
			}
		}
		if param != "" {
			p.field.Path, p.pending = toPointer(param), true
		}
	case DialectAgent, DialectAgentSpec:
		if !sawIssues && details.IsArray() {
			p.issues(details) // AgentBack's historical key for the issues, which it sends beside them
		}
	case DialectOData:
		if !p.full && details.Len() > 0 {
			p.unread = true
		}
		if details.IsArray() && p.full {
			if details.Member("0").Exists() {
				p.pending = false // the details name the fields; the top-level target restates them
			}
			for it := details.Iter(); it.Next(); {
				x := it.Val()
				p.addIssue(Issue{Path: toPointer(x.Member("target").Text()), Code: x.Member("code").Text(), Message: x.Member("message").Str()})
			}
		}
	}
	p.flushField()
	return d
}

// googleDetails reads the google.rpc error details that carry facts an agent can use. status
// is the google.rpc.Code name; ErrorInfo's reason, when present, is the more specific code.
func (p *parser) googleDetails(details tape.Val, status string) {
	if p.e.Code == "" {
		p.e.Code = status
	}
	for it := details.Iter(); it.Next(); {
		d := it.Val()
		t := d.Member("@type").Str()
		p.googleDetail(t[strings.LastIndexByte(t, '.')+1:], d)
	}
}

// googleDetail reads one detail in its JSON form; kind is its message's name (ErrorInfo).
func (p *parser) googleDetail(kind string, d tape.Val) {
	e := &p.e
	switch kind {
	case "ErrorInfo":
		if r := d.Member("reason").Str(); r != "" {
			p.googleReason(r)
		}
	case "RetryInfo":
		if w := protoDuration(d.Member("retryDelay")); w.OK {
			p.googleRetry(w)
		}
	case "BadRequest":
		for fv := d.Member("fieldViolations").Iter(); fv.Next(); {
			x := fv.Val()
			p.addIssue(Issue{Path: toPointer(x.Member("field").Str()), Code: x.Member("reason").Str(), Message: x.Member("description").Str()})
		}
	case "QuotaFailure", "PreconditionFailure":
		if e.Hint == "" {
			e.Hint = d.Get("violations.0.description").Str()
		}
	case "Help":
		if u := d.Get("links.0.url").Str(); u != "" && e.DocsURL == "" {
			e.DocsURL = u
		}
	case "RequestInfo":
		if id := d.Member("requestId").Str(); id != "" {
			e.RequestID = id
		}
	}
}

// googleReason makes ErrorInfo's reason the code, the code it replaces a related one.
func (p *parser) googleReason(r string) {
	p.related(p.e.Code, false)
	p.e.Code = r
}

// googleRetry reads RetryInfo: the server saying "retry after this delay".
func (p *parser) googleRetry(w wait) {
	p.facts.google = w
	p.facts.flag = 1
}

// related records a code the server gave besides the main one: in RelatedCodes (on the full
// parse), and among the codes the category may be read from (on both paths, so that Classify
// decides as Parse does). first puts it before the others.
func (p *parser) related(code string, first bool) {
	if code == "" {
		return
	}
	if p.nalt < len(p.alt) {
		if first {
			copy(p.alt[1:], p.alt[:p.nalt])
			p.alt[0] = code
		} else {
			p.alt[p.nalt] = code
		}
		p.nalt++
	}
	if p.full {
		if first {
			p.e.RelatedCodes = append([]string{code}, p.e.RelatedCodes...)
		} else {
			p.e.RelatedCodes = append(p.e.RelatedCodes, code)
		}
	}
}

// isURI tells an RFC 9457 type URI from a vendor's type word ("invalid_request_error").
func isURI(s string) bool { return strings.Contains(s, ":") || strings.HasPrefix(s, "/") }

func isUpperSnake(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true
}

func isPascal(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	upper := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
		if c >= 'a' && c <= 'z' {
			upper = false
		}
	}
	return !upper
}
