package remedy

import "strings"

// Dialects whose failure sits at the top level of the body.

func (p *parser) readProblem() Dialect {
	t := &p.top
	problem := strings.Contains(p.h.contentType, "problem+json")
	if !problem {
		uri := isURI(t.typ.Str())
		problem = (uri || t.title.IsString()) && (t.status.Exists() || t.detail.Exists() || t.title.Exists())
	}
	if !problem {
		return ""
	}
	p.readProblemObject(t.root)
	return DialectProblem
}

// readProblemObject reads one problem (and its nested problems): the RFC 9457 members, and the
// agent extensions through agentField.
func (c *parser) readProblemObject(obj val) {
	e := &c.e
	var location, value val
	for it := obj.iter(); it.next(); {
		switch k := it.Key(); k {
		case "location":
			location = it.val() // an item of Huma's errors list: {message, location, value}
		case "value":
			value = it.val()
		case "type":
			if s := it.val().Str(); s != "about:blank" { // absent and about:blank mean the same
				e.Type = s
			}
		case "instance":
		case "validation":
			c.prismIssues(it.val())
		case "errors":
			if it.val().IsObject() {
				c.fieldMessages(it.val()) // ASP.NET's ValidationProblemDetails
			} else {
				c.nested(it.val(), DialectProblem, (*parser).readProblemObject)
			}
		case "pointer":
			// An item of RFC 9457's errors list: {detail, pointer}.
			if c.full {
				c.field.Path = toPointer(it.val().Str())
			}
			c.pending = true
		default:
			c.agentField(k, it.val())
		}
	}
	if e.Code == "" {
		e.Code = typeCode(e.Type)
	}
	if location.IsString() {
		if c.full {
			c.humaIssue(location.Str(), value)
		} else {
			c.unread = true
		}
	}
	c.flushField()
}

// humaIssue reads the issue of an item of Huma's errors list, whose message is its own.
func (c *parser) humaIssue(location string, value val) {
	path, in, name := locationPath(location)
	is := Issue{Path: path, Message: c.e.Message, Received: c.raw(value)}
	c.humaFacts(&is)
	is.Message = paramMessage(in, name, is.Message)
	c.addIssue(is)
}

// typeCode is the code a problem's type URI names: its last segment, none for no type or one
// that points at an RFC's section.
func typeCode(uri string) string {
	if uri == "" || rfcSection(uri) {
		return ""
	}
	return lastSegment(uri)
}

// rfcSection reports whether a problem type points at a section of an RFC, as ASP.NET's
// defaults do ("https://tools.ietf.org/html/rfc9110#section-15.5.1"): the section of the
// status, which names no code of its own.
func rfcSection(uri string) bool {
	_, frag, ok := strings.Cut(uri, "#section-")
	return ok && frag != "" && (strings.Contains(uri, "ietf.org/") || strings.Contains(uri, "rfc-editor.org/"))
}

func lastSegment(uri string) string {
	uri = strings.TrimRight(uri, "/")
	if i := strings.IndexAny(uri, "?#"); i >= 0 {
		if j := strings.LastIndexByte(uri, '#'); j >= 0 && j == len(uri)-len(uri[j:]) && j+1 < len(uri) {
			return uri[j+1:]
		}
		uri = uri[:i]
	}
	return uri[strings.LastIndexAny(uri, "/:")+1:]
}

func (p *parser) readGitHub() Dialect {
	t := &p.top
	errs := t.errors
	if !t.message.IsString() {
		return ""
	}
	first := errs.member("0")
	if !t.documentationURL.Exists() && !first.member("resource").Exists() && !first.member("field").Exists() {
		return ""
	}
	e := &p.e
	e.Message = t.message.Str()
	e.DocsURL = t.documentationURL.Str()
	p.setStatus(t.status)
	e.Code = snakeWords(e.Message)
	if !p.full {
		p.unread = p.unread || errs.len() > 0
		return DialectGitHub
	}
	for it := errs.iter(); it.next(); {
		x := it.val()
		if x.IsString() {
			p.addIssue(Issue{Message: x.Str()})
			continue
		}
		is := Issue{Code: x.member("code").Str(), Message: x.member("message").Str()}
		if f := x.member("field").Str(); f != "" {
			is.Path = toPointer(f)
		}
		if is.Message == "" && is.Code != "" {
			is.Message = x.member("resource").Str() + "." + x.member("field").Str() + " is " + strings.ReplaceAll(is.Code, "_", " ")
		}
		p.addIssue(is)
	}
	return DialectGitHub
}

// snakeWords turns a short phrase ("Validation Failed") into a code ("validation_failed"); a
// phrase that is long or carries anything but letters and spaces is not a code.
func snakeWords(s string) string {
	if len(s) == 0 || len(s) > 40 {
		return ""
	}
	var buf [40]byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z':
			buf[i] = c
		case c >= 'A' && c <= 'Z':
			buf[i] = c + 'a' - 'A'
		case c == ' ':
			buf[i] = '_'
		default:
			return ""
		}
	}
	return string(buf[:len(s)])
}

var oauthCodes = map[string]bool{
	"invalid_request": true, "invalid_client": true, "invalid_grant": true, "unauthorized_client": true,
	"unsupported_grant_type": true, "invalid_scope": true, "invalid_token": true, "insufficient_scope": true,
	"access_denied": true, "unsupported_response_type": true, "server_error": true,
	"temporarily_unavailable": true, "authorization_pending": true, "slow_down": true, "expired_token": true,
}

func (p *parser) readOAuth2() Dialect {
	t := &p.top
	code := t.error.Str()
	if !t.error.IsString() || !(t.errorDescription.Exists() || t.errorURI.Exists() || oauthCodes[code]) {
		return ""
	}
	p.e.Code = code
	p.e.Message = t.errorDescription.Str()
	p.e.DocsURL = t.errorURI.Str()
	return DialectOAuth2
}

func (p *parser) readAX() Dialect {
	if !p.top.errorCode.IsString() {
		return ""
	}
	for it := p.top.root.iter(); it.next(); {
		p.agentField(it.Key(), it.val())
	}
	p.flushField()
	return DialectAX
}

func (p *parser) readAWSJSON() Dialect {
	t := &p.top
	typ := t.awsType.Str()
	if typ == "" {
		typ = p.h.amznErrorType
	}
	if typ == "" {
		return ""
	}
	if i := strings.IndexByte(typ, ':'); i >= 0 { // restJson1 header: "Name:http://internal..."
		typ = typ[:i]
	}
	e := &p.e
	e.Code = typ[strings.LastIndexByte(typ, '#')+1:]
	e.Message = t.message.Str()
	if e.Message == "" {
		e.Message = t.messageCap.Str()
	}
	p.related(t.reasonCap.Str(), false)
	p.awsValidationIssues(e.Message)
	return DialectAWSJSON
}

// awsValidationIssues reads the field facts AWS packs into a validation message:
// "2 validation errors detected: Value 'abc' at 'functionName' failed to satisfy constraint:
// Member must satisfy regular expression pattern: ...; Value ..."
func (p *parser) awsValidationIssues(msg string) {
	if !strings.Contains(msg, "validation error") {
		return
	}
	if !p.full {
		p.unread = true
		return
	}
	for _, part := range strings.Split(msg, "; ") {
		i := strings.Index(part, "Value ")
		at := strings.Index(part, " at '")
		con := strings.Index(part, "' failed to satisfy constraint: ")
		if i < 0 || at < i || con < at {
			continue
		}
		val := strings.TrimSpace(part[i+len("Value ") : at])
		is := Issue{
			Path:    toPointer(part[at+len(" at '") : con]),
			Code:    "constraint",
			Message: part[con+len("' failed to satisfy constraint: "):],
		}
		if len(val) >= 2 && val[0] == '\'' && val[len(val)-1] == '\'' {
			is.Received = quoteJSON(val[1 : len(val)-1])
		}
		p.addIssue(is)
	}
}

func (p *parser) readGenericJSON() Dialect {
	t := &p.top
	if p.status < 400 && !(p.status == 0 && pydanticList(t.detail)) {
		// Without a status (an MCP tool's structuredContent), only a shape no success has.
		return ""
	}
	e := &p.e
	found := false
	if m := t.message; m.IsString() {
		e.Message, found = m.Str(), true
	} else if m.IsArray() { // NestJS: a list of validation messages (class-validator's)
		for it := m.iter(); it.next(); {
			if e.Message == "" {
				e.Message = it.val().Str()
			}
			p.classValidatorIssue(it.val().Str())
		}
		found = e.Message != ""
	}
	if m := t.message; m.Str() == "Validation failed" { // celebrate's errors()
		p.celebrateIssues(t.root.member("validation"))
	}
	if er := t.error; er.IsString() {
		if e.Message == "" {
			e.Message = er.Str()
		}
		e.Code, found = snakeWords(er.Str()), true
	} else if p.zodResult(er) { // @hono/zod-validator's default hook
		p.zodError(er)
		found = true
	}
	if m := t.errorMessage; m.IsString() && e.Message == "" { // ogen
		e.Message, found = m.Str(), true
	}
	if d := t.detail; d.IsString() {
		e.Message, found = d.Str(), true
	} else if d.IsArray() { // FastAPI / pydantic
		p.issues(d)
		e.Message = d.member("0").member("msg").Str()
		found = true
		if pydanticList(d) {
			e.Category = CategoryValidation // FastAPI's RequestValidationError, whatever the status
			if p.status < 400 {
				e.Code = "validation_error" // carried without the 422 (an MCP tool's result)
			}
		}
	}
	if errs := t.errors; errs.IsObject() { // Rails / Laravel: {"field": ["message", ...]}
		p.fieldMessages(errs)
		found = true
	} else if errs.IsArray() && p.nodeErrors(errs) { // express-openapi-validator, express-validator
		found = true
	}
	p.setStatus(t.status)
	p.setStatus(t.statusCode)
	switch c := t.code; {
	case c.IsString():
		e.Code = c.Str()
		if e.Code == "FST_ERR_VALIDATION" {
			p.fastifyIssue(t.message.Str())
		}
	case c.IsNumber():
		if code := p.numericCode(c); code != "" {
			e.Code = code
		}
	}
	if u := t.moreInfo.Str(); isURI(u) { // Twilio's page for its code
		e.DocsURL = u
	}
	if !found {
		*e = Envelope{}
		p.facts, p.bodyStatus = retryFacts{}, 0
		return ""
	}
	if p.goText(e.Message) && !t.code.IsString() { // gin's, echo's and ogen's defaults: a Go validator's or decoder's text
		e.Code = "" // the words of the text are not a code
	}
	return DialectGenericJSON
}

// pydanticList reports whether v is a list of pydantic validation errors: [{loc, msg, type}].
func pydanticList(v val) bool {
	x := v.member("0")
	return v.IsArray() && x.member("loc").IsArray() && x.member("msg").IsString() && x.member("type").IsString()
}

// --- XML ---

// readXML reads RFC 9457's problem+xml and AWS's XML errors (the query protocol's
// ErrorResponse, EC2's Response/Errors, S3's Error). Other XML and HTML are left to the
// unstructured reader.
func (p *parser) readXML(s string) Dialect {
	if strings.Contains(s, `xmlns="urn:ietf:rfc:7807"`) && strings.Contains(s, "<problem") {
		return p.readProblemXML(s)
	}
	code := xmlText(s, "Code")
	if code == "" || !strings.Contains(s, "<Error>") {
		return ""
	}
	e := &p.e
	e.Code = code
	e.Message = xmlText(s, "Message")
	e.RequestID = xmlText(s, "RequestId")
	if e.RequestID == "" {
		e.RequestID = xmlText(s, "RequestID")
	}
	return DialectAWSXML
}

// readProblemXML reads an RFC 9457 problem in its XML form (its appendix B): the members of
// the JSON form, each an element of the problem's namespace.
func (p *parser) readProblemXML(s string) Dialect {
	e := &p.e
	if t := xmlText(s, "type"); t != "about:blank" {
		e.Type = t
	}
	e.Title = xmlText(s, "title")
	e.Message = xmlText(s, "detail")
	if st := xmlText(s, "status"); len(st) == 3 {
		p.setStatusText(st)
	}
	e.Code = typeCode(e.Type)
	return DialectProblem
}

// xmlText returns the text of the first <tag>…</tag>, entities decoded.
func xmlText(s, tag string) string {
	open := "<" + tag + ">"
	i := strings.Index(s, open)
	if i < 0 {
		return ""
	}
	rest := s[i+len(open):]
	j := strings.Index(rest, "</"+tag+">")
	if j < 0 {
		return ""
	}
	v := strings.TrimSpace(rest[:j])
	if strings.IndexByte(v, '&') >= 0 {
		v = xmlEntities.Replace(v)
	}
	return clip(v, 1000)
}

var xmlEntities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'", "&amp;", "&")

// fieldMessages reads a map of field names to lists of messages: Rails', Laravel's and
// ASP.NET's ValidationProblemDetails ({"Quantity": ["The field Quantity must be between 1 and
// 100."]}). The key is the field as the server names it; ASP.NET's JSON errors key it by JSON
// path ("$.lines[1].quantity"). A message that is a sentence is the top-level message as it
// is; a fragment ("can't be blank") is said of its field.
//
// When a JSON path key is among them the body did not deserialize, and ASP.NET then also
// reports the action's parameter as missing ("The input field is required.", keyed by the
// parameter's name): those keys name no member of the body and are not read as fields.
func (p *parser) fieldMessages(errs val) {
	e := &p.e
	jsonPaths := false
	for it := errs.iter(); it.next(); {
		jsonPaths = jsonPaths || strings.HasPrefix(it.Key(), "$")
	}
	for it := errs.iter(); it.next(); {
		k := it.Key()
		if jsonPaths && !strings.HasPrefix(k, "$") {
			continue
		}
		for m := it.val().iter(); m.next(); {
			if !p.full {
				p.unread, p.kept = true, true
				continue
			}
			msg := m.val().Text()
			is := Issue{Path: toPointer(k), Message: msg}
			p.dotnetFacts(&is, k)
			p.addIssue(is)
			if e.Message == "" {
				if msg != "" && msg[0] >= 'A' && msg[0] <= 'Z' {
					e.Message = msg
				} else {
					e.Message = k + " " + msg
				}
			}
		}
	}
}
