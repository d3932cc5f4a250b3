package client_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/internal/testkit/nettest"
)

// Idempotency keys are counted on only where the server honours them (issue 21): these tests
// run the client against loopback servers that ignore keys or honour them, and lose answers
// after the effect.

// keyServer is a loopback server whose every request has an effect it counts (an SMS sent).
// With honour set it keeps Idempotency-Key: a repeated key is answered from the record,
// Idempotency-Replayed: true, without a second effect; without it, it ignores the header, as
// most APIs do. lose says whether to drop a request's answer after its effect — close the
// connection without a byte — from the request's number (from 1) and its number on its
// connection (from 1: above 1, the client reused a keep-alive connection).
type keyServer struct {
	*httptest.Server
	honour bool
	lose   func(n, onConn int) bool
	doc    string // served at /openapi.json, when set
	// replayed is the header a replay is marked with (default Idempotency-Replayed).
	replayed string

	mu      sync.Mutex
	n       int
	effects int
	stored  map[string]bool
	seen    []keySeen
}

// keySeen is one request as the server saw it.
type keySeen struct {
	Path string
	Key  string // Idempotency-Key, whatever the spelling it came in
	Body string
}

type connCount struct{}

func newKeyServer(t *testing.T, honour bool, lose func(n, onConn int) bool) *keyServer {
	t.Helper()
	s := &keyServer{honour: honour, lose: lose, stored: map[string]bool{}}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connCount{}, new(atomic.Int32))
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *keyServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/openapi.json" && s.doc != "" {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, s.doc)
		return
	}
	body, _ := io.ReadAll(r.Body)
	onConn := int(r.Context().Value(connCount{}).(*atomic.Int32).Add(1))
	key := r.Header.Get(remedy.HeaderIdempotencyKey) // the server reads every spelling as this one
	s.mu.Lock()
	s.n++
	n := s.n
	s.seen = append(s.seen, keySeen{Path: r.URL.Path, Key: key, Body: string(body)})
	replay := s.honour && key != "" && s.stored[key]
	if !replay {
		s.effects++
		if s.honour && key != "" {
			s.stored[key] = true
		}
	}
	s.mu.Unlock()
	if s.lose != nil && s.lose(n, onConn) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	if replay {
		h := s.replayed
		if h == "" {
			h = remedy.HeaderReplayed
		}
		w.Header().Set(h, "true")
	}
	// No body: net/http puts the connection back in its pool before it hands the answer
	// over, so that the client's next request reuses it.
	w.WriteHeader(http.StatusCreated)
}

func (s *keyServer) counts() (requests, effects int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, s.effects
}

func (s *keyServer) Requests() []keySeen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]keySeen(nil), s.seen...)
}

// first loses the answer of the first request.
func first(n, _ int) bool { return n == 1 }

// reused loses the answer of every request that came on a reused connection.
func reused(_, onConn int) bool { return onConn > 1 }

var opSendSMS = client.Operation{Name: "send_sms", Method: "POST", Path: "/v1/sms"}

// keyClient is a client of srv with a transport of its own and a backoff that never waits.
func keyClient(t *testing.T, url string, opts ...client.Option) *client.Client {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	c, err := client.New(append([]client.Option{client.WithBaseURL(url),
		client.WithHTTPClient(&http.Client{Transport: tr}), client.WithBackoff(fast)}, opts...)...)
	require.NoError(t, err)
	return c
}

// A request written and then left without an answer is sent again only when the server is
// known to honour its key: declared on the operation or for the client, the operation's own
// declaration winning. Otherwise the call stops, saying the request may have executed.
func TestKeysLostAnswer(t *testing.T) {
	t.Parallel()
	withKeys := func(op client.Operation, k client.KeySupport) client.Operation { op.Keys = k; return op }
	for _, tc := range []struct {
		name    string
		honour  bool // the server's
		opts    []client.Option
		retried bool
		keySent bool
	}{
		{"keys unknown, server ignores them", false, []client.Option{client.WithOperations(opSendSMS)}, false, true},
		{"keys unknown, server honours them", true, []client.Option{client.WithOperations(opSendSMS)}, false, true},
		{"declared on the operation", true, []client.Option{client.WithOperations(withKeys(opSendSMS, client.KeysHonoured))}, true, true},
		{"declared for the client", true, []client.Option{client.WithOperations(opSendSMS),
			client.WithIdempotencyKeys(client.KeysHonoured)}, true, true},
		{"the operation's own support wins over the client's", true, []client.Option{
			client.WithOperations(withKeys(opSendSMS, client.KeysOff)), client.WithIdempotencyKeys(client.KeysHonoured)}, false, false},
		{"the client's is the default of an operation that says nothing", true, []client.Option{
			client.WithOperations(opSendSMS), client.WithIdempotencyKeys(client.KeysOff)}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newKeyServer(t, tc.honour, first)
			c := keyClient(t, srv.URL, tc.opts...)
			resp, err := c.Call(context.Background(), "send_sms", json.RawMessage(`{"to":"+15550100","text":"hi"}`))
			requests, effects := srv.counts()
			assert.Equal(t, 1, effects, "the SMS is sent once")
			seen := srv.Requests()
			assert.Equal(t, tc.keySent, seen[0].Key != "", "a key on the wire")
			if !tc.retried {
				ce := callError(t, err, remedy.ErrOutcomeUnknown)
				assert.Contains(t, err.Error(), "may have executed")
				assert.Equal(t, 1, requests, "not sent again")
				require.Len(t, ce.Attempts, 1)
				assert.Error(t, ce.Attempts[0].Err)
				assert.ErrorIs(t, err, io.EOF, "the transport's error is kept")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 2, requests)
			assert.True(t, resp.Replayed, "the second answer is the first one's, replayed")
			assert.Equal(t, seen[0].Key, seen[1].Key, "sent again with its key")
			require.Len(t, resp.Attempts, 2)
			assert.Equal(t, client.ActRetry, resp.Attempts[0].Decision.Action)
		})
	}
}

// A request that failed before any of it was written is sent again whatever the keys: the
// server cannot have run it.
func TestKeysNotSentRetried(t *testing.T) {
	t.Parallel()
	t.Run("refused connection", func(t *testing.T) {
		t.Parallel()
		srv := newKeyServer(t, false, nil)
		// A real refusal: the first connection goes to a port whose listener is closed, the
		// later ones to the server.
		closed, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		refusing := closed.Addr().String()
		require.NoError(t, closed.Close())
		var dials atomic.Int32
		d := &net.Dialer{}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) == 1 {
				addr = refusing
			}
			return d.DialContext(ctx, network, addr)
		}
		t.Cleanup(tr.CloseIdleConnections)
		c, err := client.New(client.WithBaseURL(srv.URL), client.WithHTTPClient(&http.Client{Transport: tr}),
			client.WithBackoff(fast), client.WithOperations(opSendSMS))
		require.NoError(t, err)
		resp, err := c.Call(context.Background(), "send_sms", json.RawMessage(`{"to":"+15550100"}`))
		require.NoError(t, err)
		require.Len(t, resp.Attempts, 2)
		assert.Zero(t, resp.Attempts[0].Status)
		assert.Error(t, resp.Attempts[0].Err)
		assert.Equal(t, client.ActRetry, resp.Attempts[0].Decision.Action)
		requests, effects := srv.counts()
		assert.Equal(t, 1, requests)
		assert.Equal(t, 1, effects)
	})
	t.Run("TLS handshake cut", func(t *testing.T) {
		t.Parallel()
		// A listener that takes every connection and closes it: the client's TLS handshake
		// fails after it got a connection, before a byte of the request. (Not a dial error:
		// only the trace of the attempt tells that nothing was written.)
		addr, accepted := nettest.Hangup(t)
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
		t.Cleanup(tr.CloseIdleConnections)
		c, err := client.New(client.WithBaseURL("https://"+addr),
			client.WithHTTPClient(&http.Client{Transport: tr}), client.WithBackoff(fast),
			client.WithLimits(client.Limits{MaxAttempts: 3}), client.WithOperations(opSendSMS))
		require.NoError(t, err)
		_, err = c.Call(context.Background(), "send_sms", json.RawMessage(`{"to":"+15550100"}`))
		ce := callError(t, err, client.ErrAttemptsExhausted)
		require.Len(t, ce.Attempts, 3, "every attempt failed before it was written, and was retried")
		for _, a := range ce.Attempts[:2] {
			assert.Equal(t, client.ActRetry, a.Decision.Action, "%v: %s", a.Err, a.Decision.Why)
		}
		assert.NotErrorIs(t, err, remedy.ErrOutcomeUnknown)
		assert.EqualValues(t, 3, accepted.Load())
	})
	t.Run("a transport that reports nothing", func(t *testing.T) {
		t.Parallel()
		// A RoundTripper that is not net/http's says nothing of what it wrote: its failure
		// may have executed.
		var calls atomic.Int32
		hc := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
			calls.Add(1)
			return nil, io.ErrUnexpectedEOF
		})}
		c, err := client.New(client.WithBaseURL("http://sms.example"), client.WithHTTPClient(hc),
			client.WithBackoff(fast), client.WithOperations(opSendSMS))
		require.NoError(t, err)
		_, err = c.Call(context.Background(), "send_sms", json.RawMessage(`{}`))
		callError(t, err, remedy.ErrOutcomeUnknown)
		assert.EqualValues(t, 1, calls.Load())
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// KeysOff sends no key: not for the client's calls, not for a next operation, not minted for
// a raw request. A key the caller gives is still sent.
func TestKeysOff(t *testing.T) {
	t.Parallel()
	noKey := func(t *testing.T, seen []keySeen) {
		t.Helper()
		require.NotEmpty(t, seen)
		for _, s := range seen {
			assert.Empty(t, s.Key, "%s carried a key", s.Path)
		}
	}
	t.Run("client-wide", func(t *testing.T) {
		t.Parallel()
		srv := newKeyServer(t, false, nil)
		c := keyClient(t, srv.URL, client.WithOperations(opSendSMS), client.WithIdempotencyKeys(client.KeysOff))
		resp, err := c.Call(context.Background(), "send_sms", json.RawMessage(`{}`))
		require.NoError(t, err)
		assert.Empty(t, resp.Attempts[0].IdempotencyKey)
		noKey(t, srv.Requests())
	})
	t.Run("per operation, next operation included", func(t *testing.T) {
		t.Parallel()
		var sends atomic.Int32
		var mu sync.Mutex
		keys := map[string][]string{}
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			mu.Lock()
			keys[r.URL.Path] = append(keys[r.URL.Path], r.Header.Get(remedy.HeaderIdempotencyKey))
			mu.Unlock()
			if r.URL.Path == "/v1/sms" && sends.Add(1) == 1 {
				reply(w, 409, `{"error":{"code":"precondition_failed","message":"verify the number first","next_operation":"verify_number","next_operation_args":{"to":"+15550100"}}}`)
				return
			}
			reply(w, 200, `{}`)
		})
		verify := client.Operation{Name: "verify_number", Method: "POST", Path: "/v1/verifications", Keys: client.KeysOff}
		c := newClient(t, srv, client.WithOperations(opSendSMS, verify))
		_, err := c.Call(context.Background(), "send_sms", json.RawMessage(`{"to":"+15550100"}`))
		require.NoError(t, err)
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, keys["/v1/verifications"], 1)
		assert.Empty(t, keys["/v1/verifications"][0], "the next operation is KeysOff")
		require.Len(t, keys["/v1/sms"], 2)
		assert.NotEmpty(t, keys["/v1/sms"][0], "the caller's operation says nothing: keys are sent")
	})
	t.Run("the caller's own key", func(t *testing.T) {
		t.Parallel()
		srv := newKeyServer(t, false, nil)
		c := keyClient(t, srv.URL, client.WithOperations(opSendSMS), client.WithIdempotencyKeys(client.KeysOff))
		_, err := c.Call(context.Background(), "send_sms", json.RawMessage(`{}`), client.WithIdempotencyKey("mine"))
		require.NoError(t, err)
		assert.Equal(t, "mine", srv.Requests()[0].Key)
	})
	t.Run("the caller's own key goes with the caller's payload only", func(t *testing.T) {
		t.Parallel()
		var mu sync.Mutex
		var keys []string
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			mu.Lock()
			keys = append(keys, r.Header.Get(remedy.HeaderIdempotencyKey))
			mu.Unlock()
			if n == 1 {
				reply(w, 422, `{"error":{"code":"invalid_body","message":"m","issues":[{"path":["to"],"suggested_value":"+15550100"}]}}`)
				return
			}
			reply(w, 200, `{}`)
		})
		c := newClient(t, srv, client.WithOperations(opSendSMS), client.WithIdempotencyKeys(client.KeysOff))
		_, err := c.Call(context.Background(), "send_sms", json.RawMessage(`{"to":"5550100"}`), client.WithIdempotencyKey("mine"))
		require.NoError(t, err)
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, []string{"mine", ""}, keys, "no key minted for the rewritten payload")
	})
	t.Run("Do", func(t *testing.T) {
		t.Parallel()
		srv := newKeyServer(t, false, nil)
		c := keyClient(t, srv.URL, client.WithIdempotencyKeys(client.KeysOff))
		for _, own := range []string{"", "mine"} {
			req, _ := http.NewRequest("POST", srv.URL+"/v1/sms", strings.NewReader(`{}`))
			req.Header.Set("Content-Type", "application/json")
			if own != "" {
				req.Header.Set(remedy.HeaderIdempotencyKey, own)
			}
			resp, err := c.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
		}
		seen := srv.Requests()
		require.Len(t, seen, 2)
		assert.Empty(t, seen[0].Key, "none minted")
		assert.Equal(t, "mine", seen[1].Key, "the request's own is sent as it came")
	})
	t.Run("RoundTripper", func(t *testing.T) {
		t.Parallel()
		srv := newKeyServer(t, false, nil)
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		rt, err := client.NewRoundTripper(tr, client.WithIdempotencyKeys(client.KeysOff))
		require.NoError(t, err)
		resp, err := (&http.Client{Transport: rt}).Post(srv.URL+"/v1/sms", "application/json", strings.NewReader(`{}`))
		require.NoError(t, err)
		resp.Body.Close()
		noKey(t, srv.Requests())
	})
	t.Run("refused values", func(t *testing.T) {
		t.Parallel()
		_, err := client.New(client.WithIdempotencyKeys(client.KeySupport(7)))
		assert.Error(t, err)
		_, err = client.New(client.WithOperations(client.Operation{Name: "x", Path: "/x", Keys: client.KeySupport(7)}))
		assert.Error(t, err)
	})
}

// An answer replayed from its key shows that the server honours keys for the operation: the
// client remembers it, and a later call of the operation whose answer is lost is sent again.
// The replay is read in every spelling the major APIs mark it with: ours, Stripe's
// Idempotent-Replayed, and the X- forms. A client that has not seen it stops.
func TestKeysShownByAReplay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, spelling := range []string{remedy.HeaderReplayed, "Idempotent-Replayed", "X-Idempotency-Replayed", "X-Idempotent-Replayed"} {
		t.Run(spelling, func(t *testing.T) {
			t.Parallel()
			// The server loses the answer of its third request: the third call's first attempt.
			srv := newKeyServer(t, true, func(n, _ int) bool { return n == 3 })
			srv.replayed = spelling
			// Each request on a connection of its own, so that the loop, not net/http (which may
			// resend a request whose key is known honoured), sends the third call again.
			c := keyClient(t, srv.URL, client.WithOperations(opSendSMS),
				client.WithHTTPClient(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}))

			_, err := c.Call(ctx, "send_sms", json.RawMessage(`{"to":"+15550100","text":"one"}`), client.WithIdempotencyKey("k1"))
			require.NoError(t, err)
			resp, err := c.Call(ctx, "send_sms", json.RawMessage(`{"to":"+15550100","text":"one"}`), client.WithIdempotencyKey("k1"))
			require.NoError(t, err)
			require.True(t, resp.Replayed, "the same key: replayed")

			resp, err = c.Call(ctx, "send_sms", json.RawMessage(`{"to":"+15550100","text":"two"}`))
			require.NoError(t, err, "the operation showed that it honours keys")
			require.Len(t, resp.Attempts, 2)
			assert.Equal(t, client.ActRetry, resp.Attempts[0].Decision.Action)
			assert.True(t, resp.Replayed)
			_, effects := srv.counts()
			assert.Equal(t, 2, effects, "one SMS per text")
		})
	}

	// Another client, which has seen no replay, stops at the same loss.
	srv2 := newKeyServer(t, true, first)
	c2 := keyClient(t, srv2.URL, client.WithOperations(opSendSMS))
	_, err := c2.Call(ctx, "send_sms", json.RawMessage(`{"to":"+15550100","text":"two"}`))
	callError(t, err, remedy.ErrOutcomeUnknown)
}

// net/http's Transport sends a request again by itself when a reused keep-alive connection
// fails before the answer, if the request carries an Idempotency-Key header — the attack
// of issue 21: the server ran the request, closed the connection, and ran it again. A request
// whose key is not known honoured is never sent twice that way: exactly one execution.
func TestKeysReusedConnectionNotResentByNetHTTP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// warmUp makes one request that the server answers, leaving its connection idle in the
	// client's pool; the next request reuses it, and the server drops that one's answer.
	type sender func(t *testing.T, srv *keyServer) (warmUp, attack func() error)

	for _, tc := range []struct {
		name string
		send sender
		// resent: net/http sends the attack twice (the control without remedy)
		resent bool
	}{
		{"net/http alone sends it twice", func(t *testing.T, srv *keyServer) (func() error, func() error) {
			hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
			post := func() error {
				req, _ := http.NewRequest("POST", srv.URL+"/v1/sms", strings.NewReader(`{"to":"+15550100"}`))
				req.Header.Set(remedy.HeaderIdempotencyKey, client.KeySupport(0).String()+"-control")
				resp, err := hc.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				return err
			}
			return post, post
		}, true},
		{"Call", func(t *testing.T, srv *keyServer) (func() error, func() error) {
			c := keyClient(t, srv.URL, client.WithOperations(opSendSMS))
			call := func() error {
				_, err := c.Call(ctx, "send_sms", json.RawMessage(`{"to":"+15550100"}`))
				return err
			}
			return call, call
		}, false},
		{"Do, without a body, with the caller's key", func(t *testing.T, srv *keyServer) (func() error, func() error) {
			c := keyClient(t, srv.URL)
			do := func() error {
				req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/sms/ping", nil)
				req.Header.Set(remedy.HeaderIdempotencyKey, "caller-key")
				req.Header.Set("X-Idempotency-Key", "caller-key")
				resp, err := c.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				return err
			}
			return do, do
		}, false},
		{"RoundTripper", func(t *testing.T, srv *keyServer) (func() error, func() error) {
			tr := http.DefaultTransport.(*http.Transport).Clone()
			t.Cleanup(tr.CloseIdleConnections)
			rt, err := client.NewRoundTripper(tr, client.WithBackoff(fast))
			require.NoError(t, err)
			hc := &http.Client{Transport: rt}
			post := func() error {
				resp, err := hc.Post(srv.URL+"/v1/sms", "application/json", strings.NewReader(`{"to":"+15550100"}`))
				if err == nil {
					resp.Body.Close()
				}
				return err
			}
			return post, post
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newKeyServer(t, false, reused)
			warmUp, attack := tc.send(t, srv)
			require.NoError(t, warmUp())
			err := attack()
			requests, effects := srv.counts()
			if tc.resent {
				// If this fails, net/http no longer replays such a request: the spelling
				// that prevents it (keys_http.go) can go.
				assert.NoError(t, err, "the second copy, on a new connection, was answered")
				assert.Equal(t, 3, effects, "the warm-up, and the attack twice")
				return
			}
			require.Error(t, err, "the server dropped the answer")
			assert.Equal(t, 2, requests, "the warm-up and the attack, once")
			assert.Equal(t, 2, effects)
			assert.ErrorIs(t, err, remedy.ErrOutcomeUnknown)
			assert.NotEmpty(t, srv.Requests()[1].Key, "the key was sent, in the spelling net/http does not act on")
		})
	}
}

// The idempotency key sent in lower case, and the caller's own X-Idempotency-Key, still
// never follow a redirect to another host.
func TestKeysQuietSpellingDroppedOnCrossHostRedirect(t *testing.T) {
	t.Parallel()
	other := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 200, bodyOK) })
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		http.Redirect(w, r, other.URL+"/landing", http.StatusTemporaryRedirect)
	})
	c := newClient(t, srv, client.WithOperations(opCreateOrder))
	_, err := c.Call(context.Background(), "create_order", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.NotEmpty(t, srv.Requests()[0].Key)
	reqs := other.Requests()
	require.Len(t, reqs, 1)
	assert.Empty(t, reqs[0].Key)
}

// An operation whose OpenAPI document declares Idempotency-Key is sent again after a lost
// answer; one whose document says nothing is not.
func TestKeysFromOpenAPI(t *testing.T) {
	t.Parallel()
	const doc = `{"openapi":"3.1.0","paths":{
	  "/v1/sms":{"post":{"operationId":"send_sms","parameters":[{"name":"Idempotency-Key","in":"header"}]}},
	  "/v1/mms":{"post":{"operationId":"send_mms"}}}}`
	for _, tc := range []struct {
		op      string
		retried bool
	}{{"send_sms", true}, {"send_mms", false}} {
		t.Run(tc.op, func(t *testing.T) {
			t.Parallel()
			srv := newKeyServer(t, true, func(n, _ int) bool { return n == 1 })
			srv.doc = doc
			c := keyClient(t, srv.URL)
			_, err := c.LoadOpenAPI(t.Context(), "/openapi.json")
			require.NoError(t, err)
			_, err = c.Call(t.Context(), tc.op, json.RawMessage(`{"to":"+15550100"}`))
			requests, effects := srv.counts()
			assert.Equal(t, 1, effects)
			if tc.retried {
				require.NoError(t, err)
				assert.Equal(t, 2, requests)
				return
			}
			callError(t, err, remedy.ErrOutcomeUnknown)
			assert.Equal(t, 1, requests)
		})
	}
}

// The reference server's document declares its idempotent operations (the Idempotency-Key
// parameter and x-idempotency-key), and only those: the client counts on keys exactly there.
func TestKeysFromTheReferenceServersDocument(t *testing.T) {
	t.Parallel()
	api, _, err := billing.New()
	require.NoError(t, err)
	doc, err := api.OpenAPI()
	require.NoError(t, err)
	ops, err := client.OperationsFromOpenAPI(doc)
	require.NoError(t, err)
	got := map[string]client.KeySupport{}
	for _, op := range ops {
		got[op.Name] = op.Keys
	}
	assert.Equal(t, client.KeysHonoured, got["create_invoice"], "server.Idempotent")
	assert.Equal(t, client.KeysHonoured, got["charge"], "server.RequireIdempotencyKey")
	assert.Equal(t, client.KeysUnknown, got["finalize_invoice"], "no idempotency option")
	assert.Equal(t, client.KeysUnknown, got["send_invoice"])
}

// Every spelling of the replay header marks a failure as replayed too, and only "true" (or a
// structured ?1) does (issue 40: Stripe's Idempotent-Replayed was read as not replayed).
func TestReplayedSpellings(t *testing.T) {
	t.Parallel()
	body := []byte(`{"error":{"type":"card_error","code":"card_declined","message":"Your card was declined."}}`)
	for _, tc := range []struct {
		header http.Header
		want   bool
	}{
		{http.Header{"Idempotent-Replayed": {"true"}}, true},
		{http.Header{"Idempotency-Replayed": {"True"}}, true},
		{http.Header{"X-Idempotency-Replayed": {"?1"}}, true},
		{http.Header{"X-Idempotent-Replayed": {"true"}}, true},
		{http.Header{"Idempotent-Replayed": {"false"}}, false},
		{http.Header{"Idempotent-Replayed": {"false"}, "Idempotency-Replayed": {"true"}}, true},
		{http.Header{"Replayed": {"true"}}, false},
	} {
		assert.Equal(t, tc.want, remedy.Replayed(tc.header), "%v", tc.header)
		env, ok := remedy.Parse(402, tc.header, body)
		require.True(t, ok)
		assert.Equal(t, tc.want, env.Replayed, "Parse: %v", tc.header)
	}
}
