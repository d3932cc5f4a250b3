package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy"
)

// ErrSessionClosed is the cause of a call made on a session that is gone: the server answered
// 404 for its session id (it ended the session: it expired, or the server restarted), or the
// session's connection was closed. A session does not come back: without SetReconnect, every
// later call on the transport fails with it too, and the caller connects a new session.
//
//	errors.Is(err, mcp.ErrSessionClosed)
var ErrSessionClosed = errors.New("remedy/mcp: the MCP session is gone")

// SetReconnect has the transport open a new session with connect when its session is gone,
// instead of failing every later call with ErrSessionClosed. The new session replaces the old
// one (which is closed), and the tools are listed again on it. connect runs once per lost
// session, however many calls are waiting; it typically calls the go-sdk client's Connect
// with the same transport options.
//
// A call is sent on the new session only when that cannot run it twice: the server answered
// 404 for the old session (a server that ended a session runs nothing sent on it), or the
// session was already known to be gone before the call (nothing was sent), or the call is safe
// to send again (a readOnlyHint or idempotentHint tool, or one that takes an idempotencyKey,
// which goes with it). Any other call that was in flight when its session died fails with
// ErrSessionClosed: it may have run; the loop does not send it again unless it is safe.
func (t *Transport) SetReconnect(connect func(ctx context.Context) (*sdk.ClientSession, error)) {
	t.mu.Lock()
	t.reconnect = connect
	t.mu.Unlock()
}

// Session is the session the transport calls on now: the one it was made with, or the last
// one SetReconnect's connect opened. Closing it is the caller's business.
func (t *Transport) Session() *sdk.ClientSession {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.session
}

// sessionGone reports whether err says that the session is gone for good.
func sessionGone(err error) bool {
	return errors.Is(err, sdk.ErrSessionMissing) || errors.Is(err, sdk.ErrConnectionClosed)
}

// markGone records that s is gone, so that the next call reconnects before it sends anything.
func (t *Transport) markGone(s *sdk.ClientSession) {
	t.mu.Lock()
	if t.session == s {
		t.gone = true
	}
	t.mu.Unlock()
}

// live is the session to call on: the current one, or, when it is known to be gone and the
// transport may reconnect, a new one. A failure to reconnect is ErrSessionClosed with the
// reason, marked remedy.NotSent: no session carried the call.
func (t *Transport) live(ctx context.Context) (*sdk.ClientSession, error) {
	t.mu.RLock()
	s, gone, connect := t.session, t.gone, t.reconnect
	t.mu.RUnlock()
	if !gone || connect == nil {
		return s, nil
	}
	t.dial.Lock()
	defer t.dial.Unlock()
	t.mu.RLock()
	s, gone = t.session, t.gone
	t.mu.RUnlock()
	if !gone {
		return s, nil // another call reconnected meanwhile
	}
	ns, err := connect(ctx)
	if err != nil {
		return nil, remedy.NotSent(fmt.Errorf("%w; reconnecting: %w", ErrSessionClosed, err))
	}
	inFlight.drive(ns)
	t.mu.Lock()
	t.session, t.gone = ns, false
	t.mu.Unlock()
	s.Close()
	if _, err := t.Load(ctx); err != nil {
		return nil, remedy.NotSent(fmt.Errorf("%w; listing the tools of the new session: %w", ErrSessionClosed, err))
	}
	return ns, nil
}

// callTool calls the tool on the live session; when the session turns out to be gone, it
// reconnects and sends the call again if that cannot run it twice (see SetReconnect). args are
// the call's arguments without the protocol's, for the record of calls in flight.
func (t *Transport) callTool(ctx context.Context, params *sdk.CallToolParams, args json.RawMessage, safe bool) (*sdk.CallToolResult, error) {
	s, err := t.live(ctx)
	if err != nil {
		return nil, err
	}
	res, err := send(ctx, s, params, args)
	if err == nil || !sessionGone(err) {
		return res, err
	}
	t.markGone(s)
	t.mu.RLock()
	canReconnect := t.reconnect != nil
	t.mu.RUnlock()
	// The server answered 404 for the session: it ran nothing.
	refused := errors.Is(err, sdk.ErrSessionMissing)
	if !canReconnect || !(refused || safe) {
		return nil, fmt.Errorf("%w: %w", ErrSessionClosed, err)
	}
	s, rerr := t.live(ctx)
	if rerr != nil {
		return nil, rerr
	}
	res, err = send(ctx, s, params, args)
	if err != nil && sessionGone(err) {
		t.markGone(s)
		return nil, fmt.Errorf("%w: %w", ErrSessionClosed, err)
	}
	return res, err
}

// send calls the tool on s, with the call recorded as in flight on s until it returns, so
// that ElicitationHandler can tell a question about it from one about a call never sent.
func send(ctx context.Context, s *sdk.ClientSession, params *sdk.CallToolParams, args json.RawMessage) (*sdk.CallToolResult, error) {
	ctx, done := inFlight.begin(ctx, s, params.Name, args)
	defer done()
	return s.CallTool(ctx, params)
}
