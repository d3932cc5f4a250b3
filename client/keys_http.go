package client

import (
	"net/http"
	"strings"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/sent"
)

// This file holds what makes an idempotency key honest over HTTP: a request that is not safe
// to send twice (a method that is not idempotent, and a key the server is not known to
// honour) must be sent at most once unless the loop decides otherwise, and a failure must say
// whether any of it can have reached the server.

// markNotSent marks err NotSent when the watch shows that none of the request was written
// (see package sent); otherwise err stays as it is.
func markNotSent(w *sent.Watch, err error) error {
	if err != nil && w.NothingWritten() {
		return remedy.NotSent(err)
	}
	return err
}

// net/http's Transport sends a request again by itself, on a new connection, when a reused
// keep-alive connection fails before the first byte of the answer — a server that closed it,
// or that executed the request and then died — if it judges the request replayable: a body it
// can rewind (none, or GetBody set), and an idempotent method or a Header map entry named
// Idempotency-Key or X-Idempotency-Key (see http.Transport). Against a server that ignores
// the key, that second send is a second execution the loop never sees. So a request that is
// not safe to repeat carries its key under the lower-case spelling, which is the same header
// on the wire (field names are case-insensitive, RFC 9110 5.1; HTTP/2 sends every name in
// lower case) but not that map entry. Leaving GetBody nil instead would also stop net/http
// from following a 307 or 308 redirect of the request, and would not cover a request without
// a body, which net/http replays whatever its GetBody.
const (
	headerKeyQuiet  = "idempotency-key"
	headerXKey      = "X-Idempotency-Key"
	headerXKeyQuiet = "x-idempotency-key"
)

// setKeyAndToken sets what the loop adds to a request: its idempotency key — spelled so that
// net/http does not send it again by itself when quiet — and its confirmation token. An
// earlier key or token in h, in any spelling, is replaced; a caller's X-Idempotency-Key is
// kept, and spelled quietly too when quiet.
func setKeyAndToken(h http.Header, req *Request, quiet bool) {
	delete(h, remedy.HeaderIdempotencyKey)
	delete(h, headerKeyQuiet)
	if req.IdempotencyKey != "" {
		name := remedy.HeaderIdempotencyKey
		if quiet {
			name = headerKeyQuiet
		}
		h[name] = req.borrow().keyValue(req.IdempotencyKey)
	}
	if v, ok := h[headerXKey]; ok && quiet {
		delete(h, headerXKey)
		h[headerXKeyQuiet] = v
	}
	if req.ConfirmationToken != "" {
		h[remedy.HeaderConfirmationToken] = []string{req.ConfirmationToken}
	} else {
		delete(h, remedy.HeaderConfirmationToken)
	}
}

// replayableKey reports whether h has a key entry that makes net/http replay a request.
func replayableKey(h http.Header) bool {
	_, a := h[remedy.HeaderIdempotencyKey]
	_, b := h[headerXKey]
	return a || b
}

// delFold deletes every entry of h whose name is name in any spelling.
func delFold(h http.Header, name string) {
	for k := range h {
		if strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
}

// showsKeysHonoured reports whether an answer to a request that carried a key shows that the
// server keeps keys: a replayed result, or a key it holds in flight or for another payload.
func showsKeysHonoured(resp *Response) bool {
	return resp != nil && (resp.Replayed || (resp.Envelope != nil && keyHeld(resp.Envelope)))
}
