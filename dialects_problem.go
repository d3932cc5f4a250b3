package remedy

import (
	"strings"

	"github.com/remedy-go/remedy/internal/tape"
)

// RFC 9457 (and RFC 7807) problem details, in JSON and in XML, with the agent extensions.

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
func (c *parser) readProblemObject(obj tape.Val) {
	e := &c.e
	var location, value tape.Val
	for it := obj.Iter(); it.Next(); {
		switch k := it.Key(); k {
		case "location":
			location = it.Val() // an item of Huma's errors list: {message, location, value}
		case "value":
			value = it.Val()
		case "type":
			if s := it.Val().Str(); s != "about:blank" { // absent and about:blank mean the same
				e.Type = s
			}
		case "instance":
		case "validation":
			c.prismIssues(it.Val())
		case "errors":
			if it.Val().IsObject() {
				c.fieldMessages(it.Val()) // ASP.NET's ValidationProblemDetails
			} else {
				c.nested(it.Val(), DialectProblem)
			}
		case "pointer":
			// An item of RFC 9457's errors list: {detail, pointer}.
			if c.full {
				c.field.Path = toPointer(it.Val().Str())
			}
			c.pending = true
		default:
			c.agentField(k, it.Val())
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
func (c *parser) humaIssue(location string, value tape.Val) {
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
