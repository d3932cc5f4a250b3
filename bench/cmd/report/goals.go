package main

import (
	"fmt"
	"math"
	"strings"
)

// Verdict is what one run says of a goal.
type Verdict int

const (
	NotMeasured Verdict = iota // the run did not measure it
	Reached
	NotReached
	// Undecided is a ratio goal that the wall times meet and the CPU times do not, or the
	// other way round: the machine's load decided it, not the code, so the run cannot say.
	Undecided
)

// Outcome is a goal checked against one run.
type Outcome struct {
	Measured string // what was measured, with the spread
	Short    string // the same without the spread, for the README
	Verdict  Verdict
	Note     string // why it is undecided
}

// Goal is one of the project's performance goals, checked against the tables.
type Goal struct {
	Figure string // what is measured, as the issue names it
	Target string // the goal, as the issue states it
	Check  func(tables []*Table) Outcome
}

// goals are issue 39's performance goals, in the user's terms: what a call, a retry, a request
// to the server, a tool call over MCP and reading a failure cost beside what a user would
// otherwise use.
var goals = []Goal{
	{"client success ÷ raw `net/http`", "≤ 1.03×, ≤ +3 allocs", func(tables []*Table) Outcome {
		r, ok := ratioOf(tables, "BenchmarkClient", "success", "remedy", "net-http")
		if !ok || !r.Subject.HasMemory || !r.Baseline.HasMemory {
			return Outcome{}
		}
		more := r.Subject.Allocs - r.Baseline.Allocs
		extra := fmt.Sprintf("%+.0f allocs (%s against %s)", more, formatCount(r.Subject.Allocs), formatCount(r.Baseline.Allocs))
		return ratioGoal(r, 1.03, extra, more <= 3)
	}},
	{"503 → 200 retried ÷ the faster of go-retryablehttp and failsafe-go", "≤ 1.0× (keeping the elapsed-budget guarantee)", func(tables []*Table) Outcome {
		t := find(tables, "BenchmarkRetry")
		if t == nil {
			return Outcome{}
		}
		const cas = "503-then-200"
		s, a, b := t.stat(cas, "remedy"), t.stat(cas, "retryablehttp"), t.stat(cas, "failsafe")
		if s == nil || a == nil || b == nil {
			return Outcome{}
		}
		return ratioGoal(newRatio(t.Group, cas, s, fasterOf(a, b)), 1, "over the faster peer of each round", true)
	}},
	{"server, valid POST ÷ bare `net/http` with `encoding/json`", "≤ 1.0×", func(tables []*Table) Outcome {
		r, ok := ratioOf(tables, "BenchmarkServer", "valid", "remedy", "net-http")
		if !ok {
			return Outcome{}
		}
		return ratioGoal(r, 1, "", true)
	}},
	{"server, invalid POST ÷ Huma v2 (same violations)", "≤ 1.0× with our richer envelope", func(tables []*Table) Outcome {
		r, ok := ratioOf(tables, "BenchmarkServer", "invalid", "remedy", "huma")
		if !ok {
			return Outcome{}
		}
		var extra string
		if r.Subject.HasMemory && r.Baseline.HasMemory {
			extra = fmt.Sprintf("%s allocs, %s against %s, %s", formatCount(r.Subject.Allocs), formatBytes(r.Subject.B),
				formatCount(r.Baseline.Allocs), formatBytes(r.Baseline.B))
		}
		return ratioGoal(r, 1, extra, true)
	}},
	{"MCP tool call through the server ÷ a bare go-sdk server with the same tool", "≤ 1.1×", func(tables []*Table) Outcome {
		r, ok := ratioOf(tables, "BenchmarkMCP", "valid", "remedy", "go-sdk")
		if !ok {
			return Outcome{}
		}
		return ratioGoal(r, 1.1, "", true)
	}},
	{"`Parse` over every recorded JSON corpus ÷ `encoding/json` into `map[string]any`", "≤ 0.6×, allocations independent of body size", func(tables []*Table) Outcome {
		t, env := find(tables, "BenchmarkParse"), find(tables, "BenchmarkAgentEnvelope")
		if t == nil || env == nil {
			return Outcome{}
		}
		small, large := env.stat("1KB", "remedy"), env.stat("1MB", "remedy")
		if small == nil || large == nil || !small.HasMemory || !large.HasMemory {
			return Outcome{}
		}
		// Every corpus must meet it: the figure is the dialect that comes nearest to failing.
		var worst Ratio
		var n int
		for _, cas := range t.Cases {
			if notJSON[cas] {
				continue
			}
			if r, ok := t.ratio(cas, "remedy", "encoding-json"); ok {
				if n == 0 || r.Value > worst.Value {
					worst = r
				}
				n++
			}
		}
		if n == 0 {
			return Outcome{}
		}
		extra := fmt.Sprintf("the slowest of %d JSON dialects, %s; allocs/op %s at 1 KB, %s at 1 MB", n, worst.Case,
			formatCount(small.Allocs), formatCount(large.Allocs))
		return ratioGoal(worst, 0.6, extra, large.Allocs <= small.Allocs)
	}},
	{"Redis store round trips, first / replay", "2 / 1 (the minimum): keep", func(tables []*Table) Outcome {
		t := find(tables, "BenchmarkIdempotency")
		if t == nil {
			return Outcome{}
		}
		first, replay := t.stat("redis", "first"), t.stat("redis", "replay")
		if first == nil || replay == nil {
			return Outcome{}
		}
		f, okF := first.Metrics[roundTripsUnit]
		r, okR := replay.Metrics[roundTripsUnit]
		if !okF || !okR {
			return Outcome{}
		}
		// Counts per request, averaged over the loop: a first run of a script (EVALSHA, then
		// EVAL) would show as a fraction above the minimum.
		out := Outcome{Measured: formatTrips(f) + " / " + formatTrips(r), Verdict: Reached}
		out.Short = out.Measured
		if f > 2.005 || r > 1.005 {
			out.Verdict = NotReached
		}
		return out
	}},
}

// notJSON are the corpora whose bodies are not JSON (XML, HTML and plain text): encoding/json
// refuses them at their first byte, so that a ratio to it says nothing of reading them.
var notJSON = map[string]bool{"aws_xml": true, "unstructured": true}

// ratioGoal judges r against limit, with a condition that is not a ratio (an allocation
// count) in extra and cond: reached when both the wall-time and the CPU-time ratio are at
// most limit and cond holds; not reached when cond fails or neither ratio meets limit;
// undecided when the two ratios disagree.
func ratioGoal(r Ratio, limit float64, extra string, cond bool) Outcome {
	out := Outcome{Measured: describeRatio(r, limit), Short: readmeRatio(r)}
	if extra != "" {
		out.Measured += "; " + extra
		out.Short += "; " + extra
	}
	wall := r.Value <= limit
	cpu := wall // without CPU times, the wall time decides alone
	if r.HasCPU {
		cpu = r.CPU <= limit
	}
	switch {
	case !cond || (!wall && !cpu):
		out.Verdict = NotReached
	case wall && cpu:
		out.Verdict = Reached
	case wall:
		out.Verdict, out.Note = Undecided, "the wall time meets it, the CPU time does not"
	default:
		out.Verdict, out.Note = Undecided, "the CPU time meets it, the wall time does not"
	}
	return out
}

// describeRatio writes a ratio by wall time and by CPU time, with how far the rounds
// disagreed and whether that is more than the distance to limit.
func describeRatio(r Ratio, limit float64) string {
	s := formatRatio(r.Value)
	var notes []string
	if r.HasCPU {
		notes = append(notes, "CPU "+formatRatio(r.CPU))
	}
	if r.Samples < 2 {
		notes = append(notes, "one round only")
	} else {
		n := fmt.Sprintf("the rounds' ratios spread ±%.0f %%", 100*r.Spread)
		if r.Spread*r.Value >= math.Abs(r.Value-limit) {
			n += ", more than the distance to the goal"
		}
		notes = append(notes, n)
	}
	return s + " (" + strings.Join(notes, "; ") + ")"
}

// verdictCell is what the goals table says of an outcome.
func verdictCell(o Outcome) string {
	switch o.Verdict {
	case Reached:
		return "reached"
	case NotReached:
		return "**not reached**"
	case Undecided:
		return "undecided: " + o.Note
	}
	return "—"
}

func allocsPerOp(n float64) string {
	if n == 1 {
		return "1 alloc/op"
	}
	return formatCount(n) + " allocs/op"
}

// formatTrips writes a count of round trips per request: whole numbers as such.
func formatTrips(v float64) string {
	if math.Abs(v-math.Round(v)) < 0.005 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// slowerThanPeers lists the ratios of remedy over another library where remedy is slower by
// more than the spread of the rounds' ratios. The floors are left out: remedy does more than
// they do by design, and the goals say by how much it may be slower.
func slowerThanPeers(tables []*Table) []string {
	var out []string
	for _, t := range tables {
		for _, r := range t.Ratios {
			if r.Subject.Contender != "remedy" || floors[r.Baseline.Contender] {
				continue
			}
			if r.Value > 1+r.Spread*r.Value && r.Value > 1.02 {
				out = append(out, fmt.Sprintf("%s (%s)", r.Label(), formatRatio(r.Value)))
			}
		}
	}
	return out
}
