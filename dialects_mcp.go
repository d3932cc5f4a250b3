package remedy

import (
	"strings"

	"github.com/remedy-go/remedy/internal/prose"
	"github.com/remedy-go/remedy/internal/tape"
)

// MCP tool results whose isError carries a failure (in a 2xx), and JSON-RPC 2.0 errors.

func (p *parser) readMCP() Dialect {
	res := p.top.result
	if !res.IsObject() || !p.top.jsonrpc.Exists() {
		if !p.top.isError.Exists() || !p.top.content.Exists() {
			return ""
		}
		res = p.top.root
	}
	if res.Member("isError").Kind() != tape.True {
		return ""
	}
	// The envelope the tool returned: structuredContent first, then the text content.
	if sc := res.Member("structuredContent"); sc.IsObject() && p.readInner(sc) {
		return DialectMCP
	}
	var text strings.Builder
	for it := res.Member("content").Iter(); it.Next(); {
		if it.Val().Member("type").Str() == "text" {
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(it.Val().Member("text").Str())
		}
	}
	t := strings.TrimSpace(text.String())
	if strings.HasPrefix(t, "{") {
		inner := tape.Get()
		ok := inner.Parse(t) && p.readInner(inner.Root())
		tape.Put(inner)
		if ok {
			return DialectMCP
		}
	}
	p.e.Code = "tool_error"
	p.e.Message = prose.Clip(t, 500)
	if p.zodIssues(t) || p.mcpgoIssues(t) { // the TypeScript SDK's or mcp-go's argument failure
		p.e.Code, p.e.Category = "invalid_arguments", CategoryValidation
	}
	return DialectMCP
}

// readInner reads a body carried inside another (an MCP result's envelope) with the readers, as
// a body without an HTTP status of its own. Nesting is bounded.
func (p *parser) readInner(v tape.Val) bool {
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
	e.Code = errObj.Member("code").Text()
	e.Message = errObj.Member("message").Str()
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
	if data := errObj.Member("data"); data.IsObject() {
		for it := data.Iter(); it.Next(); {
			switch k := it.Key(); k {
			case "retryable", "is_retriable", "retry_after_ms", "retry_after_seconds", "hint", "issues",
				"next_operation", "next_operation_args", "trace_id", "request_id", "docs_url":
				p.agentField(k, it.Val())
			}
		}
	} else if data.IsString() && e.Hint == "" {
		e.Hint = prose.Clip(data.Str(), 300)
	}
	return DialectJSONRPC
}
