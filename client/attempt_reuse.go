package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/remedy-go/remedy/internal/sent"
)

// lent is what a run lends the loop's own HTTP transports for its attempts (Request.borrow), so
// that a call's common needs are allocated once, in one piece: the attempt's response, the
// Idempotency-Key header's value, and the watch on what an attempt wrote with the context it
// is attached to. A nil *lent (a Request from elsewhere) lends nothing: each is allocated.
type lent struct {
	resp Response
	// key is the Idempotency-Key header's value: set with the first key sent, never written
	// again, and shared by the requests that send that key. (A request net/http is done with
	// may still be read while the next attempt is built, so the value is never rewritten.)
	key [1]string
	// w watches the attempts that are not safe to repeat, one after another, under watched,
	// the context it was attached to; attached says it was attached during the last attempt,
	// for the loop to send the later attempts under watched (or a context derived from it).
	w        sent.Watch
	watched  context.Context
	attached bool
	// last is the last request opTransport sent, and what it was made of.
	last struct {
		req          *http.Request
		op           *registered
		args         json.RawMessage
		key          string
		quiet, token bool
	}
}

// remember keeps the request an attempt sends, and what it was made of, for resend.
func (l *lent) remember(hreq *http.Request, op *registered, req *Request, quiet bool) {
	if l == nil {
		return
	}
	p := &l.last
	p.req, p.op, p.args, p.key, p.quiet, p.token = hreq, op, req.Args, req.IdempotencyKey, quiet, req.ConfirmationToken != ""
}

// resend is the request of an attempt that sends again what the last one sent — the same
// operation, arguments and headers (an unchanged retry) — under ctx: a copy of the last
// request that shares its URL, its header map and its GetBody, with a body of its own from
// GetBody. (net/http only reads them, and sends its own retries of a request the same way.) Nil
// when the attempt sends something else.
func (l *lent) resend(ctx context.Context, op *registered, req *Request, quiet bool) *http.Request {
	if l == nil {
		return nil
	}
	p := &l.last
	if p.req == nil || p.op != op || p.key != req.IdempotencyKey || p.quiet != quiet || p.token ||
		req.ConfirmationToken != "" || !bytes.Equal(p.args, req.Args) {
		return nil
	}
	hreq := p.req.WithContext(ctx)
	if p.req.Body != nil {
		if p.req.GetBody == nil {
			return nil
		}
		body, err := p.req.GetBody()
		if err != nil {
			return nil
		}
		hreq.Body = body
	}
	return hreq
}

// release lets go of what the call no longer needs once it returns (the contexts and the last
// request, which the returned Response would otherwise keep reachable).
func (l *lent) release() {
	if l != nil {
		l.watched, l.last.req, l.last.args = nil, nil, nil
	}
}

// borrow returns what the loop lends the attempt: made on first use and kept for the call's
// later attempts; nil for a Request the loop did not make.
func (req *Request) borrow() *lent {
	r := req.run
	if r == nil {
		return nil
	}
	if r.lent == nil {
		r.lent = new(lent)
	}
	return r.lent
}

// response is the Response an attempt fills.
func (l *lent) response() *Response {
	if l == nil {
		return new(Response)
	}
	return &l.resp
}

// keyValue is the header value that sends key.
func (l *lent) keyValue(key string) []string {
	if l == nil {
		return []string{key}
	}
	if l.key[0] == "" {
		l.key[0] = key
	}
	if l.key[0] != key {
		return []string{key}
	}
	return l.key[:]
}

// watch returns ctx with a watch on what the attempt writes (see package sent). The run's watch
// is attached once, to the first context it watches; the loop then sends the call's later
// attempts under that context or one derived from it, and the watch is reset for each — as
// long as the last attempt it watched settled, so that no event of that attempt is left to
// come but one that errs on the safe side. Otherwise the attempt gets a watch of its own.
func (l *lent) watch(ctx context.Context) (context.Context, *sent.Watch) {
	switch {
	case l == nil:
		return sent.Start(ctx)
	case l.watched == nil:
		l.watched, l.attached = l.w.Attach(ctx), true
		return l.watched, &l.w
	case l.w.Settled() && l.w.In(ctx):
		l.w.Reset()
		return ctx, &l.w
	}
	return sent.Start(ctx)
}
