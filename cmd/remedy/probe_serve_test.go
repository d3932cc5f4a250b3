package main

import (
	"encoding/json"
	"testing"

	"github.com/remedy-go/remedy/conformance"
)

// The example API passes every rule from its document alone, with no example given, run after
// run: the README's claim. The second run follows the deletion of cus_ada the README shows.
func TestProbeWritesServe(t *testing.T) {
	t.Parallel()
	urls, _, _ := startServe(t, "--addr", "127.0.0.1:0")
	for run := 1; run <= 2; run++ {
		r := remedyCmd(t, "", "probe", "--writes", "--json", urls[0])
		var rep conformance.Report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("run %d: probe --json: %v\n%s", run, err, r)
		}
		counts := map[conformance.Outcome]int{}
		for _, res := range rep.Results {
			counts[res.Outcome]++
			if res.Outcome != conformance.Pass {
				t.Errorf("run %d: %s %s: %s", run, res.ID, res.Outcome, res.Detail)
			}
		}
		if n := len(conformance.Rules()); counts[conformance.Pass] != n || len(rep.Results) != n {
			t.Errorf("run %d: %d passed, %d failed, %d skipped; want all %d passed",
				run, counts[conformance.Pass], counts[conformance.Fail], counts[conformance.Skip], n)
		}
		r.wantExit(t, exitOK)
		if run == 1 {
			remedyCmd(t, "", "call", "--confirm", urls[0], "delete_customer", `{"id":"cus_ada"}`).wantExit(t, exitOK)
		}
	}
}
