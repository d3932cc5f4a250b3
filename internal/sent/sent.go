// Package sent tells a request that failed before any of it was written from one that may
// have reached the server, from the events net/http reports through net/http/httptrace. The
// remedy package's HTTP transports and package mcp's tool calls share it.
package sent

import (
	"context"
	"errors"
	"net/http/httptrace"
	"sync/atomic"
)

// Watch watches the HTTP requests made under one context: GetConn says the client reached
// for a connection for a request; WroteHeaders, that a request's header block went out. Only
// GetConn without any WroteHeaders means that nothing was written. Without GetConn — a
// RoundTripper that reports no events (a test double, a transport of another kind), a failure
// before the request was made — nothing is known, and the failure counts as one that may
// have executed. WroteHeaders is sticky: once any request traced under the context wrote its
// headers (an earlier try net/http made by itself, a redirect's first leg, a wrapper's own
// request), the attempt may have executed.
//
// The zero Watch is ready for Attach; Start makes one and attaches it.
type Watch struct {
	trace httptrace.ClientTrace
	state atomic.Uint32
}

const (
	conn  uint32 = 1 << iota // GetConn: the transport reports its events
	wrote                    // WroteHeaders: a header block went out
)

// Start returns ctx with a new watch on the requests made under it. A trace already in ctx
// (the caller's own) still receives every event.
func Start(ctx context.Context) (context.Context, *Watch) {
	w := new(Watch)
	return w.Attach(ctx), w
}

// Attach returns ctx with w on the requests made under it, as Start does, for a watch that is
// part of something longer-lived (one per call, watching each of its attempts in turn). Attach
// a watch once: httptrace composes its hooks with the context's trace at that moment. To watch
// a later request under the returned context, or under one derived from it, Reset w instead.
func (w *Watch) Attach(ctx context.Context) context.Context {
	w.state.Store(0)
	w.trace.GetConn = func(string) { w.state.Or(conn) }
	w.trace.WroteHeaders = func() { w.state.Or(wrote) }
	return httptrace.WithClientTrace(ctx, &w.trace)
}

// In reports whether the requests made under ctx report to w: ctx is the context Attach
// returned, or derived from it with no other trace in between.
func (w *Watch) In(ctx context.Context) bool { return httptrace.ContextClientTrace(ctx) == &w.trace }

// Settled reports whether w can be Reset to watch the next request under its context: it saw
// no event at all (a RoundTripper that reports none), or both a connection and a header block.
// net/http reports GetConn before its RoundTrip returns, so the only event of a settled watch's
// requests that can still come is a late WroteHeaders, which makes the next request's failure
// one that may have executed: the safe side. A watch that saw a connection and no header
// block (a failure before writing) or the reverse is not settled: its request ended in a way
// that leaves room for doubt, and the next request gets a watch of its own.
func (w *Watch) Settled() bool {
	s := w.state.Load()
	return s == 0 || s == conn|wrote
}

// Reset forgets what w saw, to watch the next request made under its context.
func (w *Watch) Reset() { w.state.Store(0) }

// NothingWritten reports whether the watch shows that no request made under its context
// wrote its header block (and that the transport reports its events at all). A nil watch
// knows nothing.
func (w *Watch) NothingWritten() bool { return w != nil && w.state.Load() == conn }

// notSent marks a transport error that happened before any byte of the request was written.
type notSent struct{ err error }

func (e *notSent) Error() string { return e.err.Error() }
func (e *notSent) Unwrap() error { return e.err }

// Mark marks err as one that happened before the request was written (remedy.NotSent); a nil
// err stays nil.
func Mark(err error) error {
	if err == nil {
		return nil
	}
	return &notSent{err}
}

// Marked reports whether err is marked by Mark.
func Marked(err error) bool {
	var ns *notSent
	return errors.As(err, &ns)
}

// IsMark reports whether err itself, not what it wraps, is a mark of Mark: for a walk of the
// chain that allocates nothing.
func IsMark(err error) bool {
	_, ok := err.(*notSent)
	return ok
}
