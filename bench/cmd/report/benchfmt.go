package main

import (
	"bufio"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Output is what one or more runs of `go test -bench` printed, read.
type Output struct {
	Header  map[string]string // goos, goarch, pkg, cpu: the first value seen of each
	Results []Result          // every result line, in order
	Skips   []Skip            // benchmarks that skipped, with the reason they gave
}

// Result is one result line: BenchmarkName-P  N  v unit  v unit ...
type Result struct {
	Name    string // without the -GOMAXPROCS suffix
	Procs   int    // the suffix (1 when there is none)
	Iters   int64
	Metrics map[string]float64 // by unit: ns/op, B/op, allocs/op, MB/s, custom units
}

// Skip is a benchmark that called b.Skip, and its first line of explanation.
type Skip struct {
	Name, Reason string
}

// ParseOutput reads the text `go test -bench` writes. Lines it does not know (PASS, ok, logs)
// are ignored; a result line whose metrics do not come in pairs of value and unit is ignored
// too, so that a benchmark's own log line that happens to start with "Benchmark" cannot
// corrupt the figures.
func ParseOutput(r io.Reader) (*Output, error) {
	out := &Output{Header: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	// A benchmark's log lines are indented; under -v they come before its "--- SKIP" line, and
	// a test's come after it.
	var logged string // the first log line since the last line that was not one
	var skipped *Skip // the last SKIP line, when it came without a reason
	for sc.Scan() {
		line := sc.Text()
		if t := strings.TrimSpace(line); strings.HasPrefix(line, "    ") && t != "" {
			if skipped != nil {
				skipped.Reason, skipped = logMessage(t), nil
			} else if logged == "" {
				logged = logMessage(t)
			}
			continue
		}
		skipped = nil
		if name, ok := strings.CutPrefix(line, "--- SKIP: "); ok {
			name, _, _ = strings.Cut(name, " ")
			out.Skips = append(out.Skips, Skip{Name: name, Reason: logged})
			if logged == "" {
				skipped = &out.Skips[len(out.Skips)-1]
			}
			logged = ""
			continue
		}
		logged = ""
		if k, v, ok := strings.Cut(line, ": "); ok && !strings.Contains(k, " ") {
			switch k {
			case "goos", "goarch", "pkg", "cpu":
				if _, seen := out.Header[k]; !seen {
					out.Header[k] = strings.TrimSpace(v)
				}
				continue
			}
		}
		if res, ok := parseResult(line); ok {
			out.Results = append(out.Results, res)
		}
	}
	return out, sc.Err()
}

// logMessage drops the "file_test.go:12: " a log line starts with.
func logMessage(t string) string {
	if loc, msg, ok := strings.Cut(t, ": "); ok && strings.Contains(loc, ".go:") && !strings.Contains(loc, " ") {
		return msg
	}
	return t
}

// parseResult reads one result line.
func parseResult(line string) (Result, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
		return Result{}, false
	}
	iters, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || iters <= 0 {
		return Result{}, false
	}
	res := Result{Name: f[0], Procs: 1, Iters: iters, Metrics: map[string]float64{}}
	if i := strings.LastIndexByte(f[0], '-'); i > 0 {
		if p, err := strconv.Atoi(f[0][i+1:]); err == nil && p > 0 {
			res.Name, res.Procs = f[0][:i], p
		}
	}
	for i := 2; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return Result{}, false
		}
		res.Metrics[f[i+1]] = v
	}
	return res, true
}

// The units of the metrics the report reads beyond go test's own (ns/op, B/op, allocs/op,
// MB/s): the bench module's benchmarks report them by these names.
const (
	cpuUnit        = "cpu-ns/op"     // the process's CPU time per operation
	roundTripsUnit = "roundtrips/op" // round trips to Redis per request
)

// Stat is one benchmark summarized over its samples (one per round).
type Stat struct {
	Name         string
	Bench, Case  string // Name split: BenchmarkX/case/contender
	Contender    string
	Samples      int
	Ns, B        float64   // medians of ns/op and B/op
	Allocs       float64   // median of allocs/op
	CPU          float64   // median of cpu-ns/op
	Rounds       []float64 // ns/op of each sample, in the order they ran: one per round
	CPURounds    []float64 // cpu-ns/op of each sample, when HasCPU
	Bytes        float64   // the bytes per operation the benchmark set (b.SetBytes), from MB/s
	NsMin, NsMax float64
	// Metrics is the median of every unit reported, custom ones included.
	Metrics                  map[string]float64
	HasNs, HasMemory, HasCPU bool // whether ns/op, B/op (with allocs/op) and cpu-ns/op were reported
}

// Spread is half the range of ns/op over the samples, relative to the median: how far the
// rounds disagreed.
func (s *Stat) Spread() float64 {
	if s.Samples < 2 || s.Ns == 0 {
		return 0
	}
	return (s.NsMax - s.NsMin) / 2 / s.Ns
}

// CPUSpread is Spread for the CPU time.
func (s *Stat) CPUSpread() float64 {
	if len(s.CPURounds) < 2 || s.CPU == 0 {
		return 0
	}
	lo, hi := minMax(s.CPURounds)
	return (hi - lo) / 2 / s.CPU
}

// Summarize groups results by name and takes the medians, in the order the names first
// appear.
func Summarize(results []Result) []*Stat {
	byName := map[string]*Stat{}
	samples := map[string]map[string][]float64{}
	var order []*Stat
	for _, r := range results {
		s, ok := byName[r.Name]
		if !ok {
			s = &Stat{Name: r.Name, Metrics: map[string]float64{}}
			s.Bench, s.Case, s.Contender = splitName(r.Name)
			byName[r.Name] = s
			samples[r.Name] = map[string][]float64{}
			order = append(order, s)
		}
		s.Samples++
		for unit, v := range r.Metrics {
			samples[r.Name][unit] = append(samples[r.Name][unit], v)
		}
		// The bytes per operation are what MB/s was computed from.
		if mbs, ns := r.Metrics["MB/s"], r.Metrics["ns/op"]; mbs > 0 && ns > 0 {
			samples[r.Name]["bytes"] = append(samples[r.Name]["bytes"], mbs*ns/1e3)
		}
	}
	for _, s := range order {
		m := samples[s.Name]
		for unit, v := range m {
			s.Metrics[unit] = median(v)
		}
		if ns := m["ns/op"]; len(ns) > 0 {
			s.HasNs = true
			s.Ns = median(ns)
			s.Rounds = ns
			s.NsMin, s.NsMax = minMax(ns)
		}
		if b := m["B/op"]; len(b) > 0 {
			s.HasMemory = true
			s.B = median(b)
			s.Allocs = median(m["allocs/op"])
		}
		if cpu := m[cpuUnit]; len(cpu) > 0 {
			s.HasCPU = true
			s.CPU = median(cpu)
			s.CPURounds = cpu
		}
		s.Bytes = s.Metrics["bytes"]
		delete(s.Metrics, "bytes")
	}
	return order
}

// splitName splits BenchmarkGroup/case/contender; the case is everything between the first
// and the last element, and empty when there are only two.
func splitName(name string) (bench, cas, contender string) {
	parts := strings.Split(name, "/")
	bench = parts[0]
	if len(parts) == 1 {
		return bench, "", ""
	}
	contender = parts[len(parts)-1]
	cas = strings.Join(parts[1:len(parts)-1], "/")
	return bench, cas, contender
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func minMax(v []float64) (lo, hi float64) {
	lo, hi = v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}
