package server

import (
	"math"
	"strconv"
	"sync"
	"time"
)

// rateLimiter is a token bucket per key (a principal, or a client address for failed
// authentication). It remembers at most maxBuckets keys; a full bucket is forgotten first,
// since forgetting it changes nothing.
type rateLimiter struct {
	rate  float64 // tokens per second
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

const maxBuckets = 100_000

func newRateLimiter(perSecond float64, burst int, now func() time.Time) *rateLimiter {
	return &rateLimiter{rate: perSecond, burst: float64(burst), now: now, buckets: map[string]*bucket{}}
}

// take spends a token of key's, or says how long until there is one.
func (l *rateLimiter) take(key string) (ok bool, wait time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= maxBuckets {
			l.sweep(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		b.tokens = math.Min(l.burst, b.tokens+dt*l.rate)
	}
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, waitFor(1-b.tokens, l.rate)
}

// check reports whether key has a token, or how long until it has one, without spending
// it; a key without a bucket has a full one.
func (l *rateLimiter) check(key string) (ok bool, wait time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		return true, 0
	}
	tokens := b.tokens
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		tokens = math.Min(l.burst, tokens+dt*l.rate)
	}
	if tokens >= 1 {
		return true, 0
	}
	return false, waitFor(1-tokens, l.rate)
}

// waitFor is how long need tokens take to refill at rate, rounded up to the millisecond.
func waitFor(need, rate float64) time.Duration {
	return time.Duration(math.Ceil(need/rate*float64(time.Second/time.Millisecond)) * float64(time.Millisecond))
}

// sweep forgets the buckets that have refilled; if none has, it forgets half of them.
func (l *rateLimiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) < maxBuckets/2 {
			break
		}
		delete(l.buckets, k)
	}
}

// limited is the 429 for a bucket of l's that is empty for wait more. Besides Retry-After it
// carries the RateLimit headers of the IETF draft (as AgentBack and many gateways send them):
// the bucket's size, nothing remaining, and the seconds until a token is back.
func (l *rateLimiter) limited(what string, wait time.Duration) *Problem {
	p := Error(CodeRateLimited, what+"; retry after "+wait.String())
	p.RetryAfter = wait
	p.Header = map[string]string{
		"RateLimit-Limit":     strconv.Itoa(int(l.burst)),
		"RateLimit-Remaining": "0",
		"RateLimit-Reset":     strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10),
	}
	return p
}

// rateLimit refuses a principal whose bucket is empty, saying when to come back.
func rateLimit(next handler) handler {
	return func(x *exchange) error {
		if l := x.api.limiter; l != nil {
			if ok, wait := l.take(string(x.principal)); !ok {
				return l.limited("too many requests", wait)
			}
		}
		return next(x)
	}
}
