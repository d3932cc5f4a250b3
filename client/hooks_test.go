package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
)

type hookKey string

// journal records the hooks a loop runs, in order, and checks each hook's context: the
// call's hooks see the context CallStart returned, the attempt's the one AttemptStart did.
type journal struct {
	t      *testing.T
	events []string
	starts int
	ends   []*client.CallEnd
}

func (j *journal) hooks() client.Hooks {
	return client.Hooks{
		CallStart: func(ctx context.Context, c *client.CallStart) context.Context {
			j.starts++
			j.events = append(j.events, fmt.Sprintf("call %s depth=%d key=%t", c.Operation, c.Depth, c.IdempotencyKey))
			return context.WithValue(ctx, hookKey("call"), c.Operation)
		},
		AttemptStart: func(ctx context.Context, a *client.AttemptStart) context.Context {
			assert.Equal(j.t, a.Operation, ctx.Value(hookKey("call")), "an attempt runs under its call's context")
			j.events = append(j.events, fmt.Sprintf("attempt %s #%d/%d key=%t rewritten=%t", a.Operation, a.Number, a.Total, a.IdempotencyKey, a.Rewritten))
			return context.WithValue(ctx, hookKey("attempt"), fmt.Sprint(a.Operation, a.Number))
		},
		AttemptEnd: func(ctx context.Context, a *client.Attempt) {
			assert.Equal(j.t, fmt.Sprint(a.Operation, a.Number), ctx.Value(hookKey("attempt")), "AttemptEnd gets the attempt's context")
			j.events = append(j.events, fmt.Sprintf("end %s #%d %s", a.Operation, a.Number, a.Decision.Action))
		},
		CallEnd: func(ctx context.Context, e *client.CallEnd) {
			assert.Equal(j.t, e.Operation, ctx.Value(hookKey("call")), "CallEnd gets the call's context")
			assert.Nil(j.t, ctx.Value(hookKey("attempt")), "an attempt's context is its own")
			cp := *e
			j.ends = append(j.ends, &cp)
			cause := "nil"
			if e.Cause != nil {
				cause = e.Cause.Error()
			}
			j.events = append(j.events, fmt.Sprintf("done %s depth=%d cause=%s recovered=%t attempts=%d", e.Operation, e.Depth, cause, e.Recovered, len(e.Attempts)))
		},
	}
}

func mustParse(t *testing.T, status int, body string) *remedy.Envelope {
	t.Helper()
	env, ok := remedy.Parse(status, nil, []byte(body))
	require.True(t, ok, body)
	return env
}

// The hooks run in order — call, then each attempt's start and end, then the call's end —
// and the transport gets the context AttemptStart returned, which reaches only that attempt.
// A next operation is a call of its own, one level deeper, inside the call that ran it. The
// retry's wait passes on synctest's clock.
func TestHooksOrderAndContexts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		unavailable := mustParse(t, 503, `{"error":{"code":"unavailable","message":"later","retryable":true,"retry_after_ms":250}}`)
		needsLogin := mustParse(t, 409, `{"error":{"code":"session_expired","message":"log in first","retryable":true,"next_operation":"login"}}`)
		tool := client.TransportFunc(func(ctx context.Context, req *client.Request) (*client.Response, error) {
			if got := ctx.Value(hookKey("attempt")); got != fmt.Sprint(req.Operation, req.Attempt) {
				return nil, fmt.Errorf("attempt %d of %s sent under %v", req.Attempt, req.Operation, got)
			}
			switch {
			case req.Operation == "login":
				return &client.Response{Status: 200, Body: []byte(`{}`)}, nil
			case req.Attempt == 1:
				return &client.Response{Status: 503, Envelope: unavailable}, nil
			case req.Attempt == 2:
				return &client.Response{Status: 409, Envelope: needsLogin}, nil
			}
			return &client.Response{Status: 200, Body: []byte(`{}`)}, nil
		})
		j := &journal{t: t}
		loop := client.Loop{Transport: tool, Hooks: j.hooks(), Budget: client.NewRetryBudget(5, 0),
			Registered: func(name string) (bool, bool) { return name == "login", false }}
		start := time.Now()
		_, err := loop.Do(context.Background(), client.Call{Operation: "create_order", Args: json.RawMessage(`{"sku":"a"}`)})
		require.NoError(t, err)
		assert.Equal(t, []string{
			"call create_order depth=0 key=false",
			"attempt create_order #1/1 key=true rewritten=false",
			"end create_order #1 retry",
			"attempt create_order #2/2 key=true rewritten=false",
			"end create_order #2 next_operation",
			"call login depth=1 key=false",
			"attempt login #1/3 key=true rewritten=false",
			"end login #1 return",
			"done login depth=1 cause=nil recovered=false attempts=1",
			"attempt create_order #3/4 key=true rewritten=false",
			"end create_order #3 return",
			"done create_order depth=0 cause=nil recovered=true attempts=4",
		}, j.events)
		outer := j.ends[1]
		assert.Equal(t, 250*time.Millisecond, time.Since(start), "the only wait is the server's")
		assert.Equal(t, 250*time.Millisecond, outer.Elapsed)
		assert.True(t, outer.HasBudget)
		assert.Equal(t, 4.0, outer.BudgetTokens, "a next operation spent one of five tokens; a 503 that states its wait spends none")
	})
}

// CallEnd runs exactly once on every way a call returns, with the error the caller gets and
// its cause; the call's first hook and its last pair up.
func TestHooksCallEndOnEveryPath(t *testing.T) {
	t.Parallel()
	unavailable := `{"error":{"code":"unavailable","message":"later","retryable":true,"retry_after_ms":1}}`
	fatal := `{"error":{"code":"forbidden","message":"no","retryable":false}}`
	fix := `{"error":{"code":"invalid_parameter","category":"validation","message":"bad","issues":[{"path":"/qty","message":"too big","suggested_value":1}]}}`
	challenge := `{"error":{"code":"confirmation_required","message":"sure?","confirmation_token":"tok"}}`
	next := `{"error":{"code":"session_expired","message":"log in","retryable":true,"next_operation":"login"}}`
	cases := []struct {
		name   string
		args   string
		bodies []string // what each attempt gets; "" is a success
		budget *client.RetryBudget
		cancel bool // the context ends during the first wait
		want   error
	}{
		{name: "success", bodies: []string{""}},
		{name: "arguments not an object", args: `[1]`, want: client.ErrInvalidArguments},
		{name: "not retryable", bodies: []string{fatal}, want: client.ErrNotRetryable},
		{name: "attempts exhausted", bodies: []string{unavailable, unavailable, unavailable}, want: client.ErrAttemptsExhausted},
		{name: "budget exhausted", bodies: []string{unavailable, unavailable}, budget: client.NewRetryBudget(1, 0), want: client.ErrRetryBudget},
		{name: "context ends in the wait", bodies: []string{unavailable}, cancel: true, want: client.ErrDeadline},
		{name: "rewrite gave up", bodies: []string{fix}, want: client.ErrRewriteGaveUp},
		{name: "confirmation refused", bodies: []string{challenge}, want: client.ErrConfirmationRequired},
		{name: "next operation unregistered", bodies: []string{next}, want: client.ErrNextOperation},
		{name: "recovered", bodies: []string{unavailable, ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				tool := client.TransportFunc(func(_ context.Context, req *client.Request) (*client.Response, error) {
					body := tc.bodies[req.Attempt-1]
					if body == "" {
						return &client.Response{Status: 200, Body: []byte(`{}`)}, nil
					}
					env := mustParse(t, 400, body)
					return &client.Response{Status: env.Status, Envelope: env}, nil
				})
				j := &journal{t: t}
				h := j.hooks()
				end := h.AttemptEnd
				h.AttemptEnd = func(ctx context.Context, a *client.Attempt) {
					end(ctx, a)
					if tc.cancel {
						cancel()
					}
				}
				budget := tc.budget
				if budget == nil {
					budget = client.NewRetryBudget(10, 0)
				}
				loop := client.Loop{Transport: tool, Hooks: h, Budget: budget, Limits: client.Limits{MaxAttempts: 3},
					Backoff: func() backoff.BackOff { return &backoff.ZeroBackOff{} }}
				args := tc.args
				if args == "" {
					args = `{"qty":5}`
				}
				_, err := loop.Do(ctx, client.Call{Operation: "op", Idempotent: true, Args: json.RawMessage(args)})
				require.Equal(t, 1, j.starts)
				require.Len(t, j.ends, 1, "CallEnd runs once")
				e := j.ends[0]
				if tc.want == nil {
					require.NoError(t, err)
					assert.NoError(t, e.Err)
					assert.Nil(t, e.Cause)
					assert.Equal(t, len(tc.bodies) > 1, e.Recovered)
					return
				}
				require.ErrorIs(t, err, tc.want)
				assert.Same(t, err, e.Err, "CallEnd sees the error the caller gets")
				assert.Equal(t, tc.want, e.Cause)
				assert.False(t, e.Recovered)
			})
		})
	}
}

// A hook's context reaches the HTTP request of every attempt the Client sends, a retry sent
// again unchanged included (which reuses the last request under the new context), so that a
// propagator in the http.Client's transport can inject the attempt's trace context. The
// operation is not safe to repeat (a POST without a key the server is known to honour), so
// the attempts are watched for what they wrote, and each is watched under its own context.
func TestHooksContextReachesHTTPRequest(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Attempt"))
		n := len(seen)
		mu.Unlock()
		if n < 3 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(503)
			w.Write([]byte(`{"error":{"code":"unavailable","message":"later","retryable":true,"retry_after_ms":1}}`))
			return
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	inject := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		if v, ok := r.Context().Value(hookKey("attempt")).(string); ok {
			r.Header.Set("X-Attempt", v)
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	j := &journal{t: t}
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithHTTPClient(&http.Client{Transport: inject}),
		client.WithOperations(client.Operation{Name: "create_order", Method: "POST", Path: "/orders"}),
		client.WithHooks(j.hooks()))
	require.NoError(t, err)
	_, err = c.Call(context.Background(), "create_order", map[string]int{"qty": 1})
	require.NoError(t, err)
	assert.Equal(t, []string{"create_order1", "create_order2", "create_order3"}, seen)
	require.Len(t, j.ends, 1)
	assert.True(t, j.ends[0].Recovered)
	assert.Len(t, j.ends[0].Attempts, 3)
	for _, ev := range j.events {
		assert.False(t, strings.Contains(ev, "key=false") && strings.HasPrefix(ev, "attempt"), "a POST sends a key: %s", ev)
	}
}

// A Loop with no hook set allocates no more than it did without hooks: the records are made
// only for a hook that is set.
func TestHooksUnsetCostNothing(t *testing.T) {
	ok := client.TransportFunc(func(context.Context, *client.Request) (*client.Response, error) {
		return &client.Response{Status: 200}, nil
	})
	call := client.Call{Operation: "get", Idempotent: true}
	bare := client.Loop{Transport: ok}
	ends := 0
	hooked := client.Loop{Transport: ok, Hooks: client.Hooks{CallEnd: func(context.Context, *client.CallEnd) { ends++ }}}
	ctx := context.Background()
	without := testing.AllocsPerRun(100, func() { bare.Do(ctx, call) })
	with := testing.AllocsPerRun(100, func() { hooked.Do(ctx, call) })
	assert.Less(t, without, with, "the hooked loop's record is what the bare loop does not pay for")
	assert.Equal(t, 101, ends)
}
