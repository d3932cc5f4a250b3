package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pacingOutput is the pacing workload's run as the report appends it to the rounds' output.
const pacingOutput = `BenchmarkPacing/retry-after/remedy-2         	       1	10400000000 ns/op	         0 after-reset	        50.00 callers	        50.00 limit	         1.000 window-s	       500.0 calls	       500.0 completed	        10.00 floor-s	        50.00 refused	       550.0 requests	        10.40 total-s
BenchmarkPacing/retry-after/remedy-nopacer-2 	       1	2000000000 ns/op	       371.0 after-reset	        50.00 callers	        50.00 limit	         1.000 window-s	       500.0 calls	       129.0 completed	        10.00 floor-s	       387.0 refused	       516.0 requests	         2.000 total-s
BenchmarkPacing/ratelimit/remedy-2           	       1	12500000000 ns/op	         1.000 after-reset	        50.00 callers	        50.00 limit	         1.000 window-s	       500.0 calls	       500.0 completed	        10.00 floor-s	         9.000 refused	       509.0 requests	        12.50 total-s
BenchmarkPacing/ratelimit/failsafe-2         	       1	9100000000 ns/op	        40.00 after-reset	        50.00 callers	        50.00 limit	         1.000 window-s	       500.0 calls	       480.0 completed	        10.00 floor-s	        90.00 refused	       590.0 requests	         9.100 total-s
`

func TestPacingSection(t *testing.T) {
	out, err := ParseOutput(strings.NewReader(output + pacingOutput))
	if err != nil {
		t.Fatal(err)
	}
	rest, runs := splitPacing(out.Results)
	if len(runs) != 4 || len(rest) != len(out.Results)-4 {
		t.Fatalf("%d runs, %d other results of %d", len(runs), len(rest), len(out.Results))
	}
	for _, r := range rest {
		if strings.HasPrefix(r.Name, pacingBench) {
			t.Errorf("%s left among the timings", r.Name)
		}
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, Meta{Rounds: 2}, Tables(Summarize(rest)), out.Skips, runs, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Pacing: many callers, one API key, one rate limit",
		"50 callers start at once and make 10 calls each",
		"admits 50 requests per fixed 1-second window per key",
		"`RateLimit-Policy: \"per-key\";q=50;w=1`",
		"(500 calls at 50 per 1-second: 10.00 s)",
		"| `Retry-After` only | remedy (pacing on) | 500 of 500 | 50 | 550 | 0 | 10.40 s | 1.04× |",
		"| `Retry-After` only | remedy, `WithPacer(nil)` | 129 of 500 | 387 | 516 | 371 | 2.00 s | — |",
		"| `Retry-After` and the `RateLimit` fields | failsafe-go | 480 of 500 | 90 | 590 | 40 | 9.10 s | — |",
		"In this run: remedy (pacing on) against `Retry-After` only, reached; remedy (pacing on) against `Retry-After` and the `RateLimit` fields, " +
			"**not reached**: 1 request sent after a known reset, 1.25× the floor, 9 refused.",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("BENCHMARKS.md lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), "Quick run") {
		t.Error("a full run said it was quick")
	}
	md.Reset()
	if err := WriteMarkdown(&md, Meta{Rounds: 1, Quick: true}, nil, nil, runs[:1], nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "the workload scaled down to 50 callers × 10 calls at 50 requests per window") {
		t.Errorf("the quick run's note:\n%s", md.String())
	}
}

// TestRunPacingFromRecordedOutput renders a recorded run with the workload's figures: the
// section is written, and the workload is not mistaken for a benchmark of the tables.
func TestRunPacingFromRecordedOutput(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "raw.txt"), filepath.Join(dir, "BENCHMARKS.md")
	if err := os.WriteFile(in, []byte(output+pacingOutput), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if err := run([]string{"-in", in, "-out", out, "-readme", "-"}, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "## Pacing") || strings.Contains(string(page), "BenchmarkPacing") {
		t.Errorf("the page:\n%s", page)
	}
}
