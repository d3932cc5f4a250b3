package remedy

import (
	"strings"

	"github.com/tidwall/gjson"
)

// Dialects whose failure sits at the top level of the body.

func readProblem(p *parser) Dialect {
	t := &p.top
	typ, title := t.get("type"), t.get("title")
	problem := strings.Contains(p.header.Get("Content-Type"), "problem+json")
	if !problem {
		uri := typ.Type == gjson.String && (strings.Contains(typ.Str, ":") || strings.HasPrefix(typ.Str, "/"))
		problem = (uri || title.Type == gjson.String) && (t.has("status") || t.has("detail") || t.has("title"))
	}
	if !problem {
		return ""
	}
	p.readProblemObject(gjson.Parse(t.raw))
	return DialectProblem
}

// readProblemObject reads one problem (and its nested problems): the RFC 9457 members, and the
// agent extensions through agentField.
func (c *parser) readProblemObject(obj gjson.Result) {
	e := c.e
	obj.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			if v.Str != "about:blank" { // absent and about:blank mean the same: no more than the status
				e.Type = v.Str
			}
		case "instance":
		case "errors":
			c.nested(v, DialectProblem, (*parser).readProblemObject)
		case "pointer":
			// An item of RFC 9457's errors list: {detail, pointer}.
			c.field.Path, c.pending = toPointer(v.Str), true
		default:
			c.agentField(k.Str, v)
		}
		return true
	})
	if e.Code == "" && e.Type != "" && e.Type != "about:blank" {
		e.Code = lastSegment(e.Type)
	}
	c.flushField()
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

func readGitHub(p *parser) Dialect {
	t := &p.top
	msg, errs := t.get("message"), t.get("errors")
	if msg.Type != gjson.String {
		return ""
	}
	github := t.has("documentation_url")
	errs.ForEach(func(_, x gjson.Result) bool {
		if x.Get("resource").Exists() || x.Get("field").Exists() {
			github = true
		}
		return false
	})
	if !github {
		return ""
	}
	e := p.e
	e.Message = msg.Str
	e.DocsURL = t.get("documentation_url").Str
	p.setStatus(t.get("status"))
	e.Code = snakeWords(msg.Str)
	errs.ForEach(func(_, x gjson.Result) bool {
		if x.Type == gjson.String {
			p.addIssue(Issue{Message: x.Str})
			return true
		}
		is := Issue{Code: x.Get("code").Str, Message: x.Get("message").Str}
		if f := x.Get("field").Str; f != "" {
			is.Path = toPointer(f)
		}
		if is.Message == "" && is.Code != "" {
			is.Message = x.Get("resource").Str + "." + x.Get("field").Str + " is " + strings.ReplaceAll(is.Code, "_", " ")
		}
		p.addIssue(is)
		return true
	})
	return DialectGitHub
}

// snakeWords turns a short phrase ("Validation Failed") into a code ("validation_failed"); a
// phrase that is long or carries anything but letters and spaces is not a code.
func snakeWords(s string) string {
	if len(s) == 0 || len(s) > 40 {
		return ""
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z':
			b = append(b, c)
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		case c == ' ':
			b = append(b, '_')
		default:
			return ""
		}
	}
	return string(b)
}

var oauthCodes = map[string]bool{
	"invalid_request": true, "invalid_client": true, "invalid_grant": true, "unauthorized_client": true,
	"unsupported_grant_type": true, "invalid_scope": true, "invalid_token": true, "insufficient_scope": true,
	"access_denied": true, "unsupported_response_type": true, "server_error": true,
	"temporarily_unavailable": true, "authorization_pending": true, "slow_down": true, "expired_token": true,
}

func readOAuth2(p *parser) Dialect {
	t := &p.top
	code := t.get("error")
	if code.Type != gjson.String || !(t.has("error_description") || t.has("error_uri") || oauthCodes[code.Str]) {
		return ""
	}
	p.e.Code = code.Str
	p.e.Message = t.get("error_description").Str
	p.e.DocsURL = t.get("error_uri").Str
	return DialectOAuth2
}

func readAX(p *parser) Dialect {
	if p.top.get("error_code").Type != gjson.String {
		return ""
	}
	for i := 0; i < p.top.n; i++ {
		p.agentField(p.top.keys[i], p.top.vals[i])
	}
	p.flushField()
	return DialectAX
}

func readAWSJSON(p *parser) Dialect {
	t := &p.top
	typ := t.get("__type").Str
	if typ == "" {
		typ = p.header.Get("X-Amzn-Errortype")
	}
	if typ == "" {
		return ""
	}
	if i := strings.IndexByte(typ, ':'); i >= 0 { // restJson1 header: "Name:http://internal..."
		typ = typ[:i]
	}
	e := p.e
	e.Code = typ[strings.LastIndexByte(typ, '#')+1:]
	e.Message = t.get("message").Str
	if e.Message == "" {
		e.Message = t.get("Message").Str
	}
	if r := t.get("Reason").Str; r != "" && p.full {
		e.RelatedCodes = []string{r}
	}
	p.awsValidationIssues(e.Message)
	return DialectAWSJSON
}

// awsValidationIssues reads the field facts AWS packs into a validation message:
// "2 validation errors detected: Value 'abc' at 'functionName' failed to satisfy constraint:
// Member must satisfy regular expression pattern: ...; Value ..."
func (p *parser) awsValidationIssues(msg string) {
	if !p.full || !strings.Contains(msg, "validation error") {
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

func readGenericJSON(p *parser) Dialect {
	if p.status < 400 {
		return ""
	}
	t := &p.top
	e := p.e
	found := false
	if m := t.get("message"); m.Type == gjson.String {
		e.Message, found = m.Str, true
	} else if m.IsArray() { // NestJS: a list of validation messages
		m.ForEach(func(_, x gjson.Result) bool {
			if e.Message == "" {
				e.Message = x.Str
			}
			p.addIssue(Issue{Message: x.Str})
			return true
		})
		found = e.Message != ""
	}
	if er := t.get("error"); er.Type == gjson.String {
		if e.Message == "" {
			e.Message = er.Str
		}
		e.Code, found = snakeWords(er.Str), true
	}
	if d := t.get("detail"); d.Type == gjson.String {
		e.Message, found = d.Str, true
	} else if d.IsArray() { // FastAPI / pydantic
		p.issues(d)
		d.ForEach(func(_, x gjson.Result) bool {
			e.Message = x.Get("msg").Str
			return false
		})
		found = true
	}
	if errs := t.get("errors"); errs.IsObject() { // Rails / Laravel: {"field": ["message", ...]}
		errs.ForEach(func(k, v gjson.Result) bool {
			v.ForEach(func(_, m gjson.Result) bool {
				p.addIssue(Issue{Path: toPointer(k.Str), Message: m.String()})
				if e.Message == "" {
					e.Message = k.Str + " " + m.String()
				}
				return true
			})
			return true
		})
		found = true
	}
	p.setStatus(t.get("status"))
	p.setStatus(t.get("statusCode"))
	if c := t.get("code"); c.Type == gjson.String {
		e.Code = c.Str
	}
	if !found {
		*e = Envelope{}
		return ""
	}
	return DialectGenericJSON
}

// --- XML ---

// readXML reads AWS's XML errors (the query protocol's ErrorResponse, EC2's Response/Errors,
// S3's Error). Other XML and HTML are left to the unstructured reader.
func (p *parser) readXML(s string) Dialect {
	code := xmlText(s, "Code")
	if code == "" || !strings.Contains(s, "<Error>") {
		return ""
	}
	e := p.e
	e.Code = code
	e.Message = xmlText(s, "Message")
	e.RequestID = xmlText(s, "RequestId")
	if e.RequestID == "" {
		e.RequestID = xmlText(s, "RequestID")
	}
	return DialectAWSXML
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
