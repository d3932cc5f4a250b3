package remedy

import "strings"

// Dialects whose failures come as lists, and those that report failures inside a 2xx.

func (p *parser) readMCP() Dialect {
	res := p.top.result
	if !res.IsObject() || !p.top.jsonrpc.Exists() {
		if !p.top.isError.Exists() || !p.top.content.Exists() {
			return ""
		}
		res = p.top.root
	}
	if res.member("isError").kind() != kTrue {
		return ""
	}
	// The envelope the tool returned: structuredContent first, then the text content.
	if sc := res.member("structuredContent"); sc.IsObject() && p.readInner(sc) {
		return DialectMCP
	}
	var text strings.Builder
	for it := res.member("content").iter(); it.next(); {
		if it.val().member("type").Str() == "text" {
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(it.val().member("text").Str())
		}
	}
	t := strings.TrimSpace(text.String())
	if strings.HasPrefix(t, "{") {
		inner := getTape()
		ok := inner.parse(t) && p.readInner(inner.root())
		putTape(inner)
		if ok {
			return DialectMCP
		}
	}
	p.e.Code = "tool_error"
	p.e.Message = clip(t, 500)
	if p.zodIssues(t) || p.mcpgoIssues(t) { // the TypeScript SDK's or mcp-go's argument failure
		p.e.Code, p.e.Category = "invalid_arguments", CategoryValidation
	}
	return DialectMCP
}

// readInner reads a body carried inside another (an MCP result's envelope) with the readers, as
// a body without an HTTP status of its own. Nesting is bounded.
func (p *parser) readInner(v val) bool {
	if p.depth >= 2 {
		return false
	}
	saved, status := p.top, p.status
	p.status = 0
	p.depth++
	d := p.readJSON(v)
	p.depth--
	p.top, p.status = saved, status
	return d != ""
}

func jsonrpcName(code string) string {
	switch code {
	case "-32700":
		return "Parse error"
	case "-32600":
		return "Invalid Request"
	case "-32601":
		return "Method not found"
	case "-32602":
		return "Invalid params"
	case "-32603":
		return "Internal error"
	}
	return ""
}

func (p *parser) readJSONRPC() Dialect {
	errObj := p.top.error
	if !errObj.IsObject() || !p.top.jsonrpc.Exists() {
		return ""
	}
	e := &p.e
	e.Code = errObj.member("code").Text()
	e.Message = errObj.member("message").Str()
	e.Title = jsonrpcName(e.Code)
	switch e.Code {
	case "-32602":
		e.Category = CategoryValidation
		p.zodIssues(e.Message) // the TypeScript SDK's tool input validation failure
	case "-32700", "-32600", "-32601":
		e.Category = CategoryValidation
	case "-32603":
		e.Category = CategoryInternal
	}
	if data := errObj.member("data"); data.IsObject() {
		for it := data.iter(); it.next(); {
			switch k := it.Key(); k {
			case "retryable", "is_retriable", "retry_after_ms", "retry_after_seconds", "hint", "issues",
				"next_operation", "next_operation_args", "trace_id", "request_id", "docs_url":
				p.agentField(k, it.val())
			}
		}
	} else if data.IsString() && e.Hint == "" {
		e.Hint = clip(data.Str(), 300)
	}
	return DialectJSONRPC
}

func (p *parser) readKubernetes() Dialect {
	if p.top.kind.Str() != "Status" || p.top.status.Str() != "Failure" {
		return ""
	}
	e := &p.e
	e.Code = p.top.reason.Str()
	e.Message = p.top.message.Str()
	p.setStatus(p.top.code)
	details := p.top.details
	if after := details.member("retryAfterSeconds"); after.Num() > 0 {
		p.facts.k8s = waitFromJSON(after, 1e9)
	}
	for it := details.member("causes").iter(); it.next(); {
		c := it.val()
		field := c.member("field").Str()
		if field == "" {
			continue // a cause without a field restates the message
		}
		p.addIssue(Issue{Path: toPointer(field), Code: c.member("reason").Str(), Message: c.member("message").Str()})
	}
	if e.Code == "" {
		e.Code = "Unknown"
	}
	return DialectKubernetes
}

func (p *parser) readSlack() Dialect {
	if p.top.ok.kind() != kFalse {
		return ""
	}
	e := &p.e
	e.Code = p.top.error.Text()
	if needed := p.top.needed.Str(); needed != "" && p.full {
		e.Hint = "the token needs scope " + needed
		if prov := p.top.provided.Str(); prov != "" {
			e.Hint += " (it has " + prov + ")"
		}
	}
	for it := p.top.metadata.member("messages").iter(); it.next(); {
		msg := strings.TrimSpace(strings.TrimPrefix(it.val().Str(), "[ERROR]"))
		if e.Message == "" {
			e.Message = msg
		}
		if i := strings.Index(msg, "missing required field: "); i >= 0 {
			if !p.full {
				p.unread = true
				continue
			}
			f := strings.TrimSpace(msg[i+len("missing required field: "):])
			p.addIssue(Issue{Path: toPointer(f), Code: "required", Message: msg})
		} else if text, ptr, ok := slackPointer(msg); ok {
			// Block Kit's failures end in the member they are about: "must be less than
			// 3001 characters [json-pointer:/blocks/0/text/text]".
			if !p.full {
				p.unread, p.kept = true, true
				continue
			}
			p.addIssue(Issue{Path: ptr, Message: text})
		}
	}
	return DialectSlack
}

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

func (p *parser) readAnthropic() Dialect {
	obj := p.top.error
	if p.top.typ.Str() != "error" || !obj.IsObject() {
		return ""
	}
	p.e.Code = obj.member("type").Str()
	p.e.Message = obj.member("message").Str()
	p.e.RequestID = p.top.requestID.Str()
	return DialectAnthropic
}

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

// slackPointer splits a Slack message that ends in "[json-pointer:/...]" into its text and
// the pointer.
func slackPointer(msg string) (text, ptr string, ok bool) {
	const mark = " [json-pointer:"
	i := strings.LastIndex(msg, mark)
	if i < 0 || !strings.HasSuffix(msg, "]") {
		return "", "", false
	}
	ptr = msg[i+len(mark) : len(msg)-1]
	if ptr == "" || ptr[0] != '/' || strings.ContainsAny(ptr, " []") {
		return "", "", false
	}
	return msg[:i], ptr, true
}
