package main

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

// output is two rounds of `go test -bench` as the report runs them, with the lines a real
// run mixes in: headers, a skip and its reason, a log line, custom metrics, PASS.
const output = `goos: linux
goarch: amd64
pkg: github.com/remedy-go/remedy/bench
cpu: AMD EPYC 7B13
BenchmarkParse/agent/remedy-2         	  400000	      2800 ns/op	    1119 B/op	       4 allocs/op
BenchmarkParse/agent/encoding-json-2  	  130000	      8600 ns/op	    2994 B/op	      71 allocs/op
BenchmarkParse/slack/remedy-2         	 1000000	      1000 ns/op	     592 B/op	       2 allocs/op
BenchmarkParse/slack/encoding-json-2  	 1000000	      1100 ns/op	     715 B/op	      15 allocs/op
BenchmarkAgentEnvelope/1KB/remedy-2   	  300000	      3600 ns/op	 280.10 MB/s	    1712 B/op	       6 allocs/op
BenchmarkClient/success/remedy-2      	   30000	     40000 ns/op	    8144 B/op	      93 allocs/op
BenchmarkClient/success/net-http-2    	   30000	     39000 ns/op	    7930 B/op	      90 allocs/op
--- SKIP: BenchmarkIdempotency/redis
    idempotency_test.go:38: redistest: redis-server is not installed, skipping
    more about it
BenchmarkLogLine noise that is not a result
PASS
goos: linux
goarch: amd64
pkg: github.com/remedy-go/remedy/bench
cpu: AMD EPYC 7B13
BenchmarkParse/agent/remedy-2         	  400000	      3000 ns/op	    1119 B/op	       4 allocs/op
BenchmarkParse/agent/encoding-json-2  	  130000	      8000 ns/op	    2994 B/op	      71 allocs/op
BenchmarkParse/slack/remedy-2         	 1000000	      1200 ns/op	     592 B/op	       2 allocs/op
BenchmarkParse/slack/encoding-json-2  	 1000000	      1000 ns/op	     715 B/op	      15 allocs/op
BenchmarkAgentEnvelope/1KB/remedy-2   	  300000	      3400 ns/op	 296.60 MB/s	    1712 B/op	       6 allocs/op
BenchmarkClient/success/remedy-2      	   30000	     42000 ns/op	    8144 B/op	      93 allocs/op
BenchmarkClient/success/net-http-2    	   30000	     40000 ns/op	    7930 B/op	      90 allocs/op
BenchmarkIdempotency/redis
    idempotency_test.go:38: redistest: redis-server is not installed, skipping
--- SKIP: BenchmarkIdempotency/redis
PASS
ok  	github.com/remedy-go/remedy/bench	12.3s
`

func TestParseOutput(t *testing.T) {
	out, err := ParseOutput(strings.NewReader(output))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Header; got["goos"] != "linux" || got["goarch"] != "amd64" || got["cpu"] != "AMD EPYC 7B13" {
		t.Errorf("header %v", got)
	}
	if len(out.Results) != 14 {
		t.Fatalf("%d results, want 14", len(out.Results))
	}
	r := out.Results[4]
	if r.Name != "BenchmarkAgentEnvelope/1KB/remedy" || r.Procs != 2 || r.Iters != 300000 ||
		r.Metrics["ns/op"] != 3600 || r.Metrics["MB/s"] != 280.10 || r.Metrics["B/op"] != 1712 || r.Metrics["allocs/op"] != 6 {
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

func TestSummarizeAndTables(t *testing.T) {
	out, err := ParseOutput(strings.NewReader(output))
	if err != nil {
		t.Fatal(err)
	}
	stats := Summarize(out.Results)
	if len(stats) != 7 {
		t.Fatalf("%d stats, want 7", len(stats))
	}
	s := stats[0]
	if s.Name != "BenchmarkParse/agent/remedy" || s.Bench != "BenchmarkParse" || s.Case != "agent" || s.Contender != "remedy" ||
		s.Samples != 2 || s.Ns != 2900 || s.NsMin != 2800 || s.NsMax != 3000 || s.B != 1119 || s.Allocs != 4 {
		t.Errorf("stat %+v", s)
	}
	if got := s.Spread(); math.Abs(got-100.0/2900) > 1e-9 {
		t.Errorf("spread %v", got)
	}

	tables := Tables(stats)
	if len(tables) != 3 {
		t.Fatalf("%d tables, want 3 (Parse, AgentEnvelope, Client)", len(tables))
	}
	parse := tables[0]
	if len(parse.Ratios) != 2 {
		t.Fatalf("%d parse ratios, want 2", len(parse.Ratios))
	}
	// A ratio is the median of the rounds' ratios (of two: their mean), not the ratio of the
	// medians. agent: 2800/8600 and 3000/8000; slack: 1000/1100 and 1200/1000. The table's
	// median is over the cases.
	agent := (2800.0/8600 + 3000.0/8000) / 2
	slack := (1000.0/1100 + 1200.0/1000) / 2
	if got, want := parse.Ratios[0].Value, agent; math.Abs(got-want) > 1e-9 {
		t.Errorf("agent ratio %v, want %v", got, want)
	}
	if got, want := parse.Ratios[0].Spread, (3000.0/8000-2800.0/8600)/2/agent; math.Abs(got-want) > 1e-9 {
		t.Errorf("agent spread %v, want %v", got, want)
	}
	if got, want := parse.MedianRatio(), (agent+slack)/2; math.Abs(got-want) > 1e-9 {
		t.Errorf("median ratio %v, want %v", got, want)
	}
	if r, ok := ratioOf(tables, "BenchmarkClient", "success", "remedy", "net-http"); !ok || math.Abs(r.Value-(40000.0/39000+42000.0/40000)/2) > 1e-9 {
		t.Errorf("client ratio %+v, %v", r, ok)
	}
	// Rounds that do not line up fall back to the ratio of the medians.
	odd := newRatio(parse.Group, "x", &Stat{Ns: 3, Rounds: []float64{2, 4}}, &Stat{Ns: 2, Rounds: []float64{2}})
	if odd.Value != 1.5 || odd.Spread != 0 {
		t.Errorf("unaligned rounds: %+v", odd)
	}

	var md strings.Builder
	if err := WriteMarkdown(&md, Meta{Command: "go run ./cmd/report", Rounds: 2, Chart: "benchmarks.svg"}, tables, out.Skips); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| agent | 2.90 µs ±3 % | 1 119 | 4 | 8.30 µs ±4 % | 2 994 | 71 | 0.35× ±7 % | 2.85× |",
		"**median of 2**",
		"| `Parse` under 2 µs for the 1 KB agent envelope | 3.50 µs | **not reached** |",
		"| client overhead at most 5 % over `net/http` | +3.8 % (the rounds' ratios spread ±1 %) | reached |",
		"| success | net/http | 39.5 µs ±1 % | 7 930 | 90 | 1.04× ±1 % |",
		"| server pipeline at most 1.25× a bare `net/http` handler | not measured | — |",
		"**Not reached in this run:**",
		"- `BenchmarkIdempotency/redis`: redistest: redis-server is not installed, skipping\n\n",
		"![remedy's time over each peer's and baseline's, per benchmark](benchmarks.svg)",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("BENCHMARKS.md lacks %q:\n%s", want, md.String())
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
