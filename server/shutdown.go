package server

import "context"

// Shutdown ends what the API keeps open beyond a single request, so that the http.Server
// serving it can shut down. Call it first, then http.Server.Shutdown, with the same context:
//
//	err := api.Shutdown(ctx)
//	err = errors.Join(err, srv.Shutdown(ctx))
//
// The order matters: http.Server.Shutdown waits until every connection is idle, and an MCP
// session's event stream (the GET a client opens after initialize) stays open for as long as
// the session lives, so that http.Server.Shutdown called first, or alone, waits until its
// context ends whenever an MCP client is connected.
//
// From the call on:
//   - the MCP endpoint takes no new request but a GET: a call, an initialize or any other
//     message is answered 503 unavailable, retryable, and nothing is done (another
//     instance, or this one restarted, can take it);
//   - a confirmation question waiting for a client's user (elicitation) is withdrawn: its
//     call is answered 503 unavailable, and the operation does not run;
//   - the requests the MCP endpoint was answering are answered (as REST requests in flight
//     are by http.Server.Shutdown); then its event streams (a session's GET, a stateless
//     subscriptions/listen) end properly, and each of its sessions is closed (a GET of its
//     event stream is then answered 404 not_found: the client learns the session is gone);
//   - the operations running in the background (Async) have their handlers' contexts
//     cancelled, and a submission is answered 503 unavailable;
//   - REST requests are served as before, until http.Server.Shutdown.
//
// Shutdown returns nil once the MCP endpoint's sessions are closed and each background
// operation has stored its end (a cancelled handler's failure), or ctx's error when ctx ends
// first. It may be called more than once. Sessions of MCPServer on other transports (stdio)
// are the caller's to end.
func (a *API) Shutdown(ctx context.Context) error {
	a.start() // a request after Shutdown finds the endpoint shut, even if none came before
	a.stop()
	var waits []<-chan struct{}
	if a.gate != nil {
		waits = append(waits, a.gate.shutdown())
	}
	waits = append(waits, a.endJobs())
	for _, done := range waits {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
