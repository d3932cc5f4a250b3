// Package pacertest is the shared test suite of client.Pacer: every implementation (the
// memory pacer, package redispacer on one Redis and on a Cluster) runs Run, so that they all
// keep one contract.
package pacertest

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remedy-go/remedy/client"
)

// Slack is how much later than the time held a pacer may report it: a shared store converts
// times through its own clock and a round trip, which can only lengthen a hold. Never earlier.
// The suite's times are minutes apart, so a pacer that mixes two of them up fails anyway.
const Slack = 10 * time.Second

// Run runs the suite. newPacer returns a fresh, empty pacer; each subtest calls it once and
// runs in parallel with the others.
func Run(t *testing.T, newPacer func(t *testing.T) client.Pacer) {
	for _, tc := range []struct {
		name string
		test func(t *testing.T, p client.Pacer)
	}{
		{"Unknown", unknown},
		{"LaterWins", laterWins},
		{"EarlierNeverShortens", earlierNeverShortens},
		{"Concurrent", concurrent},
		{"KeysIndependent", keysIndependent},
		{"Passed", passed},
		{"Budget", budget},
		{"BudgetInFlight", budgetInFlight},
		{"BudgetOnlyLowers", budgetOnlyLowers},
		{"BudgetConcurrent", budgetConcurrent},
		{"BudgetPassed", budgetPassed},
		{"QuotaPerWindow", quotaPerWindow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.test(t, newPacer(t))
		})
	}
}

// until asks leave to send under key, failing the test on an error: the time held, or the
// zero time when the request may go (then it is counted as in flight).
func until(t *testing.T, p client.Pacer, key string) time.Time {
	t.Helper()
	u, err := p.Take(context.Background(), key)
	if err != nil {
		t.Fatalf("Take(%q): %v", key, err)
	}
	return u
}

// learn tells the pacer of an answer under key, failing the test on an error.
func learn(t *testing.T, p client.Pacer, key string, l client.Limit) {
	t.Helper()
	if err := p.Learn(context.Background(), key, l); err != nil {
		t.Fatalf("Learn(%q, %+v): %v", key, l, err)
	}
}

// hold holds key until at: an answer that said so.
func hold(t *testing.T, p client.Pacer, key string, at time.Time) {
	t.Helper()
	learn(t, p, key, client.Limit{Until: at})
}

// held checks that key reads as held until want: not earlier, and at most Slack later.
func held(t *testing.T, p client.Pacer, key string, want time.Time, what string) {
	t.Helper()
	got := until(t, p, key)
	switch {
	case got.Before(want):
		t.Errorf("%s: Take(%q) = %v, %v before the time held, %v", what, key, got, want.Sub(got), want)
	case got.After(want.Add(Slack)):
		t.Errorf("%s: Take(%q) = %v, %v after the time held, %v", what, key, got, got.Sub(want), want)
	}
}

func unknown(t *testing.T, p client.Pacer) {
	for _, key := range []string{"https://api.example.com", "", "never held"} {
		if got := until(t, p, key); !got.IsZero() {
			t.Errorf("Take(%q) of a key never held = %v, want the zero time", key, got)
		}
	}
}

func laterWins(t *testing.T, p client.Pacer) {
	const key = "https://api.example.com"
	now := time.Now()
	hold(t, p, key, now.Add(time.Minute))
	held(t, p, key, now.Add(time.Minute), "one hold")
	hold(t, p, key, now.Add(time.Hour))
	held(t, p, key, now.Add(time.Hour), "a later hold")
}

func earlierNeverShortens(t *testing.T, p client.Pacer) {
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
func concurrent(t *testing.T, p client.Pacer) {
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
				if err := p.Learn(context.Background(), key, client.Limit{Until: at}); err != nil {
					errs <- err
				}
				if _, err := p.Take(context.Background(), key); err != nil {
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
func keysIndependent(t *testing.T, p client.Pacer) {
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
			t.Errorf("Take(%q) of a key never held, beside others = %v, want the zero time", key, got)
		}
	}
}

// passed: a hold that has ended reads as ended (the time held, or none), never as a wait.
func passed(t *testing.T, p client.Pacer) {
	const key = "https://api.example.com"
	now := time.Now()
	hold(t, p, key, now.Add(-time.Minute))
	if got := until(t, p, key); got.After(time.Now()) {
		t.Errorf("Take after a hold that has passed = %v, in the future", got)
	}
	hold(t, p, key, now.Add(-time.Second)) // a later one, passed too
	if got := until(t, p, key); got.After(time.Now()) {
		t.Errorf("Take after two holds that have passed = %v, in the future", got)
	}
}

// takes asks leave n times under key and reports how many requests went.
func takes(t *testing.T, p client.Pacer, key string, n int) int {
	t.Helper()
	went := 0
	for range n {
		if until(t, p, key).IsZero() {
			went++
		}
	}
	return went
}

// budget: an answer that says 3 requests remain until a reset lets 3 go, and holds the next
// until the reset; the answers to them say nothing, and change nothing.
func budget(t *testing.T, p client.Pacer) {
	const key = "https://api.example.com"
	reset := time.Now().Add(time.Hour)
	if !until(t, p, key).IsZero() {
		t.Fatal("the first request of a key never held did not go")
	}
	learn(t, p, key, client.Limit{Remaining: 3, Reset: reset})
	if went := takes(t, p, key, 3); went != 3 {
		t.Errorf("%d of 3 requests went when the server said 3 remain", went)
	}
	held(t, p, key, reset, "when the 3 requests that remained are taken")
	for range 3 {
		learn(t, p, key, client.Limit{})
	}
	held(t, p, key, reset, "after the answers to them, which said nothing")
}

// budgetInFlight: of the requests in flight when an answer says what remains, the server had
// not yet counted the others; they are taken off what remains.
func budgetInFlight(t *testing.T, p client.Pacer) {
	const key = "https://api.example.com"
	reset := time.Now().Add(time.Hour)
	if went := takes(t, p, key, 5); went != 5 {
		t.Fatalf("%d of 5 requests went to a key never held", went)
	}
	// The first answer says 6 remain: 4 others are still in flight, so 2 may go.
	learn(t, p, key, client.Limit{Remaining: 6, Reset: reset})
	if went := takes(t, p, key, 2); went != 2 {
		t.Errorf("%d of 2 requests went when 6 remained with 4 in flight", went)
	}
	held(t, p, key, reset, "when what remained less what was in flight is taken")
}

// budgetOnlyLowers: answers come out of order; a count higher than the one held for the same
// window raises nothing, a lower one lowers it; the window's reset is the earliest an answer
// said (each is the time its answer came plus what the server stated, no earlier than the
// true reset), and a later one does not move it.
func budgetOnlyLowers(t *testing.T, p client.Pacer) {
	const key = "https://api.example.com"
	reset := time.Now().Add(time.Hour)
	learn(t, p, key, client.Limit{Remaining: 2, Reset: reset.Add(time.Minute)})
	learn(t, p, key, client.Limit{Remaining: 10, Reset: reset})
	learn(t, p, key, client.Limit{Remaining: 10, Reset: reset.Add(2 * time.Minute)})
	if went := takes(t, p, key, 10); went != 2 {
		t.Errorf("%d requests went after answers saying 2, then 10 remain; want 2", went)
	}
	held(t, p, key, reset, "the earliest reset of the three")
	learn(t, p, key, client.Limit{Remaining: 0, Reset: reset.Add(time.Minute)})
	held(t, p, key, reset, "after a count of none")
}

// budgetConcurrent: requests asking leave at once never go past what the server said
// remains, whatever the interleaving.
func budgetConcurrent(t *testing.T, p client.Pacer) {
	const key, goroutines, each, remaining = "https://api.example.com", 16, 8, 50
	learn(t, p, key, client.Limit{Remaining: remaining, Reset: time.Now().Add(time.Hour)})
	var went atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				u, err := p.Take(context.Background(), key)
				if err != nil {
					t.Error(err)
					return
				}
				if u.IsZero() {
					went.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := went.Load(); got != remaining {
		t.Errorf("%d of %d requests asking at once went, when %d remained", got, goroutines*each, remaining)
	}
}

// budgetPassed: a count whose reset has passed holds nothing.
func budgetPassed(t *testing.T, p client.Pacer) {
	const key = "https://api.example.com"
	learn(t, p, key, client.Limit{Remaining: 1, Reset: time.Now().Add(-time.Second)})
	if went := takes(t, p, key, 3); went != 3 {
		t.Errorf("%d of 3 requests went after a count whose reset had passed", went)
	}
}

// quotaPerWindow: when the server said how many requests each window admits, a window that
// begins after the one counted admits that many, less those in flight, until its end.
func quotaPerWindow(t *testing.T, p client.Pacer) {
	const key = "https://api.example.com"
	if !until(t, p, key).IsZero() {
		t.Fatal("the first request of a key never held did not go")
	}
	reset := time.Now().Add(100 * time.Millisecond)
	// The answer to the request in flight: none remain until the reset, and each window of a
	// minute admits 4.
	learn(t, p, key, client.Limit{Remaining: 0, Reset: reset, Quota: 4, Window: time.Minute})
	held(t, p, key, reset, "when none remain")
	if !until(t, p, "other").IsZero() { // one in flight under another key counts nothing here
		t.Fatal("a request under another key was held")
	}
	time.Sleep(time.Until(reset) + 50*time.Millisecond) // the window counted has passed
	if went := takes(t, p, key, 10); went != 4 {
		t.Errorf("%d requests went in the window after the one counted; the quota is 4", went)
	}
	held(t, p, key, reset.Add(time.Minute), "when the quota of the new window is taken")
}
