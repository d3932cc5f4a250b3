package reliability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/reliability"
	"github.com/remedy-go/remedy/mcp"
	"github.com/remedy-go/remedy/server"
)

// The exactly-once tests run many logical calls through remedy's loop and the proxy, which
// faults a fifth of the attempts, and then hold each call's outcome against the upstream's
// ledger. What the contract promises, and so what they assert:
//
//   - no call executes twice, whatever was lost, reset, delayed, refused or delivered twice;
//   - a call that succeeds executed exactly once, and its result is that execution's;
//   - a call that fails returns a *client.CallError whose cause is a limit (attempts, elapsed
//     time, the retry budget, the deadline): every injected fault is transient, so giving up on
//     one as not retryable is a bug;
//   - a call that fails may have executed only when one of its attempts lost its response
//     (the client cannot know the outcome then); such calls are counted and reported.

// onceLimits bound every call: enough attempts that a fifth of them failing almost never
// exhausts a call, and short waits, so that thousands of calls take seconds.
var onceLimits = client.Limits{MaxAttempts: 12, MaxWait: 20 * time.Millisecond, MaxElapsed: 20 * time.Second}

func onceBackoff() backoff.BackOff {
	return backoff.NewExponentialBackOff(backoff.WithInitialInterval(time.Millisecond),
		backoff.WithMaxInterval(10*time.Millisecond), backoff.WithMaxElapsedTime(0))
}

// onceCaller makes one logical call through a loop.
type onceCaller func(ctx context.Context, in transferIn) (*client.Response, error)

// onceSurface connects a loop to the proxy's URL; onAttempt sees every attempt.
type onceSurface func(t *testing.T, url string, onAttempt func(*client.Attempt)) onceCaller

// restSurface calls transfer with client.Client. With fresh set, every request goes on a new
// connection, so that every fault reaches the loop; otherwise connections are pooled, as
// clients usually have them, and net/http itself resends a request whose reused connection
// failed (it may: the request carries an Idempotency-Key the operation is declared to
// honour), below the loop. The operation is declared to honour keys, as the server's OpenAPI
// document declares it: without that, a lost response would stop the call (outcome unknown).
func restSurface(fresh bool) onceSurface {
	return func(t *testing.T, url string, onAttempt func(*client.Attempt)) onceCaller {
		tr := &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second,
			DisableKeepAlives: fresh}
		t.Cleanup(tr.CloseIdleConnections)
		c, err := client.New(
			client.WithBaseURL(url),
			client.WithHTTPClient(&http.Client{Transport: tr}),
			client.WithOperations(client.Operation{Name: "transfer", Method: http.MethodPost, Path: "/v1/transfers",
				Keys: client.KeysHonoured}),
			client.WithLimits(onceLimits),
			client.WithBackoff(onceBackoff),
			client.WithRetryBudget(client.NewRetryBudget(100, 0.5)),
			client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) { onAttempt(a) }}),
		)
		require.NoError(t, err)
		return func(ctx context.Context, in transferIn) (*client.Response, error) {
			return c.Call(ctx, "transfer", in)
		}
	}
}

// mcpSurface calls the transfer tool with package mcp's client, over the server's /mcp.
func mcpSurface(t *testing.T, url string, onAttempt func(*client.Attempt)) onceCaller {
	tr := &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}
	t.Cleanup(tr.CloseIdleConnections)
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "exactly-once", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: tr},
			DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	c, err := mcp.NewClient(ctx, cs, client.WithLimits(onceLimits), client.WithBackoff(onceBackoff), client.WithRetryBudget(client.NewRetryBudget(100, 0.5)), client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) { onAttempt(a) }}))
	require.NoError(t, err)
	return func(ctx context.Context, in transferIn) (*client.Response, error) {
		return c.Call(ctx, "transfer", in)
	}
}

// mcpStateless serves MCP as instances behind a load balancer do: every HTTP request is a
// session of its own, so that a request delivered twice is two calls, each its own JSON-RPC
// exchange. (On a stateful session the go-sdk refuses the second copy of a request whose ID is
// in flight, 400 "duplicate in-flight request ID", and which copy's answer the client gets is
// a race.)
var mcpStateless = []server.Option{server.WithMCP(server.MCPOptions{Stateless: true})}

// isToolCall selects an MCP tools/call request, so that faults spare the session's handshake.
func isToolCall(r *http.Request, body []byte) bool {
	return r.Method == http.MethodPost && bytes.Contains(body, []byte(`"tools/call"`))
}

// onceRun is one exactly-once run.
type onceRun struct {
	calls, workers int
	seed           uint64
	rate           float64
	guard          []server.OpOption // the transfer's idempotency option; none turns the guard off
	apiOpts        []server.Option
	surface        onceSurface
	faultOnly      func(*http.Request, []byte) bool // nil: every request may be faulted
}

// onceReport is what a run observed.
type onceReport struct {
	calls, succeeded, failed int
	executedButFailed        int      // failed calls that had executed (a response was lost)
	duplicates               int      // calls executed more than once
	violations               []string // broken promises, the first few
	nViolations              int
	attempts, lostAttempts   int64 // attempts the loop made; those that got no response
	replayedAttempts         int64 // attempts answered with a stored result
	replayedCalls            int   // successes whose final answer was a replay
	executions               int
	proxy                    reliability.Counts
	elapsed                  time.Duration
}

func (r *onceReport) violate(format string, args ...any) {
	r.nViolations++
	if len(r.violations) < 10 {
		r.violations = append(r.violations, fmt.Sprintf(format, args...))
	}
}

func (r *onceReport) log(t *testing.T, name string) {
	t.Helper()
	t.Logf("%s: %d calls in %v (%.0f calls/s): %d succeeded, %d failed (%d of them had executed); duplicates %d",
		name, r.calls, r.elapsed.Round(time.Millisecond), float64(r.calls)/r.elapsed.Seconds(),
		r.succeeded, r.failed, r.executedButFailed, r.duplicates)
	t.Logf("%s: loop attempts %d (%.3f per call), %d without a response, %d answered by a replay; %d calls ended on a replay; %d executions",
		name, r.attempts, float64(r.attempts)/float64(r.calls), r.lostAttempts, r.replayedAttempts, r.replayedCalls, r.executions)
	t.Logf("%s: proxy %s (%.1f%% of requests faulted)", name, r.proxy,
		100*float64(r.proxy.Faulted())/float64(max(r.proxy.Requests, 1)))
}

// run makes the calls through the proxy from a bounded pool of workers, then judges each.
func (o onceRun) run(t *testing.T) *onceReport {
	t.Helper()
	api, ledger := transferAPI(t, o.apiOpts, o.guard...)
	up := httptest.NewServer(api)
	t.Cleanup(up.Close)
	choose := reliability.Random{Seed: o.seed, Rate: o.rate}.Chooser()
	if o.faultOnly != nil {
		choose = reliability.Only(o.faultOnly, choose)
	}
	p, err := reliability.New(reliability.Config{Upstream: up.URL, Choose: choose})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })

	var attempts, lost, replayed atomic.Int64
	call := o.surface(t, p.URL, func(a *client.Attempt) {
		attempts.Add(1)
		if a.Err != nil {
			lost.Add(1)
		}
		if a.Replayed {
			replayed.Add(1)
		}
	})
	before := p.Counts() // the MCP handshake's requests are not the run's

	type outcome struct {
		resp *client.Response
		err  error
	}
	outcomes := make([]outcome, o.calls)
	id := func(i int) string { return fmt.Sprintf("call-%d-%d", o.seed, i) }
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range o.workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= o.calls {
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				resp, err := call(ctx, transferIn{CallID: id(i), Amount: 1 + i%1000})
				cancel()
				outcomes[i] = outcome{resp, err}
			}
		})
	}
	wg.Wait()

	rep := &onceReport{calls: o.calls, elapsed: time.Since(start), attempts: attempts.Load(),
		lostAttempts: lost.Load(), replayedAttempts: replayed.Load(), executions: ledger.Total()}
	after := p.Counts()
	rep.proxy = reliability.Counts{Requests: after.Requests - before.Requests, Forwarded: after.Forwarded - before.Forwarded}
	for k := range after.Injected {
		rep.proxy.Injected[k] = after.Injected[k] - before.Injected[k]
	}
	for i, out := range outcomes {
		judgeCall(rep, id(i), out.resp, out.err, ledger.Runs(id(i)))
	}
	return rep
}

// judgeCall holds one call's outcome against what the upstream executed.
func judgeCall(rep *onceReport, id string, resp *client.Response, err error, runs int) {
	if runs > 1 {
		rep.duplicates++
		rep.violate("%s executed %d times", id, runs)
	}
	if err == nil {
		rep.succeeded++
		if resp.Replayed {
			rep.replayedCalls++
		}
		var out transferOut
		switch {
		case runs == 0:
			rep.violate("%s succeeded but never executed", id)
		case json.Unmarshal(resp.Body, &out) != nil:
			rep.violate("%s succeeded with a result that is not a transfer: %s", id, resp.Body)
		case out.CallID != id || out.Execution != 1:
			rep.violate("%s succeeded with the result of another execution: %s", id, resp.Body)
		}
		return
	}
	rep.failed++
	var ce *client.CallError
	if !errors.As(err, &ce) {
		rep.violate("%s failed with an untyped error: %v", id, err)
		return
	}
	if !errors.Is(ce.Cause, client.ErrAttemptsExhausted) && !errors.Is(ce.Cause, client.ErrElapsedBudget) &&
		!errors.Is(ce.Cause, client.ErrRetryBudget) && !errors.Is(ce.Cause, client.ErrDeadline) {
		rep.violate("%s gave up on a transient fault: %v", id, err)
	}
	if runs == 0 {
		return
	}
	rep.executedButFailed++
	for _, a := range ce.Attempts {
		if a.Err != nil {
			return // a response was lost: the outcome was unknowable
		}
	}
	rep.violate("%s executed, every attempt was answered, and yet it failed: %v", id, err)
}

// TestExactlyOnce: thousands of calls over REST, a fifth of their requests faulted, each
// executed at most once and, when it succeeds, exactly once. The runs are independent of every
// other test (their own server, proxy and client) and measure nothing of the process, so they
// run in parallel with the rest.
func TestExactlyOnce(t *testing.T) {
	t.Parallel()
	// 5,000 calls per connection mode: about 6,000 requests each, of which some 250 get each
	// kind of fault. (A fresh connection per request is costly: most of the time goes to
	// connecting and closing.)
	calls := 5_000
	if testing.Short() {
		calls = 1_000
	}
	for _, tc := range []struct {
		name  string
		fresh bool
		seed  uint64
	}{
		// Every request on a new connection: each fault reaches the loop as it happened.
		{"fresh connections", true, 8},
		// Pooled connections: net/http resends some requests whose connection failed, below
		// the loop, with the same key.
		{"pooled connections", false, 18},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := onceRun{calls: calls, workers: 16, seed: tc.seed, rate: 0.2,
				guard: []server.OpOption{server.RequireIdempotencyKey()}, surface: restSurface(tc.fresh)}.run(t)
			rep.log(t, "REST, "+tc.name)
			assertExactlyOnce(t, rep)
		})
	}
}

// assertExactlyOnce fails the test for every broken promise, and when the faults did not
// happen as configured (a run that injected nothing proves nothing).
func assertExactlyOnce(t *testing.T, rep *onceReport) {
	t.Helper()
	assert.Zero(t, rep.duplicates, "duplicate executions")
	assert.Zero(t, rep.nViolations, "broken promises, the first few: %q", rep.violations)
	assert.Equal(t, rep.succeeded, rep.executions-rep.executedButFailed, "executions are the successes, and the failures that had executed")
	// The faults are the seeded chooser's first Requests draws, whatever the timing (which
	// only decides which request gets which): for the seeds used, every prefix of more than
	// 210 draws holds these proportions.
	rate := float64(rep.proxy.Faulted()) / float64(rep.proxy.Requests)
	assert.InDelta(t, 0.2, rate, 0.05, "a fifth of the requests faulted")
	for _, k := range reliability.Kinds {
		assert.Greater(t, rep.proxy.Injected[k], rep.proxy.Requests/100, "%s was injected often enough to count", k)
	}
	assert.Greater(t, rep.replayedAttempts, int64(0), "lost responses came back as replays")
}

// TestExactlyOnceOverMCP: the same over MCP, through package mcp's client and the server's
// /mcp (stateless, as instances behind a load balancer), the faults sparing the handshake.
func TestExactlyOnceOverMCP(t *testing.T) {
	t.Parallel()
	calls := 1_000
	if testing.Short() {
		calls = 500
	}
	rep := onceRun{calls: calls, workers: 8, seed: 9, rate: 0.2, guard: []server.OpOption{server.Idempotent()},
		apiOpts: mcpStateless, surface: mcpSurface, faultOnly: isToolCall}.run(t)
	rep.log(t, "MCP")
	assertExactlyOnce(t, rep)
}

// A lost connection is transient however the transport wraps its error. Package mcp hands the
// loop the go-sdk's cause of a call that got no response joined (errors.Join), and a reset
// connection must then be retried as it is over HTTP.
func TestLostConnectionIsTransientThroughAJoin(t *testing.T) {
	t.Parallel()
	reset := &url.Error{Op: "Post", URL: "http://127.0.0.1:1/mcp",
		Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
	s := &client.State{Attempt: 1, SafeToRepeat: true, BudgetLeft: true, Backoff: time.Millisecond}
	for _, err := range []error{reset, fmt.Errorf("calling a tool: %w", reset), errors.Join(reset)} {
		d := client.Decide(nil, err, s)
		assert.Equal(t, client.ActRetry, d.Action, "%#v: %s", err, d.Why)
	}
}

// The suite can fail: the same run against a transfer registered without its idempotency
// guard executes calls twice, and the judge says so.
func TestExactlyOnceCatchesAMissingGuard(t *testing.T) {
	t.Parallel()
	rep := onceRun{calls: 400, workers: 8, seed: 10, rate: 0.2, surface: restSurface(true)}.run(t)
	rep.log(t, "unguarded")
	assert.Positive(t, rep.duplicates, "duplicate executions without the guard")
	assert.GreaterOrEqual(t, rep.nViolations, rep.duplicates, "every duplicate is reported")
}

// Each fault on its own, on a call's first requests, over each surface: the loop's answer and
// the executions.
func TestExactlyOnceEachFault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fault    reliability.Fault
		times    int64 // consecutive tool requests faulted
		attempts int   // the loop's attempts
		forwards int64 // requests the upstream saw
		replayed bool  // the call ends on a replay (a duplicate's answer may be either copy's)
	}{
		{reliability.Drop, 1, 2, 2, true},
		{reliability.Reset, 1, 2, 1, false},
		{reliability.Delay, 1, 1, 1, false},
		{reliability.Unavailable, 3, 4, 1, false},
		{reliability.Duplicate, 1, 1, 2, false},
		{reliability.Drop, 3, 4, 4, true},
	} {
		for _, sf := range []struct {
			name    string
			surface onceSurface
			apiOpts []server.Option
		}{{"REST", restSurface(false), nil}, {"MCP", mcpSurface, mcpStateless}} {
			t.Run(fmt.Sprintf("%s/%s×%d", sf.name, tc.fault, tc.times), func(t *testing.T) {
				t.Parallel()
				api, ledger := transferAPI(t, sf.apiOpts, server.Idempotent())
				up := httptest.NewServer(api)
				defer up.Close()
				var n atomic.Int64
				choose := reliability.Only(isTransfer, func(int64, *http.Request, []byte) reliability.Fault {
					if n.Add(1) <= tc.times {
						return tc.fault
					}
					return reliability.Pass
				})
				p, err := reliability.New(reliability.Config{Upstream: up.URL, Choose: choose})
				require.NoError(t, err)
				defer p.Close()
				var attempts []client.Attempt
				call := sf.surface(t, p.URL, func(a *client.Attempt) { attempts = append(attempts, *a) })
				before := p.Counts().Forwarded
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				resp, err := call(ctx, transferIn{CallID: "c1", Amount: 5})
				require.NoError(t, err)
				var out transferOut
				require.NoError(t, json.Unmarshal(resp.Body, &out), "%s", resp.Body)
				assert.Equal(t, transferOut{CallID: "c1", Execution: 1}, out)
				assert.Equal(t, 1, ledger.Runs("c1"), "executed once")
				assert.Len(t, attempts, tc.attempts)
				if tc.fault != reliability.Duplicate {
					assert.Equal(t, tc.replayed, resp.Replayed)
				}
				keys := map[string]bool{}
				for _, a := range attempts {
					keys[a.IdempotencyKey] = true
				}
				assert.Len(t, keys, 1, "every attempt carried the call's one key")
				c := p.Counts()
				assert.Equal(t, tc.times, c.Injected[tc.fault])
				assert.Equal(t, tc.forwards, c.Forwarded-before)
			})
		}
	}
}

// isTransfer selects the requests that run a transfer: POST /v1/transfers, or an MCP call of
// the transfer tool.
func isTransfer(r *http.Request, body []byte) bool {
	return r.URL.Path == "/v1/transfers" || isToolCall(r, body)
}
