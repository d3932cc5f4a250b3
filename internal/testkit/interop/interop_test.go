package interop_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remedy-go/remedy/internal/testkit/interop"
)

var row = interop.Row{Peer: "Peer", Package: "@peer/rest", Version: "1.2.3", Role: "server", Transport: "REST", Tested: []string{"validation"}}

// TestRecord records a row from a test with two checks, run twice (go test -count=2), and
// another test of the same row: one row, the runs counted once, the tests added up.
func TestRecord(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(interop.OutEnv, dir)
	for range 2 {
		t.Run("first", func(t *testing.T) {
			c := interop.Record(t, row)
			c.Run(t, "a", func(t *testing.T) {})
			c.Run(t, "b", func(t *testing.T) {})
			c.Run(t, "c", func(t *testing.T) { t.Skip("not a pass") })
		})
	}
	t.Run("second", func(t *testing.T) {
		r := row
		r.Tested = []string{"retries", "validation"}
		interop.Record(t, r)
	})
	t.Run("skipped", func(t *testing.T) {
		interop.Record(t, interop.Row{Peer: "Other"})
		t.Skip("a skipped test records nothing")
	})

	rows, err := interop.ReadRows(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("rows %+v: want one", rows)
	}
	r := rows[0]
	// first: its two checks and itself, once; second: itself.
	if r.Passed != 4 || r.Failed != 0 || r.Skipped != 1 {
		t.Errorf("passed %d failed %d skipped %d: want 4, 0 and 1", r.Passed, r.Failed, r.Skipped)
	}
	if strings.Join(r.Tested, ",") != "validation,retries" {
		t.Errorf("tested %v", r.Tested)
	}
}

func TestRecordWithoutOut(t *testing.T) {
	t.Setenv(interop.OutEnv, "")
	dir := t.TempDir()
	t.Chdir(dir)
	t.Run("x", func(t *testing.T) { interop.Record(t, row) })
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("wrote %v without %s", entries, interop.OutEnv)
	}
}

func TestTableAndSplice(t *testing.T) {
	b := row
	b.Peer, b.Transport, b.Passed = "A|peer", "MCP stdio", 3
	a := row
	a.Passed, a.Failed, a.Skipped = 1, 1, 2
	got := interop.Table([]interop.Row{a, b})
	want := "| peer | package, version | plays | transport | what is tested | checks passed |\n" +
		"|---|---|---|---|---|---|\n" +
		"| A\\|peer | `@peer/rest` 1.2.3 | server | MCP stdio | validation | 3 of 3 |\n" +
		"| Peer | `@peer/rest` 1.2.3 | server | REST | validation | 1 of 4 (2 skipped) |\n"
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}

	doc := "# Title\n\n" + interop.BeginMarker + "\nold\n" + interop.EndMarker + "\nafter\n"
	spliced, err := interop.Splice(doc, "new\n")
	if err != nil {
		t.Fatal(err)
	}
	if spliced != "# Title\n\n"+interop.BeginMarker+"\nnew\n"+interop.EndMarker+"\nafter\n" {
		t.Errorf("spliced:\n%s", spliced)
	}
	if _, err := interop.Splice("# no markers", "x"); err != interop.ErrNoMarkers {
		t.Errorf("err %v, want ErrNoMarkers", err)
	}
}

// TestSpliceRepair checks that the repair table has markers of its own: splicing it leaves the
// interoperability table alone, and a document without them is an error.
func TestSpliceRepair(t *testing.T) {
	doc := interop.BeginMarker + "\ninterop\n" + interop.EndMarker + "\n" +
		interop.RepairBeginMarker + "\nold\n" + interop.RepairEndMarker + "\n"
	spliced, err := interop.SpliceRepair(doc, "new\n")
	if err != nil {
		t.Fatal(err)
	}
	want := interop.BeginMarker + "\ninterop\n" + interop.EndMarker + "\n" +
		interop.RepairBeginMarker + "\nnew\n" + interop.RepairEndMarker + "\n"
	if spliced != want {
		t.Errorf("spliced:\n%s", spliced)
	}
	if _, err := interop.SpliceRepair(interop.BeginMarker+"\n"+interop.EndMarker, "x"); err != interop.ErrNoRepairMarkers {
		t.Errorf("err %v, want ErrNoRepairMarkers", err)
	}
}

func TestVersions(t *testing.T) {
	dir := t.TempDir()
	lock := `{"packages":{"":{"name":"x"},"node_modules/@agentback/rest":{"version":"0.7.1"}}}`
	if err := os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := interop.NPMVersion(dir, "@agentback/rest"); err != nil || v != "0.7.1" {
		t.Errorf("NPMVersion: %q %v", v, err)
	}
	if _, err := interop.NPMVersion(dir, "left-pad"); err == nil {
		t.Error("NPMVersion of a package the lock does not install: no error")
	}
	mod := "module x\n\ngo 1.25\n\nrequire github.com/a/b v1.0.0\n\nrequire (\n\tgithub.com/mark3labs/mcp-go v0.43.2\n\tgithub.com/c/d v0.1.0 // indirect\n)\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	for module, want := range map[string]string{"github.com/a/b": "v1.0.0", "github.com/mark3labs/mcp-go": "v0.43.2", "github.com/c/d": "v0.1.0"} {
		if v, err := interop.GoModVersion(filepath.Join(dir, "go.mod"), module); err != nil || v != want {
			t.Errorf("GoModVersion(%s) = %q %v, want %s", module, v, err, want)
		}
	}
	if _, err := interop.GoModVersion(filepath.Join(dir, "go.mod"), "github.com/a"); err == nil {
		t.Error("GoModVersion of a module go.mod does not require: no error")
	}
}

// TestCounterParallel counts checks that run in parallel, which finish after t.Run returns.
func TestCounterParallel(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(interop.OutEnv, dir)
	t.Run("row", func(t *testing.T) {
		c := interop.Record(t, row)
		for _, name := range []string{"a", "b", "c"} {
			c.Run(t, name, func(t *testing.T) {
				t.Parallel()
				if name == "c" {
					t.Skip("not a pass")
				}
			})
		}
	})
	rows, err := interop.ReadRows(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Passed != 3 || rows[0].Skipped != 1 {
		t.Errorf("rows %+v: want one, with 3 passed (a, b and the test) and 1 skipped", rows)
	}
}
