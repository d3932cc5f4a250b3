package server

import (
	"strconv"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when the test moves it.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// After a burst, the wait a refusal names is what the bucket needs to hold one token, rounded
// up to the millisecond; it shrinks as the clock moves, refusals do not spend, and waiting it
// out is enough.
func TestRateLimiterWaitAfterBurst(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := newRateLimiter(4, 3, clock.now)
	take := func(want bool, wantWait time.Duration) {
		t.Helper()
		ok, wait := l.take("k")
		if ok != want || wait != wantWait {
			t.Fatalf("take: got %v %v, want %v %v", ok, wait, want, wantWait)
		}
	}
	for range 3 {
		take(true, 0)
	}
	take(false, 250*time.Millisecond)
	take(false, 250*time.Millisecond) // a refusal spends nothing
	if ok, wait := l.check("k"); ok || wait != 250*time.Millisecond {
		t.Fatalf("check: got %v %v", ok, wait)
	}
	clock.advance(100 * time.Millisecond)
	take(false, 150*time.Millisecond)
	clock.advance(149 * time.Millisecond)
	take(false, time.Millisecond)
	clock.advance(time.Millisecond)
	take(true, 0)
	take(false, 250*time.Millisecond)

	// A wait that is not a whole number of milliseconds is rounded up, and is then enough.
	l = newRateLimiter(3, 1, clock.now)
	if ok, _ := l.take("k"); !ok {
		t.Fatal("a new key has a full bucket")
	}
	ok, wait := l.take("k")
	if ok || wait != 334*time.Millisecond {
		t.Fatalf("at 3 a second: got %v %v, want a wait of 334ms", ok, wait)
	}
	clock.advance(wait - time.Millisecond)
	if ok, _ := l.take("k"); ok {
		t.Fatal("a token came back before the wait named")
	}
	clock.advance(time.Millisecond)
	if ok, _ := l.take("k"); !ok {
		t.Fatal("no token after the wait named")
	}
}

// check reads a bucket without spending it or making one; a clock that goes back gives no
// token.
func TestRateLimiterCheck(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := newRateLimiter(1, 2, clock.now)
	if ok, wait := l.check("k"); !ok || wait != 0 {
		t.Fatalf("an unknown key: got %v %v", ok, wait)
	}
	if len(l.buckets) != 0 {
		t.Fatal("check made a bucket")
	}
	l.take("k")
	for range 3 {
		if ok, _ := l.check("k"); !ok {
			t.Fatal("check spent the bucket's last token")
		}
	}
	l.take("k")
	if ok, wait := l.check("k"); ok || wait != time.Second {
		t.Fatalf("an empty bucket: got %v %v", ok, wait)
	}
	clock.advance(-time.Hour)
	if ok, _ := l.take("k"); ok {
		t.Fatal("a clock that went back refilled the bucket")
	}
	clock.advance(time.Hour + time.Second)
	if ok, _ := l.take("k"); !ok {
		t.Fatal("no token a second after the bucket emptied")
	}
}

// The limiter remembers at most maxBuckets keys: at the bound, the buckets that have refilled
// are forgotten, or half of them when none has.
func TestRateLimiterMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("fills the limiter")
	}
	t.Parallel()
	clock := newFakeClock()
	l := newRateLimiter(1, 2, clock.now)
	fill := func(prefix string) {
		for i := range maxBuckets {
			l.take(prefix + strconv.Itoa(i))
		}
	}
	fill("a")
	if len(l.buckets) != maxBuckets {
		t.Fatalf("%d buckets, want %d", len(l.buckets), maxBuckets)
	}
	l.take("new")
	if n := len(l.buckets); n > maxBuckets/2 {
		t.Fatalf("none had refilled: %d buckets remain, want at most %d", n, maxBuckets/2)
	}
	if _, ok := l.buckets["new"]; !ok {
		t.Fatal("the new key has no bucket")
	}

	l = newRateLimiter(1, 2, clock.now)
	fill("b")
	clock.advance(time.Second) // every bucket is full again
	l.take("newer")
	if n := len(l.buckets); n != 1 {
		t.Fatalf("every bucket had refilled: %d remain, want only the new one", n)
	}
	if ok, _ := l.take("newer"); !ok {
		t.Fatal("the new key's bucket is not full")
	}
}
