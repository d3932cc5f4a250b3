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

var goals = []Goal{
	{"`Parse`, 1 KB agent envelope ÷ `goccy/go-json` `Valid` on the same bytes", "≤ 3×", func(tables []*Table) Outcome {
		r, ok := ratioOf(tables, "BenchmarkAgentEnvelope", "1KB", "remedy", "goccy")
		if !ok {
			return Outcome{}
		}
		return ratioGoal(r, 3, "", true)
	}},
	{"`Parse`, corpus median body ÷ goccy `Valid`", "≤ 5×", func(tables []*Table) Outcome {
		t := find(tables, "BenchmarkParse")
		if t == nil {
			return Outcome{}
		}
		m, n := t.MedianRatio("remedy", "goccy")
		if n == 0 {
			return Outcome{}
		}
		return ratioGoal(m, 5, fmt.Sprintf("median of %d dialects", n), true)
	}},
	{"`Classify`, 1 KB ÷ goccy `Valid`", "≤ 1.5×, 0 allocs", func(tables []*Table) Outcome {
		r, ok := ratioOf(tables, "BenchmarkAgentEnvelope", "1KB", "classify", "goccy")
		if !ok || !r.Subject.HasMemory {
			return Outcome{}
		}
		return ratioGoal(r, 1.5, allocsPerOp(r.Subject.Allocs), r.Subject.Allocs == 0)
	}},
	{"`Parse` ns/byte at 1 MB ÷ at 1 KB", "≤ 1.1×, allocations independent of body size", func(tables []*Table) Outcome {
		t := find(tables, "BenchmarkAgentEnvelope")
		if t == nil {
			return Outcome{}
		}
		r, ok := t.PerByte("remedy", "1MB", "1KB")
		if !ok || !r.Subject.HasMemory || !r.Baseline.HasMemory {
			return Outcome{}
		}
		large, small := r.Subject, r.Baseline
		// The count of allocations is what a body's size must not change; the bytes may
		// grow with what the envelope keeps of it, and are shown.
		extra := fmt.Sprintf("allocs/op %s at 1 KB, %s at 1 MB; B/op %s, %s",
			formatCount(small.Allocs), formatCount(large.Allocs), formatBytes(small.B), formatBytes(large.B))
		return ratioGoal(r, 1.1, extra, large.Allocs <= small.Allocs)
	}},
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
	{"server, valid POST ÷ bare `net/http`", "≤ 1.05×", func(tables []*Table) Outcome {
		r, ok := ratioOf(tables, "BenchmarkServer", "valid", "remedy", "net-http")
		if !ok {
			return Outcome{}
		}
		return ratioGoal(r, 1.05, "", true)
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

// decoderScale says what reading a body into Go values costs the fastest decoder, for the
// goals that measure Parse against goccy's Valid: goccy's own Unmarshal over its Valid on the
// same bodies, and Parse over that Unmarshal. A goal a decoder cannot meet for itself is one
// whose floor is above it. It returns nothing when the run did not measure both.
func decoderScale(tables []*Table) []string {
	var out []string
	if t := find(tables, "BenchmarkAgentEnvelope"); t != nil {
		d, v := t.stat("1KB", "goccy-decode"), t.stat("1KB", "goccy")
		if r, ok := t.ratio("1KB", "remedy", "goccy-decode"); ok && d != nil && v != nil {
			own := newRatio(t.Group, "1KB", d, v)
			out = append(out, fmt.Sprintf("on the 1 KB agent envelope, goccy's `Unmarshal` into a struct of the fields `Parse` keeps "+
				"takes %s its own `Valid`, and `Parse` takes %s that `Unmarshal`", describeScale(own), describeScale(r)))
		}
	}
	if t := find(tables, "BenchmarkParse"); t != nil {
		var own []Ratio
		for _, cas := range t.Cases {
			if d, v := t.stat(cas, "goccy-decode"), t.stat(cas, "goccy"); d != nil && v != nil {
				own = append(own, newRatio(t.Group, cas, d, v))
			}
		}
		if m, n := t.MedianRatio("remedy", "goccy-decode"); n > 0 && len(own) > 0 {
			out = append(out, fmt.Sprintf("over the corpus, goccy's `Unmarshal` into `map[string]any` takes %s its `Valid` at the median "+
				"of %d dialects, and `Parse` takes %s that `Unmarshal`", describeScale(medianOf(t.Group, own)), len(own), describeScale(m)))
		}
	}
	return out
}

// describeScale writes a ratio by wall time, with its CPU-time twin when it was measured.
func describeScale(r Ratio) string {
	s := formatRatio(r.Value)
	if r.HasCPU {
		s += " (CPU " + formatRatio(r.CPU) + ")"
	}
	return s
}
