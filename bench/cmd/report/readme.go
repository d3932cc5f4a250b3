package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// The markers around the part of the README's "Measured against the peers" that the report
// writes: everything between them is replaced on each run.
const (
	readmeStart = "<!-- bench:start -->"
	readmeEnd   = "<!-- bench:end -->"
)

// ReadmeSection is what goes between the README's markers: the run in one line, a table of
// the headline figures (rows whose benchmarks did not run are left out), and the goals.
func ReadmeSection(m Meta, tables []*Table) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	rounds := fmt.Sprintf("%d rounds", m.Rounds)
	if m.Rounds == 1 {
		rounds = "one round"
	}
	p("From its last run (%s, %s, %s/%s, %d cores", m.Date, rounds, m.GOOS, m.GOARCH, m.Cores)
	if m.Quick {
		p("; a quick run, indicative only")
	}
	p("). In parentheses, remedy's time over the other's (below 1, remedy is faster), by wall time, and by CPU time too where the two differ by more than 5 %%:\n\n")
	p("| | remedy | against |\n|---|---|---|\n")
	for _, row := range readmeRows(tables) {
		p("| %s | %s | %s |\n", row[0], row[1], row[2])
	}

	p("\n| performance goal | | this run | |\n|---|---|---|---|\n")
	for _, g := range goals {
		o := g.Check(tables)
		short := o.Short
		if o.Verdict == NotMeasured {
			short = "not measured"
		}
		p("| %s | %s | %s | %s |\n", g.Figure, g.Target, short, verdictCell(o))
	}
	p("\n[`BENCHMARKS.md`](BENCHMARKS.md) has every figure with its spread, the method, and where the time goes.\n")
	return b.String()
}

// readmeRows are the README's rows: what was measured, remedy's figure, the others'.
func readmeRows(tables []*Table) [][3]string {
	var rows [][3]string
	add := func(what, ours, theirs string) { rows = append(rows, [3]string{what, ours, theirs}) }

	if t := find(tables, "BenchmarkAgentEnvelope"); t != nil {
		if s := t.stat("1KB", "remedy"); s != nil {
			add("`Parse`, the 1 KB agent envelope", costCell(s), against(t, "1KB", "remedy", "goccy", "encoding-json", "goccy-decode"))
		}
	}
	if t := find(tables, "BenchmarkParse"); t != nil {
		var parts []string
		n := 0
		for _, base := range []string{"goccy", "encoding-json", "goccy-decode"} {
			if m, k := t.MedianRatio("remedy", base); k > 0 {
				n = k
				parts = append(parts, t.Group.name(base)+" ("+readmeRatio(m)+")")
			}
		}
		if len(parts) > 0 {
			add("`Parse` over the corpus", fmt.Sprintf("the median of %d dialects", n), strings.Join(parts, ", "))
		}
	}
	if t := find(tables, "BenchmarkAgentEnvelope"); t != nil {
		if s := t.stat("1KB", "classify"); s != nil {
			add("`Classify`, 1 KB", costCell(s), against(t, "1KB", "classify", "goccy"))
		}
		if s := t.stat("1MB", "remedy"); s != nil {
			theirs := "—"
			if r, ok := t.PerByte("remedy", "1MB", "1KB"); ok {
				theirs = "time per byte " + readmeRatio(r) + " the 1 KB envelope's"
				if g, ok := t.PerByte("goccy", "1MB", "1KB"); ok {
					theirs += " (goccy `Valid`'s: " + formatRatio(g.Value) + ")"
				}
			}
			add("`Parse`, a 1 MB envelope", costCell(s)+", "+formatBytes(s.B), theirs)
		}
	}
	if t := find(tables, "BenchmarkClient"); t != nil {
		if s := t.stat("success", "remedy"); s != nil {
			add("a successful call", costCell(s), against(t, "success", "remedy", "net-http", "retryablehttp", "failsafe"))
		}
	}
	if t := find(tables, "BenchmarkRetry"); t != nil {
		if s := t.stat("503-then-200", "remedy"); s != nil {
			add("a 503 → 200 retried call", costCell(s), against(t, "503-then-200", "remedy", "retryablehttp", "failsafe"))
		}
	}
	if t := find(tables, "BenchmarkServer"); t != nil {
		if s := t.stat("valid", "remedy"); s != nil {
			add("a validated POST on the server", costCell(s), against(t, "valid", "remedy", "net-http", "huma"))
		}
		if s := t.stat("invalid", "remedy"); s != nil {
			add("an invalid POST (3 violations)", costCell(s), against(t, "invalid", "remedy", "net-http", "huma"))
		}
	}
	if t := find(tables, "BenchmarkIdempotency"); t != nil {
		for _, store := range []string{"memory", "redis"} {
			first, replay, none := t.stat(store, "first"), t.stat(store, "replay"), t.stat(store, "nokey")
			if first == nil || replay == nil {
				continue
			}
			ours := "first " + formatNs(first.Ns) + ", replay " + formatNs(replay.Ns)
			f, okF := first.Metrics[roundTripsUnit]
			r, okR := replay.Metrics[roundTripsUnit]
			if okF && okR {
				ours += fmt.Sprintf(" (%s and %s round trips)", formatTrips(f), formatTrips(r))
			}
			theirs := "—"
			if none != nil {
				theirs = "the same POST without a key: " + formatNs(none.Ns)
			}
			name := map[string]string{"memory": "memory store", "redis": "Redis store"}[store]
			add("an idempotent POST, "+name, ours, theirs)
		}
	}
	return rows
}

// costCell is a time with its allocations.
func costCell(s *Stat) string {
	c := formatNs(s.Ns)
	if s.HasMemory {
		c += ", " + allocsPerOp(s.Allocs)
	}
	return c
}

// against lists the baselines of a case: each one's time and the subject's ratio to it.
func against(t *Table, cas, subject string, baselines ...string) string {
	var parts []string
	for _, base := range baselines {
		x := t.stat(cas, base)
		if x == nil {
			continue
		}
		part := t.Group.name(base) + " " + formatNs(x.Ns)
		if r, ok := t.ratio(cas, subject, base); ok {
			part += " (" + readmeRatio(r) + ")"
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

// readmeRatio is a ratio by wall time, with the CPU time's when the two differ by more than
// 5 %: the README shows the disagreement, not every figure.
func readmeRatio(r Ratio) string {
	s := formatRatio(r.Value)
	if r.HasCPU && r.Value > 0 && (r.CPU/r.Value > 1.05 || r.Value/r.CPU > 1.05) {
		s += ", CPU " + formatRatio(r.CPU)
	}
	return s
}

// spliceReadme replaces what lies between the markers in doc with section.
func spliceReadme(doc, section string) (string, error) {
	start := strings.Index(doc, readmeStart)
	end := strings.Index(doc, readmeEnd)
	if start < 0 || end < 0 || end < start {
		return "", fmt.Errorf("no %s … %s markers, in that order", readmeStart, readmeEnd)
	}
	if strings.Count(doc, readmeStart) != 1 || strings.Count(doc, readmeEnd) != 1 {
		return "", errors.New("the markers appear more than once")
	}
	return doc[:start+len(readmeStart)] + "\n" + section + doc[end:], nil
}

// spliceReadmeFile returns the README at path with section between its markers.
func spliceReadmeFile(path, section string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := spliceReadme(string(b), section)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return []byte(doc), nil
}
