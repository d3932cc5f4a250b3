package mcp

import (
	"context"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/remedy-go/remedy"
)

// writeWatch tells a tool call that failed before any of its HTTP request was written from
// one that may have reached the server, as the remedy package's HTTP transports do: from the
// events the session's HTTP client reports through net/http/httptrace on the call's context.
// GetConn says the client reached for a connection for a request made under that context;
// WroteHeaders, that a request's header block went out. Only GetConn without any
// WroteHeaders means that nothing was written. Without GetConn — a transport that is not
// HTTP, an HTTP client that reports no events, a failure before the request was made — nothing
// is known, and the failure counts as one that may have executed.
type writeWatch struct {
	trace httptrace.ClientTrace
	state atomic.Uint32
}

const (
	watchedConn  uint32 = 1 << iota // GetConn
	watchedWrote                    // WroteHeaders, sticky
)

// watchWrites returns ctx with a watch on the HTTP requests made under it.
func watchWrites(ctx context.Context) (context.Context, *writeWatch) {
	w := &writeWatch{}
	w.trace.GetConn = func(string) { w.state.Or(watchedConn) }
	w.trace.WroteHeaders = func() { w.state.Or(watchedWrote) }
	return httptrace.WithClientTrace(ctx, &w.trace), w
}

// mark returns err marked remedy.NotSent when the watch shows that nothing was written; a nil
// watch marks nothing.
func (w *writeWatch) mark(err error) error {
	if w == nil || err == nil || w.state.Load() != watchedConn {
		return err
	}
	return remedy.NotSent(err)
}
