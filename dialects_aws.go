package remedy

import (
	"strings"

	"github.com/remedy-go/remedy/internal/prose"
)

// AWS's failures: the JSON protocols' __type and message, and the XML of the query and REST
// protocols (which also carries problem details in XML to readProblemXML).

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
	return prose.Clip(v, 1000)
}

var xmlEntities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'", "&amp;", "&")
