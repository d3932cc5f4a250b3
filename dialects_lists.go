package remedy

import (
	"strings"

	"github.com/tidwall/gjson"
)

// Dialects whose failures come as lists, and those that report failures inside a 2xx.

func readMCP(p *parser) Dialect {
	res := p.top.get("result")
	if !res.IsObject() || !p.top.has("jsonrpc") {
		if !p.top.has("isError") || !p.top.has("content") {
			return ""
		}
		res = gjson.Parse(p.top.raw)
	}
	if !res.Get("isError").Bool() {
		return ""
	}
	// The envelope the tool returned: structuredContent first, then the text content.
	if sc := res.Get("structuredContent"); sc.IsObject() && p.readInner(sc.Raw) {
		return DialectMCP
	}
	var text strings.Builder
	res.Get("content").ForEach(func(_, c gjson.Result) bool {
		if c.Get("type").Str == "text" {
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(c.Get("text").Str)
		}
		return true
	})
	t := strings.TrimSpace(text.String())
	if strings.HasPrefix(t, "{") && validJSON(t) && p.readInner(t) {
		return DialectMCP
	}
	p.e.Code = "tool_error"
	p.e.Message = clip(t, 500)
	return DialectMCP
}

// readInner reads a body carried inside another (an MCP result's envelope) with the reader
// table, as a body without an HTTP status of its own. Nesting is bounded.
func (p *parser) readInner(s string) bool {
	if p.depth >= 2 {
		return false
	}
	saved, status := p.top, p.status
	p.top, p.status = members{}, 0
	p.depth++
	d := p.readJSON(s)
	p.depth--
	p.top, p.status = saved, status
	return d != ""
}

var jsonrpcNames = map[string]string{
	"-32700": "Parse error", "-32600": "Invalid Request", "-32601": "Method not found",
	"-32602": "Invalid params", "-32603": "Internal error",
}

func readJSONRPC(p *parser) Dialect {
	errObj := p.top.get("error")
	if !errObj.IsObject() || !p.top.has("jsonrpc") {
		return ""
	}
	e := p.e
	e.Code = str(errObj.Get("code"))
	e.Message = errObj.Get("message").Str
	e.Title = jsonrpcNames[e.Code]
	switch e.Code {
	case "-32700", "-32600", "-32601", "-32602":
		e.Category = CategoryValidation
	case "-32603":
		e.Category = CategoryInternal
	}
	if data := errObj.Get("data"); data.IsObject() {
		data.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "retryable", "is_retriable", "retry_after_ms", "retry_after_seconds", "hint", "issues",
				"next_operation", "next_operation_args", "trace_id", "request_id", "docs_url":
				p.agentField(k.Str, v)
			}
			return true
		})
	} else if data.Type == gjson.String && e.Hint == "" {
		e.Hint = clip(data.Str, 300)
	}
	return DialectJSONRPC
}

func readKubernetes(p *parser) Dialect {
	if p.top.get("kind").Str != "Status" || p.top.get("status").Str != "Failure" {
		return ""
	}
	e := p.e
	e.Code = p.top.get("reason").Str
	e.Message = p.top.get("message").Str
	p.setStatus(p.top.get("code"))
	details := p.top.get("details")
	if w := waitFromJSON(details.Get("retryAfterSeconds"), 1e9); w.ok && details.Get("retryAfterSeconds").Num > 0 {
		p.facts.k8s = w
	}
	details.Get("causes").ForEach(func(_, c gjson.Result) bool {
		if c.Get("field").Str == "" {
			return true // a cause without a field restates the message
		}
		p.addIssue(Issue{Path: toPointer(c.Get("field").Str), Code: c.Get("reason").Str, Message: c.Get("message").Str})
		return true
	})
	if e.Code == "" {
		e.Code = "Unknown"
	}
	return DialectKubernetes
}

func readSlack(p *parser) Dialect {
	ok := p.top.get("ok")
	if ok.Type != gjson.False {
		return ""
	}
	e := p.e
	e.Code = str(p.top.get("error"))
	if needed := p.top.get("needed").Str; needed != "" {
		e.Hint = "the token needs scope " + needed
		if prov := p.top.get("provided").Str; prov != "" {
			e.Hint += " (it has " + prov + ")"
		}
	}
	p.top.get("response_metadata").Get("messages").ForEach(func(_, m gjson.Result) bool {
		msg := strings.TrimSpace(strings.TrimPrefix(m.Str, "[ERROR]"))
		if e.Message == "" {
			e.Message = msg
		}
		if i := strings.Index(msg, "missing required field: "); i >= 0 {
			f := strings.TrimSpace(msg[i+len("missing required field: "):])
			p.addIssue(Issue{Path: toPointer(f), Code: "required", Message: msg})
		}
		return true
	})
	return DialectSlack
}

func readCloudflare(p *parser) Dialect {
	succ, errs := p.top.get("success"), p.top.get("errors")
	if succ.Type != gjson.False || !errs.IsArray() {
		return ""
	}
	first := true
	errs.ForEach(func(_, x gjson.Result) bool {
		if first {
			p.e.Code, p.e.Message = str(x.Get("code")), x.Get("message").Str
			first = false
		}
		if u := x.Get("documentation_url").Str; u != "" && p.e.DocsURL == "" {
			p.e.DocsURL = u
		}
		return true
	})
	p.nested(errs, DialectCloudflare, func(c *parser, x gjson.Result) {
		c.e.Code, c.e.Message = str(x.Get("code")), x.Get("message").Str
		if ptr := x.Get("source.pointer").Str; ptr != "" {
			c.addIssue(Issue{Path: toPointer(ptr), Code: c.e.Code, Message: c.e.Message})
		}
		x.Get("error_chain").ForEach(func(_, ch gjson.Result) bool {
			c.e.RelatedCodes = append(c.e.RelatedCodes, str(ch.Get("code")))
			if c.e.Hint == "" {
				c.e.Hint = ch.Get("message").Str
			}
			return true
		})
	})
	if len(p.e.Errors) > 1 {
		p.e.Message = "" // summarize picks the most actionable
		p.e.Code = ""
	}
	return DialectCloudflare
}

func readAnthropic(p *parser) Dialect {
	obj := p.top.get("error")
	if p.top.get("type").Str != "error" || !obj.IsObject() {
		return ""
	}
	p.e.Code = obj.Get("type").Str
	p.e.Message = obj.Get("message").Str
	p.e.RequestID = p.top.get("request_id").Str
	return DialectAnthropic
}

func readGraphQL(p *parser) Dialect {
	errs := p.top.get("errors")
	if !errs.IsArray() || p.top.has("message") || p.top.has("success") {
		return ""
	}
	graphql, any := p.top.has("data") || p.top.has("extensions"), false
	errs.ForEach(func(_, x gjson.Result) bool {
		any = true
		if !x.Get("message").Exists() || x.Get("detail").Exists() || x.Get("source").Exists() {
			graphql = false
			return false
		}
		if x.Get("locations").Exists() || x.Get("path").Exists() || x.Get("extensions").Exists() || x.Get("type").Exists() {
			graphql = true
		}
		return true
	})
	if !graphql || !any {
		return ""
	}
	read := func(c *parser, x gjson.Result) {
		e := c.e
		e.Message = x.Get("message").Str
		ext := x.Get("extensions")
		e.Code = str(ext.Get("code"))
		if e.Code == "" {
			e.Code = str(x.Get("type")) // GitHub's GraphQL API
		}
		ext.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "retryable", "is_retriable", "retry_after_ms", "retry_after_seconds", "hint",
				"next_operation", "next_operation_args", "trace_id", "request_id", "docs_url", "issues":
				c.agentField(k.Str, v)
			}
			return true
		})
		if path := x.Get("path"); path.IsArray() {
			c.addIssue(Issue{Path: arrayPointer(path), Code: e.Code, Message: e.Message})
		}
	}
	p.nested(errs, DialectGraphQL, read)
	return DialectGraphQL
}

func readJSONAPI(p *parser) Dialect {
	errs := p.top.get("errors")
	if !errs.IsArray() || p.top.has("message") || p.top.has("type") || p.top.has("title") ||
		p.top.has("detail") || p.top.has("status") || strings.Contains(p.header.Get("Content-Type"), "problem+json") {
		return "" // JSON:API's top level holds none of these; RFC 9457's does
	}
	jsonapi := p.top.has("jsonapi") || strings.Contains(p.header.Get("Content-Type"), "vnd.api+json")
	errs.ForEach(func(_, x gjson.Result) bool {
		if x.Get("detail").Exists() || x.Get("source").Exists() || x.Get("title").Exists() {
			jsonapi = true
		}
		return false
	})
	if !jsonapi {
		return ""
	}
	read := func(c *parser, x gjson.Result) {
		e := c.e
		e.Code, e.Title = str(x.Get("code")), x.Get("title").Str
		e.Message = x.Get("detail").Str
		if e.Message == "" {
			e.Message = e.Title
		}
		c.setStatus(x.Get("status"))
		src := x.Get("source")
		var path string
		switch {
		case src.Get("pointer").Exists():
			path = toPointer(src.Get("pointer").Str)
		case src.Get("parameter").Exists():
			path = toPointer(src.Get("parameter").Str)
		case src.Get("header").Exists():
			e.Hint = "check the " + src.Get("header").Str + " header"
		}
		if src.Get("pointer").Exists() || src.Get("parameter").Exists() {
			c.addIssue(Issue{Path: path, Code: e.Code, Message: e.Message})
		}
		if u := x.Get("links.about"); u.Exists() {
			e.DocsURL = str(u)
			if u.IsObject() {
				e.DocsURL = u.Get("href").Str
			}
		}
	}
	p.nested(errs, DialectJSONAPI, read)
	return DialectJSONAPI
}
