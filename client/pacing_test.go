package client_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
)

const paceOrigin = "https://api.example.com"

// limited answers 429 with the given headers; a Response as a Client's transport makes it.
func limited(t *testing.T, header http.Header) *client.Response {
	t.Helper()
	body := []byte(`{"error":{"code":"rate_limited","message":"slow down"}}`)
	env, ok := remedy.Parse(http.StatusTooManyRequests, header, body)
	require.True(t, ok)
	return &client.Response{Status: http.StatusTooManyRequests, Header: header, Body: body, Envelope: env}
}

func ok200(header http.Header) *client.Response {
	return &client.Response{Status: http.StatusOK, Header: header, Body: []byte(`{}`)}
}

// sent records when each attempt reached the transport (on synctest's clock).
type sent struct {
	mu    sync.Mutex
	times map[string][]time.Time
}

func (s *sent) add(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.times == nil {
		s.times = map[string][]time.Time{}
	}
	s.times[op] = append(s.times[op], time.Now())
}

func (s *sent) of(op string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.times[op]...)
}

// A 429 that states its wait holds every call to the origin: a call that starts after the
// refusal is not sent before the time the server stated, and records how long it waited.
func TestPacingHoldsOtherCalls(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var log sent
		refusedAt := make(chan time.Time, 1)
		var first atomic.Bool
		tr := client.TransportFunc(func(ctx context.Context, req *client.Request) (*client.Response, error) {
			log.add(req.Operation)
			if req.Operation == "a" && first.CompareAndSwap(false, true) {
				refusedAt <- time.Now()
				return limited(t, http.Header{"Retry-After": {"2"}}), nil
			}
			return ok200(nil), nil
		})
		loop := client.Loop{Transport: tr, Pacer: client.NewPacer(), Budget: client.NewRetryBudget(1, 0)}
		var wg sync.WaitGroup
		var respA *client.Response
		wg.Go(func() {
			var err error
			respA, err = loop.Do(context.Background(), client.Call{Operation: "a", Origin: paceOrigin, Idempotent: true})
			assert.NoError(t, err)
		})
		at := <-refusedAt
		synctest.Wait() // a's refusal is recorded; a is waiting its retry
		time.Sleep(500 * time.Millisecond)
		respB, err := loop.Do(context.Background(), client.Call{Operation: "b", Origin: paceOrigin, Idempotent: true})
		require.NoError(t, err)
		wg.Wait()

		hold := at.Add(2 * time.Second)
		b := log.of("b")
		require.Len(t, b, 1)
		assert.False(t, b[0].Before(hold), "b was sent at %v, before the stated %v", b[0].Sub(at), hold.Sub(at))
		assert.Equal(t, 1500*time.Millisecond, respB.Attempts[0].Paced, "b waited what was left of the stated wait")
		require.Len(t, respA.Attempts, 2)
		assert.Zero(t, respA.Attempts[1].Paced, "a's own retry waited the wait itself, not again")
		assert.Equal(t, 1.0, loop.Budget.Tokens(), "a refusal that states its wait spends no retry budget")

		// Another origin is not held.
		respC, err := loop.Do(context.Background(), client.Call{Operation: "c", Origin: "https://other.example.com", Idempotent: true})
		require.NoError(t, err)
		assert.Zero(t, respC.Attempts[0].Paced)
	})
}

// A held wait the call cannot spend stops it at once, with nothing sent: longer than MaxWait,
// past the elapsed budget, past the context's deadline. The error says when to come back.
func TestPacingStopsBeforeSending(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		limits client.Limits
		ctx    func() (context.Context, context.CancelFunc)
		cause  error
	}{
		{"longer than MaxWait", client.Limits{MaxWait: 10 * time.Second}, nil, client.ErrWaitTooLong},
		{"past the elapsed budget", client.Limits{MaxWait: time.Minute, MaxElapsed: 20 * time.Second}, nil, client.ErrElapsedBudget},
		{"past the deadline", client.Limits{MaxWait: time.Minute}, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 5*time.Second)
		}, client.ErrDeadline},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pacer := client.NewPacer()
				until := time.Now().Add(30 * time.Second)
				require.NoError(t, pacer.Learn(context.Background(), paceOrigin, client.Limit{Until: until}))
				var n atomic.Int32
				loop := client.Loop{Pacer: pacer, Limits: tc.limits, Transport: client.TransportFunc(func(context.Context, *client.Request) (*client.Response, error) {
					n.Add(1)
					return ok200(nil), nil
				})}
				ctx := context.Background()
				if tc.ctx != nil {
					var cancel context.CancelFunc
					ctx, cancel = tc.ctx()
					defer cancel()
				}
				start := time.Now()
				_, err := loop.Do(ctx, client.Call{Operation: "a", Origin: paceOrigin})
				require.ErrorIs(t, err, tc.cause)
				var later *client.RetryLater
				require.ErrorAs(t, err, &later)
				assert.Equal(t, until, later.At)
				assert.Equal(t, 30*time.Second, later.After)
				var ce *client.CallError
				require.ErrorAs(t, err, &ce)
				assert.Empty(t, ce.Attempts)
				assert.Zero(t, n.Load(), "nothing was sent")
				assert.Zero(t, time.Since(start), "stopped at once")
			})
		})
	}
}

// Pacing only ever delays to a time a server stated: a call without an origin, a loop without
// a pacer, and Unpaced are not held; a pacer that fails paces nothing.
func TestPacingNeverWorseThanNone(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		held := client.NewPacer()
		require.NoError(t, held.Learn(context.Background(), paceOrigin, client.Limit{Until: time.Now().Add(time.Hour)}))
		tr := client.TransportFunc(func(context.Context, *client.Request) (*client.Response, error) { return ok200(nil), nil })
		for _, tc := range []struct {
			name  string
			pacer client.Pacer
			call  client.Call
		}{
			{"no origin", held, client.Call{Operation: "a"}},
			{"no pacer", nil, client.Call{Operation: "a", Origin: paceOrigin}},
			{"Unpaced", client.Unpaced, client.Call{Operation: "a", Origin: paceOrigin}},
			{"a failing pacer", failingPacer{}, client.Call{Operation: "a", Origin: paceOrigin}},
		} {
			start := time.Now()
			resp, err := (&client.Loop{Transport: tr, Pacer: tc.pacer}).Do(context.Background(), tc.call)
			require.NoError(t, err, tc.name)
			assert.Zero(t, resp.Attempts[0].Paced, tc.name)
			assert.Zero(t, time.Since(start), tc.name)
		}
	})
}

type failingPacer struct{}

func (failingPacer) Take(context.Context, string) (time.Time, error) {
	return time.Now().Add(time.Hour), errors.New("the store is down")
}
func (failingPacer) Learn(context.Context, string, client.Limit) error {
	return errors.New("the store is down")
}

// RateLimit fields that say nothing remains hold the origin until their reset, on any answer
// (a success's too); fields with something left, or unreadable ones, hold nothing.
func TestPacingReadsRateLimitFields(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"IETF RateLimit, current draft", http.Header{"Ratelimit": {`"default";r=0;t=30`}}, 30 * time.Second},
		{"IETF RateLimit, two policies, one exhausted", http.Header{"Ratelimit": {`"burst";r=5;t=1, "day";r=0;t=3600`}}, time.Hour},
		{"IETF RateLimit, older dictionary", http.Header{"Ratelimit": {`limit=10, remaining=0, reset=12`}}, 12 * time.Second},
		{"RateLimit-Remaining and -Reset", http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"7"}}, 7 * time.Second},
		{"X-RateLimit, delta", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"9"}}, 9 * time.Second},
		{"X-RateLimit, an epoch (GitHub)", http.Header{"Date": {"Sat, 28 Nov 2026 01:00:00 GMT"}, "X-Ratelimit-Remaining": {"0"},
			"X-Ratelimit-Reset": {"1795827660"}}, time.Minute},
		{"OpenAI tokens exhausted", http.Header{"X-Ratelimit-Remaining-Requests": {"10"}, "X-Ratelimit-Reset-Requests": {"1s"},
			"X-Ratelimit-Remaining-Tokens": {"0"}, "X-Ratelimit-Reset-Tokens": {"6m0s"}}, 6 * time.Minute},
		{"Anthropic requests exhausted", http.Header{"Date": {"Sat, 28 Nov 2026 01:00:00 GMT"},
			"Anthropic-Ratelimit-Requests-Remaining": {"0"}, "Anthropic-Ratelimit-Requests-Reset": {"2026-11-28T01:00:20Z"}}, 20 * time.Second},
		{"something remains", http.Header{"Ratelimit": {`"default";r=3;t=30`}, "X-Ratelimit-Remaining": {"3"}, "X-Ratelimit-Reset": {"9"}}, 0},
		{"a reset that is not a number", http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"soon"}}, 0},
		{"a negative reset", http.Header{"Ratelimit": {`"default";r=0;t=-5`}}, 0},
		{"a reset of years is capped", http.Header{"Ratelimit": {`"default";r=0;t=999999999999`}}, 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pacer, start := answered(t, tc.header)
				until, err := pacer.Take(context.Background(), paceOrigin)
				require.NoError(t, err)
				if tc.want == 0 {
					assert.True(t, until.IsZero(), "held until %v", until.Sub(start))
					return
				}
				assert.Equal(t, tc.want, until.Sub(start))
			})
		})
	}
}

// answered makes one call whose answer (a success) carries header, through a loop with a
// fresh pacer, and returns the pacer and when the call began.
func answered(t *testing.T, header http.Header) (*client.MemoryPacer, time.Time) {
	t.Helper()
	pacer := client.NewPacer()
	loop := client.Loop{Pacer: pacer, Transport: client.TransportFunc(func(context.Context, *client.Request) (*client.Response, error) {
		return ok200(header), nil
	})}
	start := time.Now()
	_, err := loop.Do(context.Background(), client.Call{Operation: "a", Origin: paceOrigin, Idempotent: true})
	require.NoError(t, err)
	return pacer, start
}

// A MemoryPacer stays bounded whatever the keys a program holds: the passed holds go first,
// then the one that ends soonest; a hold that is kept is never shortened.
func TestMemoryPacerBounded(t *testing.T) {
	t.Parallel()
	p := client.NewPacer()
	ctx := context.Background()
	far := time.Now().Add(time.Hour)
	require.NoError(t, p.Learn(ctx, "kept", client.Limit{Until: far.Add(time.Hour)}))
	for i := range 10000 {
		require.NoError(t, p.Learn(ctx, "k"+strconv.Itoa(i), client.Limit{Until: far.Add(time.Duration(i) * time.Millisecond)}))
	}
	got, _ := p.Take(ctx, "kept")
	assert.Equal(t, far.Add(time.Hour), got, "the latest hold outlives the soonest ones")
}

// A hold moved later while a call waits (another call was refused meanwhile) is waited too:
// the pacer is read again after each wait.
func TestPacingReadsTheHoldAgain(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		pacer := client.NewPacer()
		ctx := context.Background()
		start := time.Now()
		require.NoError(t, pacer.Learn(ctx, paceOrigin, client.Limit{Until: start.Add(time.Second)}))
		var sentAt time.Time
		loop := client.Loop{Pacer: pacer, Transport: client.TransportFunc(func(context.Context, *client.Request) (*client.Response, error) {
			sentAt = time.Now()
			return ok200(nil), nil
		})}
		go func() {
			time.Sleep(500 * time.Millisecond)
			_ = pacer.Learn(ctx, paceOrigin, client.Limit{Until: start.Add(3 * time.Second)}) // another call's refusal
		}()
		resp, err := loop.Do(ctx, client.Call{Operation: "a", Origin: paceOrigin, Idempotent: true})
		require.NoError(t, err)
		assert.Equal(t, 3*time.Second, sentAt.Sub(start), "sent when the later hold ended")
		assert.Equal(t, 3*time.Second, resp.Attempts[0].Paced)
	})
}

// GitHub's primary and secondary rate limits, as recorded from its API: the primary one (403,
// X-RateLimit-Remaining: 0, an epoch reset) and the secondary one (429, Retry-After) each hold
// the origin until the time they state, measured from the answer's Date.
func TestPacingGitHubLimits(t *testing.T) {
	t.Parallel()
	want := map[string]time.Duration{
		"primary-rate-limit-exceeded":      23*time.Minute + 57*time.Second,
		"secondary-rate-limit-retry-after": time.Minute,
	}
	found := 0
	for _, s := range loadCorpus(t) {
		d, ok := want[s.Name]
		if s.Dialect != "github" || !ok {
			continue
		}
		found++
		t.Run(s.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				env, failed := remedy.Parse(s.Status, s.Header, s.Body)
				require.True(t, failed)
				pacer := client.NewPacer()
				loop := client.Loop{Pacer: pacer, Limits: client.Limits{MaxWait: time.Second},
					Transport: client.TransportFunc(func(context.Context, *client.Request) (*client.Response, error) {
						return &client.Response{Status: s.Status, Header: s.Header, Body: s.Body, Envelope: env}, nil
					})}
				start := time.Now()
				_, err := loop.Do(context.Background(), client.Call{Operation: "list_issues", Origin: "https://api.github.com", Idempotent: true})
				require.ErrorIs(t, err, client.ErrWaitTooLong)
				until, err := pacer.Take(context.Background(), "https://api.github.com")
				require.NoError(t, err)
				assert.Equal(t, d, until.Sub(start))
			})
		})
	}
	assert.Equal(t, len(want), found, "the recordings are in the corpus")
}

// windowServer is a transport that admits limit requests per one-second window, counted when a
// request arrives, answers each after a latency, and states on every answer the IETF RateLimit
// field (the requests left of the window, and the whole seconds to its end, rounded up).
type windowServer struct {
	limit   int
	latency time.Duration
	start   time.Time
	policy  bool // RateLimit-Policy too: the limit per window

	mu              sync.Mutex
	window, used    int
	admitted, fails int
}

func (s *windowServer) RoundTrip(context.Context, *client.Request) (*client.Response, error) {
	s.mu.Lock()
	now := time.Since(s.start)
	if w := int(now / time.Second); w != s.window {
		s.window, s.used = w, 0
	}
	ok := s.used < s.limit
	if ok {
		s.used++
		s.admitted++
	} else {
		s.fails++
	}
	left := s.limit - s.used
	reset := (time.Duration(s.window+1)*time.Second - now + time.Second - 1) / time.Second
	s.mu.Unlock()
	time.Sleep(s.latency)
	h := http.Header{"Ratelimit": {`"per-key";r=` + strconv.Itoa(left) + ";t=" + strconv.Itoa(int(reset))}}
	if s.policy {
		h.Set("Ratelimit-Policy", `"per-key";q=`+strconv.Itoa(s.limit)+";w=1")
	}
	if !ok {
		h.Set("Retry-After", strconv.Itoa(int(reset)))
		body := []byte(`{"error":{"code":"rate_limited","message":"slow down"}}`)
		env, _ := remedy.Parse(http.StatusTooManyRequests, h, body)
		return &client.Response{Status: http.StatusTooManyRequests, Header: h, Body: body, Envelope: env}, nil
	}
	return ok200(h), nil
}

// What the server says remains is a budget the calls share: once an answer says how many
// requests remain until the reset (less those still in flight, which it had not counted), no
// more than that are sent before it, and the rest wait for the reset instead of being refused.
// When the server also says how many each window admits (RateLimit-Policy), a window no answer
// has counted yet admits that many: more callers than the limit are refused in the first
// window only, before the client knew anything.
func TestPacingSpendsWhatRemains(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		callers, limit int
		policy         bool
		refused        int // at most
	}{
		{"as many callers as the limit", 20, 20, false, 0},
		{"twice the limit, with its policy", 40, 20, true, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const calls = 5
				srv := &windowServer{limit: tc.limit, latency: 30 * time.Millisecond, start: time.Now(), policy: tc.policy}
				loop := client.Loop{Pacer: client.NewPacer(), Transport: srv}
				var wg sync.WaitGroup
				var failed atomic.Int32
				for range tc.callers {
					wg.Go(func() {
						for range calls {
							if _, err := loop.Do(context.Background(), client.Call{Operation: "a", Origin: paceOrigin, Idempotent: true}); err != nil {
								failed.Add(1)
							}
						}
					})
				}
				wg.Wait()
				assert.Zero(t, failed.Load(), "calls failed")
				assert.Equal(t, tc.callers*calls, srv.admitted)
				assert.LessOrEqual(t, srv.fails, tc.refused, "requests refused")
				// The floor is a window per limit's worth of calls; each wait ends at the latest
				// reset an answer stated, up to one latency after the window's end.
				windows := tc.callers * calls / tc.limit
				assert.LessOrEqual(t, time.Since(srv.start), time.Duration(windows)*(time.Second+2*srv.latency))
			})
		})
	}
}

// The requests the RateLimit fields say remain, on any answer, are what the calls sharing the
// pacer may send until the reset: of several limits, the one with fewest left; a limit counted
// in tokens or bytes is no count of requests.
func TestPacingReadsRemaining(t *testing.T) {
	t.Parallel()
	date := http.Header{"Date": {"Sat, 28 Nov 2026 01:00:00 GMT"}}
	with := func(h http.Header) http.Header {
		h = h.Clone()
		h["Date"] = date["Date"]
		return h
	}
	for _, tc := range []struct {
		name   string
		header http.Header
		left   int           // requests that go before the reset; -1: no count
		reset  time.Duration // when the count ends
	}{
		{"IETF RateLimit, current draft", http.Header{"Ratelimit": {`"default";r=3;t=30`}}, 3, 30 * time.Second},
		{"IETF RateLimit, the policy with fewest left", http.Header{"Ratelimit": {`"burst";r=2;t=1, "day";r=900;t=3600`}}, 2, time.Second},
		{"IETF RateLimit, a policy in tokens", http.Header{"Ratelimit": {`"tokens";r=1;t=60, "requests";r=4;t=60`},
			"Ratelimit-Policy": {`"tokens";q=1000;w=60;qu="tokens", "requests";q=10;w=60`}}, 4, time.Minute},
		{"IETF RateLimit, older dictionary", http.Header{"Ratelimit": {`limit=10, remaining=2, reset=12`}}, 2, 12 * time.Second},
		{"RateLimit-Remaining and -Reset", http.Header{"Ratelimit-Remaining": {"3"}, "Ratelimit-Reset": {"7"}}, 3, 7 * time.Second},
		{"X-RateLimit, an epoch (GitHub)", with(http.Header{"X-Ratelimit-Remaining": {"2"}, "X-Ratelimit-Reset": {"1795827660"}}), 2, time.Minute},
		{"OpenAI requests; tokens are no count of requests", http.Header{"X-Ratelimit-Remaining-Requests": {"3"}, "X-Ratelimit-Reset-Requests": {"1s"},
			"X-Ratelimit-Remaining-Tokens": {"1"}, "X-Ratelimit-Reset-Tokens": {"6m0s"}}, 3, time.Second},
		{"Anthropic requests", with(http.Header{"Anthropic-Ratelimit-Requests-Remaining": {"2"}, "Anthropic-Ratelimit-Requests-Reset": {"2026-11-28T01:00:20Z"}}), 2, 20 * time.Second},
		{"a count that is not a number", http.Header{"Ratelimit-Remaining": {"many"}, "Ratelimit-Reset": {"7"}}, -1, 0},
		{"a negative count", http.Header{"Ratelimit": {`"default";r=-3;t=30`}}, -1, 0},
		{"a count without a reset", http.Header{"X-Ratelimit-Remaining": {"3"}}, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pacer, start := answered(t, tc.header)
				went := 0
				var until time.Time
				for range 10 {
					u, err := pacer.Take(context.Background(), paceOrigin)
					require.NoError(t, err)
					if !u.IsZero() {
						until = u
						break
					}
					went++
				}
				if tc.left < 0 {
					assert.Equal(t, 10, went, "no count holds nothing")
					return
				}
				assert.Equal(t, tc.left, went, "requests that went")
				assert.Equal(t, tc.reset, until.Sub(start), "held until the reset")
			})
		})
	}
}

// A refusal that states its wait is the server pacing its clients: the loop waits it out
// without spending an attempt, up to MaxAttempts such refusals in a call. A 503 spends one
// however it states its wait, so that an outage stays bounded by MaxAttempts.
func TestRefusalsThatStateTheirWaitSpendNoAttempt(t *testing.T) {
	t.Parallel()
	const max = client.DefaultMaxAttempts
	for _, tc := range []struct {
		name     string
		status   int
		refusals int // then 200; -1: refused for good
		attempts int
		cause    error
	}{
		{"a 429 more times than MaxAttempts, then success", 429, max + 3, max + 4, nil},
		{"a 429 for good stops after MaxAttempts more", 429, -1, 2 * max, client.ErrAttemptsExhausted},
		{"a 503 for good is bounded by MaxAttempts", 503, -1, max, client.ErrAttemptsExhausted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int32
				tr := client.TransportFunc(func(ctx context.Context, req *client.Request) (*client.Response, error) {
					if tc.refusals >= 0 && int(n.Add(1)) > tc.refusals {
						return ok200(nil), nil
					}
					code := "rate_limited"
					if tc.status == http.StatusServiceUnavailable {
						code = "unavailable" // S3's 503 SlowDown is a rate limit, and spared
					}
					body := []byte(`{"error":{"code":"` + code + `","message":"later","retryable":true,"retry_after_ms":100}}`)
					env, ok := remedy.Parse(tc.status, nil, body)
					require.True(t, ok)
					return &client.Response{Status: tc.status, Body: body, Envelope: env}, nil
				})
				loop := client.Loop{Transport: tr, Budget: client.NewRetryBudget(1, 0)}
				resp, err := loop.Do(context.Background(), client.Call{Operation: "op", Idempotent: true})
				if tc.cause == nil {
					require.NoError(t, err)
					assert.Len(t, resp.Attempts, tc.attempts)
					return
				}
				var ce *client.CallError
				require.ErrorAs(t, err, &ce)
				assert.ErrorIs(t, err, tc.cause)
				assert.Len(t, ce.Attempts, tc.attempts)
			})
		})
	}
}
