package client_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/nettest"
)

// An unchanged retry sends what the attempt before it sent: the same body, key and headers —
// the confirmation token excepted, which goes with the first attempt only — whether the
// operation's URL is fixed or made from its arguments.
func TestClientUnchangedRetrySendsTheSameRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		op   client.Operation
		args string
		path string
		body string
	}{
		{"fixed URL", opCreateOrder, `{"amount":5,"currency":"usd"}`, "/v1/orders", `{"amount":5,"currency":"usd"}`},
		{"path parameter", client.Operation{Name: "capture", Method: "POST", Path: "/v1/orders/{id}/capture"},
			`{"id":"ord_1","amount":5}`, "/v1/orders/ord_1/capture", `{"amount":5}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n < 3 {
					reply(w, 503, bodyUnavailable)
					return
				}
				reply(w, 200, bodyOK)
			})
			c := newClient(t, srv, client.WithOperations(tc.op))
			resp, err := c.Call(context.Background(), tc.op.Name, json.RawMessage(tc.args), client.WithConfirmationToken("tok_1"))
			require.NoError(t, err)
			require.Len(t, resp.Attempts, 3)
			reqs := srv.Requests()
			require.Len(t, reqs, 3)
			assert.Equal(t, "tok_1", reqs[0].Token)
			for i, r := range reqs {
				assert.Equal(t, tc.path, r.Path, "attempt %d", i+1)
				assert.Equal(t, tc.body, string(r.Body), "attempt %d", i+1)
				assert.Equal(t, reqs[0].Key, r.Key, "attempt %d", i+1)
				assert.Equal(t, "application/json", r.Header.Get("Content-Type"), "attempt %d", i+1)
				assert.Equal(t, "application/json, application/problem+json", r.Header.Get("Accept"), "attempt %d", i+1)
				if i > 0 {
					assert.Empty(t, r.Token, "attempt %d: the token goes with the first attempt only", i+1)
				}
			}
			assert.NotEmpty(t, reqs[0].Key)
		})
	}
}

// The watch on what an attempt wrote is reset between attempts: after an attempt that was
// written and answered (a 503), an attempt that fails before a byte of it is written (its
// TLS handshake cut) counts as not sent, and is retried — nothing the first attempt showed is
// left to make it look written. The third attempt reaches the server again.
func TestClientWatchResetBetweenAttempts(t *testing.T) {
	t.Parallel()
	var served atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == 1 {
			w.Header().Set("Connection", "close") // the next attempt dials again
			reply(w, 503, bodyUnavailable)
			return
		}
		reply(w, 200, bodyOK)
	}))
	t.Cleanup(srv.Close)
	hangup, accepted := nettest.Hangup(t)
	var dials atomic.Int32
	d := &net.Dialer{}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 2 {
			addr = hangup
		}
		return d.DialContext(ctx, network, addr)
	}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithHTTPClient(&http.Client{Transport: tr}),
		client.WithBackoff(fast), client.WithOperations(opSendSMS))
	require.NoError(t, err)
	resp, err := c.Call(context.Background(), "send_sms", json.RawMessage(`{"to":"+15550100"}`))
	require.NoError(t, err)
	require.Len(t, resp.Attempts, 3)
	assert.Equal(t, 503, resp.Attempts[0].Status)
	assert.Error(t, resp.Attempts[1].Err)
	assert.Equal(t, client.ActRetry, resp.Attempts[1].Decision.Action, resp.Attempts[1].Decision.Why)
	assert.Contains(t, resp.Attempts[1].Decision.Why, "before the request was written")
	assert.EqualValues(t, 2, served.Load())
	assert.EqualValues(t, 1, accepted.Load())
}
