package remedy

import (
	"strings"

	"github.com/tidwall/gjson"
)

// dialectReader recognizes one family of JSON error bodies and fills the envelope from it. read
// returns the dialect it recognized, or "" to let the next reader try.
type dialectReader struct {
	name   string
	inBand bool // the family can report a failure inside a 2xx
	read   func(p *parser) Dialect
}

// readers are tried in this order, most specific markers first: a body that could be read by
// two readers goes to the one whose markers are least likely to appear by accident.
var readers []dialectReader

func init() {
	readers = []dialectReader{
		{"mcp", true, readMCP},                   // jsonrpc result / bare CallToolResult with isError
		{"jsonrpc", true, readJSONRPC},           // jsonrpc + error{code, message}
		{"kubernetes", false, readKubernetes},    // kind: Status, status: Failure
		{"slack", true, readSlack},               // ok: false, error: "code"
		{"cloudflare", true, readCloudflare},     // success: false, errors[]
		{"anthropic", false, readAnthropic},      // type: error, error{type, message}
		{"graphql", true, readGraphQL},           // errors[{message, path, locations, extensions}]
		{"jsonapi", false, readJSONAPI},          // errors[{status, title, detail, source}]
		{"github", false, readGitHub},            // message + documentation_url / errors[{resource, field, code}]
		{"rfc9457", false, readProblem},          // type/title/status/detail (+ agent extensions)
		{"error object", false, readErrorObj},    // error{...}: agent, agent spec, Google, Stripe, OpenAI, OData
		{"oauth2", false, readOAuth2},            // error: "invalid_grant", error_description
		{"ax", false, readAX},                    // error_code, message, suggestion, details[]
		{"aws_json", false, readAWSJSON},         // __type / X-Amzn-ErrorType
		{"generic_json", false, readGenericJSON}, // message / detail / errors map
	}
}

// agentField reads the members the agent dialects share (the agent envelope, the agent error
// spec, RFC 9457 agent extensions, AX), whichever object they sit in. It reports whether key
// was one of them.
func (p *parser) agentField(key string, v gjson.Result) bool {
	e := p.e
	switch key {
	case "code", "error_code", "errorCode":
		if e.Code == "" {
			e.Code = str(v)
		}
	case "message", "detail", "error_description":
		if e.Message == "" && v.Type == gjson.String {
			e.Message = v.Str
		}
	case "title":
		e.Title = str(v)
	case "type":
		if isURI(v.Str) {
			e.Type = v.Str
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
		if v.Type == gjson.String {
			e.Hint = v.Str
		}
	case "suggestions":
		e.Suggestions = p.strList(v)
	case "severity":
		e.Severity = normSeverity(str(v))
	case "category":
		e.Category = normCategory(str(v))
	case "next_operation", "nextOperation":
		e.NextOperation = str(v)
	case "next_operation_args", "nextOperationArgs":
		e.NextOperationArgs = p.raw(v)
	case "confirmationToken", "confirmation_token":
		e.ConfirmationToken = str(v)
	case "current_status", "currentStatus":
		e.CurrentStatus = str(v)
	case "required_status", "requiredStatus":
		e.RequiredStatus = str(v)
	case "trace_id", "traceId":
		e.TraceID = str(v)
	case "request_id", "requestId":
		e.RequestID = str(v)
	case "docs_url", "doc_uri", "doc_url", "documentation_url":
		e.DocsURL = str(v)
	case "related_codes":
		e.RelatedCodes = p.strList(v)
	case "example_request":
		e.ExampleRequest = p.raw(v)
	case "intent":
		e.Intent = str(v)
	case "deprecated_type":
		e.DeprecatedType = str(v)
	case "field", "pointer", "path":
		p.fieldIssue().Path = pathPointer(v)
		p.pending = true
	case "allowed_values", "valid_values":
		p.fieldIssue().AllowedValues = p.rawList(v)
		p.pending = true
	case "suggested_value":
		p.fieldIssue().SuggestedValue = p.raw(v)
		p.pending = true
	case "expected":
		p.fieldIssue().Expected = p.raw(v)
	case "received":
		p.fieldIssue().Received = p.raw(v)
	default:
		return false
	}
	return true
}

// fieldIssue is the issue an object states at its own level (the agent error spec's field,
// allowed_values and suggested_value), flushed by flushField once the object is read.
func (p *parser) fieldIssue() *Issue { return &p.field }

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
func (p *parser) issues(v gjson.Result) {
	if !p.full || !v.IsArray() {
		return
	}
	v.ForEach(func(_, it gjson.Result) bool {
		if !it.IsObject() {
			if it.Type == gjson.String {
				p.addIssue(Issue{Message: it.Str})
			}
			return true
		}
		var is Issue
		havePointer := false
		it.ForEach(func(k, x gjson.Result) bool {
			switch k.Str {
			case "pointer":
				is.Path, havePointer = toPointer(x.String()), true
			case "path", "field", "loc", "location", "name", "target", "param":
				if !havePointer {
					is.Path = pathPointer(x)
				}
			case "code", "keyword", "type", "rule":
				if is.Code == "" {
					is.Code = str(x)
				}
			case "reason":
				if x.Type == gjson.String {
					if is.Message == "" {
						is.Message = x.Str
					} else if is.Code == "" {
						is.Code = x.Str
					}
				}
			case "message", "msg", "detail", "description":
				if x.Type == gjson.String {
					if is.Message != "" && is.Code == "" && k.Str != "message" {
						is.Code = is.Message
					}
					is.Message = x.Str
				}
			case "expected":
				is.Expected = p.raw(x)
			case "received", "input", "value", "rejected_value", "rejectedValue":
				is.Received = p.raw(x)
			case "allowed_values", "valid_values", "allowedValues", "enum", "options":
				is.AllowedValues = p.rawList(x)
			case "suggested_value", "suggestedValue", "suggestion":
				is.SuggestedValue = p.raw(x)
			}
			return true
		})
		p.addIssue(is)
		return true
	})
}

// nested reads a list of nested failures with read applied to each object.
func (p *parser) nested(v gjson.Result, d Dialect, read func(c *parser, item gjson.Result)) {
	if !v.IsArray() {
		return
	}
	if !p.full {
		// The decision depends on the nested failures (the most actionable one lends its
		// code): the classification path hands such bodies to the full parse.
		p.needFull = true
		return
	}
	v.ForEach(func(_, item gjson.Result) bool {
		if item.IsObject() {
			c := p.child(0)
			read(c, item)
			p.e.Errors = append(p.e.Errors, c.done(d))
		}
		return true
	})
}

// readAgentObject reads an object of agent members (and nested errors of the same shape).
func (c *parser) readAgentObject(obj gjson.Result) {
	obj.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "errors" {
			c.nested(v, DialectAgent, (*parser).readAgentObject)
			return true
		}
		c.agentField(k.Str, v)
		return true
	})
	c.flushField()
}

// --- the {"error": {...}} family: agent envelope, agent error spec, Google, Stripe, OpenAI, OData ---

func readErrorObj(p *parser) Dialect {
	obj := p.top.get("error")
	if !obj.IsObject() {
		return ""
	}
	e := p.e
	var (
		google, stripe, agent, spec, openai, odata bool
		vendorType, param                          string
		details                                    gjson.Result
	)
	if p.header.Get("Stripe-Should-Retry") != "" {
		stripe = true
	}
	if p.header.Get("Openai-Version") != "" || p.header.Get("Openai-Processing-Ms") != "" {
		openai = true
	}
	obj.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "status":
			if v.Type == gjson.String && isUpperSnake(v.Str) { // google.rpc.Code name
				google = true
				e.RelatedCodes = append(e.RelatedCodes[:0:0], v.Str)
				return true
			}
		case "code":
			if v.Type == gjson.Number {
				p.setStatus(v) // Google's HTTP code; OData and others use strings
				return true
			}
		case "details":
			details = v
			return true
		case "type":
			if !isURI(v.Str) {
				vendorType = str(v)
				return true
			}
		case "param":
			param = str(v)
			openai = true
			return true
		case "doc_url", "request_log_url", "decline_code", "charge", "payment_intent", "setup_intent", "payment_method":
			stripe = true
			switch k.Str {
			case "doc_url":
				e.DocsURL = v.Str
			case "decline_code":
				e.RelatedCodes = append(e.RelatedCodes, v.Str)
			}
			return true
		case "target":
			odata = true
			if t := str(v); t != "" {
				p.field.Path, p.pending = toPointer(t), true
			}
			return true
		case "innererror", "innerError":
			odata = true
			if id := v.Get("request-id"); id.Exists() && e.RequestID == "" {
				e.RequestID = id.Str
			} else if id := v.Get("requestId"); id.Exists() && e.RequestID == "" {
				e.RequestID = id.Str
			}
			return true
		case "errors":
			agent = true
			p.nested(v, DialectAgent, (*parser).readAgentObject)
			return true
		case "statusCode", "issues", "schema", "confirmationToken", "next_operation", "suggestions", "trace_id":
			agent = true
		case "field", "allowed_values", "suggested_value", "retryable", "retry_after_ms", "severity",
			"category", "hint", "request_id", "docs_url", "related_codes", "example_request":
			spec = true
		}
		p.agentField(k.Str, v)
		return true
	})
	if details.IsArray() {
		details.ForEach(func(_, d gjson.Result) bool {
			if d.Get("@type").Exists() {
				google = true
			}
			return false
		})
		if !google {
			odata = true
		}
	}

	var d Dialect
	switch {
	case google:
		d = DialectGoogle
		p.googleDetails(details)
	case stripe || vendorType == "card_error" || vendorType == "idempotency_error" ||
		vendorType == "api_error" && !openai && strings.HasPrefix(p.header.Get("Request-Id"), "req_"):
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
			} else if p.full {
				e.RelatedCodes = append([]string{vendorType}, e.RelatedCodes...)
			}
		}
		if param != "" {
			p.field.Path, p.pending = toPointer(param), true
		}
	case DialectOData:
		if details.IsArray() && p.full {
			p.pending = p.pending && !details.Get("0").Exists()
			details.ForEach(func(_, x gjson.Result) bool {
				p.addIssue(Issue{Path: toPointer(x.Get("target").String()), Code: x.Get("code").String(), Message: x.Get("message").String()})
				return true
			})
		}
	}
	p.flushField()
	return d
}

// googleDetails reads the google.rpc error details that carry facts an agent can use.
func (p *parser) googleDetails(details gjson.Result) {
	e := p.e
	details.ForEach(func(_, d gjson.Result) bool {
		t := d.Get("@type").Str
		switch t[strings.LastIndexByte(t, '.')+1:] {
		case "ErrorInfo":
			if r := d.Get("reason").Str; r != "" {
				if e.Code != "" && p.full {
					e.RelatedCodes = append(e.RelatedCodes, e.Code)
				}
				e.Code = r
			}
		case "RetryInfo":
			if w := protoDuration(d.Get("retryDelay")); w.ok {
				p.facts.google = w
				p.facts.flag = 1 // RetryInfo is the server saying: retry after this delay
			}
		case "BadRequest":
			d.Get("fieldViolations").ForEach(func(_, fv gjson.Result) bool {
				p.addIssue(Issue{Path: toPointer(fv.Get("field").Str), Code: fv.Get("reason").Str, Message: fv.Get("description").Str})
				return true
			})
		case "QuotaFailure", "PreconditionFailure":
			d.Get("violations").ForEach(func(_, v gjson.Result) bool {
				if e.Hint == "" {
					e.Hint = v.Get("description").Str
				}
				return false
			})
		case "Help":
			if u := d.Get("links.0.url").Str; u != "" && e.DocsURL == "" {
				e.DocsURL = u
			}
		case "RequestInfo":
			if id := d.Get("requestId").Str; id != "" {
				e.RequestID = id
			}
		}
		return true
	})
	if e.Code == "" && len(e.RelatedCodes) > 0 {
		e.Code, e.RelatedCodes = e.RelatedCodes[0], e.RelatedCodes[1:]
		if len(e.RelatedCodes) == 0 {
			e.RelatedCodes = nil
		}
	}
}

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
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return strings.ToUpper(s) != s
}

// isURI tells an RFC 9457 type URI from a vendor's type word ("invalid_request_error").
func isURI(s string) bool { return strings.Contains(s, ":") || strings.HasPrefix(s, "/") }
