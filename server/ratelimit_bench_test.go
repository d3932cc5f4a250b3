package server

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkRateLimiterTake is a principal's token taken from a bucket that always has one,
// among 1,000 principals; and a refusal, with its wait.
func BenchmarkRateLimiterTake(b *testing.B) {
	clock := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	now := func() time.Time { return clock }
	b.Run("Allowed", func(b *testing.B) {
		l := newRateLimiter(1e9, 1<<30, now)
		for i := range 1000 {
			l.take("p" + strconv.Itoa(i))
		}
		b.ReportAllocs()
		for b.Loop() {
			if ok, _ := l.take("p7"); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("Refused", func(b *testing.B) {
		l := newRateLimiter(1, 1, now)
		l.take("p")
		b.ReportAllocs()
		for b.Loop() {
			if ok, _ := l.take("p"); ok {
				b.Fatal("allowed")
			}
		}
	})
}
