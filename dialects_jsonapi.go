package remedy

import "strings"

// JSON:API's errors list: status, code, title, detail, source.pointer.

func (p *parser) readJSONAPI() Dialect {
	t := &p.top
	errs := t.errors
	if !errs.IsArray() || t.message.Exists() || t.typ.Exists() || t.title.Exists() ||
		t.detail.Exists() || t.status.Exists() || strings.Contains(p.h.contentType, "problem+json") {
		return "" // JSON:API's top level holds none of these; RFC 9457's does
	}
	jsonapi := t.jsonapi.Exists() || strings.Contains(p.h.contentType, "vnd.api+json")
	if x := errs.member("0"); x.member("detail").Exists() || x.member("source").Exists() || x.member("title").Exists() {
		jsonapi = true
	}
	if !jsonapi {
		return ""
	}
	p.nested(errs, DialectJSONAPI, (*parser).readJSONAPIError)
	return DialectJSONAPI
}

func (c *parser) readJSONAPIError(x val) {
	e := &c.e
	e.Code, e.Title = x.member("code").Text(), x.member("title").Str()
	e.Message = x.member("detail").Str()
	if e.Message == "" {
		e.Message = e.Title
	}
	c.setStatus(x.member("status"))
	src := x.member("source")
	switch {
	case src.member("pointer").Exists():
		c.addIssue(Issue{Path: toPointer(src.member("pointer").Str()), Code: e.Code, Message: e.Message})
	case src.member("parameter").Exists():
		c.addIssue(Issue{Path: toPointer(src.member("parameter").Str()), Code: e.Code, Message: e.Message})
	case src.member("header").Exists():
		e.Hint = "check the " + src.member("header").Str() + " header"
	}
	if u := x.Get("links.about"); u.Exists() {
		e.DocsURL = u.Text()
		if u.IsObject() {
			e.DocsURL = u.member("href").Str()
		}
	}
}
