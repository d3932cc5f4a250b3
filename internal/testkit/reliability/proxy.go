package reliability

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/remedy-go/remedy"
)

// Fault is what the proxy does to one request.
type Fault uint8

// Faults the proxy injects. Each is a way the network between an agent and a server fails
// that an idempotency key must survive.
const (
	// Pass forwards the request and returns the upstream's answer untouched.
	Pass Fault = iota
	// Drop forwards the request, reads the upstream's whole answer and then closes the client's
	// connection without sending it: the server committed, the client never learns it.
	Drop
	// Reset closes the client's connection with a TCP reset (SetLinger(0)) before forwarding:
	// the server never sees the request.
	Reset
	// Delay waits a moment (at most Config.MaxDelay) before forwarding.
	Delay
	// Unavailable answers 503 with a short retry_after_ms envelope and Retry-After-Ms without
	// forwarding. A Random chooser sends it in bursts of consecutive requests.
	Unavailable
	// Duplicate forwards the request twice, concurrently, and answers with the response that
	// finished last: a network that delivered the request twice.
	Duplicate

	numFaults
)

// Kinds lists the faults, Pass excluded.
var Kinds = []Fault{Drop, Reset, Delay, Unavailable, Duplicate}

var faultNames = [numFaults]string{"pass", "drop", "reset", "delay", "unavailable", "duplicate"}

// String is the fault's name ("drop").
func (f Fault) String() string {
	if f < numFaults {
		return faultNames[f]
	}
	return "fault(" + strconv.Itoa(int(f)) + ")"
}

// HeaderFault marks an answer the proxy made up (an Unavailable 503, a 502 when the upstream
// could not be reached), so that a test can tell it from the server's own.
const HeaderFault = "X-Reliability-Fault"

// Chooser picks the fault for one request: n numbers the requests the proxy received, from 1,
// and body is the request's whole body. It is called concurrently.
type Chooser func(n int64, r *http.Request, body []byte) Fault

// Only applies c to the requests match selects and passes every other one, so that, say, an
// MCP session's handshake is left alone while its tool calls are faulted.
func Only(match func(r *http.Request, body []byte) bool, c Chooser) Chooser {
	return func(n int64, r *http.Request, body []byte) Fault {
		if !match(r, body) {
			return Pass
		}
		return c(n, r, body)
	}
}

// Random chooses faults from a seeded source: the same seed gives the same sequence of
// faults (which request gets which depends on the order requests arrive in).
type Random struct {
	Seed uint64
	// Rate is the fraction of requests faulted, bursts included.
	Rate float64
	// Kinds are the faults drawn, each with an equal share of Rate (nil: every kind).
	Kinds []Fault
	// MaxBurst: an Unavailable fault answers a run of 1 to MaxBurst consecutive requests
	// (default 3).
	MaxBurst int
}

// Chooser returns the chooser, safe for concurrent use.
func (c Random) Chooser() Chooser {
	kinds := c.Kinds
	if kinds == nil {
		kinds = Kinds
	}
	maxBurst := c.MaxBurst
	if maxBurst <= 0 {
		maxBurst = 3
	}
	// Each kind's share of the requests is Rate/len(kinds); a burst covers (1+maxBurst)/2
	// requests on average, so it starts that much less often.
	meanBurst := float64(1+maxBurst) / 2
	weights := make([]float64, len(kinds))
	for i, k := range kinds {
		weights[i] = c.Rate / float64(len(kinds))
		if k == Unavailable {
			weights[i] /= meanBurst
		}
	}
	var (
		mu    sync.Mutex
		rng   = rand.New(rand.NewPCG(c.Seed, c.Seed^0x9e3779b97f4a7c15))
		burst int // Unavailable answers left in the current burst
	)
	return func(int64, *http.Request, []byte) Fault {
		mu.Lock()
		defer mu.Unlock()
		if burst > 0 {
			burst--
			return Unavailable
		}
		u := rng.Float64()
		for i, w := range weights {
			if u < w {
				if kinds[i] == Unavailable {
					burst = rng.IntN(maxBurst) // this request is the burst's first
				}
				return kinds[i]
			}
			u -= w
		}
		return Pass
	}
}

// Config configures a Proxy.
type Config struct {
	// Upstream is the base URL of the server behind the proxy; it must be on loopback.
	Upstream string
	// Choose picks each request's fault (nil: none).
	Choose Chooser
	// MaxDelay bounds a Delay: it sleeps a uniform time in [MaxDelay/2, MaxDelay] (default 5 ms).
	MaxDelay time.Duration
	// RetryAfter is the wait an Unavailable answer asks for (default 2 ms).
	RetryAfter time.Duration
	// MaxBody bounds the request and response bodies the proxy holds (default 8 MiB).
	MaxBody int64
}

// Proxy is a fault-injecting HTTP/1.1 proxy on loopback: a net/http server that forwards each
// request to the upstream, or fails it as its Chooser says, and counts what it did.
type Proxy struct {
	// URL is the proxy's base URL, to use in place of the upstream's.
	URL string

	cfg   Config
	base  string // the upstream's scheme, host and path prefix
	srv   *http.Server
	fwd   *http.Transport
	rngMu sync.Mutex
	rng   *rand.Rand // for delays

	requests, forwarded atomic.Int64
	injected            [numFaults]atomic.Int64
}

// New starts a proxy in front of cfg.Upstream, listening on 127.0.0.1. Close stops it.
func New(cfg Config) (*Proxy, error) {
	up, err := url.Parse(cfg.Upstream)
	if err != nil {
		return nil, fmt.Errorf("reliability: the upstream URL: %w", err)
	}
	if up.Scheme != "http" || !loopback(up.Hostname()) {
		return nil, fmt.Errorf("reliability: the upstream %q is not a plain HTTP server on loopback", cfg.Upstream)
	}
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = 5 * time.Millisecond
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = 2 * time.Millisecond
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 8 << 20
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		URL:  "http://" + ln.Addr().String(),
		cfg:  cfg,
		base: up.Scheme + "://" + up.Host + strings.TrimSuffix(up.EscapedPath(), "/"),
		fwd: &http.Transport{
			Proxy:               nil, // straight to the upstream, whatever the environment says
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			MaxIdleConns:        256,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     30 * time.Second,
			DisableCompression:  true,
		},
		rng: rand.New(rand.NewPCG(1, 2)),
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // a dropped connection is the point, not news
	}
	go p.srv.Serve(ln)
	return p, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Close stops the proxy: its listener and connections, and its idle connections upstream.
// It does not wait for requests in flight: stop the clients first.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.fwd.CloseIdleConnections()
	return err
}

// Counts is what a proxy did so far.
type Counts struct {
	Requests  int64 // received from clients
	Forwarded int64 // sent upstream (a Duplicate twice)
	// Injected[f] is how many requests got fault f; Injected[Pass], how many got none.
	Injected [numFaults]int64
}

// Faulted is how many requests got a fault.
func (c Counts) Faulted() int64 {
	var n int64
	for _, k := range Kinds {
		n += c.Injected[k]
	}
	return n
}

// String lists the counts: "requests=10 forwarded=9 faulted=2 drop=1 reset=1 delay=0 ...".
func (c Counts) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "requests=%d forwarded=%d faulted=%d", c.Requests, c.Forwarded, c.Faulted())
	for _, k := range Kinds {
		fmt.Fprintf(&b, " %s=%d", k, c.Injected[k])
	}
	return b.String()
}

// Counts returns the counts so far.
func (p *Proxy) Counts() Counts {
	c := Counts{Requests: p.requests.Load(), Forwarded: p.forwarded.Load()}
	for k := range c.Injected {
		c.Injected[k] = p.injected[k].Load()
	}
	return c
}

// hopHeaders are the hop-by-hop headers (RFC 9110 §7.6.1), not forwarded either way.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// answer is a whole upstream response.
type answer struct {
	status int
	header http.Header
	body   []byte
	done   time.Time
}

// ServeHTTP forwards one request to the upstream, or faults it as the Chooser says.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := p.requests.Add(1)
	body, err := io.ReadAll(io.LimitReader(r.Body, p.cfg.MaxBody+1))
	if err != nil {
		return // the client went away
	}
	if int64(len(body)) > p.cfg.MaxBody {
		http.Error(w, "request body too large for the reliability proxy", http.StatusRequestEntityTooLarge)
		return
	}
	fault := Pass
	if p.cfg.Choose != nil {
		fault = p.cfg.Choose(n, r, body)
	}
	if fault >= numFaults {
		fault = Pass
	}
	p.injected[fault].Add(1)

	switch fault {
	case Reset:
		p.hangUp(w, true)
		return
	case Unavailable:
		p.unavailable(w)
		return
	case Delay:
		t := time.NewTimer(p.delay())
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}

	var ans *answer
	if fault == Duplicate {
		ans, err = p.forwardTwice(r, body)
	} else {
		ans, err = p.forward(r, body)
	}
	switch {
	case err != nil && r.Context().Err() != nil:
		return // the client went away
	case err != nil:
		w.Header().Set(HeaderFault, "upstream")
		http.Error(w, "the reliability proxy could not reach the upstream: "+err.Error(), http.StatusBadGateway)
		return
	case fault == Drop:
		p.hangUp(w, false)
		return
	}
	h := w.Header()
	for k, v := range ans.header {
		h[k] = v
	}
	h.Set("Content-Length", strconv.Itoa(len(ans.body)))
	w.WriteHeader(ans.status)
	w.Write(ans.body)
}

// forward sends the request upstream and reads the whole response.
func (p *Proxy) forward(r *http.Request, body []byte) (*answer, error) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.base+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = r.Header.Clone()
	for _, k := range hopHeaders {
		req.Header.Del(k)
	}
	if len(body) == 0 && r.ContentLength <= 0 {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	p.forwarded.Add(1)
	resp, err := p.fwd.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, p.cfg.MaxBody+1))
	if err != nil {
		return nil, err
	}
	if int64(len(rb)) > p.cfg.MaxBody {
		return nil, errors.New("the upstream's response is too large")
	}
	h := resp.Header.Clone()
	for _, k := range hopHeaders {
		h.Del(k)
	}
	return &answer{status: resp.StatusCode, header: h, body: rb, done: time.Now()}, nil
}

// forwardTwice sends the request upstream twice at once and returns the answer that finished
// last (the one a client reading the later delivery would get), or the one that came when the
// other failed.
func (p *Proxy) forwardTwice(r *http.Request, body []byte) (*answer, error) {
	var (
		wg   sync.WaitGroup
		ans  [2]*answer
		errs [2]error
	)
	for i := range ans {
		wg.Go(func() { ans[i], errs[i] = p.forward(r, body) })
	}
	wg.Wait()
	switch {
	case errs[0] != nil && errs[1] != nil:
		return nil, errs[0]
	case errs[0] != nil:
		return ans[1], nil
	case errs[1] != nil:
		return ans[0], nil
	case ans[1].done.Before(ans[0].done):
		return ans[0], nil
	default:
		return ans[1], nil
	}
}

// hangUp takes the client's connection from the server and closes it without an answer: with
// a reset when reset is true, else with an orderly close after nothing.
func (p *Proxy) hangUp(w http.ResponseWriter, reset bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not hijackable (the proxy serves HTTP/1.1 only, so this does not happen): aborting
		// the handler closes the connection all the same.
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		tc.SetLinger(0)
	}
	conn.Close()
}

// unavailable answers 503 the way a server shedding load does: an envelope saying to retry
// after RetryAfter, and the same wait in Retry-After-Ms.
func (p *Proxy) unavailable(w http.ResponseWriter) {
	env := &remedy.Envelope{Status: http.StatusServiceUnavailable, Code: "unavailable",
		Message: "injected by the reliability proxy: try again shortly", Retryable: true,
		RetryAfter: p.cfg.RetryAfter, Category: remedy.CategoryDependency}
	body, err := env.MarshalJSON()
	if err != nil {
		body = []byte(`{"error":{"code":"unavailable","retryable":true}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Retry-After-Ms", strconv.FormatInt(p.cfg.RetryAfter.Milliseconds(), 10))
	h.Set(HeaderFault, Unavailable.String())
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write(body)
}

// delay is a Delay's wait, uniform in [MaxDelay/2, MaxDelay].
func (p *Proxy) delay() time.Duration {
	half := p.cfg.MaxDelay / 2
	p.rngMu.Lock()
	defer p.rngMu.Unlock()
	return half + time.Duration(p.rng.Int64N(int64(p.cfg.MaxDelay-half)+1))
}
