package remedyhuma_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/remedy-go/remedy/conformance"
	"github.com/remedy-go/remedy/internal/testkit/interop"
)

// A Huma app with the add-on passes every rule of the conformance kit, writes included: what
// `remedy probe --writes` runs. The report is busy once, so that a 5xx (trace-id) and a 503
// with a wait (rate-limit-wait) are met. Each rule is a check of the README's
// interoperability table (Huma, as the server remedy's kit tests).
func TestProbePassesEveryRule(t *testing.T) {
	version, err := interop.GoModVersion("go.mod", "github.com/danielgtaylor/huma/v2")
	if err != nil {
		t.Fatal(err)
	}
	c := interop.Record(t, interop.Row{Peer: "Huma v2, with remedyhuma", Package: "github.com/danielgtaylor/huma/v2",
		Version: version, Role: "server", Transport: "REST",
		Tested: []string{"remedy probe --writes: every rule of the conformance kit", "a confirmed deletion runs once",
			"the remedy command's probe, exit 0"}})
	b := newBilling()
	b.busy.Store(1)
	url := serve(t, b, marked())
	rep := conformance.Test(t, url, conformance.Options{Writes: true, Examples: examples()})
	if len(rep.Results) != len(conformance.Rules()) {
		t.Fatalf("%d results, want one per rule (%d)", len(rep.Results), len(conformance.Rules()))
	}
	for _, res := range rep.Results {
		c.Run(t, res.ID, func(t *testing.T) {
			if res.Outcome != conformance.Pass {
				t.Errorf("%s: %s", res.Outcome, res.Detail)
			} else {
				t.Log(res.Detail)
			}
		})
	}
	// The probe confirmed the deletion once and executed the invoice, under keys, without a
	// second execution for any replay.
	c.Run(t, "confirmed-once", func(t *testing.T) {
		if got := b.deleted.Load(); got != 1 {
			t.Errorf("delete_customer ran %d times, want 1", got)
		}
	})
	// The same through the command a user runs, built from this repository: `remedy probe
	// --writes --json` against another instance of the app, with the examples on its command
	// line, exits 0 and reports every rule passed.
	c.Run(t, "remedy-probe-command", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "remedy")
		if out, err := exec.Command("go", "build", "-C", "..", "-o", bin, "./cmd/remedy").CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/remedy: %v\n%s", err, out)
		}
		fresh := newBilling()
		fresh.busy.Store(1)
		args := []string{"probe", "--writes", "--json"}
		for op, ex := range examples() {
			args = append(args, "--example", op+"="+string(ex))
		}
		cmd := exec.Command(bin, append(args, serve(t, fresh, marked()))...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr, cmd.Env = &stdout, &stderr, append(os.Environ(), "NO_COLOR=1")
		err := cmd.Run()
		var rep conformance.Report
		if jerr := json.Unmarshal(stdout.Bytes(), &rep); jerr != nil {
			t.Fatalf("the report is not JSON (%v): %s\n%s", jerr, stdout.String(), stderr.String())
		}
		if err != nil || !rep.OK() || len(rep.Results) != len(conformance.Rules()) || rep.Count(conformance.Pass) != len(rep.Results) {
			t.Errorf("exit %v; %d of %d rules passed; failed: %v\n%s", err, rep.Count(conformance.Pass), len(rep.Results), rep.Failed(), stderr.String())
		}
		if got := fresh.deleted.Load(); got != 1 {
			t.Errorf("delete_customer ran %d times under the command, want 1", got)
		}
	})
}
