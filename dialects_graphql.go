package remedy

// GraphQL's errors list, with its extensions (in a 2xx).

func (p *parser) readGraphQL() Dialect {
	errs := p.top.errors
	if !errs.IsArray() || p.top.message.Exists() || p.top.success.Exists() {
		return ""
	}
	graphql, any := p.top.data.Exists() || p.top.extensions.Exists(), false
	for it := errs.iter(); it.next(); {
		x := it.val()
		any = true
		if !x.member("message").Exists() || x.member("detail").Exists() || x.member("source").Exists() {
			return ""
		}
		if x.member("locations").Exists() || x.member("path").Exists() || x.member("extensions").Exists() || x.member("type").Exists() {
			graphql = true
		}
	}
	if !graphql || !any {
		return ""
	}
	p.nested(errs, DialectGraphQL, (*parser).readGraphQLError)
	return DialectGraphQL
}

func (c *parser) readGraphQLError(x val) {
	e := &c.e
	e.Message = x.member("message").Str()
	ext := x.member("extensions")
	e.Code = ext.member("code").Text()
	if e.Code == "" {
		e.Code = x.member("type").Text() // GitHub's GraphQL API
	}
	for it := ext.iter(); it.next(); {
		switch k := it.Key(); k {
		case "retryable", "is_retriable", "retry_after_ms", "retry_after_seconds", "hint",
			"next_operation", "next_operation_args", "trace_id", "request_id", "docs_url", "issues":
			c.agentField(k, it.val())
		}
	}
	if path := x.member("path"); path.IsArray() {
		c.addIssue(Issue{Path: arrayPointer(path), Code: e.Code, Message: e.Message})
	}
}
