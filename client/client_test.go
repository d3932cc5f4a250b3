package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/margin"
	"github.com/remedy-go/remedy/internal/testkit/scriptsrv"
	"github.com/remedy-go/remedy/rewrite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rec is one request as a scripted server saw it.
type rec = scriptsrv.Request

// scripted is a real HTTP server on 127.0.0.1 that records every request and answers the nth
// request to a path (from 1) as the scenario says.
type scripted = scriptsrv.Server

func newScripted(t *testing.T, respond func(w http.ResponseWriter, r *http.Request, n int)) *scripted {
	t.Helper()
	return scriptsrv.New(t, respond)
}

// reply writes a JSON response.
func reply(w http.ResponseWriter, status int, body string) { scriptsrv.Reply(w, status, body) }

// fast is a backoff that never makes a test wait.
func fast() backoff.BackOff { return backoff.NewConstantBackOff(time.Millisecond) }

// newClient is a client for srv, with a fast backoff and its own transport (so that tests
// running in parallel share no connections).
func newClient(t *testing.T, srv *scripted, opts ...client.Option) *client.Client {
	t.Helper()
	return scriptsrv.Client(t, srv, opts...)
}

var (
	opCreateOrder = client.Operation{Name: "create_order", Method: "POST", Path: "/v1/orders"}
	opGetOrder    = client.Operation{Name: "get_order", Method: "GET", Path: "/v1/orders/{id}"}
)

const (
	bodyInvalid     = `{"error":{"code":"invalid_body","message":"bad currency","retryable":true,"issues":[{"path":["currency"],"code":"enum","allowed_values":["usd","eur"]}]}}`
	bodyUnavailable = `{"error":{"code":"unavailable","message":"try later","retryable":true}}`
	bodyOK          = `{"id":"ord_1","status":"created"}`
)

// callError asserts err is a *CallError with the cause.
func callError(t *testing.T, err error, cause error) *client.CallError {
	t.Helper()
	require.Error(t, err)
	var ce *client.CallError
	require.True(t, errors.As(err, &ce), "not a *CallError: %T %v", err, err)
	require.ErrorIs(t, err, cause, "%v", err)
	return ce
}

// setAllowed is a rewriter that sets every issue's field to its first allowed value.
var setAllowed = rewrite.Func(func(_ context.Context, r *rewrite.Request) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.Args, &m); err != nil {
		return nil, err
	}
	for _, is := range r.Envelope.Issues {
		if len(is.AllowedValues) == 0 {
			return nil, nil
		}
		m[strings.TrimPrefix(is.Path, "/")] = is.AllowedValues[0]
	}
	return json.Marshal(m)
})

// 1. A validation failure that names the allowed values is repaired and the call succeeds; the
// repaired payload is a new payload, so it carries a new idempotency key.
func TestClientRewriteThenSuccess(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			reply(w, 422, bodyInvalid)
			return
		}
		reply(w, 201, bodyOK)
	})
	c := newClient(t, srv, client.WithOperations(opCreateOrder), client.WithRewriter(setAllowed))

	resp, err := c.Call(context.Background(), "create_order", json.RawMessage(`{"amount":5,"currency":"USD$"}`))
	require.NoError(t, err)
	assert.Equal(t, 201, resp.Status)
	assert.JSONEq(t, bodyOK, string(resp.Body))

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, `{"amount":5,"currency":"USD$"}`, string(reqs[0].Body))
	assert.JSONEq(t, `{"amount":5,"currency":"usd"}`, string(reqs[1].Body))
	assert.NotEmpty(t, reqs[0].Key)
	assert.NotEmpty(t, reqs[1].Key)
	assert.NotEqual(t, reqs[0].Key, reqs[1].Key, "a rewritten payload gets its own key")

	require.Len(t, resp.Attempts, 2)
	assert.Equal(t, client.ActRewrite, resp.Attempts[0].Decision.Action)
	assert.Equal(t, 422, resp.Attempts[0].Status)
	assert.Equal(t, client.ActReturn, resp.Attempts[1].Decision.Action)
	assert.Equal(t, reqs[0].Key, resp.Attempts[0].IdempotencyKey)
	assert.Equal(t, reqs[1].Key, resp.Attempts[1].IdempotencyKey)
	assert.Equal(t, "POST", resp.Attempts[0].Method)
	assert.Equal(t, "/v1/orders", resp.Attempts[0].Target)
}

// 2. A 429 with retry_after_ms waits exactly what the server asked, once.
func TestClientRateLimitWaitsWhatTheServerAsked(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			reply(w, 429, `{"error":{"code":"rate_limited","message":"slow down","retryable":true,"retry_after_ms":30}}`)
			return
		}
		reply(w, 200, bodyOK)
	})
	c := newClient(t, srv, client.WithOperations(opCreateOrder))

	resp, err := c.Call(context.Background(), "create_order", map[string]any{"amount": 5})
	require.NoError(t, err)
	require.Len(t, resp.Attempts, 2)
	d := resp.Attempts[0].Decision
	assert.Equal(t, client.ActRetry, d.Action)
	assert.Equal(t, 30*time.Millisecond, d.Wait)
	assert.Equal(t, 30*time.Millisecond, d.Asked)
	assert.Equal(t, 30*time.Millisecond, resp.Attempts[0].Envelope.RetryAfter)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, reqs[0].Key, reqs[1].Key, "an unchanged retry keeps its key")
	assert.Equal(t, reqs[0].Body, reqs[1].Body)
}

// 3. Transient 503s are retried unchanged: the same key on every POST; a GET gets no key.
func TestClientTransientRetriesKeepTheKey(t *testing.T) {
	t.Parallel()
	t.Run("POST", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n <= 2 {
				reply(w, 503, bodyUnavailable)
				return
			}
			reply(w, 200, bodyOK)
		})
		c := newClient(t, srv, client.WithOperations(opCreateOrder))
		resp, err := c.Call(context.Background(), "create_order", json.RawMessage(`{"amount":5}`))
		require.NoError(t, err)
		assert.Equal(t, 200, resp.Status)
		reqs := srv.Requests()
		require.Len(t, reqs, 3)
		require.NotEmpty(t, reqs[0].Key)
		for _, r := range reqs {
			assert.Equal(t, "POST", r.Method)
			assert.Equal(t, reqs[0].Key, r.Key)
			assert.Equal(t, `{"amount":5}`, string(r.Body))
		}
		require.Len(t, resp.Attempts, 3)
		for i, a := range resp.Attempts[:2] {
			assert.Equal(t, client.ActRetry, a.Decision.Action, "attempt %d", i+1)
			assert.Equal(t, time.Millisecond, a.Decision.Wait, "the backoff's wait")
		}
	})
	t.Run("GET", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				reply(w, 503, bodyUnavailable)
				return
			}
			reply(w, 200, bodyOK)
		})
		c := newClient(t, srv, client.WithOperations(opGetOrder))
		resp, err := c.Call(context.Background(), "get_order", map[string]string{"id": "ord_1"})
		require.NoError(t, err)
		assert.Equal(t, 200, resp.Status)
		reqs := srv.Requests()
		require.Len(t, reqs, 2)
		for _, r := range reqs {
			assert.Equal(t, "GET", r.Method)
			assert.Equal(t, "/v1/orders/ord_1", r.Path)
			assert.Empty(t, r.Key, "an idempotent method gets no key")
			assert.NotContains(t, r.Header, remedy.HeaderIdempotencyKey)
			assert.Empty(t, r.Body)
		}
	})
}

// 4. A precondition failure names the operation to run first: it runs (one level deeper),
// then the original call is sent again and succeeds.
func TestClientNextOperation(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch r.URL.Path {
		case "/v1/checkout":
			if n == 1 {
				reply(w, 409, `{"error":{"code":"precondition_failed","message":"cart is empty","retryable":true,`+
					`"next_operation":"add_item","next_operation_args":{"sku":"a","qty":1}}}`)
				return
			}
			reply(w, 200, `{"order":"ord_1"}`)
		case "/v1/cart/items":
			reply(w, 201, `{"added":"a"}`)
		default:
			reply(w, 404, `{"error":{"code":"not_found","message":"no route"}}`)
		}
	})
	c := newClient(t, srv, client.WithOperations(
		client.Operation{Name: "checkout", Method: "POST", Path: "/v1/checkout"},
		client.Operation{Name: "add_item", Method: "POST", Path: "/v1/cart/items"},
	))

	resp, err := c.Call(context.Background(), "checkout", json.RawMessage(`{"cart":"c1"}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"order":"ord_1"}`, string(resp.Body))

	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "/v1/checkout", reqs[0].Path)
	assert.Equal(t, "/v1/cart/items", reqs[1].Path)
	assert.Equal(t, "POST", reqs[1].Method)
	assert.JSONEq(t, `{"sku":"a","qty":1}`, string(reqs[1].Body), "the next operation runs with the server's args")
	assert.NotEmpty(t, reqs[1].Key)
	assert.NotEqual(t, reqs[0].Key, reqs[1].Key)
	assert.Equal(t, "/v1/checkout", reqs[2].Path)
	assert.Equal(t, `{"cart":"c1"}`, string(reqs[2].Body))
	assert.Equal(t, reqs[0].Key, reqs[2].Key, "the original call is the same payload")

	require.Len(t, resp.Attempts, 3)
	want := []struct {
		op     string
		number int
		depth  int
		action client.Action
	}{
		{"checkout", 1, 0, client.ActNextOperation},
		{"add_item", 1, 1, client.ActReturn},
		{"checkout", 2, 0, client.ActReturn},
	}
	for i, w := range want {
		a := resp.Attempts[i]
		assert.Equal(t, w.op, a.Operation, "attempt %d", i)
		assert.Equal(t, w.number, a.Number, "attempt %d", i)
		assert.Equal(t, w.depth, a.Depth, "attempt %d", i)
		assert.Equal(t, w.action, a.Decision.Action, "attempt %d", i)
	}
}

const bodyChallenge = `{"error":{"code":"confirmation_required","message":"Deleting 3 orders","retryable":true,"confirmationToken":"tok_123"}}`

// confirming answers a challenge unless the request carries the token tok_123.
func confirming(w http.ResponseWriter, r *http.Request, n int) {
	if r.Header.Get(remedy.HeaderConfirmationToken) == "tok_123" {
		reply(w, 200, `{"deleted":3}`)
		return
	}
	reply(w, 409, bodyChallenge)
}

// 5. Confirmation challenges.
func TestClientConfirmation(t *testing.T) {
	t.Parallel()
	opDelete := client.Operation{Name: "delete_orders", Method: "POST", Path: "/v1/orders/delete"}
	args := json.RawMessage(`{ "ids": ["o1","o2","o3"] }`)

	t.Run("default policy refuses, the caller confirms", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, confirming)
		c := newClient(t, srv, client.WithOperations(opDelete))

		_, err := c.Call(context.Background(), "delete_orders", args)
		ce := callError(t, err, client.ErrConfirmationRequired)
		require.NotNil(t, ce.Challenge)
		assert.Equal(t, "tok_123", ce.Challenge.Token)
		assert.Equal(t, []byte(args), []byte(ce.Challenge.Args), "the challenge holds the exact bytes")
		assert.Equal(t, "Deleting 3 orders", ce.Challenge.Message)
		assert.Equal(t, "delete_orders", ce.Challenge.Operation)
		require.Len(t, srv.Requests(), 1, "nothing is sent again without approval")
		assert.Empty(t, srv.Requests()[0].Token)
		require.Len(t, ce.Attempts, 1)
		assert.Equal(t, client.ActStop, ce.Attempts[0].Decision.Action, "the record says the call stopped")
		assert.ErrorIs(t, ce.Attempts[0].Decision.Cause, client.ErrConfirmationRequired)
		assert.Contains(t, ce.Attempts[0].Decision.Why, "not approved")

		resp, err := c.Call(context.Background(), "delete_orders", ce.Challenge.Args, client.WithConfirmationToken(ce.Challenge.Token))
		require.NoError(t, err)
		assert.Equal(t, 200, resp.Status)
		reqs := srv.Requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, "tok_123", reqs[1].Token)
		assert.Equal(t, []byte(args), reqs[1].Body)
		require.Len(t, resp.Attempts, 1)
		assert.True(t, resp.Attempts[0].Confirmed)
	})

	t.Run("an approving policy replays once with the token", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, confirming)
		var seen []*client.Challenge
		approve := client.ConfirmFunc(func(_ context.Context, ch *client.Challenge) (bool, error) {
			seen = append(seen, ch)
			return true, nil
		})
		c := newClient(t, srv, client.WithOperations(opDelete), client.WithConfirmPolicy(approve))

		resp, err := c.Call(context.Background(), "delete_orders", args)
		require.NoError(t, err)
		assert.JSONEq(t, `{"deleted":3}`, string(resp.Body))
		require.Len(t, seen, 1)
		assert.Equal(t, []byte(args), []byte(seen[0].Args))

		reqs := srv.Requests()
		require.Len(t, reqs, 2)
		assert.Empty(t, reqs[0].Token)
		assert.Equal(t, "tok_123", reqs[1].Token)
		assert.Equal(t, reqs[0].Body, reqs[1].Body, "the confirmed payload is byte-identical")
		assert.Equal(t, []byte(args), reqs[1].Body)
		assert.Equal(t, reqs[0].Key, reqs[1].Key)
		require.Len(t, resp.Attempts, 2)
		assert.Equal(t, client.ActConfirm, resp.Attempts[0].Decision.Action)
		assert.False(t, resp.Attempts[0].Confirmed)
		assert.True(t, resp.Attempts[1].Confirmed)
	})

	t.Run("a second challenge after confirming stops", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			reply(w, 409, fmt.Sprintf(`{"error":{"code":"confirmation_required","message":"again","retryable":true,"confirmationToken":"tok_%d"}}`, n))
		})
		approvals := 0
		approve := client.ConfirmFunc(func(context.Context, *client.Challenge) (bool, error) { approvals++; return true, nil })
		c := newClient(t, srv, client.WithOperations(opDelete), client.WithConfirmPolicy(approve))

		_, err := c.Call(context.Background(), "delete_orders", args)
		ce := callError(t, err, client.ErrConfirmationRejected)
		assert.Equal(t, 1, approvals)
		reqs := srv.Requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, "tok_1", reqs[1].Token)
		assert.Len(t, ce.Attempts, 2)
	})

	t.Run("a token is sent with one attempt only", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				reply(w, 503, bodyUnavailable)
				return
			}
			reply(w, 200, `{}`)
		})
		c := newClient(t, srv, client.WithOperations(opDelete))
		_, err := c.Call(context.Background(), "delete_orders", args, client.WithConfirmationToken("tok_9"))
		require.NoError(t, err)
		reqs := srv.Requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, "tok_9", reqs[0].Token)
		assert.Empty(t, reqs[1].Token)
		assert.NotContains(t, reqs[1].Header, remedy.HeaderConfirmationToken)
	})
}

// 6. A fatal failure is not retried, whatever its retryable flag says.
func TestClientFatal(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		reply(w, 503, `{"error":{"code":"account_closed","message":"gone","retryable":true,"severity":"fatal"}}`)
	})
	c := newClient(t, srv, client.WithOperations(opCreateOrder))
	_, err := c.Call(context.Background(), "create_order", json.RawMessage(`{}`))
	ce := callError(t, err, client.ErrNotRetryable)
	assert.Len(t, srv.Requests(), 1)
	assert.Len(t, ce.Attempts, 1)
	var env *remedy.Envelope
	require.True(t, errors.As(err, &env))
	assert.Equal(t, "account_closed", env.Code)
	assert.Equal(t, remedy.SeverityFatal, env.Severity)
	assert.Equal(t, 503, env.Status)
}

const bodyHugeWait = `{"error":{"code":"rate_limited","message":"slow down","retryable":true,"retry_after_ms":1000000000000}}`

// 7. A server asking for an absurd wait: the loop stops at once when the wait cannot fit, and
// clamps it when it can.
func TestClientHostileRetryAfter(t *testing.T) {
	t.Parallel()
	const asked = 1e12 * time.Millisecond

	// A wait longer than MaxWait is not clamped and retried early: the call stops at once
	// with the wait the server asked for, however it asked.
	for _, tc := range []struct {
		name   string
		header http.Header
		body   string
		asked  time.Duration
	}{
		{"retry_after_ms in the body", nil, bodyHugeWait, asked},
		{"retry_after_ms of 1e15", nil, `{"error":{"code":"rate_limited","message":"m","retryable":true,"retry_after_ms":1e15}}`, time.Duration(math.MaxInt64)},
		{"Retry-After of 1e11 seconds", http.Header{"Retry-After": {"100000000000"}}, `{"error":{"code":"rate_limited","message":"m"}}`, time.Duration(math.MaxInt64)},
		{"Retry-After of 31 seconds", http.Header{"Retry-After": {"31"}}, " ", 31 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
				maps.Copy(w.Header(), tc.header)
				reply(w, 429, tc.body)
			})
			c := newClient(t, srv, client.WithOperations(opCreateOrder))
			_, err := c.Call(context.Background(), "create_order", json.RawMessage(`{}`))
			ce := callError(t, err, client.ErrWaitTooLong)
			assert.Len(t, srv.Requests(), 1)
			assert.Equal(t, tc.asked, ce.Asked)
			var later *client.RetryLater
			require.ErrorAs(t, err, &later)
			assert.Equal(t, tc.asked, later.After)
			assert.False(t, later.At.Before(time.Now()), "a new call can succeed from %v, not before now", later.At)
			assert.Contains(t, err.Error(), "the server asked to wait "+tc.asked.String())
			require.Len(t, ce.Attempts, 1)
			assert.Equal(t, tc.asked, ce.Attempts[0].Decision.Asked)
			assert.Equal(t, client.ActStop, ce.Attempts[0].Decision.Action)
		})
	}

	t.Run("deadline", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 429, bodyWait20s) })
		c := newClient(t, srv, client.WithOperations(opCreateOrder))
		// The deadline is nearer than the wait, which is well under MaxWait; it is far
		// enough off that no first attempt is too slow to leave the loop that choice.
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_, err := c.Call(ctx, "create_order", json.RawMessage(`{}`))
		ce := callError(t, err, client.ErrDeadline)
		assert.Len(t, srv.Requests(), 1)
		assert.Equal(t, 20*time.Second, ce.Asked)
		var later *client.RetryLater
		require.ErrorAs(t, err, &later)
		assert.Equal(t, 20*time.Second, later.After)
	})

	t.Run("elapsed budget", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 429, bodyWait20s) })
		c := newClient(t, srv, client.WithOperations(opCreateOrder), client.WithLimits(client.Limits{MaxElapsed: 10 * time.Second}))
		_, err := c.Call(context.Background(), "create_order", json.RawMessage(`{}`))
		ce := callError(t, err, client.ErrElapsedBudget)
		assert.Len(t, srv.Requests(), 1)
		assert.Equal(t, 20*time.Second, ce.Asked)
		var later *client.RetryLater
		require.ErrorAs(t, err, &later)
	})

	t.Run("a wait within MaxWait is obeyed", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				reply(w, 429, `{"error":{"code":"rate_limited","message":"m","retryable":true,"retry_after_ms":20}}`)
				return
			}
			reply(w, 200, bodyOK)
		})
		c := newClient(t, srv, client.WithOperations(opCreateOrder), client.WithLimits(client.Limits{MaxWait: time.Second}))
		resp, err := c.Call(context.Background(), "create_order", json.RawMessage(`{}`))
		require.NoError(t, err)
		require.Len(t, resp.Attempts, 2)
		d := resp.Attempts[0].Decision
		assert.Equal(t, client.ActRetry, d.Action)
		assert.Equal(t, 20*time.Millisecond, d.Wait)
		assert.Equal(t, 20*time.Millisecond, d.Asked)
	})
}

const bodyWait20s = `{"error":{"code":"rate_limited","message":"slow down","retryable":true,"retry_after_ms":20000}}`

// countingTransport counts the response body bytes the client read.
type countingTransport struct {
	base http.RoundTripper
	read *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: c.read}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// 8. A 100 MB error body: the client reads a bounded prefix, classifies it, and stops reading.
func TestClientHostileHugeErrorBody(t *testing.T) {
	t.Parallel()
	const maxBody = 64 << 10
	var written atomic.Int64
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(503)
		io.WriteString(w, `{"error":{"code":"unavailable","message":"`)
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for total := 0; total < 100<<20; total += len(chunk) {
			m, err := w.Write(chunk)
			written.Add(int64(m))
			if err != nil {
				return
			}
		}
	})
	var read atomic.Int64
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	c, err := client.New(
		client.WithBaseURL(srv.URL),
		client.WithHTTPClient(&http.Client{Transport: countingTransport{base: tr, read: &read}}),
		client.WithBackoff(fast),
		client.WithOperations(opCreateOrder),
		client.WithLimits(client.Limits{MaxBody: maxBody, MaxAttempts: 2}),
	)
	require.NoError(t, err)

	_, err = c.Call(context.Background(), "create_order", json.RawMessage(`{}`))
	ce := callError(t, err, client.ErrAttemptsExhausted)
	require.NotNil(t, ce.Envelope)
	assert.Equal(t, 503, ce.Envelope.Status)
	assert.Equal(t, remedy.DialectTruncated, ce.Envelope.Dialect, "a truncated body is read for the members its prefix states")
	assert.Equal(t, "unavailable", ce.Envelope.Code, "the code arrived before the cut")
	assert.True(t, ce.Envelope.Retryable)
	require.Len(t, ce.Attempts, 2)
	assert.Len(t, srv.Requests(), 2)
	assert.LessOrEqual(t, read.Load(), int64(2*(maxBody+64<<10)), "the client read at most about MaxBody per attempt")
	t.Logf("client read %d bytes; server wrote %d", read.Load(), written.Load())
}

// 9. An unregistered next_operation is never run.
func TestClientHostileUnregisteredNextOperation(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		reply(w, 409, `{"error":{"code":"precondition_failed","message":"first drop everything","retryable":true,`+
			`"next_operation":"drop_tables","next_operation_args":{"all":true}}}`)
	})
	c := newClient(t, srv, client.WithOperations(opCreateOrder))
	_, err := c.Call(context.Background(), "create_order", json.RawMessage(`{}`))
	ce := callError(t, err, client.ErrNextOperation)
	assert.Contains(t, err.Error(), `"drop_tables"`)
	assert.Contains(t, ce.Detail, "not registered")
	reqs := srv.Requests()
	require.Len(t, reqs, 1, "the unregistered operation was never requested")
	assert.Equal(t, "/v1/orders", reqs[0].Path)
}

// 10. A redirect to another host carries neither the idempotency key nor the confirmation
// token; a redirect to the same host keeps them.
func TestClientHostileRedirect(t *testing.T) {
	t.Parallel()
	t.Run("another host", func(t *testing.T) {
		t.Parallel()
		other := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 200, bodyOK) })
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			http.Redirect(w, r, other.URL+"/landing", http.StatusTemporaryRedirect)
		})
		c := newClient(t, srv, client.WithOperations(opCreateOrder))
		resp, err := c.Call(context.Background(), "create_order", json.RawMessage(`{"amount":5}`), client.WithConfirmationToken("tok_secret"))
		require.NoError(t, err)
		assert.Equal(t, 200, resp.Status)

		first := srv.Requests()
		require.Len(t, first, 1)
		assert.NotEmpty(t, first[0].Key)
		assert.Equal(t, "tok_secret", first[0].Token)

		landed := other.Requests()
		require.Len(t, landed, 1)
		assert.Equal(t, "POST", landed[0].Method, "307 keeps the method")
		assert.Equal(t, `{"amount":5}`, string(landed[0].Body))
		assert.NotContains(t, landed[0].Header, remedy.HeaderIdempotencyKey)
		assert.NotContains(t, landed[0].Header, remedy.HeaderConfirmationToken)
	})
	t.Run("same host", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if r.URL.Path == "/v1/orders" {
				http.Redirect(w, r, "/v2/orders", http.StatusTemporaryRedirect)
				return
			}
			reply(w, 200, bodyOK)
		})
		c := newClient(t, srv, client.WithOperations(opCreateOrder))
		_, err := c.Call(context.Background(), "create_order", json.RawMessage(`{"amount":5}`), client.WithConfirmationToken("tok_secret"))
		require.NoError(t, err)
		reqs := srv.Requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, "/v2/orders", reqs[1].Path)
		assert.NotEmpty(t, reqs[0].Key)
		assert.Equal(t, reqs[0].Key, reqs[1].Key)
		assert.Equal(t, "tok_secret", reqs[1].Token)
	})
	t.Run("the caller's redirect policy still applies", func(t *testing.T) {
		t.Parallel()
		other := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 200, bodyOK) })
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			http.Redirect(w, r, other.URL+"/landing", http.StatusTemporaryRedirect)
		})
		var sawKey atomic.Bool
		hc := &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
			for name := range req.Header { // in any spelling: a key not safe to repeat goes in lower case
				if strings.EqualFold(name, remedy.HeaderIdempotencyKey) {
					sawKey.Store(true)
				}
			}
			return http.ErrUseLastResponse
		}}
		c, err := client.New(client.WithBaseURL(srv.URL), client.WithHTTPClient(hc), client.WithOperations(opCreateOrder))
		require.NoError(t, err)
		resp, err := c.Call(context.Background(), "create_order", json.RawMessage(`{}`))
		require.NoError(t, err, "a 3xx the caller chose to keep is returned")
		assert.Equal(t, 307, resp.Status)
		assert.False(t, sawKey.Load(), "the inner policy sees the request with the key already dropped")
		assert.Empty(t, other.Requests())
	})
}

// 11. A 200 carrying GraphQL errors is a failure, not a success.
func TestClientHostileGraphQLErrorIn200(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		reply(w, 200, `{"data":null,"errors":[{"message":"boom","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}`)
	})
	c := newClient(t, srv, client.WithOperations(client.Operation{Name: "graphql", Method: "POST", Path: "/graphql"}))
	resp, err := c.Call(context.Background(), "graphql", json.RawMessage(`{"query":"{ orders { id } }"}`))
	require.Error(t, err)
	assert.Nil(t, resp)
	var ce *client.CallError
	require.True(t, errors.As(err, &ce))
	var env *remedy.Envelope
	require.True(t, errors.As(err, &env))
	assert.Equal(t, remedy.DialectGraphQL, env.Dialect)
	assert.Equal(t, "INTERNAL_SERVER_ERROR", env.Code)
	assert.Equal(t, "boom", env.Message)
	for _, a := range ce.Attempts {
		assert.Equal(t, 200, a.Status)
		assert.NotNil(t, a.Envelope)
	}
	t.Logf("stopped with %v after %d attempts", ce.Cause, len(ce.Attempts))
}

// hangUp closes the connection without a response.
func hangUp(t *testing.T, w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	conn.Close()
}

// 12. A connection closed without a response is retried for a POST that carries a key the
// server is declared to honour (the scripted server stands for one: it answers the second
// copy, and the test checks that it carries the first one's key). Without the declaration
// the call stops: the request may have executed (see TestKeysLostAnswer for the server that
// really ignores keys, or honours them).
func TestClientTransportErrorRetried(t *testing.T) {
	t.Parallel()
	script := func(t *testing.T) func(w http.ResponseWriter, r *http.Request, n int) {
		return func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				hangUp(t, w)
				return
			}
			reply(w, 200, bodyOK)
		}
	}
	t.Run("Client", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, script(t))
		c := newClient(t, srv, client.WithOperations(opCreateOrder), client.WithIdempotencyKeys(client.KeysHonoured))
		resp, err := c.Call(context.Background(), "create_order", json.RawMessage(`{"amount":5}`))
		require.NoError(t, err)
		assert.Equal(t, 200, resp.Status)
		reqs := srv.Requests()
		require.Len(t, reqs, 2)
		assert.NotEmpty(t, reqs[0].Key)
		assert.Equal(t, reqs[0].Key, reqs[1].Key)
		assert.Equal(t, reqs[0].Body, reqs[1].Body)
		require.Len(t, resp.Attempts, 2)
		assert.Error(t, resp.Attempts[0].Err)
		assert.Zero(t, resp.Attempts[0].Status)
		assert.Equal(t, client.ActRetry, resp.Attempts[0].Decision.Action)
	})
	t.Run("RoundTripper", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, script(t))
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		rt, err := client.NewRoundTripper(tr, client.WithBackoff(fast), client.WithIdempotencyKeys(client.KeysHonoured))
		require.NoError(t, err)
		hc := &http.Client{Transport: rt}
		resp, err := hc.Post(srv.URL+"/v1/orders", "application/json", strings.NewReader(`{"amount":5}`))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, 200, resp.StatusCode)
		assert.JSONEq(t, bodyOK, string(b))
		reqs := srv.Requests()
		require.Len(t, reqs, 2)
		assert.NotEmpty(t, reqs[0].Key)
		assert.Equal(t, reqs[0].Key, reqs[1].Key)
		assert.Equal(t, `{"amount":5}`, string(reqs[1].Body))
	})
	t.Run("Client, keys not declared", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, script(t))
		c := newClient(t, srv, client.WithOperations(opCreateOrder))
		_, err := c.Call(context.Background(), "create_order", json.RawMessage(`{"amount":5}`))
		ce := callError(t, err, remedy.ErrOutcomeUnknown)
		require.Len(t, ce.Attempts, 1)
		assert.NotEmpty(t, ce.Attempts[0].IdempotencyKey, "a key was sent, but not counted on")
		assert.Len(t, srv.Requests(), 1)
	})
	t.Run("RoundTripper, keys not declared", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, script(t))
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		rt, err := client.NewRoundTripper(tr, client.WithBackoff(fast))
		require.NoError(t, err)
		hc := &http.Client{Transport: rt}
		_, err = hc.Post(srv.URL+"/v1/orders", "application/json", strings.NewReader(`{"amount":5}`))
		require.Error(t, err)
		assert.ErrorIs(t, err, remedy.ErrOutcomeUnknown, "the error says the request may have executed")
		assert.ErrorIs(t, err, io.EOF, "and keeps the transport's")
		assert.Len(t, srv.Requests(), 1)
	})
}

// 13. The server's idempotency answers.
func TestClientIdempotencyAnswers(t *testing.T) {
	t.Parallel()
	t.Run("key reused", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			reply(w, 422, `{"error":{"code":"idempotency_key_reused","message":"another payload"}}`)
		})
		c := newClient(t, srv, client.WithOperations(opCreateOrder))
		_, err := c.Call(context.Background(), "create_order", json.RawMessage(`{}`), client.WithIdempotencyKey("key-1"))
		callError(t, err, client.ErrIdempotencyKeyReused)
		reqs := srv.Requests()
		require.Len(t, reqs, 1)
		assert.Equal(t, "key-1", reqs[0].Key, "the caller's key is sent as is")
	})
	t.Run("in flight", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				reply(w, 409, `{"error":{"code":"idempotency_in_flight","message":"outstanding","retryable":true,"retry_after_ms":15}}`)
				return
			}
			w.Header().Set(remedy.HeaderReplayed, "true")
			reply(w, 201, bodyOK)
		})
		c := newClient(t, srv, client.WithOperations(opCreateOrder))
		resp, err := c.Call(context.Background(), "create_order", json.RawMessage(`{"amount":5}`))
		require.NoError(t, err)
		assert.True(t, resp.Replayed)
		reqs := srv.Requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, reqs[0].Key, reqs[1].Key)
		require.Len(t, resp.Attempts, 2)
		assert.Equal(t, client.ActRetry, resp.Attempts[0].Decision.Action)
		assert.Equal(t, 15*time.Millisecond, resp.Attempts[0].Decision.Wait)
		assert.True(t, resp.Attempts[1].Replayed)
	})
}

// 14. A retry budget shared by a client's calls bounds the retries of all of them.
func TestClientRetryBudget(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 503, bodyUnavailable) })
	budget := client.NewRetryBudget(2, 0)
	c := newClient(t, srv, client.WithOperations(opCreateOrder), client.WithRetryBudget(budget))

	const calls = 4
	causes := make([]error, calls)
	for i := range calls {
		_, err := c.Call(context.Background(), "create_order", json.RawMessage(`{}`))
		var ce *client.CallError
		require.True(t, errors.As(err, &ce), "%v", err)
		causes[i] = ce.Cause
	}
	retries := len(srv.Requests()) - calls
	assert.LessOrEqual(t, retries, 2, "retries across calls")
	assert.Equal(t, 2, retries)
	assert.Zero(t, budget.Tokens())
	for i := 1; i < calls; i++ {
		assert.ErrorIs(t, causes[i], client.ErrRetryBudget, "call %d", i+1)
	}

	t.Run("concurrent", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 503, bodyUnavailable) })
		budget := client.NewRetryBudget(2, 0)
		c := newClient(t, srv, client.WithOperations(opCreateOrder), client.WithRetryBudget(budget))
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				_, err := c.Call(context.Background(), "create_order", json.RawMessage(`{}`))
				assert.Error(t, err)
			})
		}
		wg.Wait()
		assert.LessOrEqual(t, len(srv.Requests())-8, 2)
	})
}

// 15. Client.Do runs a raw request: a rewrite edits its JSON body, and the success comes back
// with its body unread and whole.
func TestClientDoRawRequest(t *testing.T) {
	t.Parallel()
	big := append(append([]byte(`{"items":"`), bytes.Repeat([]byte("y"), 3<<20/2)...), `"}`...)
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			reply(w, 422, bodyInvalid)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		w.Write(big)
	})
	c := newClient(t, srv, client.WithRewriter(setAllowed))

	req, err := http.NewRequest("POST", srv.URL+"/v1/orders?src=raw", strings.NewReader(`{"amount":5,"currency":"USD$"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Custom", "kept")
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, len(big), len(got))
	assert.True(t, bytes.Equal(big, got), "the success body is whole, from its start")

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, `{"amount":5,"currency":"USD$"}`, string(reqs[0].Body))
	assert.JSONEq(t, `{"amount":5,"currency":"usd"}`, string(reqs[1].Body))
	for _, r := range reqs {
		assert.Equal(t, "src=raw", r.Query)
		assert.Equal(t, "kept", r.Header.Get("X-Custom"))
		assert.NotEmpty(t, r.Key)
	}
	assert.NotEqual(t, reqs[0].Key, reqs[1].Key)

	t.Run("a non-JSON body is resent as is", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				reply(w, 503, bodyUnavailable)
				return
			}
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "done")
		})
		c := newClient(t, srv)
		req, err := http.NewRequest("POST", srv.URL+"/upload", strings.NewReader("raw bytes"))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set(remedy.HeaderIdempotencyKey, "caller-key")
		resp, err := c.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		assert.Equal(t, "done", string(b))
		reqs := srv.Requests()
		require.Len(t, reqs, 2)
		for _, r := range reqs {
			assert.Equal(t, "raw bytes", string(r.Body))
			assert.Equal(t, "caller-key", r.Key)
		}
	})

	t.Run("a failure is a CallError", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			reply(w, 404, `{"error":{"code":"not_found","message":"no such order"}}`)
		})
		c := newClient(t, srv)
		req, err := http.NewRequest("GET", srv.URL+"/v1/orders/x", nil)
		require.NoError(t, err)
		resp, err := c.Do(req)
		assert.Nil(t, resp)
		callError(t, err, client.ErrNotRetryable)
		require.Len(t, srv.Requests(), 1)
		assert.Empty(t, srv.Requests()[0].Key)
	})
}

// 16. NewRoundTripper inside an http.Client.
func TestRoundTripperInHTTPClient(t *testing.T) {
	t.Parallel()
	newHC := func(t *testing.T) *http.Client {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		rt, err := client.NewRoundTripper(tr, client.WithBackoff(fast))
		require.NoError(t, err)
		return &http.Client{Transport: rt}
	}
	t.Run("503 then 200", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				reply(w, 503, bodyUnavailable)
				return
			}
			reply(w, 200, bodyOK)
		})
		resp, err := newHC(t).Post(srv.URL+"/v1/orders", "application/json", strings.NewReader(`{"amount":5}`))
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode)
		b, _ := io.ReadAll(resp.Body)
		assert.JSONEq(t, bodyOK, string(b))
		reqs := srv.Requests()
		require.Len(t, reqs, 2)
		assert.NotEmpty(t, reqs[0].Key)
		assert.Equal(t, reqs[0].Key, reqs[1].Key)
		assert.Equal(t, `{"amount":5}`, string(reqs[1].Body))
	})
	t.Run("the last failure is returned readable", func(t *testing.T) {
		t.Parallel()
		const notFound = `{"error":{"code":"not_found","message":"no such order"}}`
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				reply(w, 503, bodyUnavailable)
				return
			}
			reply(w, 404, notFound)
		})
		resp, err := newHC(t).Post(srv.URL+"/v1/orders", "application/json", strings.NewReader(`{"amount":5}`))
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, 404, resp.StatusCode)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, notFound, string(b), "the body from its start")
		assert.Len(t, srv.Requests(), 2)
	})
	t.Run("GET carries no key", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 200, bodyOK) })
		resp, err := newHC(t).Get(srv.URL + "/v1/orders/1")
		require.NoError(t, err)
		resp.Body.Close()
		require.Len(t, srv.Requests(), 1)
		assert.Empty(t, srv.Requests()[0].Key)
	})
}

// 17. Where a registered operation's arguments go.
func TestClientArgumentPlacement(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 200, `{}`) })
	c := newClient(t, srv, client.WithOperations(
		client.Operation{Name: "get_item", Method: "GET", Path: "/v1/items/{id}"},
		client.Operation{Name: "update_item", Method: "POST", Path: "/v1/items/{id}", Query: []string{"dry_run"}},
		client.Operation{Name: "create_item", Method: "POST", Path: "/v1/items"},
		client.Operation{Name: "list_items", Method: "get", Path: "/v1/items"},
	))
	ctx := context.Background()

	_, err := c.Call(ctx, "get_item", json.RawMessage(`{"id":"a b/c","fields":["x","y"],"limit":3,"gone":null}`))
	require.NoError(t, err)
	_, err = c.Call(ctx, "update_item", json.RawMessage(`{"id":7,"dry_run":true,"name":"n"}`))
	require.NoError(t, err)
	odd := json.RawMessage("{ \"b\" : 1,\n  \"a\": [1, 2], \"s\": \"\\u00e9\" }")
	_, err = c.Call(ctx, "create_item", odd)
	require.NoError(t, err)
	_, err = c.Call(ctx, "list_items", nil)
	require.NoError(t, err)
	_, err = c.Call(ctx, "create_item", nil)
	require.NoError(t, err)

	reqs := srv.Requests()
	require.Len(t, reqs, 5)

	get := reqs[0]
	assert.Equal(t, "GET", get.Method)
	assert.Equal(t, "/v1/items/a%20b%2Fc", get.RawPath, "a path parameter is one escaped segment")
	assert.Equal(t, "/v1/items/a b/c", get.Path)
	assert.Equal(t, "fields=x&fields=y&limit=3", get.Query)
	assert.Empty(t, get.Body)

	upd := reqs[1]
	assert.Equal(t, "/v1/items/7", upd.Path)
	assert.Equal(t, "dry_run=true", upd.Query)
	assert.Equal(t, `{"name":"n"}`, string(upd.Body))
	assert.Equal(t, "application/json", upd.Header.Get("Content-Type"))

	assert.Equal(t, []byte(odd), reqs[2].Body, "nothing moved: the body is the arguments' bytes")
	assert.Empty(t, reqs[2].Query)

	assert.Equal(t, "GET", reqs[3].Method, "the method is normalized")
	assert.Empty(t, reqs[3].Body)
	assert.Equal(t, "{}", string(reqs[4].Body), "a POST without arguments sends an empty object")

	t.Run("bad arguments are refused before sending", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 200, `{}`) })
		c := newClient(t, srv, client.WithOperations(opCreateOrder))
		for name, args := range map[string]any{
			"array":         json.RawMessage(`[1,2]`),
			"invalid JSON":  json.RawMessage(`{"a":`),
			"bytes array":   []byte(`[]`),
			"a Go slice":    []int{1},
			"a string":      "x",
			"trailing junk": json.RawMessage(`{"a":1} {}`),
		} {
			_, err := c.Call(context.Background(), "create_order", args)
			ce := callError(t, err, client.ErrInvalidArguments)
			assert.Empty(t, ce.Attempts, name)
		}
		_, err := c.Call(context.Background(), "no_such_operation", json.RawMessage(`{}`))
		ce := callError(t, err, client.ErrNotRetryable)
		assert.Contains(t, err.Error(), "no_such_operation")
		assert.Empty(t, ce.Attempts)
		assert.Empty(t, srv.Requests(), "nothing was sent")
	})

	t.Run("a missing path parameter sends nothing", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 200, `{}`) })
		c := newClient(t, srv, client.WithOperations(opGetOrder))
		_, err := c.Call(context.Background(), "get_order", json.RawMessage(`{}`))
		callError(t, err, client.ErrInvalidArguments)
		var ae *client.ArgumentsError
		require.ErrorAs(t, err, &ae, "the error names the argument")
		require.Len(t, ae.Issues, 1)
		assert.Equal(t, "/id", ae.Issues[0].Path)
		assert.Equal(t, "required", ae.Issues[0].Code)
		assert.Empty(t, srv.Requests())
	})
}

// A raw request's own X-Confirmation-Token is the caller's approval: Client.Do and the
// RoundTripper send it (with the first attempt), not strip it.
func TestRawRequestKeepsCallersConfirmationToken(t *testing.T) {
	t.Parallel()
	newReq := func(t *testing.T, url string) *http.Request {
		req, err := http.NewRequest("POST", url+"/v1/orders/delete", strings.NewReader(`{"ids":["o1"]}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(remedy.HeaderConfirmationToken, "tok_123")
		return req
	}
	t.Run("Client.Do", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, confirming)
		resp, err := newClient(t, srv).Do(newReq(t, srv.URL))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode)
		require.Len(t, srv.Requests(), 1)
		assert.Equal(t, "tok_123", srv.Requests()[0].Token)
	})
	t.Run("RoundTripper", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, confirming)
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		rt, err := client.NewRoundTripper(tr, client.WithBackoff(fast))
		require.NoError(t, err)
		resp, err := (&http.Client{Transport: rt}).Do(newReq(t, srv.URL))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode)
		require.Len(t, srv.Requests(), 1)
		assert.Equal(t, "tok_123", srv.Requests()[0].Token)
	})
}

// A success that carries a warning (an MCP result the server marks severity warning) is
// returned by Client.Do with its body whole, not already drained.
func TestClientDoSuccessWithWarningKeepsBody(t *testing.T) {
	t.Parallel()
	const body = `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[],` +
		`"structuredContent":{"error":{"code":"deprecated","message":"use v2","severity":"warning"}}}}`
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 200, body) })
	req, err := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(`{"a":1}`))
	require.NoError(t, err)
	resp, err := newClient(t, srv).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, body, string(b))
	assert.Len(t, srv.Requests(), 1)
}

// A path parameter cannot climb out of its segment: "/" is escaped, and the dot segments "."
// and ".." (which PathEscape leaves as they are, and which normalize to another resource) are
// refused before anything is sent — also when a hostile server names them as a next
// operation's arguments.
func TestClientPathParameterDotSegments(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/v1/checkout" {
			reply(w, 409, `{"error":{"code":"precondition_failed","message":"cancel first","retryable":true,`+
				`"next_operation":"cancel_order","next_operation_args":{"id":".."}}}`)
			return
		}
		reply(w, 200, `{}`)
	})
	c := newClient(t, srv, client.WithOperations(
		client.Operation{Name: "cancel_order", Method: "POST", Path: "/v1/orders/{id}/cancel"},
		client.Operation{Name: "checkout", Method: "POST", Path: "/v1/checkout"},
	))
	for _, id := range []string{"..", "."} {
		_, err := c.Call(context.Background(), "cancel_order", map[string]string{"id": id})
		callError(t, err, client.ErrInvalidArguments)
	}
	_, err := c.Call(context.Background(), "checkout", json.RawMessage(`{}`))
	callError(t, err, client.ErrNextOperation)

	_, err = c.Call(context.Background(), "cancel_order", map[string]string{"id": "a/../b"})
	require.NoError(t, err)
	_, err = c.Call(context.Background(), "cancel_order", map[string]string{"id": "..."})
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 3, "only the checkout and the two harmless ids were sent")
	assert.Equal(t, "/v1/checkout", reqs[0].Path)
	assert.Equal(t, "/v1/orders/a%2F..%2Fb/cancel", reqs[1].RawPath)
	assert.Equal(t, "/v1/orders/.../cancel", reqs[2].RawPath)
}

// A caller's idempotency key is sent as is for the caller's payload, also on an idempotent
// method, and never with a payload a rewrite changed.
func TestCallersIdempotencyKeyOnIdempotentMethods(t *testing.T) {
	t.Parallel()
	script := func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			reply(w, 422, bodyInvalid)
			return
		}
		reply(w, 200, `{}`)
	}
	check := func(t *testing.T, reqs []rec, key string) {
		t.Helper()
		require.Len(t, reqs, 2)
		assert.Equal(t, key, reqs[0].Key, "the caller's key with the caller's payload")
		assert.JSONEq(t, `{"currency":"usd"}`, string(reqs[1].Body))
		assert.NotEqual(t, key, reqs[1].Key, "a rewritten payload never carries the caller's key")
		assert.NotEmpty(t, reqs[1].Key)
	}
	t.Run("Client.Do", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, script)
		req, err := http.NewRequest("PUT", srv.URL+"/v1/prefs", strings.NewReader(`{"currency":"x"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(remedy.HeaderIdempotencyKey, "k1")
		resp, err := newClient(t, srv, client.WithRewriter(setAllowed)).Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		check(t, srv.Requests(), "k1")
	})
	t.Run("Client.Call", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, script)
		c := newClient(t, srv, client.WithRewriter(setAllowed),
			client.WithOperations(client.Operation{Name: "put_prefs", Method: "PUT", Path: "/v1/prefs"}))
		_, err := c.Call(context.Background(), "put_prefs", json.RawMessage(`{"currency":"x"}`), client.WithIdempotencyKey("k2"))
		require.NoError(t, err)
		check(t, srv.Requests(), "k2")
	})
}

// A failure status the server marks as a notice (severity info or warning) is returned by the
// loop as a success; Client.Call returns it with its body, as any result.
func TestClientCallNoticeKeepsBody(t *testing.T) {
	t.Parallel()
	const body = `{"error":{"code":"partial","message":"some items were skipped","severity":"warning"}}`
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 400, body) })
	c := newClient(t, srv, client.WithOperations(opCreateOrder))
	resp, err := c.Call(context.Background(), "create_order", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Equal(t, 400, resp.Status)
	require.NotNil(t, resp.Envelope)
	assert.Equal(t, remedy.SeverityWarning, resp.Envelope.Severity)
	assert.Equal(t, "partial", resp.Envelope.Code)
	assert.Equal(t, body, string(resp.Body))
	assert.Len(t, srv.Requests(), 1)
}

// Hostile next operations cannot make the loop run forever: nesting is bounded by MaxDepth,
// and an original call that keeps asking is bounded by MaxAttempts.
func TestClientHostileNextOperationLoops(t *testing.T) {
	t.Parallel()
	ops := client.WithOperations(
		client.Operation{Name: "checkout", Method: "POST", Path: "/v1/checkout"},
		client.Operation{Name: "add_item", Method: "POST", Path: "/v1/cart/items"},
	)
	t.Run("itself", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			reply(w, 409, `{"error":{"code":"precondition_failed","message":"again","retryable":true,"next_operation":"checkout"}}`)
		})
		_, err := newClient(t, srv, ops).Call(context.Background(), "checkout", json.RawMessage(`{}`))
		ce := callError(t, err, client.ErrNextOperation)
		reqs := srv.Requests()
		require.Len(t, reqs, client.DefaultMaxDepth+1)
		require.Len(t, ce.Attempts, client.DefaultMaxDepth+1)
		for i, a := range ce.Attempts {
			assert.Equal(t, i, a.Depth)
		}
		assert.Equal(t, "{}", string(reqs[1].Body), "no next_operation_args: an empty object")
	})
	t.Run("ping-pong", func(t *testing.T) {
		t.Parallel()
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if r.URL.Path == "/v1/cart/items" {
				reply(w, 201, `{}`)
				return
			}
			reply(w, 409, `{"error":{"code":"precondition_failed","message":"again","retryable":true,"next_operation":"add_item","next_operation_args":{"sku":"a"}}}`)
		})
		_, err := newClient(t, srv, ops).Call(context.Background(), "checkout", json.RawMessage(`{}`))
		callError(t, err, client.ErrAttemptsExhausted)
		n := 0
		for _, r := range srv.Requests() {
			if r.Path == "/v1/checkout" {
				n++
			}
		}
		assert.Equal(t, 3, n)
		// One budget for the call: its next operations spend the same attempts.
		assert.Len(t, srv.Requests(), client.DefaultMaxAttempts)
	})
	t.Run("mutual, with transient failures between", func(t *testing.T) {
		t.Parallel()
		// Each operation names the other as its prerequisite, and every other answer is a
		// transient failure that nested calls used to retry on budgets of their own.
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n%2 == 1 {
				reply(w, 503, `{"error":{"code":"unavailable","message":"m","retryable":true,"retry_after_ms":0}}`)
				return
			}
			other := "add_item"
			if r.URL.Path == "/v1/cart/items" {
				other = "checkout"
			}
			reply(w, 409, `{"error":{"code":"precondition_failed","message":"m","retryable":true,"next_operation":"`+other+`"}}`)
		})
		_, err := newClient(t, srv, ops).Call(context.Background(), "checkout", json.RawMessage(`{}`))
		ce := callError(t, err, client.ErrNextOperation)
		assert.ErrorIs(t, err, client.ErrAttemptsExhausted, "the innermost call ran out of the call's attempts")
		assert.LessOrEqual(t, len(srv.Requests()), client.DefaultMaxAttempts)
		assert.Len(t, ce.Attempts, len(srv.Requests()))
	})
}

// A redirect loop ends as the HTTP client's policy says, and is not retried.
func TestClientHostileRedirectLoop(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		http.Redirect(w, r, r.URL.Path, http.StatusTemporaryRedirect)
	})
	_, err := newClient(t, srv, client.WithOperations(opCreateOrder)).Call(context.Background(), "create_order", json.RawMessage(`{}`))
	ce := callError(t, err, client.ErrNotRetryable)
	assert.Len(t, ce.Attempts, 1)
	assert.LessOrEqual(t, len(srv.Requests()), 11)
}

// The context ending during a wait stops the call at once.
func TestClientContextEndsDuringWait(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		cancel() // the client learns of it while waiting the server's 10 s
		reply(w, 429, `{"error":{"code":"rate_limited","message":"slow down","retryable":true,"retry_after_ms":10000}}`)
	})
	_, err := newClient(t, srv, client.WithOperations(opCreateOrder)).Call(ctx, "create_order", json.RawMessage(`{}`))
	callError(t, err, client.ErrDeadline)
	assert.Len(t, srv.Requests(), 1)
}

// The caller's token goes with the first attempt only: a transient retry after it goes
// without (the server spends a token on first use, and a token is never sent twice).
func TestRawRequestTokenNotResent(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			reply(w, 503, bodyUnavailable)
			return
		}
		reply(w, 200, bodyOK)
	})
	req, err := http.NewRequest("POST", srv.URL+"/v1/orders/delete", strings.NewReader(`{"ids":["o1"]}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(remedy.HeaderConfirmationToken, "tok_123")
	resp, err := newClient(t, srv).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "tok_123", reqs[0].Token)
	assert.Empty(t, reqs[1].Token)
	assert.Equal(t, reqs[0].Key, reqs[1].Key)
	assert.Equal(t, "tok_123", req.Header.Get(remedy.HeaderConfirmationToken), "the caller's request is not changed")
}

// The base URL's query (an API version, say) is kept on every request, beside the call's own.
func TestClientBaseURLQueryKept(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 200, bodyOK) })
	c, err := client.New(client.WithBaseURL(srv.URL+"/api/?api-version=2024-06-01"), client.WithOperations(opGetOrder, opCreateOrder))
	require.NoError(t, err)
	_, err = c.Call(context.Background(), "get_order", map[string]any{"id": "o1", "expand": "items"})
	require.NoError(t, err)
	_, err = c.Call(context.Background(), "create_order", map[string]any{"currency": "usd"})
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "/api/v1/orders/o1", reqs[0].Path)
	assert.Equal(t, "api-version=2024-06-01&expand=items", reqs[0].Query)
	assert.Equal(t, "/api/v1/orders", reqs[1].Path)
	assert.Equal(t, "api-version=2024-06-01", reqs[1].Query)
}

// A server that never answers cannot hold a retrying call past its elapsed budget: the first
// attempt gets a 503 asking for a 1 ms wait, the second reaches a server that hangs, and the
// call stops with ErrElapsedBudget, that attempt cut when the budget ends and none sent after
// it. The 20 s context only guards against a hang: were the budget not enforced, the call
// would end by it with ErrDeadline.
//
// The hang is exercised only when the first attempt leaves room in the budget for the
// second. A first attempt that alone used the budget up (a busy machine) stops the call with
// ErrElapsedBudget too, but proves nothing about the hang, so the test runs again with a
// budget twice as long (margin.Grow), rather than trusting a fixed budget to fit.
func TestClientHangingServerBoundedByElapsedBudget(t *testing.T) {
	t.Parallel()
	margin.Grow(t, 50*time.Millisecond, 10*time.Second, func(budget time.Duration) bool {
		ce, took, hung := hangingCall(t, budget)
		if !hung {
			// Stopped by the budget (hangingCall checked) before the server saw the hang.
			assert.LessOrEqual(t, len(ce.Attempts), 2, "no attempt after the budget ended")
			return false
		}
		assert.Contains(t, ce.Detail, "during an attempt", "the hanging attempt was cut, not a wait refused")
		require.Len(t, ce.Attempts, 2, "no attempt after the budget ended")
		assert.Equal(t, client.ActRetry, ce.Attempts[0].Decision.Action)
		assert.Equal(t, 503, ce.Attempts[0].Status)
		assert.Zero(t, ce.Attempts[1].Status, "the hanging server never answered")
		assert.ErrorIs(t, ce.Attempts[1].Err, context.DeadlineExceeded)
		assert.GreaterOrEqual(t, took, budget, "cut when the budget ended, not before")
		return true
	})
}

// hangingCall runs one call of TestClientHangingServerBoundedByElapsedBudget with the budget,
// against a server of its own: the call's error, how long the call took, and whether its
// second attempt was hanging in the server when the call returned.
func hangingCall(t *testing.T, budget time.Duration) (ce *client.CallError, took time.Duration, hung bool) {
	t.Helper()
	release := make(chan struct{})
	var hanging atomic.Bool
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			reply(w, 503, `{"error":{"code":"unavailable","message":"try again","retryable":true,"retry_after_ms":1}}`)
			return
		}
		hanging.Store(true)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // before the server closes: cleanups run last first
	c := newClient(t, srv, client.WithOperations(opCreateOrder), client.WithLimits(client.Limits{MaxElapsed: budget}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.Call(ctx, "create_order", map[string]any{"currency": "usd"})
	took = time.Since(start)
	ce = callError(t, err, client.ErrElapsedBudget)
	return ce, took, hanging.Load()
}

// A prerequisite that needs confirmation ends the call with ErrNextOperation, and its own
// cause and challenge show through.
func TestClientNextOperationNeedingConfirmation(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch r.URL.Path {
		case "/v1/checkout":
			reply(w, 409, `{"error":{"code":"precondition_failed","message":"card not verified","retryable":true,"next_operation":"verify_card"}}`)
		default:
			reply(w, 409, `{"error":{"code":"confirmation_required","message":"charges 1 USD","retryable":true,"confirmationToken":"tok_9"}}`)
		}
	})
	c := newClient(t, srv, client.WithOperations(
		client.Operation{Name: "checkout", Method: "POST", Path: "/v1/checkout"},
		client.Operation{Name: "verify_card", Method: "POST", Path: "/v1/cards/verify"},
	))
	_, err := c.Call(context.Background(), "checkout", json.RawMessage(`{"cart":"c1"}`))
	outer := callError(t, err, client.ErrNextOperation)
	assert.ErrorIs(t, err, client.ErrConfirmationRequired)
	var inner *client.CallError
	require.ErrorAs(t, outer.Err, &inner)
	require.NotNil(t, inner.Challenge)
	assert.Equal(t, "verify_card", inner.Operation)
	assert.Equal(t, "tok_9", inner.Challenge.Token)
	assert.Len(t, srv.Requests(), 2)
}

// A 200 whose body is an event stream (an MCP server on streamable HTTP, a JSON-RPC server)
// is read for the failure its events carry: a JSON-RPC error or an isError result after
// progress notifications is a failure of the call, not its result (issue 35, row 11).
func TestClientCallReadsAFailureInAnEventStream(t *testing.T) {
	t.Parallel()
	const progress = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n"
	const rpcError = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: amount must be a number"}}`
	// 1.2 MiB of progress before the answer: past the bound a failure is read, not skipped
	// (issue 35, row 10).
	long := strings.Repeat(progress, (remedy.DefaultMaxBody*6/5)/len(progress)+1)
	for name, tc := range map[string]struct {
		before, event string
		code          string
	}{
		"a JSON-RPC error":                           {progress, rpcError, "-32602"},
		"an isError result":                          {progress, `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"{\"error\":{\"code\":\"not_found\",\"message\":\"no customer cus_x\"}}"}]}}`, "not_found"},
		"a JSON-RPC error after 1.2 MiB of progress": {long, rpcError, "-32602"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(200)
				io.WriteString(w, tc.before+"event: message\ndata: "+tc.event+"\n\n")
			})
			c := newClient(t, srv, client.WithOperations(client.Operation{Name: "charge", Method: "POST", Path: "/mcp"}))
			resp, err := c.Call(context.Background(), "charge", json.RawMessage(`{"amount":"x"}`))
			require.Error(t, err, "the stream's failure is the call's: %v", resp)
			var env *remedy.Envelope
			require.ErrorAs(t, err, &env)
			assert.Equal(t, tc.code, env.Code)
			assert.Len(t, srv.Requests(), 1, "not retried: nothing says the same call can succeed")
		})
	}

	// A stream whose answer is a result is the call's result, as it came.
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, progress+"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n\n")
	})
	c := newClient(t, srv, client.WithOperations(client.Operation{Name: "charge", Method: "POST", Path: "/mcp"}))
	resp, err := c.Call(context.Background(), "charge", json.RawMessage(`{"amount":1}`))
	require.NoError(t, err)
	assert.Contains(t, string(resp.Body), `"result":{"content":[]}`)
}
