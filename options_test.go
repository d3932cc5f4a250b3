package remedy_test

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

	"github.com/remedy-go/remedy"
)

// TestNewClientRefusesDuplicateOperations: two operations of one name, in one WithOperations
// or across several, are an error naming the operation, not a silent replacement whose
// outcome depends on the order of the options.
func TestNewClientRefusesDuplicateOperations(t *testing.T) {
	t.Parallel()
	a := remedy.Operation{Name: "create_order", Method: "POST", Path: "/v1/orders"}
	b := remedy.Operation{Name: "create_order", Method: "PUT", Path: "/v1/orders/{id}"}
	for name, opts := range map[string][]remedy.Option{
		"one option":     {remedy.WithOperations(a, b)},
		"two options":    {remedy.WithOperations(a), remedy.WithOperations(b)},
		"the same twice": {remedy.WithOperations(a, a)},
	} {
		opts = append(opts, remedy.WithBaseURL("http://127.0.0.1:1"))
		if _, err := remedy.NewClient(opts...); err == nil || !strings.Contains(err.Error(), `"create_order" is given twice`) {
			t.Errorf("%s: %v", name, err)
		}
	}
	c, err := remedy.NewClient(remedy.WithBaseURL("http://127.0.0.1:1"), remedy.WithOperations(a))
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
	base := remedy.WithBaseURL(srv.URL)
	op := remedy.WithOperations(remedy.Operation{Name: "get_report", Method: "GET", Path: "/v1/report"})

	for name, tc := range map[string]struct {
		build func() error
		want  string
	}{
		"a call's key, to a client": {func() error {
			_, err := remedy.NewClient(base, remedy.WithIdempotencyKey("k"))
			return err
		}, "WithIdempotencyKey configures one call, not NewClient"},
		"a base URL, to a round tripper": {func() error {
			_, err := remedy.NewRoundTripper(nil, remedy.WithBaseURL(srv.URL))
			return err
		}, "WithBaseURL configures NewClient, not NewRoundTripper"},
		"next operations, to a round tripper": {func() error {
			_, err := remedy.NewRoundTripper(nil, remedy.WithNextOperations(func(string) (bool, bool) { return true, false }))
			return err
		}, "WithNextOperations configures NewClient, NewLoop, not NewRoundTripper"},
		"an HTTP client, to a loop": {func() error {
			_, err := remedy.NewLoop(remedy.TransportFunc(nil), remedy.WithHTTPClient(http.DefaultClient))
			return err
		}, "WithHTTPClient configures NewClient, not NewLoop"},
		"a negative limit": {func() error {
			_, err := remedy.NewClient(base, remedy.WithLimits(remedy.Limits{MaxAttempts: -1}))
			return err
		}, "a negative limit"},
		"a negative result size": {func() error {
			_, err := remedy.NewClient(base, remedy.WithMaxResult(-1))
			return err
		}, "WithMaxResult: -1 is negative"},
		"a nil option": {func() error {
			_, err := remedy.NewClient(base, nil)
			return err
		}, "a nil Option"},
	} {
		err := tc.build()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, tc.want)
		}
	}

	c, err := remedy.NewClient(base, op)
	require.NoError(t, err)
	for name, o := range map[string]remedy.Option{
		"a base URL":       remedy.WithBaseURL("http://127.0.0.1:1"),
		"a pacer":          remedy.WithPacer(remedy.NewPacer()),
		"a retry budget":   remedy.WithRetryBudget(nil),
		"key support":      remedy.WithIdempotencyKeys(remedy.KeysHonoured),
		"a negative limit": remedy.WithLimits(remedy.Limits{MaxWait: -time.Second}),
		"a nil option":     nil,
		"operations":       op,
		"next operations":  remedy.WithNextOperations(nil),
		"a result size":    remedy.WithMaxResult(1),
		"an HTTP client":   remedy.WithHTTPClient(http.DefaultClient),
	} {
		_, err := c.Call(context.Background(), "get_report", nil, o)
		var ce *remedy.CallError
		if assert.ErrorAs(t, err, &ce, name) {
			assert.Contains(t, ce.Detail, "nothing was sent", name)
			assert.Empty(t, ce.Attempts, name)
		}
	}
	assert.Zero(t, requests.Load(), "a call refused for its options sends nothing")

	// The call's own options, on top of the client's: one attempt, where the client makes five.
	_, err = c.Call(context.Background(), "get_report", nil, remedy.WithLimits(remedy.Limits{MaxAttempts: 1}))
	require.ErrorIs(t, err, remedy.ErrAttemptsExhausted)
	assert.EqualValues(t, 1, requests.Load())
}

// A client without a base URL sends raw requests (Do) only: an operation would have nowhere to
// go, so registering one — by option, by Register, from a document — is refused, saying so,
// rather than failing at its first call as a transport error (issue 40).
func TestClientWithoutBaseURL(t *testing.T) {
	t.Parallel()
	op := remedy.Operation{Name: "get_report", Method: "GET", Path: "/v1/report"}
	_, err := remedy.NewClient(remedy.WithOperations(op))
	require.ErrorContains(t, err, `operation "get_report": the client has no base URL to send it to (WithBaseURL)`)

	c, err := remedy.NewClient()
	require.NoError(t, err)
	require.ErrorContains(t, c.Register(op), "no base URL")
	_, err = c.LoadOpenAPI(context.Background(), "http://127.0.0.1:1/openapi.json")
	require.ErrorContains(t, err, "no base URL")
	_, err = c.Call(context.Background(), "get_report", nil)
	var ce *remedy.CallError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Detail, "which has none")
}
