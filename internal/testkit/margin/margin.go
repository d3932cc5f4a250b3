// Package margin runs tests whose point needs a real-time margin (a budget, a deadline, a
// lease, a server's limit) that fits the machine, without guessing one: it starts short and
// doubles the margin for as long as the machine was too slow for a try to test anything.
//
// It is for tests that cannot fake time because a real socket or a real redis-server is
// involved; where none is, testing/synctest or an injected clock is exact and cheaper.
package margin

import (
	"testing"
	"time"
)

// Grow calls try with first, then with twice as long, and so on, for as long as try returns
// false: that the machine spent the margin before the test reached the point it is for (the
// first attempt used the whole budget, say), so that the try proved nothing either way. A try
// asserts on t what holds whatever the margin, and returns true once it has tested its point.
// Grow fails t when even limit was too short: a machine seconds slow for one loopback exchange
// cannot run the test.
func Grow(t testing.TB, first, limit time.Duration, try func(d time.Duration) (tested bool)) {
	t.Helper()
	for d := first; ; d *= 2 {
		if try(d) || t.Failed() {
			return
		}
		if d >= limit {
			t.Fatalf("margins from %v to %v were all too short: the machine is too slow for this test", first, d)
		}
		t.Logf("a margin of %v was too short for this machine: trying %v", d, 2*d)
	}
}
