// Package httpop holds the facts about HTTP operations that the client and the reference
// server must agree on: the name an operation gets when it has no id, and what its method
// says about a body and about repeating it.
package httpop

import (
	"net/http"
	"strings"
)

// Name names an operation from its method and path template, as both sides derive an
// operation id that is not given: the lower-case method, then "_" and each path segment (a
// {param} by its name), every character outside [a-z0-9] lower-cased or replaced by "_".
// GET /v1/orders/{order-id} → get_v1_orders_order_id.
func Name(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	if path == "/" {
		return b.String()
	}
	for seg := range strings.SplitSeq(strings.TrimPrefix(path, "/"), "/") {
		b.WriteByte('_')
		if len(seg) >= 2 && seg[0] == '{' && seg[len(seg)-1] == '}' {
			seg = seg[1 : len(seg)-1]
		}
		for _, r := range seg {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
				b.WriteRune(r)
			case r >= 'A' && r <= 'Z':
				b.WriteRune(r + 'a' - 'A')
			default:
				b.WriteByte('_')
			}
		}
	}
	return b.String()
}

// Idempotent reports whether RFC 9110 (9.2.2) calls the method idempotent: sending it twice
// has the effect of sending it once.
func Idempotent(method string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE":
		return true
	}
	return false
}

// Bodyless reports whether a request of the method goes without a body when no argument
// needs one: its arguments go to the path and the query.
func Bodyless(method string) bool {
	switch method {
	case "GET", "HEAD", "DELETE", "OPTIONS":
		return true
	}
	return false
}

// Header is h.Get(name) for a name in its canonical form already: the same lookup,
// without canonicalizing the name on every call.
func Header(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// IsEventStream reports whether a Content-Type value names text/event-stream (in any case,
// with any parameters), the media type of a server-sent event stream.
func IsEventStream(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}
