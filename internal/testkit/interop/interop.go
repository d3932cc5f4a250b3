// Package interop records which peers the interoperability tests ran against and what passed,
// so that the README's interoperability table is generated from what CI ran, not written by
// hand. A test declares its row with Record; when REMEDY_INTEROP_OUT names a directory, every
// row whose test finished is appended to rows.jsonl there, with the number of its checks
// (subtests included) that passed and failed. cmd/interoptable turns the file into the table.
package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// OutEnv names the directory rows are written to; unset, Record writes nothing.
const OutEnv = "REMEDY_INTEROP_OUT"

// Row is one line of the interoperability table: one peer, one transport, one direction.
type Row struct {
	// Peer is the software we did not write, as its users know it ("AgentBack").
	Peer string `json:"peer"`
	// Package is where it comes from: an npm package or Go module path.
	Package string `json:"package"`
	// Version is the exact version the test ran, read from a lockfile or go.mod (NPMVersion,
	// GoModVersion), never typed in.
	Version string `json:"version"`
	// Role says which side the peer plays: "server" (remedy's client and CLI against it) or
	// "client" (it against remedy's reference server).
	Role string `json:"role"`
	// Transport is "REST", "MCP streamable HTTP (stateful)", "MCP streamable HTTP
	// (stateless)" or "MCP stdio"; with the protocol version where it matters.
	Transport string `json:"transport"`
	// Tested lists what the test checks, in a few words each.
	Tested []string `json:"tested"`

	// Test is the name of the test that ran the row (several tests may run one row).
	Test string `json:"test"`
	// Passed, Failed and Skipped count the test's checks: the test and each of its subtests
	// counted with Counter.Run.
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped,omitempty"`
}

// Key is what identifies a row across runs: the same test run three times is one row.
func (r Row) Key() string {
	return strings.Join([]string{r.Peer, r.Package, r.Version, r.Role, r.Transport}, "\x00")
}

var mu sync.Mutex // serialises appends from parallel tests

// runSuffix is what testing appends to the name of a subtest run again under the same name.
var runSuffix = regexp.MustCompile(`#[0-9]+(/|$)`)

// Record declares that t tests row. When t finishes and OutEnv is set, the row is appended to
// OutEnv/rows.jsonl with t's outcome and the count of its subtests that passed and failed
// (subtests must be run with Run on the t given here, or counted with Check).
func Record(t *testing.T, row Row) *Counter {
	t.Helper()
	c := &Counter{}
	dir := os.Getenv(OutEnv)
	t.Cleanup(func() {
		if dir == "" || t.Skipped() {
			return
		}
		row.Test = runSuffix.ReplaceAllString(t.Name(), "$1") // a test run again is the same test
		row.Passed, row.Failed, row.Skipped = c.counts()
		if t.Failed() {
			row.Failed++
		} else {
			row.Passed++
		}
		if err := appendRow(dir, row); err != nil {
			t.Errorf("interop: %v", err)
		}
	})
	return c
}

// Counter counts a recorded test's checks.
type Counter struct {
	mu                      sync.Mutex
	passed, failed, skipped int
}

// Run runs f as a subtest of t and counts its outcome: passed, failed or skipped (a skipped
// check is not a passed one, though t.Run reports both as true). The outcome is counted when f
// returns, so a subtest that calls t.Parallel is counted too.
func (c *Counter) Run(t *testing.T, name string, f func(t *testing.T)) bool {
	t.Helper()
	return t.Run(name, func(t *testing.T) {
		defer func() { // runs after FailNow and SkipNow too
			c.mu.Lock()
			defer c.mu.Unlock()
			switch {
			case t.Failed():
				c.failed++
			case t.Skipped():
				c.skipped++
			default:
				c.passed++
			}
		}()
		f(t)
	})
}

func (c *Counter) counts() (int, int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.passed, c.failed, c.skipped
}

func appendRow(dir string, row Row) error {
	b, err := json.Marshal(row)
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, "rows.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	// One write of a whole line: appends from test binaries running at once do not interleave.
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// NPMVersion returns the version of pkg that the package-lock.json in dir installs.
func NPMVersion(dir, pkg string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return "", err
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		return "", fmt.Errorf("%s/package-lock.json: %w", dir, err)
	}
	p, ok := lock.Packages["node_modules/"+pkg]
	if !ok || p.Version == "" {
		return "", fmt.Errorf("%s/package-lock.json does not install %s", dir, pkg)
	}
	return p.Version, nil
}

// GoModVersion returns the version of module that the go.mod file at path requires (in a
// require line or block; a replace is not followed).
func GoModVersion(path, module string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == module {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("%s does not require %s", path, module)
}

// ReadRows reads the rows written to dir, one per Key in the order first written. A test run
// several times (go test -count=3) counts once, with the most checks it ran; the counts of
// different tests of one row add up, and their Tested lists are merged in the order of the
// tests' names (not of when they finished, which varies from run to run).
func ReadRows(dir string) ([]Row, error) {
	b, err := os.ReadFile(filepath.Join(dir, "rows.jsonl"))
	if err != nil {
		return nil, err
	}
	type run struct {
		passed, failed, skipped int
		tested                  []string
	}
	var rows []Row
	at := map[string]int{}
	runs := map[string]map[string]run{} // row key → test → its largest run
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Row
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("rows.jsonl:%d: %w", i+1, err)
		}
		k := r.Key()
		if _, ok := at[k]; !ok {
			at[k], runs[k] = len(rows), map[string]run{}
			rows = append(rows, Row{Peer: r.Peer, Package: r.Package, Version: r.Version, Role: r.Role, Transport: r.Transport})
		}
		prev, seen := runs[k][r.Test]
		if !seen {
			prev.tested = r.Tested
		}
		runs[k][r.Test] = run{max(prev.passed, r.Passed), max(prev.failed, r.Failed), max(prev.skipped, r.Skipped), prev.tested}
	}
	for k, j := range at {
		tests := make([]string, 0, len(runs[k]))
		for name := range runs[k] {
			tests = append(tests, name)
		}
		sort.Strings(tests)
		for _, name := range tests {
			n := runs[k][name]
			rows[j].Passed += n.passed
			rows[j].Failed += n.failed
			rows[j].Skipped += n.skipped
			for _, s := range n.tested {
				if !contains(rows[j].Tested, s) {
					rows[j].Tested = append(rows[j].Tested, s)
				}
			}
		}
	}
	return rows, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// RequireEnv names the variable that makes a peer that cannot run a failure instead of a skip
// (CI sets it to 1 after installing the peers).
const RequireEnv = "REMEDY_REQUIRE_NODE"

// Need skips t when missing says why peer cannot run here, or fails it when RequireEnv is 1;
// fix says what to run. An empty missing lets the test go on.
func Need(t testing.TB, peer, missing, fix string) {
	t.Helper()
	if missing == "" {
		return
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s cannot run: %s; %s", peer, missing, fix)
	}
	t.Skipf("%s cannot run: %s; %s", peer, missing, fix)
}
