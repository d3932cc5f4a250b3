package remedy

import "github.com/remedy-go/remedy/internal/tape"

// GraphQL's errors list, with its extensions (in a 2xx).

func (p *parser) readGraphQL() Dialect {
	errs := p.top.errors
	if !errs.IsArray() || p.top.message.Exists() || p.top.success.Exists() {
		return ""
	}
	graphql, any := p.top.data.Exists() || p.top.extensions.Exists(), false
	for it := errs.Iter(); it.Next(); {
		x := it.Val()
		any = true
		if !x.Member("message").Exists() || x.Member("detail").Exists() || x.Member("source").Exists() {
			return ""
		}
		if x.Member("locations").Exists() || x.Member("path").Exists() || x.Member("extensions").Exists() || x.Member("type").Exists() {
			graphql = true
		}
	}
	if !graphql || !any {
		return ""
	}
	p.nested(errs, DialectGraphQL)
	return DialectGraphQL
}

func (c *parser) readGraphQLError(x tape.Val) {
	e := &c.e
	e.Message = x.Member("message").Str()
	ext := x.Member("extensions")
	e.Code = ext.Member("code").Text()
	if e.Code == "" {
		e.Code = x.Member("type").Text() // GitHub's GraphQL API
	}
	for it := ext.Iter(); it.Next(); {
		switch k := it.Key(); k {
		case "retryable", "is_retriable", "retry_after_ms", "retry_after_seconds", "hint",
			"next_operation", "next_operation_args", "trace_id", "request_id", "docs_url", "issues":
			c.agentField(k, it.Val())
		}
	}
	if path := x.Member("path"); path.IsArray() {
		c.addIssue(Issue{Path: arrayPointer(path), Code: e.Code, Message: e.Message})
	}
}
