package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"runtime"
	"sync"
	"weak"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy"
)

// toolCall is a tool call a Transport has in flight: the session it was sent on, and the tool
// and the arguments as the loop made them (without the confirmationToken and idempotencyKey
// the transport adds), which are what the server runs.
type toolCall struct {
	session *sdk.ClientSession
	tool    string
	args    json.RawMessage
}

// callKey is the context key of the toolCall a tools/call is sent for. The go-sdk answers a
// question that comes in a call's result (protocol 2026-07-28 and later) on the call's own
// context: there the question is about that call and no other.
type callKey struct{}

// inFlight is the calls remedy's Transports have in flight, by session, so that
// ElicitationHandler answers a question only about a call this client sent. A server that
// speaks a protocol before 2026-07-28 asks with a request of its own on the session, which
// the go-sdk does not tie to the call it is about: the session's calls are then all there is
// to match the question against.
var inFlight = &sessionCalls{sessions: map[weak.Pointer[sdk.ClientSession]]map[*toolCall]struct{}{}}

// sessionCalls holds, for each session a Transport calls on, the calls in flight on it. A
// session is forgotten when it is garbage, so that the record never keeps one alive.
type sessionCalls struct {
	mu       sync.Mutex
	sessions map[weak.Pointer[sdk.ClientSession]]map[*toolCall]struct{}
}

// drive records that a Transport calls on s: from then on, a question on s is answered only
// about a call in flight on it.
func (r *sessionCalls) drive(s *sdk.ClientSession) {
	if s == nil {
		return
	}
	r.mu.Lock()
	r.calls(s)
	r.mu.Unlock()
}

// calls is the set of s's calls in flight, made when s is new. r.mu is held.
func (r *sessionCalls) calls(s *sdk.ClientSession) map[*toolCall]struct{} {
	k := weak.Make(s)
	calls, ok := r.sessions[k]
	if !ok {
		calls = map[*toolCall]struct{}{}
		r.sessions[k] = calls
		runtime.AddCleanup(s, r.forget, k)
	}
	return calls
}

func (r *sessionCalls) forget(k weak.Pointer[sdk.ClientSession]) {
	r.mu.Lock()
	delete(r.sessions, k)
	r.mu.Unlock()
}

// begin records a call of tool with args as in flight on s, and returns the context to send
// it on and the function that ends the record, to be called when the call returned.
func (r *sessionCalls) begin(ctx context.Context, s *sdk.ClientSession, tool string, args json.RawMessage) (context.Context, func()) {
	if len(args) == 0 {
		args = json.RawMessage(`{}`) // as withProtocolArgs sends it
	}
	c := &toolCall{session: s, tool: tool, args: args}
	r.mu.Lock()
	r.calls(s)[c] = struct{}{}
	r.mu.Unlock()
	return context.WithValue(ctx, callKey{}, c), func() {
		r.mu.Lock()
		delete(r.sessions[weak.Make(s)], c)
		r.mu.Unlock()
	}
}

// about returns the calls a question on s (asked with ctx) can be about: the call whose
// result brought it, when it came in one; else every call in flight on s. recorded is false
// when no Transport calls on s: this client keeps no record of its calls.
func (r *sessionCalls) about(ctx context.Context, s *sdk.ClientSession) (calls []*toolCall, recorded bool) {
	if s == nil {
		return nil, false
	}
	if c, ok := ctx.Value(callKey{}).(*toolCall); ok && c.session == s {
		return []*toolCall{c}, true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	set, ok := r.sessions[weak.Make(s)]
	if !ok {
		return nil, false
	}
	for c := range set {
		calls = append(calls, c)
	}
	return calls, true
}

// matching is the one call among calls that the server's question asks about: its tool is
// the operation the question names, and its arguments are the ones it shows, when it shows
// them (a question whose arguments were too long to show names the operation alone). It is
// nil when no call matches, or when several do: the question is then about no call this
// client can name.
func matching(calls []*toolCall, operation string, args json.RawMessage) *toolCall {
	var found *toolCall
	for _, c := range calls {
		if c.tool != operation || (args != nil && !sameArgs(c.args, args)) {
			continue
		}
		if found != nil {
			return nil
		}
		found = c
	}
	return found
}

// sameArgs reports whether the arguments a question shows are the call's, as JSON values,
// without the confirmationToken and idempotencyKey members, which are the protocol's (the
// server leaves them out of the question). Numbers compare as float64, as the go-sdk decodes
// a question's _meta: the match only finds the call, whose own bytes the person is shown.
func sameArgs(call, shown json.RawMessage) bool {
	var a, b any
	if json.Unmarshal(call, &a) != nil || json.Unmarshal(shown, &b) != nil {
		return false
	}
	for _, v := range []any{a, b} {
		if m, ok := v.(map[string]any); ok {
			delete(m, remedy.ArgConfirmationToken)
			delete(m, remedy.ArgIdempotencyKey)
		}
	}
	return reflect.DeepEqual(a, b)
}
