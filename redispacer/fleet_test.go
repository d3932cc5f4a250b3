package redispacer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/redistest"
	"github.com/remedy-go/remedy/redispacer"
)

// The test of this file runs a fleet: two processes (this test binary again, in a child mode),
// each a Client making concurrent calls with one API key, into one loopback API that allows
// fleetLimit requests per fleetWindow per key and answers 429 with when to come back. The
// server judges: every call completes, and with the processes sharing a redispacer no request
// arrives after a refusal announced a reset still ahead; with a MemoryPacer in each process
// they do not pace each other.

// fleetChildEnv carries a child's configuration, as JSON; a test binary started with it set
// runs TestFleetChild as the child and nothing else.
const fleetChildEnv = "REMEDY_REDISPACER_FLEET_CHILD"

const (
	fleetLimit   = 20                 // requests per window per key
	fleetWindow  = time.Second        // fixed windows from the server's start
	fleetKey     = "Bearer fleet-key" // the API key both processes share
	sentAtHeader = "X-Sent-At"        // when the child's transport began the request, Unix ns
	warmPath     = "/warm"            // not counted: a child opens its connections with it
)

// fleetProcesses are the two processes: a busy one, whose callers call again at once, and an
// occasional one, whose callers think between calls; so that, when the busy one is refused,
// the occasional one has not been yet, and only a pacer they share holds it.
var fleetProcesses = []struct {
	Callers, Calls int
	Think          time.Duration
}{
	{Callers: 4, Calls: 20},
	{Callers: 2, Calls: 10, Think: 400 * time.Millisecond}, // as long as the busy one: 4 s
}

// fleetChild is the configuration of one child process.
type fleetChild struct {
	URL, Redis, Prefix string
	Callers, Calls     int
	Think              time.Duration
	Shared             bool   // a redispacer; false: a MemoryPacer of its own
	Result             string // where the child writes its fleetResult
}

// fleetResult is what a child reports.
type fleetResult struct {
	Completed, Failed int
	Errors            []string      // the first few
	MaxPacer          time.Duration // the longest Take or Learn
}

// arrival is one request as the server saw it.
type arrival struct {
	At, SentAt time.Time
	Refused    bool
	Reset      time.Time // a refusal's announced reset: when it answered, plus the wait it stated
}

// limitedAPI is the loopback API: fixed windows per key, 429 with Retry-After-Ms (and
// Retry-After, rounded up to a second) to the end of the window.
type limitedAPI struct {
	start time.Time
	mu    sync.Mutex
	count map[string]int // key and window → requests
	log   []arrival
}

func (a *limitedAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == warmPath {
		return
	}
	now := time.Now()
	var sent time.Time
	if ns, err := strconv.ParseInt(r.Header.Get(sentAtHeader), 10, 64); err == nil {
		sent = time.Unix(0, ns)
	}
	window := int(now.Sub(a.start) / fleetWindow)
	a.mu.Lock()
	k := r.Header.Get("Authorization") + "/" + strconv.Itoa(window)
	a.count[k]++
	refused := a.count[k] > fleetLimit
	rec := arrival{At: now, SentAt: sent, Refused: refused}
	if refused {
		wait := a.start.Add(time.Duration(window+1) * fleetWindow).Sub(now)
		ms := (wait + time.Millisecond - 1) / time.Millisecond
		rec.Reset = time.Now().Add(ms * time.Millisecond)
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(int64(ms), 10))
		w.Header().Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
	}
	a.log = append(a.log, rec)
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if refused {
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"code":"rate_limited","message":"too many requests","retryable":true}}`)
		return
	}
	fmt.Fprint(w, `{"ok":true}`)
}

// fleetFigures are the server's judgement of one run.
type fleetFigures struct {
	Requests, Refused int
	// Early counts the requests that arrived more than Tolerance after a refusal was answered
	// and before the reset it announced: sent after the fleet could know it.
	Early int
	// Tolerance: the longest time a request was in flight (sent to arrival, by the one clock
	// of this machine) twice, for the refusal's way back and the request's way there, plus
	// the longest pacer call twice, for the Hold that shares the refusal and the Until that
	// reads it. A request sent before the fleet knew can arrive that late, not later.
	Tolerance           time.Duration
	MaxFlight, MaxPacer time.Duration
	Elapsed             time.Duration
}

func (a *limitedAPI) figures(maxPacer time.Duration) fleetFigures {
	a.mu.Lock()
	defer a.mu.Unlock()
	f := fleetFigures{Requests: len(a.log), MaxPacer: maxPacer}
	var refusals []arrival
	first, last := a.log[0].At, a.log[0].At
	for _, r := range a.log {
		if r.Refused {
			f.Refused++
			refusals = append(refusals, r)
		}
		if !r.SentAt.IsZero() {
			f.MaxFlight = max(f.MaxFlight, r.At.Sub(r.SentAt))
		}
		if r.At.Before(first) {
			first = r.At
		}
		if r.At.After(last) {
			last = r.At
		}
	}
	f.Elapsed = last.Sub(first)
	f.Tolerance = 2*f.MaxFlight + 2*maxPacer
	for _, r := range a.log {
		if slices.ContainsFunc(refusals, func(x arrival) bool {
			return r.At.After(x.At.Add(f.Tolerance)) && r.At.Before(x.Reset)
		}) {
			f.Early++
		}
	}
	return f
}

func TestFleet(t *testing.T) {
	if os.Getenv(fleetChildEnv) != "" {
		t.Skip("a child of TestFleet")
	}
	t.Parallel()
	addr := redistest.Start(t)
	run := func(t *testing.T, shared bool) (fleetFigures, []fleetResult) {
		api := &limitedAPI{start: time.Now(), count: map[string]int{}}
		srv := httptest.NewServer(api)
		defer srv.Close()
		prefix := redistest.Prefix()
		dir := t.TempDir()
		results := make([]fleetResult, len(fleetProcesses))
		var wg sync.WaitGroup
		for i, proc := range fleetProcesses {
			cfg := fleetChild{URL: srv.URL, Redis: addr, Prefix: prefix, Shared: shared,
				Callers: proc.Callers, Calls: proc.Calls, Think: proc.Think,
				Result: fmt.Sprintf("%s/child%d.json", dir, i)}
			wg.Go(func() {
				b, _ := json.Marshal(cfg)
				cmd := exec.Command(os.Args[0], "-test.run=^TestFleetChild$", "-test.count=1", "-test.v")
				cmd.Env = append(os.Environ(), fleetChildEnv+"="+string(b))
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Errorf("child %d: %v\n%s", i, err, out)
					return
				}
				b, err = os.ReadFile(cfg.Result)
				if err != nil {
					t.Errorf("child %d: %v\n%s", i, err, out)
					return
				}
				if err := json.Unmarshal(b, &results[i]); err != nil {
					t.Errorf("child %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		return api.figures(max(results[0].MaxPacer, results[1].MaxPacer)), results
	}

	calls := 0
	for _, proc := range fleetProcesses {
		calls += proc.Callers * proc.Calls
	}
	report := func(name string, f fleetFigures, results []fleetResult) {
		t.Logf("%s: %d calls, %d completed, %d requests, %d refused with 429, %d sent after a refusal had announced a reset still ahead (tolerance %v: in flight up to %v, pacer calls up to %v), in %v",
			name, calls, results[0].Completed+results[1].Completed, f.Requests, f.Refused, f.Early,
			f.Tolerance, f.MaxFlight, f.MaxPacer, f.Elapsed.Round(time.Millisecond))
	}

	shared, sharedResults := run(t, true)
	report("redispacer shared by the two processes", shared, sharedResults)
	memory, memoryResults := run(t, false)
	report("a MemoryPacer in each process", memory, memoryResults)

	for i, r := range sharedResults {
		assert.Equal(t, fleetProcesses[i].Callers*fleetProcesses[i].Calls, r.Completed, "child %d completes every call with the shared pacer: %v", i, r.Errors)
	}
	assert.Zero(t, shared.Early, "requests sent after a refusal had announced a reset still ahead, the pacer shared")
	assert.Greater(t, memory.Early, 0, "with a pacer per process, one process sends while the other's refusal holds")
}

// TestFleetChild is one process of TestFleet's fleet; it does nothing unless fleetChildEnv is
// set.
func TestFleetChild(t *testing.T) {
	cfgJSON := os.Getenv(fleetChildEnv)
	if cfgJSON == "" {
		t.Skip("run by TestFleet")
	}
	var cfg fleetChild
	require.NoError(t, json.Unmarshal([]byte(cfgJSON), &cfg))
	p := &timedPacer{}
	if cfg.Shared {
		c := redis.NewClient(&redis.Options{Addr: cfg.Redis})
		defer c.Close()
		rp := redispacer.New(c, redispacer.Options{Prefix: cfg.Prefix})
		require.NoError(t, rp.Load(context.Background())) // and a connection open
		p.Pacer = rp
	} else {
		p.Pacer = client.NewPacer()
	}
	call := fleetCaller(t, cfg, p)

	var res fleetResult
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range cfg.Callers {
		wg.Go(func() {
			for i := range cfg.Calls {
				if i > 0 {
					time.Sleep(cfg.Think) // the caller's own work between calls
				}
				err := call(context.Background())
				mu.Lock()
				if err != nil {
					res.Failed++
					if len(res.Errors) < 5 {
						res.Errors = append(res.Errors, err.Error())
					}
				} else {
					res.Completed++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.MaxPacer = time.Duration(p.max.Load())
	b, err := json.Marshal(res)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg.Result, b, 0o644))
}

// timedPacer keeps the duration of its longest call, for the tolerance of TestFleet.
type timedPacer struct {
	client.Pacer
	max atomic.Int64
}

func (p *timedPacer) took(start time.Time) {
	d := int64(time.Since(start))
	for {
		old := p.max.Load()
		if d <= old || p.max.CompareAndSwap(old, d) {
			return
		}
	}
}

func (p *timedPacer) Take(ctx context.Context, key string) (time.Time, error) {
	defer p.took(time.Now())
	return p.Pacer.Take(ctx, key)
}

func (p *timedPacer) Learn(ctx context.Context, key string, l client.Limit) error {
	defer p.took(time.Now())
	return p.Pacer.Learn(ctx, key, l)
}

// fleetCaller returns the call of a child: a Client with the defaults but for p and its HTTP
// client, which carries the API key and stamps each request with when its sending began.
func fleetCaller(t *testing.T, cfg fleetChild, p client.Pacer) func(ctx context.Context) error {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2 * cfg.Callers
	hc := &http.Client{Transport: stampSent{tr}}
	warm(t, hc, cfg.URL, cfg.Callers)
	c, err := client.New(
		client.WithBaseURL(cfg.URL),
		client.WithHTTPClient(hc),
		client.WithOperations(client.Operation{Name: "work", Method: http.MethodGet, Path: "/v1/work"}),
		client.WithPacer(p),
	)
	require.NoError(t, err)
	return func(ctx context.Context) error {
		_, err := c.Call(ctx, "work", json.RawMessage(`{}`))
		return err
	}
}

// stampSent sets the API key and stamps each request with when its sending began.
type stampSent struct{ next http.RoundTripper }

func (s stampSent) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", fleetKey)
	r.Header.Set(sentAtHeader, strconv.FormatInt(time.Now().UnixNano(), 10))
	return s.next.RoundTrip(r)
}

// warm opens the connections of the child's callers, so that the times measured for the
// tolerance are those of a running client, not of its first dials.
func warm(t *testing.T, hc *http.Client, url string, callers int) {
	t.Helper()
	var wg sync.WaitGroup
	for range 2 * callers {
		wg.Go(func() {
			resp, err := hc.Get(url + warmPath)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
}
