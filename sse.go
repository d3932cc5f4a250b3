package remedy

import (
	"strings"

	"github.com/remedy-go/remedy/internal/httpop"
	"github.com/remedy-go/remedy/internal/tape"
)

// An MCP server on streamable HTTP (and other JSON-RPC servers) may answer a POST with
// Content-Type text/event-stream: the JSON-RPC response is the data of an event, perhaps after
// notifications and progress events. Parse reads such a body as the JSON its events carry, so
// that an isError result or a JSON-RPC error inside a stream is the failure it is.

// eventStream reports whether a body is an event stream: its Content-Type says so, or, with no
// Content-Type, it starts with a field of one (data:, event:, id:, retry:, or a ':' comment).
func eventStream(contentType, body string) bool {
	if contentType != "" {
		return httpop.IsEventStream(contentType)
	}
	for _, field := range [...]string{"data:", "event:", "id:", "retry:", ":"} {
		if strings.HasPrefix(body, field) {
			return true
		}
	}
	return false
}

// streamJSON returns the JSON object an event stream's events carry that decides what the
// stream answered: the last JSON-RPC response among them (see isRPCResponse: the
// notifications and requests a server sends on the way do not answer the call; rpc reports
// one), else the last event whose data is a JSON object. An event's data is its data lines
// joined by "\n", as the event-stream format says; lines end in "\n", "\r\n" or "\r"; comments
// and other fields are skipped. complete says the body is whole: an event cut by the end of a
// body that is not (a bound) is left out, as one whose data may be cut too. ok is false when
// no event carries a JSON object.
//
// The result is a substring of body when the deciding event has one data line (the common
// case: no allocation), else a string of its own.
func streamJSON(body string, complete bool) (data string, rpc, ok bool) {
	var (
		answer, last  string // the deciding candidates so far
		haveRPC, have bool
		lines         []string // the current event's data lines, when more than one
		first         string   // the current event's first data line
		n             int      // how many data lines the current event has
	)
	dispatch := func() {
		if n == 0 {
			return
		}
		d := first
		if n > 1 {
			d = strings.Join(lines, "\n")
		}
		n, lines = 0, lines[:0]
		d = strings.TrimSpace(d)
		if d == "" || d[0] != '{' {
			return
		}
		last, have = d, true
		if isRPCResponse(d) {
			answer, haveRPC = d, true
		}
	}
	for s := body; s != ""; {
		line, rest, ended := cutLine(s)
		s = rest
		if !ended && !complete {
			break // cut by the bound: neither this line nor its event is whole
		}
		if line == "" {
			dispatch()
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		if field != "data" {
			continue // a comment (no field name), event:, id:, retry:, or an unknown field
		}
		value = strings.TrimPrefix(value, " ")
		switch n {
		case 0:
			first = value
		case 1:
			lines = append(lines, first, value)
		default:
			lines = append(lines, value)
		}
		n++
	}
	if complete {
		dispatch() // the stream ended without a blank line after its last event
	}
	switch {
	case haveRPC:
		return answer, true, true
	case have:
		return last, false, true
	}
	return "", false, false
}

// cutLine splits s after its first line, which ends in "\r\n", "\n" or "\r"; ended is false
// when s ran out before a line end.
func cutLine(s string) (line, rest string, ended bool) {
	i := strings.IndexAny(s, "\r\n")
	if i < 0 {
		return s, "", false
	}
	if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
		return s[:i], s[i+2:], true
	}
	return s[:i], s[i+1:], true
}

// isRPCResponse reports whether the text d is a JSON-RPC response: a valid JSON object with
// the members "jsonrpc", and "result" or "error", and no "method" (which a request or a
// notification has), at its top level.
func isRPCResponse(d string) bool {
	t := tape.For(len(d))
	defer tape.Put(t)
	if !t.Parse(d) {
		return false
	}
	root := t.Root()
	return root.Member("jsonrpc").Exists() && (root.Member("result").Exists() || root.Member("error").Exists()) &&
		!root.Member("method").Exists()
}
