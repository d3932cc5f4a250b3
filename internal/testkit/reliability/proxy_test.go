package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/reliability"
	"github.com/remedy-go/remedy/server"
)

// transferIn is the input of the transfer operation the suite's upstream serves: call_id
// names the logical call, so that the upstream can tell a second execution of a call from
// another call.
type transferIn struct {
	CallID string `json:"call_id" schema:"minLength=1"`
	Amount int    `json:"amount" schema:"minimum=1"`
}

type transferOut struct {
	CallID    string `json:"call_id"`
	Execution int    `json:"execution"` // 1 for the call's first execution, 2 for a second...
}

// execLedger counts the executions of each logical call.
type execLedger struct {
	mu   sync.Mutex
	runs map[string]int
}

func (l *execLedger) record(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs[id]++
	return l.runs[id]
}

// Runs is how many times the call executed.
func (l *execLedger) Runs(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.runs[id]
}

// Total is how many executions there were, of all calls.
func (l *execLedger) Total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.runs {
		n += r
	}
	return n
}

// transferAPI is a reference server configured by apiOpts with one side effect, POST
// /v1/transfers (transfer), registered with opts (server.Idempotent(), or none to turn the
// guard off), whose executions the ledger counts. A duplicate of a request in flight waits for
// its twin's result for 20 s rather than the default 5 s before it is answered 409: the tests
// that expect the twin's result then do not depend on how fast the first copy ran.
func transferAPI(t testing.TB, apiOpts []server.Option, opts ...server.OpOption) (*server.API, *execLedger) {
	t.Helper()
	l := &execLedger{runs: map[string]int{}}
	api, err := server.New(append([]server.Option{server.WithInfo(server.Info{Title: "transfers", Version: "1"}),
		server.WithIdempotency(server.IdempotencyOptions{Wait: 20 * time.Second})}, apiOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	require.NoError(t, server.Post(api, "/v1/transfers", func(_ context.Context, in transferIn) (transferOut, error) {
		return transferOut{CallID: in.CallID, Execution: l.record(in.CallID)}, nil
	}, append([]server.OpOption{server.OperationID("transfer"), server.SuccessStatus(http.StatusCreated)}, opts...)...))
	return api, l
}

// seen is one request as it reached the upstream.
type seen struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// upstreamLog records the requests that reach the handler it wraps: what the server saw.
type upstreamLog struct {
	next http.Handler
	mu   sync.Mutex
	reqs []seen
}

func (u *upstreamLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.reqs = append(u.reqs, seen{r.Method, r.URL.Path, r.Header.Clone(), body})
	u.mu.Unlock()
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	u.next.ServeHTTP(w, r)
}

func (u *upstreamLog) Seen() []seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.reqs)
}

// proxyRig is a transfer API behind a proxy whose faults choose decides.
type proxyRig struct {
	proxy    *reliability.Proxy
	upstream *upstreamLog
	ledger   *execLedger
	client   *http.Client // a new connection per request, so that no fault is retried by net/http
}

func newProxyRig(t *testing.T, choose reliability.Chooser, cfg reliability.Config, opts ...server.OpOption) *proxyRig {
	t.Helper()
	api, l := transferAPI(t, nil, opts...)
	up := &upstreamLog{next: api}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	cfg.Upstream, cfg.Choose = srv.URL, choose
	p, err := reliability.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &proxyRig{proxy: p, upstream: up, ledger: l, client: &http.Client{Transport: tr, Timeout: 10 * time.Second}}
}

// transfer posts call id's transfer through the proxy with an Idempotency-Key.
func (r *proxyRig) transfer(t *testing.T, id, key string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.proxy.URL+"/v1/transfers", strings.NewReader(`{"call_id":"`+id+`","amount":5}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(remedy.HeaderIdempotencyKey, key)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// script faults the requests numbered in faults and passes the others.
func script(faults map[int64]reliability.Fault) reliability.Chooser {
	return func(n int64, _ *http.Request, _ []byte) reliability.Fault { return faults[n] }
}

func TestProxyPass(t *testing.T) {
	t.Parallel()
	rig := newProxyRig(t, nil, reliability.Config{}, server.Idempotent())
	resp, body, err := rig.transfer(t, "c1", "k1")
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	assert.JSONEq(t, `{"call_id":"c1","execution":1}`, string(body))
	seen := rig.upstream.Seen()
	require.Len(t, seen, 1)
	assert.Equal(t, "/v1/transfers", seen[0].Path)
	assert.Equal(t, "k1", seen[0].Header.Get(remedy.HeaderIdempotencyKey), "headers are forwarded")
	assert.JSONEq(t, `{"call_id":"c1","amount":5}`, string(seen[0].Body))
	c := rig.proxy.Counts()
	assert.Equal(t, int64(1), c.Requests)
	assert.Equal(t, int64(1), c.Forwarded)
	assert.Equal(t, int64(1), c.Injected[reliability.Pass])
	assert.Zero(t, c.Faulted())
}

func TestProxyDropLosesTheCommittedResponse(t *testing.T) {
	t.Parallel()
	rig := newProxyRig(t, script(map[int64]reliability.Fault{1: reliability.Drop}), reliability.Config{}, server.Idempotent())
	_, _, err := rig.transfer(t, "c1", "k1")
	require.Error(t, err, "the client gets no answer")
	assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF), "an orderly close before any answer: %v", err)
	assert.Len(t, rig.upstream.Seen(), 1, "the upstream saw the request")
	assert.Equal(t, 1, rig.ledger.Runs("c1"), "and executed it")

	// The retry an agent makes with the same key gets the stored result, not a second run.
	resp, body, err := rig.transfer(t, "c1", "k1")
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, "true", resp.Header.Get(remedy.HeaderReplayed))
	assert.JSONEq(t, `{"call_id":"c1","execution":1}`, string(body))
	assert.Equal(t, 1, rig.ledger.Runs("c1"))
	c := rig.proxy.Counts()
	assert.Equal(t, int64(1), c.Injected[reliability.Drop])
	assert.Equal(t, int64(2), c.Forwarded)
}

func TestProxyResetBeforeForwarding(t *testing.T) {
	t.Parallel()
	rig := newProxyRig(t, script(map[int64]reliability.Fault{1: reliability.Reset}), reliability.Config{}, server.Idempotent())
	_, _, err := rig.transfer(t, "c1", "k1")
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.ECONNRESET, "a reset, not an orderly close")
	assert.Empty(t, rig.upstream.Seen(), "the upstream never saw it")
	assert.Zero(t, rig.ledger.Runs("c1"))
	c := rig.proxy.Counts()
	assert.Equal(t, int64(1), c.Injected[reliability.Reset])
	assert.Zero(t, c.Forwarded)
}

func TestProxyDelay(t *testing.T) {
	t.Parallel()
	const maxDelay = 40 * time.Millisecond
	rig := newProxyRig(t, script(map[int64]reliability.Fault{1: reliability.Delay}), reliability.Config{MaxDelay: maxDelay}, server.Idempotent())
	start := time.Now()
	resp, body, err := rig.transfer(t, "c1", "k1")
	took := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	// A lower bound only: the delay is at least half of MaxDelay, however slow the machine.
	assert.GreaterOrEqual(t, took, maxDelay/2)
	assert.Len(t, rig.upstream.Seen(), 1)
	assert.Equal(t, 1, rig.ledger.Runs("c1"))
	assert.Equal(t, int64(1), rig.proxy.Counts().Injected[reliability.Delay])
}

func TestProxyUnavailableBurst(t *testing.T) {
	t.Parallel()
	burst := map[int64]reliability.Fault{2: reliability.Unavailable, 3: reliability.Unavailable, 4: reliability.Unavailable}
	rig := newProxyRig(t, script(burst), reliability.Config{RetryAfter: 7 * time.Millisecond}, server.Idempotent())
	var statuses []int
	for i := range 5 {
		resp, body, err := rig.transfer(t, fmt.Sprintf("c%d", i), fmt.Sprintf("k%d", i))
		require.NoError(t, err)
		statuses = append(statuses, resp.StatusCode)
		if resp.StatusCode != http.StatusServiceUnavailable {
			continue
		}
		assert.Equal(t, "unavailable", resp.Header.Get(reliability.HeaderFault))
		assert.Equal(t, "7", resp.Header.Get("Retry-After-Ms"))
		env, failed := remedy.Parse(resp.StatusCode, resp.Header, body)
		require.True(t, failed)
		assert.Equal(t, "unavailable", env.Code)
		assert.True(t, env.Retryable)
		assert.Equal(t, remedy.RetryFromBody, env.RetrySource)
		assert.Equal(t, 7*time.Millisecond, env.RetryAfter)
	}
	assert.Equal(t, []int{201, 503, 503, 503, 201}, statuses)
	seen := rig.upstream.Seen()
	require.Len(t, seen, 2, "the refused requests never reached the upstream")
	assert.Contains(t, string(seen[1].Body), `"c4"`)
	assert.Equal(t, int64(3), rig.proxy.Counts().Injected[reliability.Unavailable])
}

func TestProxyDuplicate(t *testing.T) {
	t.Parallel()
	dup := map[int64]reliability.Fault{1: reliability.Duplicate}
	t.Run("idempotent", func(t *testing.T) {
		t.Parallel()
		rig := newProxyRig(t, script(dup), reliability.Config{}, server.Idempotent())
		resp, body, err := rig.transfer(t, "c1", "k1")
		require.NoError(t, err)
		assert.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
		assert.JSONEq(t, `{"call_id":"c1","execution":1}`, string(body))
		seen := rig.upstream.Seen()
		require.Len(t, seen, 2, "the upstream got the request twice")
		assert.Equal(t, seen[0].Body, seen[1].Body)
		assert.Equal(t, seen[0].Header.Get(remedy.HeaderIdempotencyKey), seen[1].Header.Get(remedy.HeaderIdempotencyKey))
		assert.Equal(t, 1, rig.ledger.Runs("c1"), "the key made the copies one execution")
		c := rig.proxy.Counts()
		assert.Equal(t, int64(1), c.Injected[reliability.Duplicate])
		assert.Equal(t, int64(2), c.Forwarded)
	})
	t.Run("unguarded", func(t *testing.T) {
		t.Parallel()
		rig := newProxyRig(t, script(dup), reliability.Config{})
		resp, body, err := rig.transfer(t, "c1", "k1")
		require.NoError(t, err)
		assert.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
		assert.Len(t, rig.upstream.Seen(), 2)
		assert.Equal(t, 2, rig.ledger.Runs("c1"), "without the guard, both copies execute")
	})
}

func TestProxyOnlyFaultsWhatMatches(t *testing.T) {
	t.Parallel()
	always := func(int64, *http.Request, []byte) reliability.Fault { return reliability.Unavailable }
	onlyC2 := reliability.Only(func(_ *http.Request, body []byte) bool { return strings.Contains(string(body), `"c2"`) }, always)
	rig := newProxyRig(t, onlyC2, reliability.Config{}, server.Idempotent())
	for id, want := range map[string]int{"c1": 201, "c2": 503, "c3": 201} {
		resp, _, err := rig.transfer(t, id, "k-"+id)
		require.NoError(t, err)
		assert.Equal(t, want, resp.StatusCode, id)
	}
}

func TestProxyUpstreamDown(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	p, err := reliability.New(reliability.Config{Upstream: url})
	require.NoError(t, err)
	defer p.Close()
	resp, err := http.Post(p.URL+"/v1/transfers", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	assert.Equal(t, "upstream", resp.Header.Get(reliability.HeaderFault), "marked: not the server's own 5xx")
}

func TestNewRefusesWhatIsNotLoopback(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"http://example.com", "https://127.0.0.1:1", "http://10.0.0.1:80", "::"} {
		_, err := reliability.New(reliability.Config{Upstream: u})
		assert.Error(t, err, u)
	}
}

func TestRandomChooser(t *testing.T) {
	t.Parallel()
	const draws = 20_000
	sequence := func(c reliability.Chooser) []reliability.Fault {
		out := make([]reliability.Fault, draws)
		for i := range out {
			out[i] = c(int64(i+1), nil, nil)
		}
		return out
	}
	cfg := reliability.Random{Seed: 42, Rate: 0.2}
	a, b := sequence(cfg.Chooser()), sequence(cfg.Chooser())
	require.Equal(t, a, b, "the same seed gives the same faults")
	other := reliability.Random{Seed: 43, Rate: 0.2}
	assert.NotEqual(t, a, sequence(other.Chooser()))

	var counts [6]int
	longest, run := 0, 0
	for _, f := range a {
		counts[f]++
		if f == reliability.Unavailable {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	faulted := draws - counts[reliability.Pass]
	rate := float64(faulted) / draws
	assert.InDelta(t, 0.2, rate, 0.02, "the rate holds, bursts included")
	for _, k := range reliability.Kinds {
		share := float64(counts[k]) / float64(faulted)
		assert.InDelta(t, 0.2, share, 0.05, "%s has about its share of the faults", k)
	}
	assert.GreaterOrEqual(t, longest, 3, "unavailable comes in bursts")

	// Concurrent draws take the same decisions, in some order: the source is shared safely.
	c := cfg.Chooser()
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got []reliability.Fault
	)
	for range 8 {
		wg.Go(func() {
			var mine []reliability.Fault
			for range draws / 8 {
				mine = append(mine, c(0, nil, nil))
			}
			mu.Lock()
			got = append(got, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(got)
	want := slices.Clone(a)
	slices.Sort(want)
	assert.Equal(t, want, got)

	only := reliability.Random{Seed: 1, Rate: 1, Kinds: []reliability.Fault{reliability.Drop}}.Chooser()
	for range 100 {
		require.Equal(t, reliability.Drop, only(0, nil, nil))
	}
	none := reliability.Random{Seed: 1, Rate: 0}.Chooser()
	for range 100 {
		require.Equal(t, reliability.Pass, none(0, nil, nil))
	}
}

func TestFaultNames(t *testing.T) {
	t.Parallel()
	var names []string
	for _, k := range reliability.Kinds {
		names = append(names, k.String())
	}
	assert.Equal(t, []string{"drop", "reset", "delay", "unavailable", "duplicate"}, names)
	assert.Equal(t, "pass", reliability.Pass.String())
	c := reliability.Counts{Requests: 3, Forwarded: 2}
	c.Injected[reliability.Reset] = 1
	assert.Equal(t, "requests=3 forwarded=2 faulted=1 drop=0 reset=1 delay=0 unavailable=0 duplicate=0", c.String())
}
