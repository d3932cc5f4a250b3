package main

import (
	"fmt"
	"math"
	"slices"
)

// Ratio compares a subject with a baseline in one case of a group: below 1 the subject is
// faster.
type Ratio struct {
	Group             *Group
	Case              string
	Subject, Baseline *Stat
	// Value is the median over the rounds of the subject's time over the baseline's in the
	// same round, so that load which comes and goes between rounds cancels out; the ratio of
	// the medians when the two did not run the same rounds.
	Value float64
	// Spread is half the range of the rounds' ratios, relative to Value (0 for one round).
	Spread float64
}

// newRatio compares s with b.
func newRatio(g *Group, cas string, s, b *Stat) Ratio {
	r := Ratio{Group: g, Case: cas, Subject: s, Baseline: b, Value: s.Ns / b.Ns}
	if len(s.Rounds) != len(b.Rounds) || len(s.Rounds) == 0 {
		return r
	}
	per := make([]float64, len(s.Rounds))
	for i := range per {
		if b.Rounds[i] <= 0 {
			return r
		}
		per[i] = s.Rounds[i] / b.Rounds[i]
	}
	r.Value = median(per)
	if lo, hi := minMax(per); len(per) > 1 {
		r.Spread = (hi - lo) / 2 / r.Value
	}
	return r
}

// Label names the ratio: its group, its case, and which side is over which.
func (r Ratio) Label() string { return r.Group.Short + " · " + r.CaseLabel() }

// CaseLabel names the ratio within its group.
func (r Ratio) CaseLabel() string {
	s := r.Group.name(r.Subject.Contender) + " ÷ " + r.Group.name(r.Baseline.Contender)
	if r.Case != "" {
		s = r.Case + ": " + s
	}
	return s
}

// Table is one group's measurements.
type Table struct {
	Group  *Group
	Cases  []string         // in the order they ran
	Stats  map[string]*Stat // by case + "/" + contender
	Ratios []Ratio
}

// stat is the case's stat of contender c, or nil.
func (t *Table) stat(cas, c string) *Stat { return t.Stats[cas+"/"+c] }

// Contenders lists the contenders of a case in the order the group names them, then any
// other in the order they ran.
func (t *Table) Contenders(cas string) []*Stat {
	var out []*Stat
	for _, c := range append(slices.Clone(t.Group.Subjects), t.Group.Baselines...) {
		if s := t.stat(cas, c); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// MedianRatio is the median of the table's ratios (Pairs tables: over the cases).
func (t *Table) MedianRatio() float64 {
	v := make([]float64, len(t.Ratios))
	for i, r := range t.Ratios {
		v[i] = r.Value
	}
	return median(v)
}

// Tables builds one table per group that has results, and the ratios of each.
func Tables(stats []*Stat) []*Table {
	var out []*Table
	for _, g := range groups {
		t := &Table{Group: g, Stats: map[string]*Stat{}}
		for _, s := range stats {
			if s.Bench != g.Bench || !s.HasNs {
				continue
			}
			if !slices.Contains(t.Cases, s.Case) {
				t.Cases = append(t.Cases, s.Case)
			}
			t.Stats[s.Case+"/"+s.Contender] = s
		}
		if len(t.Cases) == 0 {
			continue
		}
		for _, cas := range t.Cases {
			for _, sub := range g.Subjects {
				for _, base := range g.Baselines {
					s, b := t.stat(cas, sub), t.stat(cas, base)
					if s == nil || b == nil || s.Ns <= 0 || b.Ns <= 0 {
						continue
					}
					t.Ratios = append(t.Ratios, newRatio(g, cas, s, b))
				}
			}
		}
		out = append(out, t)
	}
	return out
}

// Goal is one of the README's performance goals, checked against the tables.
type Goal struct {
	Text string
	// Check returns what was measured and whether it meets the goal; ok is false when the
	// run did not measure it.
	Check func(tables []*Table) (measured string, met, ok bool)
}

// find returns the table of bench, or nil.
func find(tables []*Table, bench string) *Table {
	for _, t := range tables {
		if t.Group.Bench == bench {
			return t
		}
	}
	return nil
}

// ratioOf finds the ratio of subject over baseline in a case of bench.
func ratioOf(tables []*Table, bench, cas, subject, baseline string) (Ratio, bool) {
	if t := find(tables, bench); t != nil {
		for _, r := range t.Ratios {
			if r.Case == cas && r.Subject.Contender == subject && r.Baseline.Contender == baseline {
				return r, true
			}
		}
	}
	return Ratio{}, false
}

// spreads says how far the rounds' ratios disagreed, and whether that is more than the
// distance from 1.
func spreads(r Ratio) string {
	if r.Subject.Samples < 2 {
		return "one round only"
	}
	s := fmt.Sprintf("the rounds' ratios spread ±%.0f %%", 100*r.Spread)
	if r.Spread*r.Value >= math.Abs(r.Value-1) {
		s += ", more than the difference"
	}
	return s
}

var goals = []Goal{
	{"`Parse` 5× faster than `encoding/json` at the corpus median", func(tables []*Table) (string, bool, bool) {
		t := find(tables, "BenchmarkParse")
		if t == nil || len(t.Ratios) == 0 {
			return "", false, false
		}
		speedup := 1 / t.MedianRatio()
		return fmt.Sprintf("%.2f× (median of %d dialects)", speedup, len(t.Ratios)), speedup >= 5, true
	}},
	{"`Parse` under 2 µs for the 1 KB agent envelope", func(tables []*Table) (string, bool, bool) {
		t := find(tables, "BenchmarkAgentEnvelope")
		if t == nil {
			return "", false, false
		}
		s := t.stat("1KB", "remedy")
		if s == nil {
			return "", false, false
		}
		return fmt.Sprintf("%s", formatNs(s.Ns)), s.Ns < 2000, true
	}},
	{"client overhead at most 5 % over `net/http`", func(tables []*Table) (string, bool, bool) {
		r, ok := ratioOf(tables, "BenchmarkClient", "success", "remedy", "net-http")
		if !ok {
			return "", false, false
		}
		overhead := 100 * (r.Value - 1)
		if math.Abs(overhead) < 0.05 {
			overhead = 0 // not "-0.0 %"
		}
		return fmt.Sprintf("%+.1f %% (%s)", overhead, spreads(r)), r.Value <= 1.05, true
	}},
	{"server pipeline at most 1.25× a bare `net/http` handler", func(tables []*Table) (string, bool, bool) {
		r, ok := ratioOf(tables, "BenchmarkServer", "valid", "remedy", "net-http")
		if !ok {
			return "", false, false
		}
		return fmt.Sprintf("%.2f× (%s)", r.Value, spreads(r)), r.Value <= 1.25, true
	}},
}
