// Package sent tells a request that failed before any of it was written from one that may
// have reached the server, from the events net/http reports through net/http/httptrace. The
// remedy package's HTTP transports and package mcp's tool calls share it.
package sent

import (
	"context"
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
type Watch struct {
	trace httptrace.ClientTrace
	state atomic.Uint32
}

const (
	conn  uint32 = 1 << iota // GetConn: the transport reports its events
	wrote                    // WroteHeaders: a header block went out
)

// Start returns ctx with a watch on the requests made under it. A trace already in ctx (the
// caller's own) still receives every event.
func Start(ctx context.Context) (context.Context, *Watch) {
	w := &Watch{}
	w.trace.GetConn = func(string) { w.state.Or(conn) }
	w.trace.WroteHeaders = func() { w.state.Or(wrote) }
	return httptrace.WithClientTrace(ctx, &w.trace), w
}

// NothingWritten reports whether the watch shows that no request made under its context
// wrote its header block (and that the transport reports its events at all). A nil watch
// knows nothing.
func (w *Watch) NothingWritten() bool { return w != nil && w.state.Load() == conn }
