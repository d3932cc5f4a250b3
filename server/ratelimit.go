package server

import (
	"math"
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
	need := (1 - b.tokens) / l.rate
	return false, time.Duration(math.Ceil(need*float64(time.Second/time.Millisecond)) * float64(time.Millisecond))
}

// refund gives back a token taken for a request that turned out not to count.
func (l *rateLimiter) refund(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.buckets[key]; b != nil {
		b.tokens = math.Min(l.burst, b.tokens+1)
	}
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

// limited is the 429 for a bucket that is empty for wait more.
func limited(what string, wait time.Duration) *Problem {
	p := Error(CodeRateLimited, what+"; retry after "+wait.String())
	p.RetryAfter = wait
	return p
}

// rateLimit refuses a principal whose bucket is empty, saying when to come back.
func rateLimit(next handler) handler {
	return func(x *exchange) error {
		if l := x.api.limiter; l != nil {
			if ok, wait := l.take(string(x.principal)); !ok {
				return limited("too many requests", wait)
			}
		}
		return next(x)
	}
}
