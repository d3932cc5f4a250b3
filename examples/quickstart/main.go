// Command quickstart starts the reference server with a small billing API on loopback and runs
// an agent against it through remedy's loop: every call starts wrong in a way agents' calls
// do, and the transcript shows, attempt by attempt, what failed, what the envelope said and
// what the loop did about it. It ends with a summary of each scenario and of the side effects
// the server executed. It needs no network and finishes in well under a second.
//
//	go run ./examples/quickstart
//
// The client and the agent's calls are here; the API it calls is the package
// github.com/remedy-go/remedy/examples/billing, declared on the reference server, and the
// transcript is printed by github.com/remedy-go/remedy/client/transcript. Both are importable,
// so this file runs as it is when copied into a module of your own.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"text/tabwriter"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/client/transcript"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/mcp"
	"github.com/remedy-go/remedy/server"
)

// scenario is one call an agent makes, and the side effect it should have executed once.
type scenario struct {
	title   string
	op      string
	args    map[string]any
	before  func(*billing.Store)
	effect  string
	expects string
	mcp     bool // called as an MCP tool, by remedy's MCP client, instead of over REST
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run runs the quickstart, writing its transcript and summary to out. It fails when a scenario
// does not end as it should, or when a side effect did not execute exactly once.
func run(out io.Writer) error {
	api, store, err := billing.New(server.WithAsync(server.AsyncOptions{PollAfter: 20 * time.Millisecond}))
	if err != nil {
		return err
	}
	if err := store.AddExports(api); err != nil {
		return err
	}
	// The export runs until the agent has polled it once, so that the transcript shows it
	// running; release is swapped in by the scenario.
	var release atomic.Pointer[func()]
	srv := httptest.NewServer(api)
	defer srv.Close()
	fmt.Fprintf(out, "reference server: %s (OpenAPI at /openapi.json, MCP at /mcp)\n", srv.URL)

	var lose atomic.Bool // set to lose the next charge's response on the way back
	c, err := client.New(
		client.WithBaseURL(srv.URL),
		client.WithHTTPClient(&http.Client{Transport: lossy{&lose}}),
		// A real agent would show ch.Operation and ch.Args to a person here; the quickstart
		// approves, and the transcript records the approval.
		client.WithConfirmPolicy(client.ConfirmFunc(func(context.Context, *client.Challenge) (bool, error) {
			return true, nil
		})),
		client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) {
			transcript.Attempt(out, a)
			if f := release.Load(); a.Poll && f != nil {
				(*f)()
			}
		}}),
	)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := c.LoadOpenAPI(ctx, "/openapi.json")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "agent: %d operations loaded from the server's OpenAPI document\n", n)
	mc, err := personClient(ctx, srv.URL+"/mcp", out)
	if err != nil {
		return err
	}

	scenarios := []scenario{
		{title: "a wrong enum and a number as text", op: "create_invoice",
			args:   map[string]any{"customer_id": "cus_ada", "currency": "EUR", "amount": "1200"},
			effect: "create_invoice", expects: "the rewriter repairs both fields from the schema, before sending"},
		{title: "sending a draft", op: "send_invoice", args: map[string]any{"id": "in_1"},
			effect: "send_invoice", expects: "the server names finalize_invoice; the loop runs it, then sends"},
		{title: "a charge whose response is lost", op: "charge",
			args:   map[string]any{"customer_id": "cus_ada", "amount": 4200, "currency": "usd"},
			before: func(*billing.Store) { lose.Store(true) },
			effect: "charge", expects: "the retry carries the same Idempotency-Key: replayed, not charged twice"},
		{title: "a report that is being rebuilt", op: "revenue_report", args: map[string]any{"currency": "usd"},
			before:  func(s *billing.Store) { s.Busy(1) },
			expects: "503 with retry_after_ms: the loop waits that long and retries"},
		{title: "a destructive call", op: "delete_customer", args: map[string]any{"id": "cus_ada"},
			effect: "delete_customer", expects: "409 confirmation_required: the policy approves, the token goes back once"},
		{title: "an export that takes time", op: "export_invoices", args: map[string]any{"currency": "eur"},
			before: func(s *billing.Store) { f := s.HoldExports(); release.Store(&f) },
			effect: "export_invoices", expects: "202 Accepted: the loop polls the status resource after Retry-After, then returns the file"},
		{title: "a deletion a person confirms", op: "delete_customer", args: map[string]any{"id": "cus_grace"}, mcp: true,
			effect: "delete_customer", expects: "over MCP the server asks the person (elicitation); approved, it runs in the same call"},
	}
	type row struct {
		title, outcome string
		attempts       int
		effects        string
	}
	var rows []row
	for i, sc := range scenarios {
		fmt.Fprintf(out, "\n[%d] %s: %s %s\n    expected: %s\n", i+1, sc.title, sc.op, compact(sc.args), sc.expects)
		if sc.before != nil {
			sc.before(store)
		}
		before := store.Effects(sc.effect) // what earlier scenarios executed of the same operation
		call := c.Call
		if sc.mcp {
			call = mc.Call
		}
		resp, err := call(ctx, sc.op, sc.args)
		r := row{title: sc.title}
		if err != nil {
			var ce *client.CallError
			if !errors.As(err, &ce) {
				return err
			}
			r.outcome, r.attempts = "failed: "+ce.Cause.Error(), len(ce.Attempts)
			fmt.Fprintf(out, "    => %v\n", err)
		} else {
			r.outcome, r.attempts = fmt.Sprintf("%d", resp.Status), len(resp.Attempts)
			if resp.Replayed {
				r.outcome += " (replayed)"
			}
			fmt.Fprintf(out, "    => %d %s\n", resp.Status, bytes.TrimSpace(resp.Body))
		}
		if sc.effect != "" {
			r.effects = fmt.Sprintf("%s ×%d", sc.effect, store.Effects(sc.effect)-before)
		} else {
			r.effects = "none (read only)"
		}
		rows = append(rows, r)
	}

	fmt.Fprintln(out, "\nsummary")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  scenario\tattempts\toutcome\tside effects executed")
	for _, r := range rows {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\n", r.title, r.attempts, r.outcome, r.effects)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	want := map[string]int{"finalize_invoice": 1} // the prerequisite send_invoice names
	for _, sc := range scenarios {
		if sc.effect != "" {
			want[sc.effect]++
		}
	}
	for op, times := range want {
		if n := store.Effects(op); n != times {
			return fmt.Errorf("%s executed %d times, want %d (once per call)", op, n, times)
		}
	}
	fmt.Fprintln(out, "every side effect executed exactly once")
	return nil
}

// personClient is remedy's MCP client on the server's MCP endpoint, answering the server's
// questions to the person (MCP elicitation) through a ConfirmPolicy. The person is simulated
// (the quickstart runs without a terminal): the policy prints the question it was asked and
// approves; `remedy call --mcp` asks approve? [y/N] on a terminal instead.
func personClient(ctx context.Context, endpoint string, out io.Writer) (*mcp.Client, error) {
	person := client.ConfirmFunc(func(_ context.Context, ch *client.Challenge) (bool, error) {
		fmt.Fprintf(out, "    person (simulated, no TTY) asked by the server: %s %s? approve\n", ch.Operation, ch.Args)
		return true, nil
	})
	session, err := sdk.NewClient(&sdk.Implementation{Name: "quickstart", Version: "1"},
		&sdk.ClientOptions{ElicitationHandler: mcp.ElicitationHandler(person)}).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { session.Close() })
	return mcp.NewClient(ctx, session, client.WithConfirmPolicy(person), client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) { transcript.Attempt(out, a) }}))
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// lossy is an HTTP transport that, when told to, loses the response of the next charge after
// the server has executed it: the network failing at the worst moment.
type lossy struct{ lose *atomic.Bool }

func (l lossy) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.URL.Path == "/v1/charges" && l.lose.CompareAndSwap(true, false) {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, io.ErrUnexpectedEOF
	}
	return resp, err
}
