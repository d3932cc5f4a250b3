package reliability_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/internal/testkit/reliability"
)

// loadEvery is how often the proxy answers 503 in the load test: every loadEvery-th request.
const loadEvery = 97

// loadRequest is one request of the load mix and the status the billing API answers it with.
type loadRequest struct {
	name   string
	method string
	path   string
	body   string
	key    string
	want   int
}

// loadMix is the i-th request worker w sends: writes with and without keys, a replay, a
// validation failure, a miss, reads and the OpenAPI document.
func loadMix(w, i int) loadRequest {
	key := fmt.Sprintf("w%d-%d", w, i/2) // two consecutive charges share a key: the second is a replay
	switch i % 12 {
	case 0, 1:
		return loadRequest{"charge", "POST", "/v1/charges", `{"customer_id":"cus_ada","amount":1200,"currency":"usd"}`, key, 201}
	case 2, 3:
		return loadRequest{"create_invoice", "POST", "/v1/invoices", `{"customer_id":"cus_ada","currency":"eur","amount":300}`, "", 201}
	case 4, 5:
		return loadRequest{"invalid_invoice", "POST", "/v1/invoices", `{"customer_id":"ada","currency":"EUR","amount":"300"}`, "", 422}
	case 6, 7:
		return loadRequest{"revenue_report", "GET", "/v1/reports/revenue?currency=usd", "", "", 200}
	case 8, 9:
		return loadRequest{"get_invoice_missing", "GET", "/v1/invoices/in_999999999", "", "", 404}
	case 10:
		return loadRequest{"charge_without_key", "POST", "/v1/charges", `{"customer_id":"cus_ada","amount":100,"currency":"usd"}`, "", 400}
	default:
		if i%120 == 11 {
			return loadRequest{"openapi", "GET", "/openapi.json", "", "", 200}
		}
		return loadRequest{"unknown_route", "GET", "/v1/nothing", "", "", 404}
	}
}

// loadTally is what one worker saw.
type loadTally struct {
	requests, injected, serverErrors, unexpected, transportErrors, replays int
	latencies                                                              []time.Duration
	samples                                                                []string // the first few surprises
}

func (t *loadTally) surprise(format string, args ...any) {
	if len(t.samples) < 5 {
		t.samples = append(t.samples, fmt.Sprintf(format, args...))
	}
}

// TestLoad runs the billing API behind the proxy under concurrent clients, each sending a
// fixed number of requests: no 5xx but the ones the proxy injects, every answer the one the
// request calls for, the heap bounded, and no goroutine left once the servers are closed.
// Throughput and latency are reported, not asserted. It does not run in parallel: it measures
// the whole process.
func TestLoad(t *testing.T) {
	// A count, not a duration: what the load holds (charges, idempotency records, injected
	// 503s) is then the same on every machine, and the heap bound means the same.
	const workers = 32
	perWorker := 120 // ten rounds of the mix, the OpenAPI document once
	if testing.Short() {
		perWorker = 24
	}
	goroutinesBefore := runtime.NumGoroutine()
	heapBefore := heapInUse()

	var (
		tallies     = make([]loadTally, workers)
		counts      reliability.Counts
		heapLoaded  uint64
		charges     int
		elapsed     time.Duration
		goroutinesX int // at the height of the load
	)
	func() { // everything the load holds lives in here, so that it is garbage once it returns
		api, store, err := billing.New()
		require.NoError(t, err)
		up := httptest.NewServer(api)
		defer up.Close()
		p, err := reliability.New(reliability.Config{Upstream: up.URL,
			Choose: func(n int64, _ *http.Request, _ []byte) reliability.Fault {
				if n%loadEvery == 0 {
					return reliability.Unavailable
				}
				return reliability.Pass
			}})
		require.NoError(t, err)
		defer p.Close()
		tr := &http.Transport{MaxIdleConns: 2 * workers, MaxIdleConnsPerHost: 2 * workers, IdleConnTimeout: 30 * time.Second}
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}

		var sent atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for w := range workers {
			wg.Go(func() {
				tally := &tallies[w]
				for i := range perWorker {
					loadOne(hc, p.URL, loadMix(w, i), tally)
					if sent.Add(1) == workers*int64(perWorker)/2 {
						goroutinesX = runtime.NumGoroutine()
					}
				}
			})
		}
		wg.Wait()
		elapsed = time.Since(start)
		counts, charges = p.Counts(), store.Effects("charge")
		heapLoaded = heapInUse() // the store's charges and idempotency records are still held here
	}()

	var total loadTally
	for _, tl := range tallies {
		total.requests += tl.requests
		total.injected += tl.injected
		total.serverErrors += tl.serverErrors
		total.unexpected += tl.unexpected
		total.transportErrors += tl.transportErrors
		total.replays += tl.replays
		total.latencies = append(total.latencies, tl.latencies...)
		for _, s := range tl.samples {
			total.surprise("%s", s)
		}
	}
	slices.Sort(total.latencies)
	pct := func(p float64) time.Duration {
		if len(total.latencies) == 0 {
			return 0
		}
		return total.latencies[min(len(total.latencies)-1, int(p*float64(len(total.latencies))))]
	}
	t.Logf("load: %d workers for %v: %d requests, %.0f requests/s; latency p50 %v p90 %v p99 %v p99.9 %v max %v",
		workers, elapsed.Round(time.Millisecond), total.requests, float64(total.requests)/elapsed.Seconds(),
		pct(0.50), pct(0.90), pct(0.99), pct(0.999), pct(1))
	t.Logf("load: injected 503s %d (proxy: %s); server 5xx %d; unexpected answers %d; transport errors %d; replays %d; charges executed %d",
		total.injected, counts, total.serverErrors, total.unexpected, total.transportErrors, total.replays, charges)

	assert.Zero(t, total.serverErrors, "5xx from the server itself: %q", total.samples)
	assert.Zero(t, total.unexpected, "answers other than the request calls for: %q", total.samples)
	assert.Zero(t, total.transportErrors, "requests without an answer: %q", total.samples)
	assert.Equal(t, int(counts.Injected[reliability.Unavailable]), total.injected, "every injected 503 was seen as one")
	assert.Positive(t, total.injected, "503s were injected")
	assert.Positive(t, total.replays, "keyed charges were replayed")

	goroutinesAfter, settled := goroutinesSettle(goroutinesBefore, 10*time.Second)
	heapAfter := heapInUse()
	t.Logf("load: heap in use %s before, %s under load (%s retained by the API), %s after; goroutines %d before, %d under load, %d after",
		mib(heapBefore), mib(heapLoaded), mibDelta(heapLoaded, heapBefore), mib(heapAfter),
		goroutinesBefore, goroutinesX, goroutinesAfter)
	const bound = 64 << 20
	assert.Less(t, int64(heapLoaded)-int64(heapBefore), int64(bound), "the heap under load grew by more than 64 MiB")
	assert.Less(t, int64(heapAfter)-int64(heapBefore), int64(bound), "the heap grew by more than 64 MiB once the servers were gone")
	if !settled {
		var buf bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&buf, 1)
		dump := buf.String()
		if len(dump) > 8000 {
			dump = dump[:8000] + "\n..."
		}
		t.Errorf("goroutines left behind: %d before the load, %d after closing everything:\n%s", goroutinesBefore, goroutinesAfter, dump)
	}
}

// loadOne sends one request of the mix and tallies its answer.
func loadOne(hc *http.Client, base string, lr loadRequest, tally *loadTally) {
	var body io.Reader
	if lr.body != "" {
		body = strings.NewReader(lr.body)
	}
	req, err := http.NewRequest(lr.method, base+lr.path, body)
	if err != nil {
		panic(err)
	}
	if lr.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if lr.key != "" {
		req.Header.Set(remedy.HeaderIdempotencyKey, lr.key)
	}
	start := time.Now()
	resp, err := hc.Do(req)
	tally.requests++
	if err != nil {
		tally.transportErrors++
		tally.surprise("%s: %v", lr.name, err)
		return
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	tally.latencies = append(tally.latencies, time.Since(start))
	switch {
	case resp.Header.Get(reliability.HeaderFault) == reliability.Unavailable.String():
		tally.injected++
	case resp.StatusCode >= 500:
		tally.serverErrors++
		tally.surprise("%s: %d %s", lr.name, resp.StatusCode, b)
	case resp.StatusCode != lr.want:
		tally.unexpected++
		tally.surprise("%s: %d, want %d: %s", lr.name, resp.StatusCode, lr.want, b)
	case resp.Header.Get(remedy.HeaderReplayed) == "true":
		tally.replays++
	}
}

// heapInUse is the heap in use after two collections: the second empties what sync.Pools
// kept aside in the first, which is garbage but not yet collected.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// goroutinesSettle polls until at most baseline goroutines run, or the timeout passes.
func goroutinesSettle(baseline int, timeout time.Duration) (int, bool) {
	deadline := time.Now().Add(timeout)
	for {
		n := runtime.NumGoroutine()
		if n <= baseline {
			return n, true
		}
		if time.Now().After(deadline) {
			return n, false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func mibDelta(a, b uint64) string { return fmt.Sprintf("%+.1f MiB", (float64(a)-float64(b))/(1<<20)) }
