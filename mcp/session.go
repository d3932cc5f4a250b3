package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy"
)

// ErrSessionClosed is the cause of a call made on a session that is gone: the server answered
// 404 for its session id (it ended the session: it expired, or the server restarted), or the
// session's connection was closed. A session does not come back: without SetReconnect, every
// later call on the transport fails with it too, and the caller connects a new session. A
// call that may have run before its session died fails with it and io.ErrUnexpectedEOF (see
// SetReconnect).
//
//	errors.Is(err, mcp.ErrSessionClosed)
var ErrSessionClosed = errors.New("remedy/mcp: the MCP session is gone")

// SetReconnect has the transport open a new session with connect when its session is gone,
// instead of failing every later call with ErrSessionClosed. The new session replaces the old
// one (which is closed), and the tools are listed again on it. connect runs once per lost
// session, however many calls are waiting, and every waiting call is sent on the session it
// opened; it typically calls the go-sdk client's Connect with the same transport options.
//
// A call is sent on the new session only when that cannot run it twice:
//
//   - the session was gone before the call was written: the go-sdk refused to send it on a
//     connection already closed or closing (its KeepAlive found the session gone and closed
//     it, an earlier request was answered 404, the caller closed it);
//   - the server answered the call's own request 404 for the session (a server that ended a
//     session runs nothing sent on it). Only a session whose HTTP client is one of
//     HTTPClient's shows whose request the 404 answered: the go-sdk fails every call in
//     flight with the first 404 the session gets (its keepalive's ping, another call's
//     request), and calls the server was running are among them. Over another client, a
//     call failed with a 404 counts as one that may have run;
//   - the call is safe to send again (a readOnlyHint or idempotentHint tool, or one that
//     takes an idempotencyKey, which goes with it).
//
// Any other call whose session died may have run: it is not sent again, and it fails with
// ErrSessionClosed and io.ErrUnexpectedEOF (an answer lost), which the loop reads as such:
// it stops with remedy.ErrOutcomeUnknown. The next call opens a new session.
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

// refusedUnwritten is how the go-sdk words the error of a call it refused to write because
// the session's connection was already closed or closing (its keepalive closed it, an earlier
// request found the session gone, the caller closed it): its jsonrpc2 layer's "client is
// closing" (the call was refused before it was registered) or "server is closing" (refused
// after, before writing), which it reports as ErrConnectionClosed with that text alone. The
// go-sdk reports a server's answer with the same JSON-RPC codes the same way; such an answer
// counts here only in those very words, which a go-sdk server sends for a call it refused
// before running it.
var refusedUnwritten = [...]string{
	fmt.Sprintf("%v: calling %q: client is closing", sdk.ErrConnectionClosed, "tools/call"),
	fmt.Sprintf("%v: calling %q: server is closing", sdk.ErrConnectionClosed, "tools/call"),
}

// ranNothing reports whether a tools/call that failed with err, on a session that is gone,
// certainly did not run: the go-sdk refused to write it (see refusedUnwritten), or the
// server answered the call's own request 404 for the session, which a server that ended a
// session answers to anything sent on it. ctx is the call's: it carries the answer
// HTTPClient's client saw for it. The go-sdk's own error for a 404 does not say which request
// got it: once one request of the session is answered 404, it fails every call in flight
// with that error, calls that were written and may have run included (the 404 may be the
// answer to its keepalive's ping, or to another call). Without HTTPClient's client, such an
// error counts as one of a call that may have run.
func ranNothing(ctx context.Context, err error) bool {
	if errors.Is(err, sdk.ErrConnectionClosed) {
		msg := err.Error()
		for _, prefix := range refusedUnwritten {
			if strings.HasPrefix(msg, prefix) {
				return true
			}
		}
		return false
	}
	a, _ := ctx.Value(answerKey{}).(*answer)
	return errors.Is(err, sdk.ErrSessionMissing) && a.status() == http.StatusNotFound
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
	if !canReconnect || !(safe || ranNothing(ctx, err)) {
		return nil, goneError(ctx, err)
	}
	if s, err = t.live(ctx); err != nil {
		return nil, err
	}
	res, err = send(ctx, s, params, args)
	if err == nil || !sessionGone(err) {
		return res, err
	}
	t.markGone(s)
	return nil, goneError(ctx, err)
}

// goneError is the error of a call that failed with err because its session is gone:
// ErrSessionClosed; and, when the call may have run, an answer cut off (io.ErrUnexpectedEOF),
// so that the loop reads it as the lost answer it is: the call is sent again only when that
// is safe, and otherwise stops with remedy.ErrOutcomeUnknown.
func goneError(ctx context.Context, err error) error {
	if ranNothing(ctx, err) {
		return fmt.Errorf("%w: %w", ErrSessionClosed, err)
	}
	return fmt.Errorf("%w; the call may have run, its answer is lost (%w): %w", ErrSessionClosed, io.ErrUnexpectedEOF, err)
}

// send calls the tool on s, with the call recorded as in flight on s until it returns, so
// that ElicitationHandler can tell a question about it from one about a call never sent.
func send(ctx context.Context, s *sdk.ClientSession, params *sdk.CallToolParams, args json.RawMessage) (*sdk.CallToolResult, error) {
	ctx, done := inFlight.begin(ctx, s, params.Name, args)
	defer done()
	return s.CallTool(ctx, params)
}
