package bench

import "testing"

// TestPacing runs the quick workload through remedy's default client against both servers
// and holds it to issue 38's goals that do not depend on the machine's speed: every call
// completes, nothing is sent after the client knew of a reset still ahead, and the server's
// and the client's counts agree. It takes a few seconds: real sockets, real one-second
// windows. Time is reported, never asserted.
func TestPacing(t *testing.T) {
	if testing.Short() {
		t.Skip("real one-second windows")
	}
	scale := pacingScales["quick"]
	for _, v := range pacingVariants {
		for _, c := range remedyPacingContenders() {
			if c.name != "remedy" {
				continue
			}
			t.Run(v.name+"/"+c.name, func(t *testing.T) {
				f := runPacing(t, scale, v.rateLimitFields, c)
				t.Logf("%d of %d calls, %d requests, %d refused, %d after a known reset, %v (floor %v)",
					f.Completed, f.Calls, f.Requests, f.Refused, f.AfterReset, f.Total, f.Floor)
				checkPacing(t, f, true)
			})
		}
	}
}
