package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
)

// Decide is the loop's whole policy as one pure function: here a rate limit whose wait is
// honored, and the same failure when the context's deadline comes first.
func ExampleDecide() {
	e, _ := remedy.Parse(429, nil, []byte(`{"error":{"code":"rate_limited","message":"slow down","retryable":true,"retry_after_ms":1500}}`))
	s := client.State{Attempt: 1, SafeToRepeat: true, BudgetLeft: true}
	d := client.Decide(e, nil, &s)
	fmt.Println(d.Action, d.Wait)

	s.HasDeadline, s.Remaining = true, time.Second
	d = client.Decide(e, nil, &s)
	fmt.Println(d.Action, d.Cause, "-", d.Why, "- asked", d.Asked)
	// Output:
	// retry 1.5s
	// stop deadline - the wait would end after the context's deadline - asked 1.5s
}

// NewLoop runs the loop over any Transport, with the defaults every entry point has: here a
// function standing in for a tool call that fails once with a validation error, repaired by
// the default rewriter from the allowed value the failure names.
func ExampleNewLoop() {
	tool := client.TransportFunc(func(ctx context.Context, req *client.Request) (*client.Response, error) {
		var args struct{ Currency string }
		json.Unmarshal(req.Args, &args)
		if args.Currency != "usd" {
			e, _ := remedy.Parse(422, nil, []byte(`{"error":{"code":"invalid_body","message":"currency must be usd","retryable":true,
				"issues":[{"path":["currency"],"code":"enum","allowed_values":["usd"]}]}}`))
			return &client.Response{Status: 422, Envelope: e}, nil
		}
		return &client.Response{Status: 200, Body: []byte(`{"id":"ord_1"}`)}, nil
	})
	loop, err := client.NewLoop(tool)
	if err != nil {
		fmt.Println(err)
		return
	}
	call, _ := client.NewCall("create_order", map[string]any{"currency": "USD"})
	resp, err := loop.Do(context.Background(), call, client.WithLimits(client.Limits{MaxAttempts: 3})) // a call's own options
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range resp.Attempts {
		fmt.Println(a.Number, a.Status, a.Decision.Action)
	}
	fmt.Println(string(resp.Body))
	// Output:
	// 1 422 rewrite
	// 2 200 return
	// {"id":"ord_1"}
}

// Hooks around a call and each of its attempts: here they print what happened, where a
// tracer would start and end spans (package github.com/remedy-go/remedy/otel does). The
// context AttemptStart returns is the one the transport gets.
func ExampleWithHooks() {
	type attemptKey struct{}
	tool := client.TransportFunc(func(ctx context.Context, req *client.Request) (*client.Response, error) {
		if ctx.Value(attemptKey{}) == 1 { // the first attempt meets a busy server
			e, _ := remedy.Parse(503, nil, []byte(`{"error":{"code":"unavailable","message":"busy","retry_after_ms":1}}`))
			return &client.Response{Status: 503, Envelope: e}, nil
		}
		return &client.Response{Status: 200, Body: []byte(`{"revenue":1200}`)}, nil
	})
	hooks := client.Hooks{
		CallStart: func(ctx context.Context, c *client.CallStart) context.Context {
			fmt.Println("call", c.Operation)
			return ctx
		},
		AttemptStart: func(ctx context.Context, a *client.AttemptStart) context.Context {
			return context.WithValue(ctx, attemptKey{}, a.Number)
		},
		AttemptEnd: func(_ context.Context, a *client.Attempt) {
			fmt.Println("  attempt", a.Number, a.Status, a.Decision.Action)
		},
		CallEnd: func(_ context.Context, e *client.CallEnd) {
			fmt.Println("end: error", e.Err, "recovered", e.Recovered, "after", len(e.Attempts), "attempts")
		},
	}
	loop := client.Loop{Transport: tool, Hooks: hooks}
	if _, err := loop.Do(context.Background(), client.Call{Operation: "revenue_report", Idempotent: true}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// call revenue_report
	//   attempt 1 503 retry
	//   attempt 2 200 return
	// end: error <nil> recovered true after 2 attempts
}
