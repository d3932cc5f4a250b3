package main

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// output is two rounds of `go test -bench` as the report runs them, with the lines a real
// run mixes in: headers, a skip and its reason, a log line, custom metrics (cpu-ns/op,
// roundtrips/op), MB/s, PASS. The Retry rows report no CPU time, as an older run would not.
const output = `goos: linux
goarch: amd64
pkg: github.com/remedy-go/remedy/bench
cpu: AMD EPYC 7B13
BenchmarkParse/agent/remedy-2                 400000	      2800 ns/op	      2750 cpu-ns/op	    1119 B/op	       4 allocs/op
BenchmarkParse/agent/goccy-2                 3000000	       400.0 ns/op	       400.0 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkParse/agent/floor-2                50000000	        20.00 ns/op	        20.00 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkParse/agent/encoding-json-2          130000	      8600 ns/op	      8500 cpu-ns/op	    2994 B/op	      71 allocs/op
BenchmarkParse/agent/goccy-decode-2            100000	      2000 ns/op	      2000 cpu-ns/op	    2100 B/op	      40 allocs/op
BenchmarkParse/slack/remedy-2                1000000	      1000 ns/op	      1000 cpu-ns/op	     592 B/op	       2 allocs/op
BenchmarkParse/slack/goccy-2                 4000000	       250.0 ns/op	       250.0 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkParse/slack/floor-2               100000000	        10.00 ns/op	        10.00 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkParse/slack/encoding-json-2         1000000	      1100 ns/op	      1100 cpu-ns/op	     715 B/op	      15 allocs/op
BenchmarkParse/slack/goccy-decode-2            100000	       600 ns/op	       600 cpu-ns/op	     600 B/op	      12 allocs/op
BenchmarkAgentEnvelope/1KB/remedy-2           300000	      3500 ns/op	 300.00 MB/s	      3400 cpu-ns/op	    1712 B/op	       6 allocs/op
BenchmarkAgentEnvelope/1KB/classify-2        1500000	       700.0 ns/op	1500.00 MB/s	       690.0 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkAgentEnvelope/1KB/goccy-2           2000000	       500.0 ns/op	2100.00 MB/s	       500.0 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkAgentEnvelope/1KB/floor-2         100000000	        10.00 ns/op	105000.00 MB/s	        10.00 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkAgentEnvelope/1KB/encoding-json-2     90000	     11000 ns/op	  95.45 MB/s	     11000 cpu-ns/op	    6496 B/op	     171 allocs/op
BenchmarkAgentEnvelope/1KB/goccy-decode-2      100000	      3400 ns/op	300.00 MB/s	      3400 cpu-ns/op	    2016 B/op	      37 allocs/op
BenchmarkAgentEnvelope/1MB/remedy-2              200	   5000000 ns/op	 200.00 MB/s	   5000000 cpu-ns/op	10347053 B/op	    1713 allocs/op
BenchmarkAgentEnvelope/1MB/goccy-2              2400	    420000 ns/op	2380.95 MB/s	    420000 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkClient/success/remedy-2               30000	     40000 ns/op	     39000 cpu-ns/op	    8144 B/op	      93 allocs/op
BenchmarkClient/success/net-http-2             30000	     39000 ns/op	     39500 cpu-ns/op	    7930 B/op	      90 allocs/op
BenchmarkRetry/503-then-200/remedy-2           15000	     80000 ns/op	   17491 B/op	     197 allocs/op
BenchmarkRetry/503-then-200/retryablehttp-2    15000	     70000 ns/op	   15196 B/op	     183 allocs/op
BenchmarkRetry/503-then-200/failsafe-2         15000	     75000 ns/op	   15909 B/op	     199 allocs/op
BenchmarkServer/valid/remedy-2                150000	      8000 ns/op	      8000 cpu-ns/op	    8195 B/op	      49 allocs/op
BenchmarkServer/valid/net-http-2              150000	      8000 ns/op	      8000 cpu-ns/op	    8171 B/op	      51 allocs/op
BenchmarkServer/invalid/remedy-2               50000	     22000 ns/op	     22000 cpu-ns/op	   20217 B/op	     231 allocs/op
BenchmarkServer/invalid/huma-2                100000	     11000 ns/op	     11000 cpu-ns/op	    9208 B/op	      83 allocs/op
BenchmarkIdempotency/memory/nokey-2           150000	      8430 ns/op	      8400 cpu-ns/op	    8196 B/op	      49 allocs/op
BenchmarkMCP/valid/remedy-2                     3000	    800000 ns/op	   1100000 cpu-ns/op	  360051 B/op	     354 allocs/op
BenchmarkMCP/valid/go-sdk-2                     3000	    950000 ns/op	   1280000 cpu-ns/op	  462873 B/op	     645 allocs/op
--- SKIP: BenchmarkIdempotency/redis
    idempotency_test.go:38: redistest: redis-server is not installed, skipping
    more about it
BenchmarkLogLine noise that is not a result
PASS
goos: linux
goarch: amd64
pkg: github.com/remedy-go/remedy/bench
cpu: AMD EPYC 7B13
BenchmarkParse/agent/remedy-2                 400000	      3000 ns/op	      2950 cpu-ns/op	    1119 B/op	       4 allocs/op
BenchmarkParse/agent/goccy-2                 3000000	       500.0 ns/op	       480.0 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkParse/agent/floor-2                50000000	        20.00 ns/op	        20.00 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkParse/agent/encoding-json-2          130000	      8000 ns/op	      8000 cpu-ns/op	    2994 B/op	      71 allocs/op
BenchmarkParse/agent/goccy-decode-2            100000	      2000 ns/op	      2000 cpu-ns/op	    2100 B/op	      40 allocs/op
BenchmarkParse/slack/remedy-2                1000000	      1200 ns/op	      1100 cpu-ns/op	     592 B/op	       2 allocs/op
BenchmarkParse/slack/goccy-2                 4000000	       200.0 ns/op	       200.0 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkParse/slack/floor-2               100000000	        12.00 ns/op	        12.00 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkParse/slack/encoding-json-2         1000000	      1000 ns/op	      1000 cpu-ns/op	     715 B/op	      15 allocs/op
BenchmarkParse/slack/goccy-decode-2            100000	       500 ns/op	       500 cpu-ns/op	     600 B/op	      12 allocs/op
BenchmarkAgentEnvelope/1KB/remedy-2           300000	      3400 ns/op	 308.82 MB/s	      3300 cpu-ns/op	    1712 B/op	       6 allocs/op
BenchmarkAgentEnvelope/1KB/classify-2        1500000	       700.0 ns/op	1500.00 MB/s	       700.0 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkAgentEnvelope/1KB/goccy-2           2000000	       480.0 ns/op	2187.50 MB/s	       480.0 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkAgentEnvelope/1KB/floor-2         100000000	        10.00 ns/op	105000.00 MB/s	        10.00 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkAgentEnvelope/1KB/encoding-json-2     90000	     11200 ns/op	  93.75 MB/s	     11200 cpu-ns/op	    6496 B/op	     171 allocs/op
BenchmarkAgentEnvelope/1KB/goccy-decode-2      100000	      3500 ns/op	300.00 MB/s	      3500 cpu-ns/op	    2016 B/op	      37 allocs/op
BenchmarkAgentEnvelope/1MB/remedy-2              200	   5200000 ns/op	 192.31 MB/s	   5100000 cpu-ns/op	10347053 B/op	    1713 allocs/op
BenchmarkAgentEnvelope/1MB/goccy-2              2400	    400000 ns/op	2500.00 MB/s	    400000 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkClient/success/remedy-2               30000	     42000 ns/op	     41000 cpu-ns/op	    8144 B/op	      93 allocs/op
BenchmarkClient/success/net-http-2             30000	     40000 ns/op	     39000 cpu-ns/op	    7930 B/op	      90 allocs/op
BenchmarkRetry/503-then-200/remedy-2           15000	     78000 ns/op	   17491 B/op	     197 allocs/op
BenchmarkRetry/503-then-200/retryablehttp-2    15000	     80000 ns/op	   15196 B/op	     183 allocs/op
BenchmarkRetry/503-then-200/failsafe-2         15000	     76000 ns/op	   15909 B/op	     199 allocs/op
BenchmarkServer/valid/remedy-2                150000	      8200 ns/op	      8200 cpu-ns/op	    8195 B/op	      49 allocs/op
BenchmarkServer/valid/net-http-2              150000	      8000 ns/op	      8000 cpu-ns/op	    8171 B/op	      51 allocs/op
BenchmarkServer/invalid/remedy-2               50000	     22000 ns/op	     22000 cpu-ns/op	   20217 B/op	     231 allocs/op
BenchmarkServer/invalid/huma-2                100000	     11500 ns/op	     11500 cpu-ns/op	    9208 B/op	      83 allocs/op
BenchmarkIdempotency/memory/nokey-2           150000	      8430 ns/op	      8400 cpu-ns/op	    8196 B/op	      49 allocs/op
BenchmarkMCP/valid/remedy-2                     3000	    810000 ns/op	   1090000 cpu-ns/op	  360019 B/op	     353 allocs/op
BenchmarkMCP/valid/go-sdk-2                     3000	    960000 ns/op	   1270000 cpu-ns/op	  463153 B/op	     645 allocs/op
BenchmarkIdempotency/redis
    idempotency_test.go:38: redistest: redis-server is not installed, skipping
--- SKIP: BenchmarkIdempotency/redis
PASS
ok  	github.com/remedy-go/remedy/bench	12.3s
`

// redisOutput is the Redis rows of a run with redis-server installed.
const redisOutput = `BenchmarkIdempotency/redis/nokey-2     	   12460	      9979 ns/op	      8939 cpu-ns/op	         0 roundtrips/op	    8201 B/op	      49 allocs/op
BenchmarkIdempotency/redis/first-2     	    1528	    133470 ns/op	     60180 cpu-ns/op	         2.000 roundtrips/op	   11073 B/op	     113 allocs/op
BenchmarkIdempotency/redis/replay-2    	    3744	     39903 ns/op	     26353 cpu-ns/op	         1.000 roundtrips/op	    9203 B/op	      79 allocs/op
`

func parse(t *testing.T, text string) (*Output, []*Stat, []*Table) {
	t.Helper()
	out, err := ParseOutput(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	stats := Summarize(out.Results)
	return out, stats, Tables(stats)
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

func TestParseOutput(t *testing.T) {
	out, err := ParseOutput(strings.NewReader(output))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Header; got["goos"] != "linux" || got["goarch"] != "amd64" || got["cpu"] != "AMD EPYC 7B13" {
		t.Errorf("header %v", got)
	}
	if len(out.Results) != 60 {
		t.Fatalf("%d results, want 60", len(out.Results))
	}
	r := out.Results[10]
	if r.Name != "BenchmarkAgentEnvelope/1KB/remedy" || r.Procs != 2 || r.Iters != 300000 ||
		r.Metrics["ns/op"] != 3500 || r.Metrics["MB/s"] != 300 || r.Metrics[cpuUnit] != 3400 ||
		r.Metrics["B/op"] != 1712 || r.Metrics["allocs/op"] != 6 {
		t.Errorf("result %+v", r)
	}
	// The first round has the reason after the SKIP line, as tests print it; the second
	// before, as benchmarks print it under -v.
	want := Skip{"BenchmarkIdempotency/redis", "redistest: redis-server is not installed, skipping"}
	if len(out.Skips) != 2 || out.Skips[0] != want || out.Skips[1] != want {
		t.Errorf("skips %+v, want twice %+v", out.Skips, want)
	}
}

func TestParseResult(t *testing.T) {
	for _, tc := range []struct {
		line  string
		ok    bool
		name  string
		procs int
	}{
		{"BenchmarkX/a/b-8 \t 10 \t 5.5 ns/op", true, "BenchmarkX/a/b", 8},
		{"BenchmarkX/a/b \t 10 \t 5.5 ns/op", true, "BenchmarkX/a/b", 1},                       // GOMAXPROCS 1: no suffix
		{"BenchmarkX/503-then-200/c-2 \t 10 \t 5 ns/op", true, "BenchmarkX/503-then-200/c", 2}, // a dash in the case
		{"BenchmarkX-2 \t 10 \t 5.5 ns/op \t 5.1 cpu-ns/op", true, "BenchmarkX", 2},            // a custom metric
		{"BenchmarkX-2 \t 10 \t 5.5", false, "", 0},                                            // a value without a unit
		{"BenchmarkX-2 \t ten \t 5.5 ns/op", false, "", 0},
		{"BenchmarkX-2 \t 10 \t fast ns/op", false, "", 0},
		{"Benchmarks ran: 3", false, "", 0},
	} {
		r, ok := parseResult(tc.line)
		if ok != tc.ok || (ok && (r.Name != tc.name || r.Procs != tc.procs)) {
			t.Errorf("%q: %+v, %v; want %q, procs %d, %v", tc.line, r, ok, tc.name, tc.procs, tc.ok)
		}
	}
}

func TestSummarize(t *testing.T) {
	_, stats, _ := parse(t, output)
	if len(stats) != 30 {
		t.Fatalf("%d stats, want 30", len(stats))
	}
	s := stats[0]
	if s.Name != "BenchmarkParse/agent/remedy" || s.Bench != "BenchmarkParse" || s.Case != "agent" || s.Contender != "remedy" ||
		s.Samples != 2 || s.Ns != 2900 || s.NsMin != 2800 || s.NsMax != 3000 || s.B != 1119 || s.Allocs != 4 ||
		!s.HasCPU || s.CPU != 2850 || len(s.CPURounds) != 2 {
		t.Errorf("stat %+v", s)
	}
	if got := s.Spread(); !near(got, 100.0/2900) {
		t.Errorf("spread %v", got)
	}
	if got := s.CPUSpread(); !near(got, 100.0/2850) {
		t.Errorf("CPU spread %v", got)
	}
	for _, s := range stats {
		switch {
		case s.Name == "BenchmarkAgentEnvelope/1KB/remedy" && math.Abs(s.Bytes-1050) > 0.01:
			t.Errorf("%s: %v bytes per op, want 1050 (from MB/s)", s.Name, s.Bytes)
		case s.Name == "BenchmarkAgentEnvelope/1MB/remedy" && math.Abs(s.Bytes-1e6)/1e6 > 1e-4:
			t.Errorf("%s: %v bytes per op, want 1e6", s.Name, s.Bytes)
		case s.Bench == "BenchmarkRetry" && s.HasCPU:
			t.Errorf("%s: CPU time where none was reported", s.Name)
		case s.Bench == "BenchmarkParse" && s.Bytes != 0:
			t.Errorf("%s: bytes per op where none were set", s.Name)
		}
	}
}

func TestTablesAndRatios(t *testing.T) {
	_, _, tables := parse(t, output)
	var names []string
	for _, tb := range tables {
		names = append(names, tb.Group.Bench)
	}
	if got := strings.Join(names, " "); got != "BenchmarkParse BenchmarkAgentEnvelope BenchmarkClient BenchmarkRetry BenchmarkServer BenchmarkMCP BenchmarkIdempotency" {
		t.Fatalf("tables %s", got)
	}
	parse := tables[0]
	if len(parse.Ratios) != 8 {
		t.Fatalf("%d parse ratios, want 8 (2 dialects × 4 baselines)", len(parse.Ratios))
	}
	// A ratio is the median of the rounds' ratios (of two: their mean), not the ratio of the
	// medians: agent ÷ goccy is 2800/400 and 3000/500, by CPU 2750/400 and 2950/480.
	r, ok := parse.ratio("agent", "remedy", "goccy")
	if !ok || !near(r.Value, (7.0+6.0)/2) || !near(r.Spread, 0.5/6.5) || !r.HasCPU || !near(r.CPU, (2750.0/400+2950.0/480)/2) {
		t.Errorf("agent ÷ goccy %+v", r)
	}
	// The median over the cases is taken round by round: agent 7 and 6, slack 4 and 6, so
	// the rounds' medians are 5.5 and 6.
	m, n := parse.MedianRatio("remedy", "goccy")
	if n != 2 || !near(m.Value, 5.75) || !near(m.Spread, 0.25/5.75) {
		t.Errorf("median of the goccy column %+v over %d", m, n)
	}
	cpuAgent := []float64{2750.0 / 400, 2950.0 / 480}
	cpuSlack := []float64{1000.0 / 250, 1100.0 / 200}
	if want := ((cpuAgent[0]+cpuSlack[0])/2 + (cpuAgent[1]+cpuSlack[1])/2) / 2; !m.HasCPU || !near(m.CPU, want) {
		t.Errorf("median CPU ratio %v, want %v", m.CPU, want)
	}
	if m, n := parse.MedianRatio("remedy", "encoding-json"); n != 2 || !near(m.Value, ((2800.0/8600+1000.0/1100)/2+(3000.0/8000+1200.0/1000)/2)/2) {
		t.Errorf("median of the encoding/json column %+v", m)
	}
	// Rounds that do not line up fall back to the ratio of the medians.
	odd := newRatio(parse.Group, "x", &Stat{Ns: 3, Rounds: []float64{2, 4}, Samples: 2}, &Stat{Ns: 2, Rounds: []float64{2}, Samples: 1})
	if odd.Value != 1.5 || odd.Spread != 0 || odd.HasCPU {
		t.Errorf("unaligned rounds: %+v", odd)
	}

	// Time per byte: 1 MB at 5e6 and 5.2e6 ns, 1 KB (1050 bytes) at 3500 and 3400 ns.
	env := tables[1]
	pb, ok := env.PerByte("remedy", "1MB", "1KB")
	if want := (5e6/3500 + 5.2e6/3400) / 2 * 1050 / 1e6; !ok || math.Abs(pb.Value-want)/want > 1e-4 {
		t.Errorf("per byte %+v, want %v", pb, want)
	}
	if _, ok := env.PerByte("classify", "1MB", "1KB"); ok {
		t.Error("a per-byte ratio for a contender that ran at one size")
	}

	// The chart draws the baselines the group names: goccy only, for the corpus.
	if got := len(parse.ChartRatios()); got != 2 {
		t.Errorf("%d charted parse ratios, want 2", got)
	}

	// The faster of two peers is taken round by round: 70000 then 76000.
	retry := tables[3]
	f := fasterOf(retry.stat("503-then-200", "retryablehttp"), retry.stat("503-then-200", "failsafe"))
	if got := newRatio(retry.Group, "", retry.stat("503-then-200", "remedy"), f); !near(got.Value, (80000.0/70000+78000.0/76000)/2) || got.HasCPU {
		t.Errorf("over the faster %+v", got)
	}
}

func TestGoals(t *testing.T) {
	_, _, tables := parse(t, output+redisOutput)
	want := []Verdict{
		Undecided,  // client: 1.04× by wall time, 1.02× by CPU time
		NotReached, // retry: 1.08× the faster, no CPU time
		NotReached, // valid POST ÷ net/http: 1.01×
		NotReached, // invalid POST ÷ huma: 1.96×
		Reached,    // MCP ÷ go-sdk: 0.84×
		NotReached, // Parse, the slowest dialect (slack) 1.05× encoding/json; 1713 allocs at 1 MB against 6
		Reached,    // Redis: 2 / 1
	}
	if len(goals) != len(want) {
		t.Fatalf("%d goals, want %d", len(goals), len(want))
	}
	for i, g := range goals {
		o := g.Check(tables)
		if o.Verdict != want[i] {
			t.Errorf("%s: %v (%s), want %v", g.Figure, o.Verdict, o.Measured, want[i])
		}
	}
	// Without the benchmarks, nothing is measured.
	for _, g := range goals {
		if o := g.Check(nil); o.Verdict != NotMeasured {
			t.Errorf("%s measured from no tables: %+v", g.Figure, o)
		}
	}
	// A spread wider than the margin says so.
	r := Ratio{Value: 1.04, Spread: 0.05, Samples: 10, HasCPU: true, CPU: 1.01}
	if got := describeRatio(r, 1.03); got != "1.04× (CPU 1.01×; the rounds' ratios spread ±5 %, more than the distance to the goal)" {
		t.Errorf("describeRatio: %s", got)
	}
	if o := ratioGoal(r, 1.03, "", true); o.Verdict != Undecided || o.Note != "the CPU time meets it, the wall time does not" {
		t.Errorf("ratioGoal %+v", o)
	}
	if o := ratioGoal(Ratio{Value: 0.9, Samples: 1}, 1, "", false); o.Verdict != NotReached {
		t.Errorf("a failed condition: %+v", o)
	}
}

// TestParseGoal holds the Parse goal to each of its conditions: every JSON dialect at most
// 0.6× encoding/json, judged by the slowest (the corpora that are not JSON left out), and no
// more allocations at 1 MB than at 1 KB.
func TestParseGoal(t *testing.T) {
	var goal Goal
	for _, g := range goals {
		if strings.HasPrefix(g.Figure, "`Parse`") {
			goal = g
		}
	}
	rows := func(slack, largeAllocs string) string {
		return `BenchmarkParse/agent/remedy-2            1000	       300 ns/op	       300 cpu-ns/op	     100 B/op	       4 allocs/op
BenchmarkParse/agent/encoding-json-2     1000	      1000 ns/op	      1000 cpu-ns/op	     900 B/op	      70 allocs/op
BenchmarkParse/slack/remedy-2            1000	       ` + slack + ` ns/op	       ` + slack + ` cpu-ns/op	     100 B/op	       2 allocs/op
BenchmarkParse/slack/encoding-json-2     1000	      1000 ns/op	      1000 cpu-ns/op	     700 B/op	      15 allocs/op
BenchmarkParse/aws_xml/remedy-2          1000	      1000 ns/op	      1000 cpu-ns/op	     100 B/op	       2 allocs/op
BenchmarkParse/aws_xml/encoding-json-2   1000	        10 ns/op	        10 cpu-ns/op	      50 B/op	       1 allocs/op
BenchmarkAgentEnvelope/1KB/remedy-2      1000	      3000 ns/op	      3000 cpu-ns/op	    1700 B/op	       4 allocs/op
BenchmarkAgentEnvelope/1MB/remedy-2      1000	   5000000 ns/op	   5000000 cpu-ns/op	 1000000 B/op	    ` + largeAllocs + ` allocs/op
`
	}
	for _, c := range []struct {
		name, slack, largeAllocs string
		want                     Verdict
	}{
		{"every dialect under, flat allocations", "550", "4", Reached},
		{"allocations grow with the body", "550", "1713", NotReached},
		{"one dialect over", "650", "4", NotReached},
	} {
		_, _, tables := parse(t, rows(c.slack, c.largeAllocs))
		o := goal.Check(tables)
		if o.Verdict != c.want || !strings.Contains(o.Measured, "the slowest of 2 JSON dialects, slack") {
			t.Errorf("%s: %v, %s", c.name, o.Verdict, o.Measured)
		}
	}
}

func TestMarkdown(t *testing.T) {
	out, _, tables := parse(t, output+redisOutput)
	profiles := []Profile{
		summarize(hotPaths[2], 220*time.Millisecond, pprofRows(t)),
		{Path: hotPaths[3], Err: "exit status 1: --- FAIL: BenchmarkIdempotency/memory/first"},
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, Meta{Command: "go run ./cmd/report", Rounds: 2, Chart: "benchmarks.svg", ProfileTime: "2s"},
		tables, out.Skips, nil, profiles); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		// The corpus: remedy's figures, each baseline's time, a ratio column per baseline.
		"| case | time/op | CPU/op | B/op | allocs/op | goccy Valid | bytes.Count | encoding/json | goccy Unmarshal | ÷ goccy Valid | ÷ bytes.Count | ÷ encoding/json | ÷ goccy Unmarshal |",
		"| agent | 2.90 µs ±3 % | 2.85 µs ±4 % | 1 119 | 4 | 450 ns ±11 % | 20 ns ±0 % | 8.30 µs ±4 % | 2.00 µs ±0 % | 6.50× ±8 % · CPU 6.51× | 145× ±3 % · CPU 142× | 0.35× ±7 % · CPU 0.35× | 1.45× ±3 % · CPU 1.43× |",
		"| **median of 2** |  |  |  |  |  |  |  |  | **5.75× ±4 % · CPU 5.63×** |",
		// Several subjects: a column per baseline; time per byte.
		"| case | contender | time/op | CPU/op | B/op | allocs/op | time/byte | this ÷ goccy Valid | this ÷ bytes.Count | this ÷ encoding/json | this ÷ goccy Unmarshal |",
		"| 1KB | remedy.Parse | 3.45 µs ±1 % | 3.35 µs ±1 % | 1 712 | 6 | 3.29 ns/B | 7.04× ±1 % · CPU 6.84× | 345× ±1 % · CPU 335× | 0.31× ±2 % · CPU 0.30× | 1.00× ±3 % · CPU 0.97× |",
		"| 1KB | remedy.Classify | 700 ns ±0 % | 695 ns ±1 % | 0 | 0 | 0.667 ns/B | 1.43× ±2 % · CPU 1.42× |",
		"| 1MB | remedy.Parse | 5.10 ms ±2 % | 5.05 ms ±1 % | 10 347 053 | 1 713 | 5.10 ns/B | 12.5× ±4 % · CPU 12.3× | — | — |",
		"Time per byte at 1 MB over time per byte at 1 KB",
		// One subject: its ratio to each other row; no CPU time reported.
		"| 503-then-200 | go-retryablehttp | 75.0 µs ±7 % | — | 15 196 | 183 | 1.06× ±8 % |",
		// A custom metric.
		"| redis | first execution | 133 µs | 60.2 µs | 11 073 | 113 | 2 | 13.4× · CPU 6.73× |",
		// The goals.
		"| figure | measured | goal | |",
		"| MCP tool call through the server ÷ a bare go-sdk server with the same tool | 0.84× (CPU 0.86×; the rounds' ratios spread ±0 %) | ≤ 1.1× | reached |",
		"| `Parse` over every recorded JSON corpus ÷ `encoding/json` into `map[string]any` | 1.05× (CPU 1.00×; the rounds' ratios spread ±14 %); the slowest of 2 JSON dialects, slack; allocs/op 6 at 1 KB, 1 713 at 1 MB | ≤ 0.6×, allocations independent of body size | **not reached** |",
		"| client success ÷ raw `net/http` | 1.04× (CPU 1.02×; the rounds' ratios spread ±1 %, more than the distance to the goal); +3 allocs (93 against 90) | ≤ 1.03×, ≤ +3 allocs | undecided: the CPU time meets it, the wall time does not |",
		"| Redis store round trips, first / replay | 2 / 1 | 2 / 1 (the minimum): keep | reached |",
		"**Not reached in this run:**",
		"**Undecided in this run** (wall and CPU time disagree): client success ÷ raw `net/http`.",
		"- `BenchmarkIdempotency/redis`: redistest: redis-server is not installed, skipping\n\n",
		"![remedy's time over each peer's and baseline's, per benchmark](benchmarks.svg)",
		// The profiles, and one that failed.
		"## Where the time goes",
		"`BenchmarkServer/invalid/remedy`, 0.22 s of samples.",
		"| 1 | 9.1 % | `runtime.asyncPreempt` | 81.8 % | `server.(*API).ServeHTTP` |",
		"| | flat | function | cum | function | cum | remedy's function |",
		"| 3 | 4.5 % | `server.(*Problem).envelope` | 54.5 % | `server.(*API).validate` | 54.5 % | `server.(*API).validate` |",
		"| 5 | 4.5 % | `net/http/httptest.NewRequestWithContext` | 13.6 % | `net/http/httptest.NewRequestWithContext` |  |  |",
		"`BenchmarkIdempotency/memory/first`: not profiled: exit status 1: --- FAIL: BenchmarkIdempotency/memory/first",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("BENCHMARKS.md lacks %q:\n%s", want, md.String())
		}
	}
	// The floors are no peers: remedy being slower than them is not listed as such.
	if i := strings.Index(md.String(), "Where remedy is slower than another library"); i < 0 {
		t.Error("no list of where remedy is slower")
	} else if line, _, _ := strings.Cut(md.String()[i:], "\n"); strings.Contains(line, "goccy Valid") || strings.Contains(line, "bytes.Count") ||
		!strings.Contains(line, "Server · invalid: remedy ÷ huma") || !strings.Contains(line, "Parse · slack: remedy ÷ goccy Unmarshal") {
		t.Errorf("slower than: %s", line)
	}
}

// TestOlderOutput renders a run without CPU times (an older bench module): the tables show
// dashes and the goals are judged by wall time alone.
func TestOlderOutput(t *testing.T) {
	var old strings.Builder
	for line := range strings.Lines(output) {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[0], "Benchmark") {
			var keep []string
			for i := 0; i < len(f); i++ {
				if i+1 < len(f) && f[i+1] == cpuUnit {
					i++
					continue
				}
				keep = append(keep, f[i])
			}
			line = strings.Join(keep, " ") + "\n"
		}
		old.WriteString(line)
	}
	out, stats, tables := parse(t, old.String())
	for _, s := range stats {
		if s.HasCPU {
			t.Fatalf("%s has CPU time", s.Name)
		}
	}
	if o := goals[0].Check(tables); o.Verdict != NotReached {
		t.Errorf("client by wall time alone: %+v", o)
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, Meta{Rounds: 2}, tables, out.Skips, nil, nil); err != nil {
		t.Fatal(err)
	}
	if want := "| agent | 2.90 µs ±3 % | — | 1 119 | 4 | 450 ns ±11 % | 20 ns ±0 % | 8.30 µs ±4 % | 2.00 µs ±0 % | 6.50× ±8 % |"; !strings.Contains(md.String(), want) {
		t.Errorf("lacks %q:\n%s", want, md.String())
	}
	if strings.Contains(md.String(), "Where the time goes") {
		t.Error("a profile section without profiles")
	}
}

// topText is `go tool pprof -top` of a CPU profile of BenchmarkServer/invalid/remedy, cut.
const topText = `File: bench.test
Build ID: bc361cbacabb6fa58f99311bf10ad6aa268bc1c3
Type: cpu
Time: 2026-11-25 01:00:46 UTC
Duration: 472.68ms, Total samples = 220ms (46.54%)
Showing nodes accounting for 220ms, 100% of 220ms total
      flat  flat%   sum%        cum   cum%
      20ms  9.09%  9.09%       20ms  9.09%  runtime.asyncPreempt
      20ms  9.09% 18.18%       20ms  9.09%  runtime.heapSetTypeSmallHeader (inline)
      10ms  4.55% 22.73%       10ms  4.55%  github.com/remedy-go/remedy/server.(*Problem).envelope
      10ms  4.55% 27.27%       40ms 18.18%  github.com/santhosh-tekuri/jsonschema/v6.(*validator).validateVal
      10ms  4.55% 31.82%       30ms 13.64%  net/http/httptest.NewRequestWithContext
      10ms  4.55% 36.36%       10ms  4.55%  slices.insertionSortCmpFunc[go.shape.struct { github.com/remedy-go/remedy.Issue; dups int }] (inline)
         0     0%   100%      180ms 81.82%  github.com/remedy-go/remedy/bench.BenchmarkServer.func1
         0     0%   100%      180ms 81.82%  github.com/remedy-go/remedy/bench.serve
         0     0%   100%      150ms 68.18%  github.com/remedy-go/remedy/server.(*API).ServeHTTP
         0     0%   100%      180ms 81.82%  github.com/remedy-go/remedy/server.(*API).ServeHTTP
         0     0%   100%      180ms 81.82%  testing.(*B).runN
         0     0%   100%      1.50s 95.00%  runtime.goexit
         0     0%   100%      120ms 54.55%  github.com/remedy-go/remedy/server.(*API).validate
`

func pprofRows(t *testing.T) []ProfileRow {
	t.Helper()
	total, rows, err := ParsePprofTop(strings.NewReader(topText))
	if err != nil {
		t.Fatal(err)
	}
	if total != 220*time.Millisecond || len(rows) != 13 {
		t.Fatalf("total %v, %d rows", total, len(rows))
	}
	return rows
}

func TestProfileSummary(t *testing.T) {
	rows := pprofRows(t)
	if r := rows[1]; r.Func != "runtime.heapSetTypeSmallHeader (inline)" || r.Flat != 20*time.Millisecond || r.FlatPct != 9.09 || r.CumPct != 9.09 {
		t.Errorf("row %+v", r)
	}
	if r := rows[11]; r.Cum != 1500*time.Millisecond || r.Flat != 0 {
		t.Errorf("row %+v", r)
	}
	p := summarize(hotPaths[2], 220*time.Millisecond, rows)
	var flat, cum []string
	for _, r := range p.Flat {
		flat = append(flat, r.Func)
	}
	for _, r := range p.Cum {
		cum = append(cum, r.Func)
	}
	// Flat: the five first with time of their own. Cum: by cumulative time, the harness
	// (testing, runtime.goexit, the bench module's closures) left out, ties in pprof's order.
	if got := strings.Join(flat, ", "); got != "runtime.asyncPreempt, runtime.heapSetTypeSmallHeader (inline), "+
		"github.com/remedy-go/remedy/server.(*Problem).envelope, github.com/santhosh-tekuri/jsonschema/v6.(*validator).validateVal, "+
		"net/http/httptest.NewRequestWithContext" {
		t.Errorf("flat: %s", got)
	}
	if got := strings.Join(cum, ", "); got != "github.com/remedy-go/remedy/server.(*API).ServeHTTP, github.com/remedy-go/remedy/server.(*API).ServeHTTP, "+
		"github.com/remedy-go/remedy/server.(*API).validate, github.com/santhosh-tekuri/jsonschema/v6.(*validator).validateVal, "+
		"net/http/httptest.NewRequestWithContext" {
		t.Errorf("cum: %s", got)
	}
	var own []string
	for _, r := range p.Own {
		own = append(own, r.Func)
	}
	if got := strings.Join(own, ", "); got != "github.com/remedy-go/remedy/server.(*API).ServeHTTP, github.com/remedy-go/remedy/server.(*API).ServeHTTP, "+
		"github.com/remedy-go/remedy/server.(*API).validate, github.com/remedy-go/remedy/server.(*Problem).envelope" {
		t.Errorf("remedy's own: %s", got)
	}
	// A chain of functions with the same cumulative time is listed once, by its outermost.
	chain := summarize(hotPaths[2], time.Second, []ProfileRow{
		{Func: remedyModule + "/server.(*API).ServeHTTP", Cum: 690, CumPct: 69},
		{Func: remedyModule + "/server.(*exchange).run", Cum: 689, CumPct: 68.9},
		{Func: remedyModule + "/server.route.func1", Cum: 460, CumPct: 46},
		{Func: remedyModule + "/server.idempotency.func1", Cum: 442, CumPct: 44.2},
		{Func: remedyModule + "/server.(*validator).checkPruned", Cum: 362, CumPct: 36.2},
	})
	if len(chain.Cum) != 3 || chain.Cum[1].Func != remedyModule+"/server.route.func1" || len(chain.Own) != 3 {
		t.Errorf("a chain: %+v", chain.Cum)
	}
	if got := funcCell("slices.insertionSortCmpFunc[go.shape.struct { github.com/remedy-go/remedy.Issue; dups int }] (inline)"); got != "`slices.insertionSortCmpFunc[…] (inline)`" {
		t.Errorf("funcCell: %s", got)
	}

	for _, bad := range []string{"", "Showing nodes\n", "      flat  flat%   sum%        cum   cum%\n 10ms 4.55%\n",
		"      flat  flat%   sum%        cum   cum%\n tenms 4.55% 4.55% 10ms 4.55% f\n"} {
		if _, _, err := ParsePprofTop(strings.NewReader(bad)); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
	if d, err := parsePprofDuration("1.50mins"); err != nil || d != 90*time.Second {
		t.Errorf("1.50mins: %v, %v", d, err)
	}
	if got := (HotPath{Bench: "BenchmarkRetry/503-then-200/remedy"}).pattern(); got != "^BenchmarkRetry$/^503-then-200$/^remedy$" {
		t.Errorf("pattern %s", got)
	}
}

func TestReadme(t *testing.T) {
	_, _, tables := parse(t, output+redisOutput)
	section := ReadmeSection(Meta{Date: "2026-11-25 10:00 UTC", Rounds: 2, GOOS: "linux", GOARCH: "amd64", Cores: 2}, tables)
	for _, want := range []string{
		"From its last run (2026-11-25 10:00 UTC, 2 rounds, linux/amd64, 2 cores).",
		"| `Parse`, the 1 KB agent envelope | 3.45 µs, 6 allocs/op | goccy Valid 490 ns (7.04×), encoding/json 11.1 µs (0.31×), goccy Unmarshal 3.45 µs (1.00×) |",
		"| `Parse` over the corpus | the median of 2 dialects | goccy Valid (5.75×), encoding/json (0.70×), goccy Unmarshal (1.74×) |",
		"| `Parse`, a 1 MB envelope | 5.10 ms, 1 713 allocs/op, 10.3 MB | time per byte 1.55× the 1 KB envelope's (goccy `Valid`'s: 0.88×) |",
		"| a successful call | 41.0 µs, 93 allocs/op | net/http 39.5 µs (1.04×) |",
		"| an idempotent POST, Redis store | first 133 µs, replay 39.9 µs (2 and 1 round trips) | the same POST without a key: 9.98 µs |",
		"| MCP tool call through the server ÷ a bare go-sdk server with the same tool | ≤ 1.1× | 0.84× | reached |",
		"| client success ÷ raw `net/http` | ≤ 1.03×, ≤ +3 allocs | 1.04×; +3 allocs (93 against 90) | undecided: the CPU time meets it, the wall time does not |",
		"| Redis store round trips, first / replay | 2 / 1 (the minimum): keep | 2 / 1 | reached |",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("the README's section lacks %q:\n%s", want, section)
		}
	}
	// Where the wall and CPU ratios differ by more than 5 %, both are shown.
	if got := readmeRatio(Ratio{Value: 13.4, CPU: 6.73, HasCPU: true}); got != "13.4×, CPU 6.73×" {
		t.Errorf("readmeRatio: %s", got)
	}
	if got := readmeRatio(Ratio{Value: 1.04, CPU: 1.02, HasCPU: true}); got != "1.04×" {
		t.Errorf("readmeRatio: %s", got)
	}

	doc := "# remedy\n\n## Measured against the peers\n\nintro\n\n" + readmeStart + "\nold table\n" + readmeEnd + "\n\n## Reliability\n"
	got, err := spliceReadme(doc, "new table\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# remedy\n\n## Measured against the peers\n\nintro\n\n" + readmeStart + "\nnew table\n" + readmeEnd + "\n\n## Reliability\n"; got != want {
		t.Errorf("spliced:\n%s\nwant:\n%s", got, want)
	}
	for _, bad := range []string{"no markers", readmeEnd + readmeStart, readmeStart + readmeEnd + readmeStart + readmeEnd} {
		if _, err := spliceReadme(bad, "x"); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

// TestSVG holds the chart to well-formed XML with one bar per ratio, whatever the ratios.
func TestSVG(t *testing.T) {
	g1, g2 := &Group{Title: "One & <two>", Short: "A"}, &Group{Title: "Three", Short: "B"}
	stat := func(c string) *Stat { return &Stat{Contender: c, Ns: 1} }
	for _, ratios := range [][]Ratio{
		nil,
		{{Group: g1, Case: "x", Subject: stat("remedy"), Baseline: stat("net-http"), Value: 1}},
		{
			{Group: g1, Case: `a "quoted" case`, Subject: stat("remedy"), Baseline: stat("net-http"), Value: 0.031},
			{Group: g1, Case: "b", Subject: stat("remedy"), Baseline: stat("huma"), Value: 1.7},
			{Group: g2, Subject: stat("first"), Baseline: stat("nokey"), Value: 42},
		},
	} {
		var b strings.Builder
		if err := WriteSVG(&b, "remedy & peers", ratios); err != nil {
			t.Fatal(err)
		}
		bars, err := countBars(b.String())
		if err != nil {
			t.Fatalf("%d ratios: not well-formed XML: %v\n%s", len(ratios), err, b.String())
		}
		if bars != len(ratios) {
			t.Errorf("%d bars for %d ratios", bars, len(ratios))
		}
		if strings.Contains(b.String(), "NaN") || strings.Contains(b.String(), "Inf") {
			t.Errorf("a coordinate is not a number:\n%s", b.String())
		}
	}
}

// countBars decodes the whole document and counts the rect elements of class bar inside
// the svg root.
func countBars(doc string) (int, error) {
	d := xml.NewDecoder(strings.NewReader(doc))
	bars, depth, roots := 0, 0, 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if e.Name.Local != "svg" || e.Name.Space != "http://www.w3.org/2000/svg" {
					return 0, errors.New("the root is not an svg element")
				}
			}
			depth++
			if e.Name.Local == "rect" {
				for _, a := range e.Attr {
					if a.Name.Local == "class" && a.Value == "bar" {
						bars++
					}
				}
			}
		case xml.EndElement:
			depth--
		}
	}
	if roots != 1 {
		return 0, errors.New("not exactly one root element")
	}
	return bars, nil
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{formatNs(812.4), "812 ns"},
		{formatNs(3150), "3.15 µs"},
		{formatNs(38200), "38.2 µs"},
		{formatNs(101000), "101 µs"},
		{formatNs(2.5e6), "2.50 ms"},
		{formatCount(0), "0"},
		{formatCount(999), "999"},
		{formatCount(35703), "35 703"},
		{formatCount(1234567), "1 234 567"},
		{formatRatio(0.5), "0.50×"},
		{formatRatio(12.34), "12.3×"},
		{formatBytes(512), "512 B"},
		{formatBytes(1712), "1.71 kB"},
		{formatBytes(10347053), "10.3 MB"},
		{formatPerByte(3.333), "3.33 ns/B"},
		{formatPerByte(0.0096), "0.010 ns/B"},
		{formatTrips(2), "2"},
		{formatTrips(1.0004), "1"},
		{formatTrips(2.5), "2.50"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"1s":           "1s",
		".":            ".",
		"Client|Retry": "'Client|Retry'",
		"it's":         `'it'\''s'`,
		"":             "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestRunFromRecordedOutput runs the command on a recorded output (-in): it writes the page,
// the chart and the README's table between the markers, and leaves the rest of the README.
func TestRunFromRecordedOutput(t *testing.T) {
	dir := t.TempDir()
	in, out, readme := filepath.Join(dir, "raw.txt"), filepath.Join(dir, "BENCHMARKS.md"), filepath.Join(dir, "README.md")
	if err := os.WriteFile(in, []byte(output+redisOutput), 0o644); err != nil {
		t.Fatal(err)
	}
	const before, after = "# remedy\n\n## Measured against the peers\n\n" + readmeStart + "\n", readmeEnd + "\n\n## Reliability\n"
	if err := os.WriteFile(readme, []byte(before+"an old table\n"+after), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if err := run([]string{"-in", in, "-out", out, "-readme", readme}, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "## Goals") || strings.Contains(string(page), "Where the time goes") {
		t.Errorf("the page (no profiles with -in):\n%s", page)
	}
	if _, err := os.Stat(filepath.Join(dir, "benchmarks.svg")); err != nil {
		t.Error(err)
	}
	doc, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(doc); !strings.HasPrefix(s, before) || !strings.HasSuffix(s, after) ||
		strings.Contains(s, "an old table") || !strings.Contains(s, "| a successful call |") {
		t.Errorf("the README:\n%s", doc)
	}

	// A README without the markers stops the run before anything is written.
	if err := os.WriteFile(readme, []byte("# remedy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-in", in, "-out", out, "-readme", readme}, &log); err == nil || !strings.Contains(err.Error(), "markers") {
		t.Errorf("no markers: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the page was written although the README could not be")
	}
}
