package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
)

// TestNewClientRefusesDuplicateOperations: two operations of one name, in one WithOperations
// or across several, are an error naming the operation, not a silent replacement whose
// outcome depends on the order of the options.
func TestNewClientRefusesDuplicateOperations(t *testing.T) {
	t.Parallel()
	a := client.Operation{Name: "create_order", Method: "POST", Path: "/v1/orders"}
	b := client.Operation{Name: "create_order", Method: "PUT", Path: "/v1/orders/{id}"}
	for name, opts := range map[string][]client.Option{
		"one option":     {client.WithOperations(a, b)},
		"two options":    {client.WithOperations(a), client.WithOperations(b)},
		"the same twice": {client.WithOperations(a, a)},
	} {
		opts = append(opts, client.WithBaseURL("http://127.0.0.1:1"))
		if _, err := client.New(opts...); err == nil || !strings.Contains(err.Error(), `"create_order" is given twice`) {
			t.Errorf("%s: %v", name, err)
		}
	}
	c, err := client.New(client.WithBaseURL("http://127.0.0.1:1"), client.WithOperations(a))
	if err != nil {
		t.Fatal(err)
	}
	// Register, later, replaces by name: documented, and what LoadOpenAPI relies on.
	if err := c.Register(b); err != nil {
		t.Errorf("Register replacing an operation: %v", err)
	}
}

// An option given where it means nothing is an error that names it — from the constructor, or
// from the call, which then sends nothing — and so is an impossible value.
func TestOptionsRefusedWhereTheyMeanNothing(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	base := client.WithBaseURL(srv.URL)
	op := client.WithOperations(client.Operation{Name: "get_report", Method: "GET", Path: "/v1/report"})

	for name, tc := range map[string]struct {
		build func() error
		want  string
	}{
		"a call's key, to a client": {func() error {
			_, err := client.New(base, client.WithIdempotencyKey("k"))
			return err
		}, "WithIdempotencyKey configures one call, not client.New"},
		"a base URL, to a round tripper": {func() error {
			_, err := client.NewRoundTripper(nil, client.WithBaseURL(srv.URL))
			return err
		}, "WithBaseURL configures client.New, not client.NewRoundTripper"},
		"next operations, to a round tripper": {func() error {
			_, err := client.NewRoundTripper(nil, client.WithNextOperations(func(string) (bool, bool) { return true, false }))
			return err
		}, "WithNextOperations configures client.New, client.NewLoop, not client.NewRoundTripper"},
		"an HTTP client, to a loop": {func() error {
			_, err := client.NewLoop(client.TransportFunc(nil), client.WithHTTPClient(http.DefaultClient))
			return err
		}, "WithHTTPClient configures client.New, not client.NewLoop"},
		"a negative limit": {func() error {
			_, err := client.New(base, client.WithLimits(client.Limits{MaxAttempts: -1}))
			return err
		}, "a negative limit"},
		"a negative result size": {func() error {
			_, err := client.New(base, client.WithMaxResult(-1))
			return err
		}, "WithMaxResult: -1 is negative"},
		"a nil option": {func() error {
			_, err := client.New(base, nil)
			return err
		}, "a nil Option"},
	} {
		err := tc.build()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, tc.want)
		}
	}

	c, err := client.New(base, op)
	require.NoError(t, err)
	for name, o := range map[string]client.Option{
		"a base URL":       client.WithBaseURL("http://127.0.0.1:1"),
		"a pacer":          client.WithPacer(client.NewPacer()),
		"a retry budget":   client.WithRetryBudget(nil),
		"key support":      client.WithIdempotencyKeys(client.KeysHonoured),
		"a negative limit": client.WithLimits(client.Limits{MaxWait: -time.Second}),
		"a nil option":     nil,
		"operations":       op,
		"next operations":  client.WithNextOperations(nil),
		"a result size":    client.WithMaxResult(1),
		"an HTTP client":   client.WithHTTPClient(http.DefaultClient),
	} {
		_, err := c.Call(context.Background(), "get_report", nil, o)
		var ce *client.CallError
		if assert.ErrorAs(t, err, &ce, name) {
			assert.Contains(t, ce.Detail, "nothing was sent", name)
			assert.Empty(t, ce.Attempts, name)
		}
	}
	assert.Zero(t, requests.Load(), "a call refused for its options sends nothing")

	// The call's own options, on top of the client's: one attempt, where the client makes five.
	_, err = c.Call(context.Background(), "get_report", nil, client.WithLimits(client.Limits{MaxAttempts: 1}))
	require.ErrorIs(t, err, client.ErrAttemptsExhausted)
	assert.EqualValues(t, 1, requests.Load())
}

// A client without a base URL sends raw requests (Do) only: an operation would have nowhere to
// go, so registering one — by option, by Register, from a document — is refused, saying so,
// rather than failing at its first call as a transport error (issue 40).
func TestClientWithoutBaseURL(t *testing.T) {
	t.Parallel()
	op := client.Operation{Name: "get_report", Method: "GET", Path: "/v1/report"}
	_, err := client.New(client.WithOperations(op))
	require.ErrorContains(t, err, `operation "get_report": the client has no base URL to send it to (WithBaseURL)`)

	c, err := client.New()
	require.NoError(t, err)
	require.ErrorContains(t, c.Register(op), "no base URL")
	_, err = c.LoadOpenAPI(context.Background(), "http://127.0.0.1:1/openapi.json")
	require.ErrorContains(t, err, "no base URL")
	_, err = c.Call(context.Background(), "get_report", nil)
	var ce *client.CallError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Detail, "which has none")
}
