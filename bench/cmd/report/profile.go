package main

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// HotPath is a benchmark profiled once after the rounds, to say where its time goes.
type HotPath struct {
	Title string
	Bench string // the benchmark's full name, Benchmark<Group>/<case>/<contender>
}

// hotPaths are the hot paths the goals are about, each as its remedy contender.
var hotPaths = []HotPath{
	{"Parse, the 1 KB agent envelope", "BenchmarkAgentEnvelope/1KB/remedy"},
	{"Client: 503, then 200", "BenchmarkRetry/503-then-200/remedy"},
	{"Server: an invalid POST", "BenchmarkServer/invalid/remedy"},
	{"Server: an idempotent first execution, memory store", "BenchmarkIdempotency/memory/first"},
}

// pattern is the -test.bench argument that runs exactly the benchmark named: each element of
// the name anchored and quoted.
func (h HotPath) pattern() string {
	parts := strings.Split(h.Bench, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// Profile is what one CPU profile says: the functions with the most time of their own (flat)
// and with the most time in them and what they call (cumulative).
type Profile struct {
	Path  HotPath
	Total time.Duration // the samples' total
	Flat  []ProfileRow  // the top by flat time
	Cum   []ProfileRow  // the top by cumulative time, the harness left out
	Own   []ProfileRow  // the top of remedy's own functions by cumulative time
	Err   string        // why there is no profile
}

// ProfileRow is one function of `go tool pprof -top`.
type ProfileRow struct {
	Func            string
	Flat, Cum       time.Duration
	FlatPct, CumPct float64
}

// profileTop is how many functions of each kind the page lists.
const profileTop = 5

// harness reports whether fn is the benchmark's machinery rather than the path measured: the
// testing package, the goroutine's root, the bench module's own closures. Each of them holds
// the whole profile cumulatively, and says nothing.
func harness(fn string) bool {
	for _, p := range []string{"testing.", "runtime.goexit", "runtime.main", "main.main", "github.com/remedy-go/remedy/bench."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// ParsePprofTop reads the text of `go tool pprof -top`, which lists the nodes by flat time:
// the samples' total and every row.
func ParsePprofTop(r io.Reader) (total time.Duration, rows []ProfileRow, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	header := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if _, after, ok := strings.Cut(line, "Total samples = "); ok {
			f := strings.Fields(after)
			if len(f) > 0 {
				if total, err = parsePprofDuration(f[0]); err != nil {
					return 0, nil, fmt.Errorf("total samples: %w", err)
				}
			}
			continue
		}
		if strings.HasPrefix(line, "flat") && strings.Contains(line, "cum%") {
			header = true
			continue
		}
		if !header || line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 6 {
			return 0, nil, fmt.Errorf("a row of fewer than six fields: %q", line)
		}
		var row ProfileRow
		if row.Flat, err = parsePprofDuration(f[0]); err != nil {
			return 0, nil, err
		}
		if row.FlatPct, err = parsePercent(f[1]); err != nil {
			return 0, nil, err
		}
		if row.Cum, err = parsePprofDuration(f[3]); err != nil {
			return 0, nil, err
		}
		if row.CumPct, err = parsePercent(f[4]); err != nil {
			return 0, nil, err
		}
		row.Func = strings.Join(f[5:], " ")
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return 0, nil, err
	}
	if !header {
		return 0, nil, errors.New("no table of nodes in the output of pprof")
	}
	return total, rows, nil
}

// parsePprofDuration reads a time as pprof prints it: "0", "10ms", "1.25s", "1.50mins".
func parsePprofDuration(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	if v, ok := strings.CutSuffix(s, "mins"); ok {
		s = v + "m"
	} else if v, ok := strings.CutSuffix(s, "hrs"); ok {
		s = v + "h"
	}
	return time.ParseDuration(s)
}

func parsePercent(s string) (float64, error) {
	return strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
}

// summarize keeps the top rows by flat time and, the harness left out, by cumulative time.
func summarize(path HotPath, total time.Duration, rows []ProfileRow) Profile {
	p := Profile{Path: path, Total: total}
	for _, r := range rows {
		if len(p.Flat) < profileTop && r.Flat > 0 && !harness(r.Func) {
			p.Flat = append(p.Flat, r)
		}
	}
	byCum := slices.Clone(rows)
	slices.SortStableFunc(byCum, func(a, b ProfileRow) int { return cmp.Compare(b.Cum, a.Cum) })
	for _, r := range byCum {
		if harness(r.Func) {
			continue
		}
		p.Cum = addLevel(p.Cum, r)
		if strings.HasPrefix(r.Func, remedyModule) {
			p.Own = addLevel(p.Own, r)
		}
	}
	return p
}

// sameLevel is how close, in points of the samples, two cumulative shares are taken to be the
// same time said twice: a function that only wraps the next (the server's pipeline nests its
// stages, a syscall passes through several frames) has nearly the cum of what it wraps.
const sameLevel = 2.0

// addLevel appends r, sorted after rows by cumulative time, unless rows has profileTop rows
// already or r's share is within sameLevel of the last one's.
func addLevel(rows []ProfileRow, r ProfileRow) []ProfileRow {
	if len(rows) >= profileTop || (len(rows) > 0 && rows[len(rows)-1].CumPct-r.CumPct < sameLevel) {
		return rows
	}
	return append(rows, r)
}

// remedyModule begins the name of every function of remedy's packages.
const remedyModule = "github.com/remedy-go/remedy"

// profileHotPaths runs bin, the compiled benchmarks, once for each hot path with a CPU
// profile, and reads each profile with go tool pprof. A path that cannot be profiled gets a
// Profile saying why: the page reports it, and the run goes on.
func profileHotPaths(bin, dir, tmp, benchtime string, log io.Writer) []Profile {
	var out []Profile
	for i, h := range hotPaths {
		fmt.Fprintf(log, "profiling %s\n", h.Bench)
		prof := filepath.Join(tmp, fmt.Sprintf("cpu%d.pprof", i))
		cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", h.pattern(), "-test.benchtime", benchtime,
			"-test.count", "1", "-test.cpuprofile", prof, "-test.timeout", "0")
		cmd.Dir = dir
		text, err := cmd.CombinedOutput()
		if err == nil && !bytes.Contains(text, []byte(h.Bench)) {
			err = errors.New("the benchmark did not run")
		}
		if err != nil {
			out = append(out, Profile{Path: h, Err: fmt.Sprintf("%v: %s", err, lastLine(string(text)))})
			continue
		}
		top := exec.Command("go", "tool", "pprof", "-top", "-nodecount=1000", bin, prof)
		top.Dir = dir
		var stderr bytes.Buffer
		top.Stderr = &stderr
		text, err = top.Output()
		if err != nil {
			out = append(out, Profile{Path: h, Err: fmt.Sprintf("go tool pprof: %v: %s", err, lastLine(stderr.String()))})
			continue
		}
		total, rows, err := ParsePprofTop(bytes.NewReader(text))
		if err != nil {
			out = append(out, Profile{Path: h, Err: "reading pprof's output: " + err.Error()})
			continue
		}
		out = append(out, summarize(h, total, rows))
	}
	return out
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// writeProfiles writes the section of the profiles.
func writeProfiles(b *strings.Builder, m Meta, profiles []Profile) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("\n## Where the time goes\n\n")
	p("One CPU profile per hot path, taken after the rounds: the benchmark alone, ")
	p("`-test.bench <it> -test.benchtime %s -test.cpuprofile`, read with `go tool pprof -top`. ", m.ProfileTime)
	p("*flat* is the time spent in the function itself, *cum* the time in it and in what it calls, both as a share of the profile's samples ")
	p("(which take in the benchmark's setup, the garbage collector, and for the client the loopback server). ")
	p("The harness (package testing, the benchmark's own closures) is left out, and so is a function whose cum is within %.0f points of the one listed above it: ", sameLevel)
	p("most often it wraps that one or is wrapped by it (the server's pipeline nests its stages, a system call passes through several frames), the same time said twice. ")
	p("Where the top by cum is mostly other packages', remedy's own functions get two columns of their own.\n")
	for _, pr := range profiles {
		p("\n### %s\n\n", pr.Path.Title)
		if pr.Err != "" {
			p("`%s`: not profiled: %s\n", pr.Path.Bench, strings.ReplaceAll(pr.Err, "|", `\|`))
			continue
		}
		p("`%s`, %s of samples.\n\n", pr.Path.Bench, formatSeconds(pr.Total))
		// remedy's own functions get columns of their own when the top by cumulative time
		// is someone else's (the network's, the runtime's).
		own := !slices.EqualFunc(pr.Cum, pr.Own, func(a, b ProfileRow) bool { return a.Func == b.Func })
		if own {
			p("| | flat | function | cum | function | cum | remedy's function |\n|---:|---:|---|---:|---|---:|---|\n")
		} else {
			p("| | flat | function | cum | function |\n|---:|---:|---|---:|---|\n")
		}
		for i := range max(len(pr.Flat), len(pr.Cum), len(pr.Own)) {
			cells := []string{fmt.Sprint(i + 1)}
			cells = append(cells, rowCells(pr.Flat, i, true)...)
			cells = append(cells, rowCells(pr.Cum, i, false)...)
			if own {
				cells = append(cells, rowCells(pr.Own, i, false)...)
			}
			p("| %s |\n", strings.Join(cells, " | "))
		}
	}
}

// rowCells are the share and the name of rows[i], flat or cumulative; blank past the end.
func rowCells(rows []ProfileRow, i int, flat bool) []string {
	if i >= len(rows) {
		return []string{"", ""}
	}
	pct := rows[i].CumPct
	if flat {
		pct = rows[i].FlatPct
	}
	return []string{fmt.Sprintf("%.1f %%", pct), funcCell(rows[i].Func)}
}

// funcCell writes a function's name short: remedy's packages without their module path, and
// a generic function's type arguments (which pprof spells out in full) as "…".
func funcCell(fn string) string {
	if i, j := strings.IndexByte(fn, '['), strings.LastIndexByte(fn, ']'); i > 0 && j > i {
		fn = fn[:i+1] + "…" + fn[j:]
	}
	fn = strings.Replace(fn, remedyModule+"/", "", 1)
	fn = strings.Replace(fn, remedyModule+".", "remedy.", 1)
	return "`" + strings.ReplaceAll(fn, "|", `\|`) + "`"
}

func formatSeconds(d time.Duration) string {
	return fmt.Sprintf("%.2f s", d.Seconds())
}
