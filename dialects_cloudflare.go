package remedy

// Cloudflare's API v4: success false with errors [{code, message}].

func (p *parser) readCloudflare() Dialect {
	errs := p.top.errors
	if p.top.success.kind() != kFalse || !errs.IsArray() {
		return ""
	}
	first := errs.member("0")
	p.e.Code, p.e.Message = first.member("code").Text(), first.member("message").Str()
	p.e.DocsURL = first.member("documentation_url").Str()
	p.nested(errs, DialectCloudflare, (*parser).readCloudflareError)
	if len(p.e.Errors) > 1 {
		p.e.Code, p.e.Message = "", "" // summarize picks the most actionable
	}
	return DialectCloudflare
}

func (c *parser) readCloudflareError(x val) {
	c.e.Code, c.e.Message = x.member("code").Text(), x.member("message").Str()
	if ptr := x.Get("source.pointer").Str(); ptr != "" {
		c.addIssue(Issue{Path: toPointer(ptr), Code: c.e.Code, Message: c.e.Message})
	}
	for it := x.member("error_chain").iter(); it.next(); {
		c.related(it.val().member("code").Text(), false)
		if c.e.Hint == "" {
			c.e.Hint = it.val().member("message").Str()
		}
	}
}
