package remedyhuma_test

import (
	"testing"

	"github.com/remedy-go/remedy/conformance"
)

// A Huma app with the add-on passes every rule of the conformance kit, writes included: what
// `remedy probe --writes` runs. The report is busy once, so that a 5xx (trace-id) and a 503
// with a wait (rate-limit-wait) are met.
func TestProbePassesEveryRule(t *testing.T) {
	b := newBilling()
	b.busy.Store(1)
	url := serve(t, b, marked())
	rep := conformance.Test(t, url, conformance.Options{Writes: true, Examples: examples()})
	if len(rep.Results) != len(conformance.Rules()) {
		t.Fatalf("%d results, want one per rule (%d)", len(rep.Results), len(conformance.Rules()))
	}
	for _, res := range rep.Results {
		if res.Outcome != conformance.Pass {
			t.Errorf("%s: %s: %s", res.ID, res.Outcome, res.Detail)
		} else {
			t.Logf("%s: %s", res.ID, res.Detail)
		}
	}
	// The probe confirmed the deletion once and executed the invoice, under keys, without a
	// second execution for any replay.
	if got := b.deleted.Load(); got != 1 {
		t.Errorf("delete_customer ran %d times, want 1", got)
	}
}
