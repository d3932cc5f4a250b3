// Command report runs the benchmarks of the bench module and writes BENCHMARKS.md and
// benchmarks.svg at the root of the repository, and the table of the README's "Measured
// against the peers": medians over several rounds, the ratios of remedy to each peer and
// baseline by wall time and by CPU time, the performance goals checked against them, and a CPU
// profile of each hot path.
//
// Run it from the bench directory:
//
//	go run ./cmd/report            # 10 rounds of -benchtime 500ms: several minutes
//	go run ./cmd/report -quick     # 1 round of -benchtime 100ms: to check that it all works
//
// It compiles the benchmarks once (go test -c) and runs the binary once per round, every
// benchmark in each round, so that the contenders of a table meet the same machine; a ratio
// is the median over the rounds of the two sides' times in the same round. After the rounds
// it runs each hot path once more with -cpuprofile and reads the profile with go tool pprof
// (-profile=false skips it). Set REMEDY_REQUIRE_REDIS=1 to fail rather than skip the Redis
// benchmarks when redis-server is not installed.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(args []string, log io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	rounds := fs.Int("rounds", 10, "rounds: each runs every benchmark once")
	benchtime := fs.String("benchtime", "500ms", "-benchtime of each benchmark in each round")
	quick := fs.Bool("quick", false, "one round of -benchtime 100ms (overrides -rounds and -benchtime)")
	bench := fs.String("bench", ".", "which benchmarks, as go test -bench")
	out := fs.String("out", "", "the Markdown written (default: BENCHMARKS.md at the repository root)")
	svg := fs.String("svg", "", "the chart written (default: benchmarks.svg beside -out)")
	in := fs.String("in", "", "read `go test -bench` output from this file instead of running the benchmarks")
	raw := fs.String("raw", "", "also save the benchmarks' raw output to this file")
	profile := fs.Bool("profile", true, "profile each hot path once after the rounds (not with -in)")
	profiletime := fs.String("profiletime", "2s", "-benchtime of each profile (-quick: 500ms)")
	pacing := fs.Bool("pacing", true, "run the pacing workload once after the rounds: the issue's 500 calls, or with -quick a scaled-down one (not with -in)")
	readme := fs.String("readme", "", "the README whose part between "+readmeStart+" and "+readmeEnd+
		" is rewritten (default: README.md at the repository root when -out is not set; \"-\": none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		*rounds, *benchtime = 1, "100ms"
		if !set["profiletime"] {
			*profiletime = "500ms"
		}
	}
	if *rounds < 1 {
		return errors.New("-rounds must be at least 1")
	}

	benchDir, err := moduleDir()
	if err != nil {
		return err
	}
	root := filepath.Dir(benchDir)
	if *out == "" {
		*out = filepath.Join(root, "BENCHMARKS.md")
	}
	if *readme == "" && !set["out"] {
		*readme = filepath.Join(root, "README.md")
	}
	if *svg == "" {
		*svg = filepath.Join(filepath.Dir(*out), "benchmarks.svg")
	}

	// What was measured is what the tree held when the benchmarks were compiled.
	loadBefore, remedy := loadAverage(), remedyVersion(root)
	var text []byte
	var profiles []Profile
	if *in != "" {
		if text, err = os.ReadFile(*in); err != nil {
			return err
		}
	} else {
		tmp, err := os.MkdirTemp("", "remedy-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		bin := filepath.Join(tmp, "bench.test")
		if text, err = runBenchmarks(benchDir, bin, *rounds, *benchtime, *bench, log); err != nil {
			return err
		}
		if *pacing {
			scale := "full"
			if *quick {
				scale = "quick"
			}
			out, err := runPacingWorkload(bin, benchDir, scale, log)
			if err != nil {
				return err
			}
			text = append(text, out...)
		}
		if *profile {
			profiles = profileHotPaths(bin, benchDir, tmp, *profiletime, log)
		}
	}
	if *raw != "" {
		if err := os.WriteFile(*raw, text, 0o644); err != nil {
			return err
		}
	}

	parsed, err := ParseOutput(bytes.NewReader(text))
	if err != nil {
		return err
	}
	var pacingRuns []PacingRun
	parsed.Results, pacingRuns = splitPacing(parsed.Results)
	if len(parsed.Results) == 0 {
		return errors.New("no benchmark results in the output")
	}
	stats := Summarize(parsed.Results)
	tables := Tables(stats)

	chart, err := filepath.Rel(filepath.Dir(*out), *svg)
	if err != nil {
		chart = *svg
	}
	// The command as it regenerates this page: the flags that shape the measurement, not
	// where the files went.
	command := "cd bench && go run ./cmd/report"
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "quick":
			command += " -quick"
		case "rounds", "benchtime", "bench":
			if !*quick {
				command += " -" + f.Name + " " + shellQuote(f.Value.String())
			}
		}
	})
	meta := Meta{
		Date:      time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		Command:   command,
		Rounds:    maxSamples(stats),
		Benchtime: *benchtime,
		Quick:     *quick,
		GOOS:      orDefault(parsed.Header["goos"], runtime.GOOS),
		GOARCH:    orDefault(parsed.Header["goarch"], runtime.GOARCH),
		CPU:       cpuModel(parsed.Header["cpu"]),
		Cores:     runtime.NumCPU(),
		Procs:     parsed.Results[0].Procs,
		Go:        goVersion(benchDir),
		Remedy:    remedy,
		Peers:     peerVersions(benchDir),
		Redis:     redisVersion(),
		Chart:     filepath.ToSlash(chart),
	}
	if len(profiles) > 0 {
		meta.ProfileTime = *profiletime
	}
	if loadBefore != "" && *in == "" {
		meta.Load = loadBefore + " before, " + loadAverage() + " after"
	}

	var md bytes.Buffer
	if err := WriteMarkdown(&md, meta, tables, parsed.Skips, pacingRuns, profiles); err != nil {
		return err
	}
	var ratios []Ratio
	for _, t := range tables {
		ratios = append(ratios, t.ChartRatios()...)
	}
	var pic bytes.Buffer
	if err := WriteSVG(&pic, "remedy against its peers and baselines", ratios); err != nil {
		return err
	}
	// The README is spliced before anything is written, so that a README without its
	// markers stops the run with every file as it was.
	var readmeDoc []byte
	if *readme != "-" && *readme != "" {
		if readmeDoc, err = spliceReadmeFile(*readme, ReadmeSection(meta, tables)); err != nil {
			return fmt.Errorf("the README's table: %w", err)
		}
	}
	for _, dir := range []string{filepath.Dir(*out), filepath.Dir(*svg)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(*out, md.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(*svg, pic.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(log, "wrote %s and %s\n", *out, *svg)
	if readmeDoc != nil {
		if err := os.WriteFile(*readme, readmeDoc, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(log, "wrote the table of %s\n", *readme)
	}
	return nil
}

// runBenchmarks compiles the benchmarks once, to bin, and runs them rounds times, returning
// what they printed. Each result line is echoed to log as it comes.
func runBenchmarks(dir, bin string, rounds int, benchtime, bench string, log io.Writer) ([]byte, error) {
	build := exec.Command("go", "test", "-c", "-o", bin, ".")
	build.Dir = dir
	build.Stdout, build.Stderr = log, log
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("go test -c: %w", err)
	}
	var all bytes.Buffer
	for i := 1; i <= rounds; i++ {
		fmt.Fprintf(log, "round %d of %d\n", i, rounds)
		// -test.v prints the reason a benchmark skipped.
		// The pacing workload runs once, after the rounds (runPacingWorkload).
		cmd := exec.Command(bin, "-test.v", "-test.run", "^$", "-test.bench", bench, "-test.skip", "^"+pacingBench+"$", "-test.benchmem",
			"-test.benchtime", benchtime, "-test.count", "1", "-test.timeout", "0")
		cmd.Dir = dir // the corpus is read from ../testdata
		var buf bytes.Buffer
		pr, pw := io.Pipe()
		cmd.Stdout, cmd.Stderr = pw, pw
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(io.TeeReader(pr, &buf))
			for sc.Scan() {
				line := sc.Text()
				if _, ok := parseResult(line); ok || strings.HasPrefix(line, "--- ") {
					fmt.Fprintln(log, "  "+line)
				}
			}
			io.Copy(io.Discard, pr)
		}()
		err := cmd.Run()
		pw.Close()
		<-done
		all.Write(buf.Bytes())
		if err != nil {
			return nil, fmt.Errorf("round %d: %w\n%s", i, err, tail(buf.String(), 30))
		}
	}
	return all.Bytes(), nil
}

// moduleDir is the directory of the bench module (the report is run from inside it).
func moduleDir() (string, error) {
	b, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(b))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not in a module: run from the bench directory (cd bench && go run ./cmd/report)")
	}
	dir := filepath.Dir(gomod)
	if filepath.Base(dir) != "bench" {
		return "", fmt.Errorf("%s is not the bench module: run from the bench directory", gomod)
	}
	return dir, nil
}

// maxSamples is the number of rounds that produced results.
func maxSamples(stats []*Stat) int {
	n := 0
	for _, s := range stats {
		n = max(n, s.Samples)
	}
	return n
}

// cpuModel prefers /proc/cpuinfo's model name (go test prints a shorter one on some machines).
func cpuModel(fromTest string) string {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				if v = strings.TrimSpace(v); v != "" {
					return v
				}
			}
		}
	}
	return fromTest
}

func goVersion(dir string) string {
	cmd := exec.Command("go", "env", "GOVERSION")
	cmd.Dir = dir
	if b, err := cmd.Output(); err == nil {
		return strings.TrimSpace(string(b))
	}
	return runtime.Version()
}

// remedyVersion names the commit measured, and says when the tree had changes on top of it.
// The files the report writes are not counted: a previous run's output changes nothing that
// is measured.
func remedyVersion(root string) string {
	head, err := exec.Command("git", "-C", root, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "the working tree (not a git checkout)"
	}
	s := "commit " + strings.TrimSpace(string(head))
	status := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no", "--",
		".", ":(exclude)BENCHMARKS.md", ":(exclude)benchmarks.svg", ":(exclude)README.md")
	if st, err := status.Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		s += " with uncommitted changes"
	}
	return s
}

// peerVersions lists the peers as the bench module requires them.
func peerVersions(dir string) []string {
	peers := []string{"github.com/goccy/go-json", "github.com/hashicorp/go-retryablehttp", "github.com/failsafe-go/failsafe-go",
		"github.com/danielgtaylor/huma/v2", "github.com/redis/go-redis/v9"}
	cmd := exec.Command("go", append([]string{"list", "-m", "-f", "{{.Path}} {{.Version}}"}, peers...)...)
	cmd.Dir = dir
	b, err := cmd.Output()
	if err != nil {
		return peers
	}
	var out []string
	for line := range strings.Lines(strings.TrimSpace(string(b))) {
		out = append(out, "`"+strings.Replace(strings.TrimSpace(line), " ", "` ", 1))
	}
	return out
}

// redisVersion is redis-server's version line, or empty when it is not installed.
func redisVersion() string {
	b, err := exec.Command("redis-server", "--version").Output()
	if err != nil {
		return ""
	}
	for _, f := range strings.Fields(string(b)) {
		if v, ok := strings.CutPrefix(f, "v="); ok {
			return "redis-server " + v
		}
	}
	return strings.TrimSpace(string(b))
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain characters.
func shellQuote(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("./_-", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// loadAverage is the first three fields of /proc/loadavg, or empty.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
