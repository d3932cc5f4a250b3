package margin_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/remedy-go/remedy/internal/testkit/margin"
)

func TestGrowDoublesUntilTested(t *testing.T) {
	var tried []time.Duration
	margin.Grow(t, 10*time.Millisecond, time.Second, func(d time.Duration) bool {
		tried = append(tried, d)
		return d >= 40*time.Millisecond
	})
	want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}
	if len(tried) != len(want) {
		t.Fatalf("tried %v, want %v", tried, want)
	}
	for i := range want {
		if tried[i] != want[i] {
			t.Fatalf("tried %v, want %v", tried, want)
		}
	}
}

func TestGrowFailsPastItsLimit(t *testing.T) {
	var tried []time.Duration
	// A fake TB: its Fatalf must end the goroutine, as testing's does.
	ft := &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		margin.Grow(ft, 10*time.Millisecond, 40*time.Millisecond, func(d time.Duration) bool {
			tried = append(tried, d)
			return false
		})
	}()
	<-done
	if !ft.fatal || len(tried) != 3 {
		t.Fatalf("fatal %v after tries %v; want fatal after 10ms, 20ms and 40ms", ft.fatal, tried)
	}
}

// A try that failed its assertions ends Grow: a larger margin would not mend it.
func TestGrowStopsAtAFailure(t *testing.T) {
	ft := &fakeTB{}
	n := 0
	margin.Grow(ft, time.Millisecond, time.Second, func(time.Duration) bool {
		n++
		ft.failed = true
		return false
	})
	if n != 1 {
		t.Fatalf("%d tries after a failed one, want 1", n)
	}
}

type fakeTB struct {
	testing.TB
	failed, fatal bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Failed() bool          { return f.failed || f.fatal }
func (f *fakeTB) Logf(string, ...any)   {}
func (f *fakeTB) Fatalf(string, ...any) { f.fatal = true; runtime.Goexit() }
