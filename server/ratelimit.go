package server

import (
	"math"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// rateLimiter is a token bucket (a rate.Limiter) per key: a principal, or a client address
// for failed authentication. It remembers at most maxBuckets keys; a full bucket is forgotten
// first, since forgetting it changes nothing. Every call reads the clock now gives and hands
// the time to the bucket, so that an injected clock (WithClock) alone decides when tokens
// come back.
type rateLimiter struct {
	limit rate.Limit // tokens per second
	burst int
	now   func() time.Time

	// mu guards the map, and serializes the buckets' reads and spends so that a check and the
	// take that follows it see the same bucket.
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

const maxBuckets = 100_000

func newRateLimiter(perSecond float64, burst int, now func() time.Time) *rateLimiter {
	return &rateLimiter{limit: rate.Limit(perSecond), burst: burst, now: now, buckets: map[string]*rate.Limiter{}}
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
		b = rate.NewLimiter(l.limit, l.burst)
		l.buckets[key] = b
	}
	// AllowN refused leaves the bucket as it was: a refusal costs nothing.
	if b.AllowN(now, 1) {
		return true, 0
	}
	return false, l.waitFor(b.TokensAt(now))
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
	if tokens := b.TokensAt(now); tokens < 1 {
		return false, l.waitFor(tokens)
	}
	return true, 0
}

// waitFor is how long a bucket holding tokens takes to hold one, rounded up to the
// millisecond: a client that waits what it is told finds a token. The time is first rounded
// to the nanosecond, the clock's grain, so that the float's noise (1-0.996 tokens is a hair
// over 0.004) does not add a millisecond.
func (l *rateLimiter) waitFor(tokens float64) time.Duration {
	ns := time.Duration(math.Round((1 - tokens) / float64(l.limit) * float64(time.Second)))
	return (ns + time.Millisecond - 1) / time.Millisecond * time.Millisecond
}

// sweep forgets the buckets that have refilled; if none has, it forgets half of them.
func (l *rateLimiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
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
		"RateLimit-Limit":     strconv.Itoa(l.burst),
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
