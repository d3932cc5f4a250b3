package main

import (
	"slices"
)

// Ratio compares a subject with a baseline in one case of a group: below 1 the subject is
// faster. It is taken twice, of the wall times (Value) and of the CPU times (CPU).
type Ratio struct {
	Group             *Group
	Case              string
	Subject, Baseline *Stat // nil for the median of several ratios
	// Value is the median over the rounds of the subject's time over the baseline's in the
	// same round, so that load which comes and goes between rounds cancels out; the ratio of
	// the medians when the two did not run the same rounds.
	Value float64
	// Spread is half the range of the rounds' ratios, relative to Value (0 for one round).
	Spread float64
	// CPU and CPUSpread are Value and Spread of the CPU times, when both sides reported them.
	CPU, CPUSpread float64
	HasCPU         bool
	Samples        int // rounds
	// perRound and cpuPerRound are the rounds' ratios, when the rounds lined up.
	perRound, cpuPerRound []float64
}

// roundRatios is the median over the rounds of a[i]/b[i], half their range relative to it,
// and the rounds' ratios; ma/mb (the ratio of the medians, no spread) when the rounds do not
// line up.
func roundRatios(a, b []float64, ma, mb float64) (value, spread float64, per []float64) {
	value = ma / mb
	if len(a) != len(b) || len(a) == 0 {
		return value, 0, nil
	}
	per = make([]float64, len(a))
	for i := range per {
		if b[i] <= 0 {
			return value, 0, nil
		}
		per[i] = a[i] / b[i]
	}
	value = median(per)
	if lo, hi := minMax(per); len(per) > 1 && value > 0 {
		spread = (hi - lo) / 2 / value
	}
	return value, spread, per
}

// newRatio compares s with b.
func newRatio(g *Group, cas string, s, b *Stat) Ratio {
	r := Ratio{Group: g, Case: cas, Subject: s, Baseline: b, Samples: min(s.Samples, b.Samples)}
	r.Value, r.Spread, r.perRound = roundRatios(s.Rounds, b.Rounds, s.Ns, b.Ns)
	if s.HasCPU && b.HasCPU && s.CPU > 0 && b.CPU > 0 {
		r.HasCPU = true
		r.CPU, r.CPUSpread, r.cpuPerRound = roundRatios(s.CPURounds, b.CPURounds, s.CPU, b.CPU)
	}
	return r
}

// scaled is r with both of its ratios multiplied by k (the spreads, being relative, stay).
func (r Ratio) scaled(k float64) Ratio {
	r.Value *= k
	r.CPU *= k
	r.perRound = scaleAll(r.perRound, k)
	r.cpuPerRound = scaleAll(r.cpuPerRound, k)
	return r
}

func scaleAll(v []float64, k float64) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * k
	}
	return out
}

// medianOf is the median of several ratios (a table's cases): in each round the median of
// that round's ratios, then the median and spread of those over the rounds, as for one
// ratio. When the rounds do not line up it is the median of the ratios, with no spread.
func medianOf(g *Group, rs []Ratio) Ratio {
	m := Ratio{Group: g}
	if len(rs) == 0 {
		return m
	}
	m.Samples = rs[0].Samples
	values, cpus := make([]float64, len(rs)), make([]float64, len(rs))
	m.HasCPU = true
	for i, r := range rs {
		values[i], cpus[i] = r.Value, r.CPU
		m.HasCPU = m.HasCPU && r.HasCPU
		m.Samples = min(m.Samples, r.Samples)
	}
	m.Value, m.Spread, m.perRound = medianPerRound(rs, func(r Ratio) []float64 { return r.perRound }, values)
	if m.HasCPU {
		m.CPU, m.CPUSpread, m.cpuPerRound = medianPerRound(rs, func(r Ratio) []float64 { return r.cpuPerRound }, cpus)
	}
	return m
}

func medianPerRound(rs []Ratio, per func(Ratio) []float64, fallback []float64) (value, spread float64, rounds []float64) {
	n := len(per(rs[0]))
	for _, r := range rs {
		if len(per(r)) != n || n == 0 {
			return median(fallback), 0, nil
		}
	}
	rounds = make([]float64, n)
	col := make([]float64, len(rs))
	for i := range rounds {
		for j, r := range rs {
			col[j] = per(r)[i]
		}
		rounds[i] = median(col)
	}
	value = median(rounds)
	if lo, hi := minMax(rounds); n > 1 && value > 0 {
		spread = (hi - lo) / 2 / value
	}
	return value, spread, rounds
}

// Label names the ratio: its group, its case, and which side is over which.
func (r Ratio) Label() string { return r.Group.Short + " · " + r.CaseLabel() }

// CaseLabel names the ratio within its group.
func (r Ratio) CaseLabel() string {
	if r.Subject == nil || r.Baseline == nil {
		return r.Case
	}
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
	Ratios []Ratio          // every subject over every baseline, case by case
}

// stat is the case's stat of contender c, or nil.
func (t *Table) stat(cas, c string) *Stat { return t.Stats[cas+"/"+c] }

// Contenders lists the contenders of a case in the order the group names them, then any
// other in the order they ran.
func (t *Table) Contenders(cas string) []*Stat {
	var out []*Stat
	named := append(slices.Clone(t.Group.Subjects), t.Group.Baselines...)
	for _, c := range named {
		if s := t.stat(cas, c); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// ratio finds the ratio of subject over baseline in a case.
func (t *Table) ratio(cas, subject, baseline string) (Ratio, bool) {
	for _, r := range t.Ratios {
		if r.Case == cas && r.Subject.Contender == subject && r.Baseline.Contender == baseline {
			return r, true
		}
	}
	return Ratio{}, false
}

// MedianRatio is the median over the cases of subject's ratio to baseline, and how many
// cases it is the median of.
func (t *Table) MedianRatio(subject, baseline string) (Ratio, int) {
	var rs []Ratio
	for _, r := range t.Ratios {
		if r.Subject.Contender == subject && r.Baseline.Contender == baseline {
			rs = append(rs, r)
		}
	}
	m := medianOf(t.Group, rs)
	m.Case = "median"
	return m, len(rs)
}

// PerByte compares contender c's time per byte in case large with that in case small: the
// ratio of their times scaled by the ratio of their bytes per operation. ok is false unless
// both cases ran c with b.SetBytes.
func (t *Table) PerByte(c, large, small string) (Ratio, bool) {
	l, s := t.stat(large, c), t.stat(small, c)
	if l == nil || s == nil || l.Bytes <= 0 || s.Bytes <= 0 || l.Ns <= 0 || s.Ns <= 0 {
		return Ratio{}, false
	}
	r := newRatio(t.Group, large+" ÷ "+small, l, s).scaled(s.Bytes / l.Bytes)
	return r, true
}

// ChartRatios are the ratios the chart draws: those to the baselines the group charts.
func (t *Table) ChartRatios() []Ratio {
	var out []Ratio
	for _, r := range t.Ratios {
		if len(t.Group.Chart) == 0 || slices.Contains(t.Group.Chart, r.Baseline.Contender) {
			out = append(out, r)
		}
	}
	return out
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
		return t.ratio(cas, subject, baseline)
	}
	return Ratio{}, false
}

// fasterOf is a stat whose every round is the faster of a's and b's in that round (by wall
// time, and separately by CPU time): the baseline "the faster of two peers" without picking
// one for the whole run.
func fasterOf(a, b *Stat) *Stat {
	f := &Stat{Bench: a.Bench, Case: a.Case, Contender: a.Contender + "|" + b.Contender,
		Samples: min(a.Samples, b.Samples), Ns: min(a.Ns, b.Ns), HasNs: true}
	f.Rounds = minEach(a.Rounds, b.Rounds)
	if a.HasCPU && b.HasCPU {
		f.HasCPU, f.CPU, f.CPURounds = true, min(a.CPU, b.CPU), minEach(a.CPURounds, b.CPURounds)
	}
	return f
}

func minEach(a, b []float64) []float64 {
	if len(a) != len(b) {
		return nil
	}
	out := make([]float64, len(a))
	for i := range a {
		out[i] = min(a[i], b[i])
	}
	return out
}
