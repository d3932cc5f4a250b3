package remedy

import (
	"strings"

	"github.com/remedy-go/remedy/internal/tape"
)

// JSON:API's errors list: status, code, title, detail, source.pointer.

func (p *parser) readJSONAPI() Dialect {
	t := &p.top
	errs := t.errors
	if !errs.IsArray() || t.message.Exists() || t.typ.Exists() || t.title.Exists() ||
		t.detail.Exists() || t.status.Exists() || strings.Contains(p.h.contentType, "problem+json") {
		return "" // JSON:API's top level holds none of these; RFC 9457's does
	}
	jsonapi := t.jsonapi.Exists() || strings.Contains(p.h.contentType, "vnd.api+json")
	if x := errs.Member("0"); x.Member("detail").Exists() || x.Member("source").Exists() || x.Member("title").Exists() {
		jsonapi = true
	}
	if !jsonapi {
		return ""
	}
	p.nested(errs, DialectJSONAPI)
	return DialectJSONAPI
}

func (c *parser) readJSONAPIError(x tape.Val) {
	e := &c.e
	e.Code, e.Title = x.Member("code").Text(), x.Member("title").Str()
	e.Message = x.Member("detail").Str()
	if e.Message == "" {
		e.Message = e.Title
	}
	c.setStatus(x.Member("status"))
	src := x.Member("source")
	switch {
	case src.Member("pointer").Exists():
		c.addIssue(Issue{Path: toPointer(src.Member("pointer").Str()), Code: e.Code, Message: e.Message})
	case src.Member("parameter").Exists():
		c.addIssue(Issue{Path: toPointer(src.Member("parameter").Str()), Code: e.Code, Message: e.Message})
	case src.Member("header").Exists():
		e.Hint = "check the " + src.Member("header").Str() + " header"
	}
	if u := x.Get("links.about"); u.Exists() {
		e.DocsURL = u.Text()
		if u.IsObject() {
			e.DocsURL = u.Member("href").Str()
		}
	}
}
