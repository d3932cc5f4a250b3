package remedy

import "github.com/remedy-go/remedy/internal/tape"

// Cloudflare's API v4: success false with errors [{code, message}].

func (p *parser) readCloudflare() Dialect {
	errs := p.top.errors
	if p.top.success.Kind() != tape.False || !errs.IsArray() {
		return ""
	}
	first := errs.Member("0")
	p.e.Code, p.e.Message = first.Member("code").Text(), first.Member("message").Str()
	p.e.DocsURL = first.Member("documentation_url").Str()
	p.nested(errs, DialectCloudflare)
	if len(p.e.Errors) > 1 {
		p.e.Code, p.e.Message = "", "" // summarize picks the most actionable
	}
	return DialectCloudflare
}

func (c *parser) readCloudflareError(x tape.Val) {
	c.e.Code, c.e.Message = x.Member("code").Text(), x.Member("message").Str()
	if ptr := x.Get("source.pointer").Str(); ptr != "" {
		c.addIssue(Issue{Path: toPointer(ptr), Code: c.e.Code, Message: c.e.Message})
	}
	for it := x.Member("error_chain").Iter(); it.Next(); {
		c.related(it.Val().Member("code").Text(), false)
		if c.e.Hint == "" {
			c.e.Hint = it.Val().Member("message").Str()
		}
	}
}
