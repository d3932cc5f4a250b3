package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/mcp"
	"github.com/remedy-go/remedy/rewrite"
	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/storetest"
)

// caller is one surface's way to make a call through the loop.
type caller func(ctx context.Context, op string, args any) (*client.Response, error)

// surface connects a loop to a server over one protocol. drop, when it returns true for a
// request, makes the HTTP client lose that request's response after the server answered it.
type surface struct {
	name    string
	connect func(t *testing.T, url string, opts []client.Option, drop func(*http.Request) bool) caller
}

var surfaces = []surface{
	{"REST", func(t *testing.T, url string, opts []client.Option, drop func(*http.Request) bool) caller {
		c, err := client.New(append([]client.Option{client.WithBaseURL(url), client.WithHTTPClient(dropping(drop))}, opts...)...)
		require.NoError(t, err)
		n, err := c.LoadOpenAPI(context.Background(), "/openapi.json")
		require.NoError(t, err)
		require.Equal(t, 7, n)
		return func(ctx context.Context, op string, args any) (*client.Response, error) {
			return c.Call(ctx, op, args)
		}
	}},
	{"MCP", func(t *testing.T, url string, opts []client.Option, drop func(*http.Request) bool) caller {
		ctx := context.Background()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "scenarios", Version: "1"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: dropping(drop), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		c, err := mcp.NewClient(ctx, cs, opts...)
		require.NoError(t, err)
		return func(ctx context.Context, op string, args any) (*client.Response, error) {
			return c.Call(ctx, op, args)
		}
	}},
}

// dropping is an HTTP client that loses the response of the first request drop selects: the
// server has answered (and committed), the client sees a connection reset.
func dropping(drop func(*http.Request) bool) *http.Client {
	if drop == nil {
		return &http.Client{}
	}
	var dropped atomic.Bool
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		probe := r.Clone(r.Context())
		probe.Body = io.NopCloser(bytes.NewReader(body))
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil && drop(probe) && dropped.CompareAndSwap(false, true) {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return nil, io.ErrUnexpectedEOF
		}
		return resp, err
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// isCharge selects the request that charges, on either surface.
func isCharge(r *http.Request) bool {
	if r.URL.Path == "/v1/charges" {
		return true
	}
	b, _ := io.ReadAll(r.Body)
	return r.URL.Path == "/mcp" && bytes.Contains(b, []byte(`"tools/call"`)) && bytes.Contains(b, []byte(`"name":"charge"`))
}

// outcome is what a scenario ends with, the same on both surfaces.
type outcome struct {
	OK       bool
	Code     string // the error's last envelope code, or ""
	Cause    string // the CallError's cause
	Attempts int
	Replayed bool
	Result   map[string]any
	Effects  map[string]int
}

func approve(context.Context, *client.Challenge) (bool, error) { return true, nil }

// suggestionsOnly repairs a call from the server's suggested values alone, as a client that
// takes every suggestion for a lossless repair does: rewrite.Default, shown nothing but the
// suggestions. It gives up when an issue has none.
var suggestionsOnly = rewrite.Func(func(ctx context.Context, r *rewrite.Request) (json.RawMessage, error) {
	env := &remedy.Envelope{Status: r.Envelope.Status, Code: r.Envelope.Code}
	for _, is := range r.Envelope.Issues {
		if is.SuggestedValue == nil {
			return nil, nil
		}
		env.Issues = append(env.Issues, remedy.Issue{Path: is.Path, Code: is.Code, SuggestedValue: is.SuggestedValue})
	}
	shown := *r
	shown.Envelope = env
	out, err := rewrite.Default.Rewrite(ctx, &shown)
	r.Changes = shown.Changes
	return out, err
})

// TestScenariosSameOnBothSurfaces proves that a call through the REST client and the same call
// through the MCP client end alike: same result, attempts, cause and side effects. The server's
// clock moves only by the waits the loop decides, so that what expires or refills (the rate
// limit's bucket, tokens, leases) depends on the loop's decisions, never on how fast the machine
// is.
func TestScenariosSameOnBothSurfaces(t *testing.T) {
	t.Parallel()
	type scenario struct {
		name    string
		opts    []server.Option
		client  []client.Option // the client's, on both surfaces
		drop    func(*http.Request) bool
		prepare func(ctx context.Context, c caller, s *billing.Store) // runs before the call
		op      string
		args    any
		want    outcome
	}
	scenarios := []scenario{
		// Both surfaces know the operation's schema (OpenAPI, tools/list): the check before
		// sending repairs the case, and the call costs one request.
		{name: "validation is rewritten", op: "create_invoice",
			args: map[string]any{"customer_id": "cus_ada", "currency": "EUR", "amount": 1200},
			want: outcome{OK: true, Attempts: 1, Result: map[string]any{"id": "in_1", "customer_id": "cus_ada", "currency": "eur", "amount": 1200.0, "status": "draft"},
				Effects: map[string]int{"create_invoice": 1}}},
		{name: "validation is rewritten after the failure", client: []client.Option{client.WithSchemaCheck(client.CheckOff)},
			op:   "create_invoice",
			args: map[string]any{"customer_id": "cus_ada", "currency": "EUR", "amount": 1200},
			want: outcome{OK: true, Attempts: 2, Result: map[string]any{"id": "in_1", "customer_id": "cus_ada", "currency": "eur", "amount": 1200.0, "status": "draft"},
				Effects: map[string]int{"create_invoice": 1}}},
		{name: "validation without a rewriter stops", client: []client.Option{client.WithRewriter(nil)}, op: "create_invoice",
			args: map[string]any{"customer_id": "cus_ada", "currency": "EUR", "amount": 1200},
			want: outcome{Code: "invalid_body", Cause: client.ErrRewriteGaveUp.Error(), Attempts: 1, Effects: map[string]int{}}},
		{name: "rate limit waits", opts: []server.Option{server.WithRateLimit(server.RateLimitOptions{PerSecond: 50, Burst: 5})},
			prepare: func(ctx context.Context, c caller, s *billing.Store) {
				// Spends the burst: calls until one had to wait for its token. Over MCP, the
				// requests that opened the session spent part of it already.
				for range 10 {
					if resp, err := c(ctx, "revenue_report", map[string]any{"currency": "usd"}); err != nil || countTop(resp.Attempts) > 1 {
						return
					}
				}
			},
			op: "revenue_report", args: map[string]any{"currency": "usd"},
			want: outcome{OK: true, Attempts: 2, Result: map[string]any{"currency": "usd", "invoiced": 0.0, "charged": 0.0}, Effects: map[string]int{}}},
		{name: "unavailable waits",
			prepare: func(ctx context.Context, c caller, s *billing.Store) { s.Busy(2) },
			op:      "revenue_report", args: map[string]any{"currency": "usd"},
			want: outcome{OK: true, Attempts: 3, Result: map[string]any{"currency": "usd", "invoiced": 0.0, "charged": 0.0}, Effects: map[string]int{}}},
		{name: "precondition runs the next operation",
			prepare: func(ctx context.Context, c caller, s *billing.Store) {
				c(ctx, "create_invoice", map[string]any{"customer_id": "cus_ada", "currency": "usd", "amount": 900})
			},
			op: "send_invoice", args: map[string]any{"id": "in_1"},
			want: outcome{OK: true, Attempts: 2, Result: map[string]any{"id": "in_1", "customer_id": "cus_ada", "currency": "usd", "amount": 900.0, "status": "sent"},
				Effects: map[string]int{"create_invoice": 1, "finalize_invoice": 1, "send_invoice": 1}}},
		{name: "confirmation approved", client: []client.Option{client.WithConfirmPolicy(client.ConfirmFunc(approve))},
			op: "delete_customer", args: map[string]any{"id": "cus_ada"},
			want: outcome{OK: true, Attempts: 2, Result: map[string]any{"id": "cus_ada", "deleted": true}, Effects: map[string]int{"delete_customer": 1}}},
		{name: "confirmation refused by default",
			op: "delete_customer", args: map[string]any{"id": "cus_ada"},
			want: outcome{Code: "confirmation_required", Cause: client.ErrConfirmationRequired.Error(), Attempts: 1, Effects: map[string]int{}}},
		{name: "idempotent replay after a dropped response", drop: isCharge,
			op: "charge", args: map[string]any{"customer_id": "cus_ada", "amount": 700, "currency": "gbp"},
			want: outcome{OK: true, Attempts: 2, Replayed: true, Result: map[string]any{"id": "ch_1", "customer_id": "cus_ada", "amount": 700.0, "currency": "gbp"},
				Effects: map[string]int{"charge": 1}}},
		// Issue 21: a charge of 99999999 was sent again as a charge of 1000000 because the server
		// suggested its own maximum. A bound is only what the server expected.
		{name: "a charge over the maximum: the server suggests no amount", client: []client.Option{client.WithRewriter(suggestionsOnly)},
			op: "charge", args: map[string]any{"customer_id": "cus_ada", "amount": 99999999, "currency": "usd"},
			want: outcome{Code: "invalid_body", Cause: client.ErrRewriteGaveUp.Error(), Attempts: 1, Effects: map[string]int{}}},
		{name: "a charge over the maximum: clamped when the rewrite policy approves",
			client: []client.Option{client.WithRewritePolicy(rewrite.All)},
			op:     "charge", args: map[string]any{"customer_id": "cus_ada", "amount": 99999999, "currency": "usd"},
			want: outcome{OK: true, Attempts: 1, Result: map[string]any{"id": "ch_1", "customer_id": "cus_ada", "amount": 1000000.0, "currency": "usd"},
				Effects: map[string]int{"charge": 1}}},
		{name: "a charge over the maximum: clamped after the failure when the rewrite policy approves",
			client: []client.Option{client.WithRewritePolicy(rewrite.All), client.WithSchemaCheck(client.CheckOff)},
			op:     "charge", args: map[string]any{"customer_id": "cus_ada", "amount": 99999999, "currency": "usd"},
			want: outcome{OK: true, Attempts: 2, Result: map[string]any{"id": "ch_1", "customer_id": "cus_ada", "amount": 1000000.0, "currency": "usd"},
				Effects: map[string]int{"charge": 1}}},
		{name: "not found is not retried", op: "get_invoice", args: map[string]any{"id": "in_404"},
			want: outcome{Code: "not_found", Cause: client.ErrNotRetryable.Error(), Attempts: 1, Effects: map[string]int{}}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			for _, sf := range surfaces {
				t.Run(sf.name, func(t *testing.T) {
					t.Parallel()
					clock := storetest.NewClock()
					api, store, err := billing.New(append([]server.Option{server.WithClock(clock.Now)}, sc.opts...)...)
					require.NoError(t, err)
					srv := httptest.NewServer(api)
					defer srv.Close()
					// The hook runs after the loop has decided, before it waits: the wait passes
					// on the server's clock exactly, however long the machine takes around it.
					advance := client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) { clock.Advance(a.Decision.Wait) }})
					call := sf.connect(t, srv.URL, append(slices.Clip(sc.client), advance), sc.drop)
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					if sc.prepare != nil {
						sc.prepare(ctx, call, store)
					}
					before := map[string]int{}
					for _, op := range []string{"create_invoice", "finalize_invoice", "send_invoice", "charge", "delete_customer"} {
						before[op] = store.Effects(op)
					}
					resp, err := call(ctx, sc.op, sc.args)
					got := outcome{Effects: map[string]int{}}
					if err == nil {
						got.OK, got.Replayed = true, resp.Replayed
						got.Attempts = countTop(resp.Attempts)
						require.NoError(t, json.Unmarshal(resp.Body, &got.Result), "%s", resp.Body)
					} else {
						var ce *client.CallError
						require.True(t, errors.As(err, &ce), "%v", err)
						got.Attempts = countTop(ce.Attempts)
						got.Cause = ce.Cause.Error()
						if ce.Envelope != nil {
							got.Code = ce.Envelope.Code
						}
					}
					for op := range before {
						if d := store.Effects(op); d > 0 {
							got.Effects[op] = d
						}
					}
					assert.Equal(t, sc.want, got)
				})
			}
		})
	}
}

// countTop counts the attempts of the call itself, not of the next operations it ran.
func countTop(as []client.Attempt) int {
	n := 0
	for _, a := range as {
		if a.Depth == 0 {
			n++
		}
	}
	return n
}
