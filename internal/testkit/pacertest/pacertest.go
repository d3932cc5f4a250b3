// Package pacertest is the shared test suite of remedy.Pacer: every implementation (the
// memory pacer, package redispacer on one Redis and on a Cluster) runs Run, so that they all
// keep one contract.
package pacertest

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remedy-go/remedy"
)

// Slack is how much later than the time held a pacer may report it: a shared store converts
// times through its own clock and a round trip, which can only lengthen a hold. Never earlier.
// The suite's times are minutes apart, so a pacer that mixes two of them up fails anyway.
const Slack = 10 * time.Second

// Run runs the suite. newPacer returns a fresh, empty pacer; each subtest calls it once and
// runs in parallel with the others.
func Run(t *testing.T, newPacer func(t *testing.T) remedy.Pacer) {
	for _, tc := range []struct {
		name string
		test func(t *testing.T, p remedy.Pacer)
	}{
		{"Unknown", unknown},
		{"LaterWins", laterWins},
		{"EarlierNeverShortens", earlierNeverShortens},
		{"Concurrent", concurrent},
		{"KeysIndependent", keysIndependent},
		{"Passed", passed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.test(t, newPacer(t))
		})
	}
}

// until reads key's time, failing the test on an error.
func until(t *testing.T, p remedy.Pacer, key string) time.Time {
	t.Helper()
	u, err := p.Until(context.Background(), key)
	if err != nil {
		t.Fatalf("Until(%q): %v", key, err)
	}
	return u
}

// hold holds key until at, failing the test on an error.
func hold(t *testing.T, p remedy.Pacer, key string, at time.Time) {
	t.Helper()
	if err := p.Hold(context.Background(), key, at); err != nil {
		t.Fatalf("Hold(%q, %v): %v", key, at, err)
	}
}

// held checks that key reads as held until want: not earlier, and at most Slack later.
func held(t *testing.T, p remedy.Pacer, key string, want time.Time, what string) {
	t.Helper()
	got := until(t, p, key)
	switch {
	case got.Before(want):
		t.Errorf("%s: Until(%q) = %v, %v before the time held, %v", what, key, got, want.Sub(got), want)
	case got.After(want.Add(Slack)):
		t.Errorf("%s: Until(%q) = %v, %v after the time held, %v", what, key, got, got.Sub(want), want)
	}
}

func unknown(t *testing.T, p remedy.Pacer) {
	for _, key := range []string{"https://api.example.com", "", "never held"} {
		if got := until(t, p, key); !got.IsZero() {
			t.Errorf("Until(%q) of a key never held = %v, want the zero time", key, got)
		}
	}
}

func laterWins(t *testing.T, p remedy.Pacer) {
	const key = "https://api.example.com"
	now := time.Now()
	hold(t, p, key, now.Add(time.Minute))
	held(t, p, key, now.Add(time.Minute), "one hold")
	hold(t, p, key, now.Add(time.Hour))
	held(t, p, key, now.Add(time.Hour), "a later hold")
}

func earlierNeverShortens(t *testing.T, p remedy.Pacer) {
	const key = "https://api.example.com"
	now := time.Now()
	hold(t, p, key, now.Add(time.Hour))
	for _, earlier := range []time.Time{now.Add(time.Minute), now.Add(time.Hour - Slack - time.Second), now.Add(-time.Hour)} {
		hold(t, p, key, earlier)
		held(t, p, key, now.Add(time.Hour), "after an earlier hold")
	}
	hold(t, p, key, now.Add(time.Hour)) // the same time again
	held(t, p, key, now.Add(time.Hour), "after the same hold again")
}

// concurrent has many goroutines hold one key, each to its own time, in a random order: the
// latest stays, whatever the interleaving.
func concurrent(t *testing.T, p remedy.Pacer) {
	const key, goroutines, holds = "https://api.example.com", 16, 8
	now := time.Now()
	times := make([]time.Time, goroutines*holds)
	for i := range times {
		times[i] = now.Add(time.Duration(i+1) * time.Minute)
	}
	rand.Shuffle(len(times), func(i, j int) { times[i], times[j] = times[j], times[i] })
	var wg sync.WaitGroup
	errs := make(chan error, len(times))
	for g := range goroutines {
		wg.Go(func() {
			for _, at := range times[g*holds : (g+1)*holds] {
				if err := p.Hold(context.Background(), key, at); err != nil {
					errs <- err
				}
				if _, err := p.Until(context.Background(), key); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	held(t, p, key, now.Add(time.Duration(len(times))*time.Minute), "after concurrent holds")
}

// keysIndependent holds keys that differ in one byte, odd bytes included, each to its own
// time: each reads its own, and one never held reads as none.
func keysIndependent(t *testing.T, p remedy.Pacer) {
	long := strings.Repeat("x", 4096)
	keys := []string{
		"https://api.example.com", "https://api.example.com:443", "http://api.example.com",
		"https://api.example.com/", "https://API.example.com",
		"", " ", "a", "a ", "a\x00", "a\x00b", "a\x00c", "a\n", "a\xff", "a\xfe", "é", "e\u0301",
		"{a}", "{a}b", "#", "#a", "a*", "a?", "a\r\n",
		long, long + "a", long + "b", long[:255], long[:256], long[:257],
	}
	now := time.Now()
	for i, key := range keys {
		hold(t, p, key, now.Add(time.Duration(i+1)*time.Minute))
	}
	for i, key := range keys {
		held(t, p, key, now.Add(time.Duration(i+1)*time.Minute), "one of many keys")
	}
	for _, key := range []string{"a\x00d", long + "c", "https://api.example.org"} {
		if got := until(t, p, key); !got.IsZero() {
			t.Errorf("Until(%q) of a key never held, beside others = %v, want the zero time", key, got)
		}
	}
}

// passed: a hold that has ended reads as ended (the time held, or none), never as a wait.
func passed(t *testing.T, p remedy.Pacer) {
	const key = "https://api.example.com"
	now := time.Now()
	hold(t, p, key, now.Add(-time.Minute))
	if got := until(t, p, key); got.After(time.Now()) {
		t.Errorf("Until after a hold that has passed = %v, in the future", got)
	}
	hold(t, p, key, now.Add(-time.Second)) // a later one, passed too
	if got := until(t, p, key); got.After(time.Now()) {
		t.Errorf("Until after two holds that have passed = %v, in the future", got)
	}
}
