package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remedy-go/remedy/client"
)

// pacingFlag picks the workload BenchmarkPacing runs: quick (the default, a few seconds per
// contender) or full (the 500 calls, ~10 s per contender). The report passes it.
var pacingFlag = flag.String("pacing", "quick", "BenchmarkPacing's workload: quick or full")

// pacingScale is one workload: callers making calls each, all with one API key, into a server
// that admits limit requests per window of that key.
type pacingScale struct {
	Name           string
	Callers, Calls int
	Limit          int
	Window         time.Duration
}

// The full workload is issue 38's; the quick one keeps its shape — as many callers as one
// window admits, all starting at once, calls that take several windows — on four windows
// instead of ten, so that it runs in seconds. Windows stay one second long in both: Retry-After
// and the RateLimit fields state whole seconds, and a shorter window would make every
// announced wait longer than the window itself.
var pacingScales = map[string]pacingScale{
	"full":  {Name: "full", Callers: 50, Calls: 10, Limit: 50, Window: time.Second},
	"quick": {Name: "quick", Callers: 25, Calls: 4, Limit: 25, Window: time.Second},
}

// Floor is the time the server's limit needs to serve every call, as the issue counts it.
func (s pacingScale) Floor() time.Duration {
	return time.Duration(float64(s.Callers*s.Calls) / float64(s.Limit) * float64(s.Window))
}

// benchAPIKey is the one key every caller uses: the server limits per key.
const benchAPIKey = "sk-bench-shared"

// seqHeader carries the number the client side gives each request, so that what the server
// saw of a request and what the client did with its answer can be put together.
const seqHeader = "X-Bench-Seq"

// limitServer admits Limit requests per fixed window per API key and refuses the others with
// 429 and Retry-After: the seconds until the window ends, rounded up, as servers state them.
// With rateLimitFields it also states the limit on every answer, in the IETF draft's
// structured fields (RateLimit-Policy, RateLimit) and in the older RateLimit-Limit,
// -Remaining and -Reset, with the same whole seconds. It states no Retry-After-Ms and no
// retry_after_ms in the body: the server says Retry-After, and a millisecond figure
// only remedy reads would measure the header rather than the pacing.
type limitServer struct {
	scale           pacingScale
	rateLimitFields bool
	start           time.Time // windows are counted from here

	mu      sync.Mutex
	windows map[string]fixedWindow
	seen    map[int64]served // by seqHeader
}

type fixedWindow struct {
	index int64
	used  int
}

// served is what the server did with one request, in time since start.
type served struct {
	arrived time.Duration
	status  int
	reset   time.Duration // for a refusal: the time its Retry-After announced
}

func newLimitServer(scale pacingScale, rateLimitFields bool) *limitServer {
	return &limitServer{scale: scale, rateLimitFields: rateLimitFields, start: time.Now(),
		windows: map[string]fixedWindow{}, seen: map[int64]served{}}
}

var tooMany = []byte(`{"type":"about:blank","title":"Too Many Requests","status":429,"detail":"Rate limit of this API key reached."}`)

func (s *limitServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	key := r.Header.Get("Authorization")
	seq, _ := strconv.ParseInt(r.Header.Get(seqHeader), 10, 64)

	s.mu.Lock()
	now := time.Since(s.start)
	index := int64(now / s.scale.Window)
	win := s.windows[key]
	if win.index != index {
		win = fixedWindow{index: index}
	}
	admitted := win.used < s.scale.Limit
	if admitted {
		win.used++
	}
	s.windows[key] = win
	end := time.Duration(index+1) * s.scale.Window
	resetSeconds := int64(math.Ceil((end - now).Seconds()))
	rec := served{arrived: now, status: http.StatusOK}
	if !admitted {
		rec.status = http.StatusTooManyRequests
		rec.reset = now + time.Duration(resetSeconds)*time.Second
	}
	s.seen[seq] = rec
	s.mu.Unlock()

	h := w.Header()
	if s.rateLimitFields {
		remaining := s.scale.Limit - win.used
		window := int64(s.scale.Window / time.Second)
		h.Set("RateLimit-Policy", fmt.Sprintf(`"per-key";q=%d;w=%d`, s.scale.Limit, window))
		h.Set("RateLimit", fmt.Sprintf(`"per-key";r=%d;t=%d`, remaining, resetSeconds))
		h.Set("RateLimit-Limit", strconv.Itoa(s.scale.Limit))
		h.Set("RateLimit-Remaining", strconv.Itoa(remaining))
		h.Set("RateLimit-Reset", strconv.FormatInt(resetSeconds, 10))
	}
	if !admitted {
		h.Set("Retry-After", strconv.FormatInt(resetSeconds, 10))
		h.Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write(tooMany)
		return
	}
	h.Set("Content-Type", "application/json")
	w.Write(orderResult)
}

// sent is what the client side saw of one request, in time since the server's start.
type sent struct {
	at       time.Duration // when the client handed it to the transport
	decided  time.Duration // when the client last found the origin clear before it (see attemptTrace), or at
	returned time.Duration // for a refusal: when the transport handed its answer to the client
	known    time.Duration // for a refusal: when the client had read and closed its answer, and its pacer held what it said
}

// watchTransport is the client side of the workload, under every contender: it adds the API
// key (as an authenticating transport would) and the request's number, and notes when each
// request was sent and when each refusal had been read.
type watchTransport struct {
	next  http.RoundTripper
	start time.Time
	seq   atomic.Int64

	mu   sync.Mutex
	sent map[int64]*sent
}

func (t *watchTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	seq := t.seq.Add(1)
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+benchAPIKey)
	req.Header.Set(seqHeader, strconv.FormatInt(seq, 10))
	rec := &sent{at: time.Since(t.start)}
	rec.decided = rec.at
	if tr, ok := req.Context().Value(attemptTraceKey{}).(*attemptTrace); ok {
		tr.mu.Lock()
		if tr.clear {
			rec.decided, tr.clear = tr.clearAt, false
		}
		tr.last = rec
		tr.mu.Unlock()
	}
	t.mu.Lock()
	t.sent[seq] = rec
	t.mu.Unlock()
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		return resp, err
	}
	t.mu.Lock()
	rec.returned = time.Since(t.start)
	t.mu.Unlock()
	resp.Body = &noteClose{ReadCloser: resp.Body, close: func() {
		t.mu.Lock()
		if rec.known == 0 {
			rec.known = time.Since(t.start)
		}
		t.mu.Unlock()
	}}
	return resp, nil
}

// attemptTrace notes, for one call, when its client last asked its pacer and found the origin
// clear: a request sent after that was decided before it, and if a refusal was read in
// between, the request was in flight — on its way to the wire — when the client learnt of it.
// A client that read a hold and slept on it without asking again decided nothing after its
// sleep: its request counts as decided when it was sent. A client with no pacer decides when
// it sends.
//
// A refusal is known to a client with a pacer once the pacer holds what it said, not before:
// its Learn has returned. For a pacer in memory that is at once; for one in Redis, the other
// client (as another process would) can learn of the refusal from Redis alone, a round trip
// after its answer was read.
type attemptTrace struct {
	mu      sync.Mutex
	clear   bool
	clearAt time.Duration
	last    *sent // the request the call sent last
}

type attemptTraceKey struct{}

// tracePacer is a pacer that notes, in the call's attemptTrace, when it found the origin
// clear, and in the watch when it held what a refusal said.
type tracePacer struct {
	client.Pacer
	start time.Time
	watch *watchTransport
}

func (p tracePacer) Learn(ctx context.Context, key string, l client.Limit) error {
	err := p.Pacer.Learn(ctx, key, l)
	if tr, ok := ctx.Value(attemptTraceKey{}).(*attemptTrace); ok && !l.Until.IsZero() {
		now := time.Since(p.start)
		tr.mu.Lock()
		rec := tr.last
		tr.mu.Unlock()
		if rec != nil {
			p.watch.mu.Lock()
			if rec.returned != 0 && rec.known < now {
				rec.known = now
			}
			p.watch.mu.Unlock()
		}
	}
	return err
}

// Take notes the time it was asked: what the pacer answers, it decided after that (in Redis,
// somewhere in the round trip), and a refusal it could not yet hold then does not count
// against it.
func (p tracePacer) Take(ctx context.Context, key string) (time.Time, error) {
	asked := time.Since(p.start)
	until, err := p.Pacer.Take(ctx, key)
	if tr, ok := ctx.Value(attemptTraceKey{}).(*attemptTrace); ok {
		tr.mu.Lock()
		tr.clear = err == nil && until.IsZero()
		tr.clearAt = asked
		tr.mu.Unlock()
	}
	return until, err
}

type noteClose struct {
	io.ReadCloser
	close func()
}

func (n *noteClose) Close() error {
	err := n.ReadCloser.Close()
	n.close()
	return err
}

// pacingFigures are the figures of one run of the workload.
type pacingFigures struct {
	Calls, Completed int
	Requests         int // as the server counted them
	Sent             int // as the client side counted them
	OK, Refused      int
	AfterReset       int // requests sent after a refusal the client had read announced a reset still ahead
	Unclosed         int // refusals the client never closed: known from when the transport returned them
	Total, Floor     time.Duration
	Errors           []string // the first few calls that failed, and why
}

// pacingContender makes calls through an http.Client whose transport is the watch, or, with
// elsewhere set, in other processes that report what their own watches saw.
type pacingContender struct {
	name string
	// setup returns the call to make, given the shared client, the operation's URL and the
	// start of the server's clock (for a tracePacer).
	setup func(tb testing.TB, hc *http.Client, base string, start time.Time) func(ctx context.Context, n int) error
	// elsewhere, when set, is used in place of setup: it makes every call of the workload
	// outside this process, beginning at start (which is also when the server's clock starts:
	// see launchLead), and returns what the calls did, for runPacing to count as its own.
	elsewhere func(tb testing.TB, scale pacingScale, base string, start time.Time) callsElsewhere
}

// callsElsewhere is what the calls made in other processes did: every request their watches
// noted, how many calls completed, the first failures, and when the last process ended.
type callsElsewhere struct {
	Sent      []sentRecord
	Completed int
	Errors    []string
	End       time.Time
}

// sentRecord is a sent with its number, in a form that crosses a process boundary as JSON.
type sentRecord struct {
	Seq                          int64
	At, Decided, Returned, Known time.Duration
}

// runPacing runs the workload once against a fresh server: every caller starts at once and
// makes its calls one after another.
func runPacing(tb testing.TB, scale pacingScale, rateLimitFields bool, c pacingContender) pacingFigures {
	tb.Helper()
	ls := newLimitServer(scale, rateLimitFields)
	if c.elsewhere != nil {
		// The other processes begin their calls together once they are ready; the server's
		// windows count from then, as they count from about the first call in this process.
		ls.start = ls.start.Add(launchLead)
	}
	srv := httptest.NewServer(ls)
	defer srv.Close()
	watch := &watchTransport{next: srv.Client().Transport, start: ls.start, sent: map[int64]*sent{}}

	var completed int
	var errs []string
	var total time.Duration
	if c.elsewhere != nil {
		r := c.elsewhere(tb, scale, srv.URL, ls.start)
		for _, rec := range r.Sent {
			watch.sent[rec.Seq] = &sent{at: rec.At, decided: rec.Decided, returned: rec.Returned, known: rec.Known}
		}
		completed, errs, total = r.Completed, r.Errors, r.End.Sub(ls.start)
	} else {
		hc := &http.Client{Transport: watch}
		call := c.setup(tb, hc, srv.URL, ls.start)
		begin := time.Now()
		completed, errs = makeCalls(scale, 0, scale.Callers, call)
		total = time.Since(begin)
	}
	srv.Close()

	f := pacingFigures{Calls: scale.Callers * scale.Calls, Completed: completed,
		Total: total, Floor: scale.Floor(), Errors: errs}
	ls.mu.Lock()
	watch.mu.Lock()
	defer ls.mu.Unlock()
	defer watch.mu.Unlock()
	f.Requests, f.Sent = len(ls.seen), len(watch.sent)
	// A refusal is known to the client from the moment it had read and closed it (and, with a
	// pacer, held what it said: see attemptTrace): a request sent before that was in flight,
	// whatever the server saw first. A refusal the client
	// never closed (failsafe-go's last, when http.Client drops a response that comes with an
	// error) is known from when the transport returned it.
	type announced struct{ known, reset time.Duration }
	var refusals []announced
	for seq, sv := range ls.seen {
		if sv.status != http.StatusTooManyRequests {
			f.OK++
			continue
		}
		f.Refused++
		cl, ok := watch.sent[seq]
		if !ok {
			continue // counted by checkPacing: Requests and Sent differ
		}
		known := cl.known
		if known == 0 {
			known = cl.returned
			f.Unclosed++
		}
		refusals = append(refusals, announced{known, sv.reset})
	}
	slices.SortFunc(refusals, func(a, b announced) int { return int(a.known - b.known) })
	for _, cl := range watch.sent {
		for _, r := range refusals {
			if r.known >= cl.decided {
				break
			}
			if cl.at < r.reset {
				f.AfterReset++
				break
			}
		}
	}
	return f
}

// makeCalls runs the workload's callers from first up to (not including) last, all at once,
// each making its calls one after another, numbered as in one process wherever the callers
// run: caller c's calls are c*scale.Calls and the next ones. It returns how many completed
// and the first few failures.
func makeCalls(scale pacingScale, first, last int, call func(ctx context.Context, n int) error) (completed int, errs []string) {
	var done atomic.Int64
	var errMu sync.Mutex
	ctx := context.Background()
	var wg sync.WaitGroup
	for caller := first; caller < last; caller++ {
		wg.Go(func() {
			for i := range scale.Calls {
				ctx := context.WithValue(ctx, attemptTraceKey{}, &attemptTrace{})
				if err := call(ctx, caller*scale.Calls+i); err != nil {
					errMu.Lock()
					if len(errs) < 3 {
						msg := err.Error()
						if len(msg) > 160 { // failsafe-go's prints the whole response
							msg = msg[:160] + "…"
						}
						errs = append(errs, msg)
					}
					errMu.Unlock()
					continue
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return int(done.Load()), errs
}

// pacingContenders are the clients compared, each with its defaults but for what the
// workload needs: the shared http.Client (for the key and the watch) and a fresh
// Idempotency-Key per call.
func pacingContenders() []pacingContender {
	return append(append(remedyPacingContenders(), redisPacingContender(), twoProcessPacingContender()), peerPacingContenders()...)
}

// checkPacing holds a run to what can be checked without a clock: the counts agree with each
// other, and with complete set, every call completed, every refusal was closed and nothing
// was sent after a known reset.
func checkPacing(tb testing.TB, f pacingFigures, complete bool) {
	tb.Helper()
	if f.Requests != f.Sent {
		tb.Errorf("the server counted %d requests, the client side %d", f.Requests, f.Sent)
	}
	if f.OK+f.Refused != f.Requests {
		tb.Errorf("%d answered 200 and %d refused, of %d requests", f.OK, f.Refused, f.Requests)
	}
	if f.Completed > f.OK {
		tb.Errorf("%d calls completed on %d successful requests", f.Completed, f.OK)
	}
	if !complete {
		return
	}
	if f.Unclosed > 0 {
		tb.Errorf("%d refusals were never closed by the client", f.Unclosed)
	}
	if f.Completed != f.Calls {
		tb.Errorf("%d of %d calls completed; first failures: %q", f.Completed, f.Calls, f.Errors)
	}
	if f.OK != f.Calls {
		tb.Errorf("%d requests answered 200 for %d calls", f.OK, f.Calls)
	}
	if f.AfterReset != 0 {
		tb.Errorf("%d requests sent after the client knew a reset still ahead", f.AfterReset)
	}
}

// BenchmarkPacing runs the workload of issue 38 once per contender and server: callers all
// using one API key against a server that limits the key per fixed window. It reports the
// calls completed, the requests refused with 429, the requests sent after the client knew of
// a reset still ahead, and the total time over the floor; ns/op is the total time (and, for
// a contender whose calls are made in other processes, the launchLead before it, which
// total-s leaves out). It is not a timing loop: run it with -benchtime 1x (as the report
// does), -pacing full for the 500 calls.
func BenchmarkPacing(b *testing.B) {
	scale, ok := pacingScales[*pacingFlag]
	if !ok {
		b.Fatalf("-pacing %q: quick or full", *pacingFlag)
	}
	for _, v := range pacingVariants {
		for _, c := range pacingContenders() {
			b.Run(v.name+"/"+c.name, func(b *testing.B) {
				var f pacingFigures
				for range b.N {
					f = runPacing(b, scale, v.rateLimitFields, c)
				}
				checkPacing(b, f, false)
				if len(f.Errors) > 0 {
					b.Logf("%d of %d calls failed; the first: %q", f.Calls-f.Completed, f.Calls, f.Errors)
				}
				b.ReportMetric(float64(scale.Callers), "callers")
				b.ReportMetric(float64(scale.Limit), "limit")
				b.ReportMetric(scale.Window.Seconds(), "window-s")
				b.ReportMetric(float64(f.Calls), "calls")
				b.ReportMetric(float64(f.Completed), "completed")
				b.ReportMetric(float64(f.Requests), "requests")
				b.ReportMetric(float64(f.Refused), "refused")
				b.ReportMetric(float64(f.AfterReset), "after-reset")
				b.ReportMetric(f.Total.Seconds(), "total-s")
				b.ReportMetric(f.Floor.Seconds(), "floor-s")
			})
		}
	}
}

// pacingVariants are the two servers: Retry-After on refusals only, and the RateLimit fields
// on every answer besides.
var pacingVariants = []struct {
	name            string
	rateLimitFields bool
}{
	{"retry-after", false},
	{"ratelimit", true},
}

// errStatus is a call that ended on an answer other than 200.
var errStatus = errors.New("not 200")
