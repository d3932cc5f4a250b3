package main

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// pacingBench is the benchmark that runs issue 38's workload: once per contender and server,
// outside the rounds, since what it measures is counts and a time the server's windows set.
const pacingBench = "BenchmarkPacing"

// PacingRun is one contender's run of the workload against one server.
type PacingRun struct {
	Server, Contender string
	Callers, Limit    int
	Window            time.Duration
	Calls, Completed  int
	Requests, Refused int
	AfterReset        int
	Total, Floor      time.Duration
}

// splitPacing takes the workload's results out of the benchmarks' results, so that they are
// not summarized as timings.
func splitPacing(results []Result) (rest []Result, runs []PacingRun) {
	for _, r := range results {
		name, ok := strings.CutPrefix(r.Name, pacingBench+"/")
		if !ok {
			rest = append(rest, r)
			continue
		}
		server, contender, _ := strings.Cut(name, "/")
		m := r.Metrics
		seconds := func(unit string) time.Duration { return time.Duration(m[unit] * float64(time.Second)) }
		runs = append(runs, PacingRun{
			Server: server, Contender: contender,
			Callers: int(m["callers"]), Limit: int(m["limit"]), Window: seconds("window-s"),
			Calls: int(m["calls"]), Completed: int(m["completed"]),
			Requests: int(m["requests"]), Refused: int(m["refused"]), AfterReset: int(m["after-reset"]),
			Total: seconds("total-s"), Floor: seconds("floor-s"),
		})
	}
	return rest, runs
}

// runPacingWorkload runs the workload once, at the scale given (quick or full), with the
// binary the rounds ran.
func runPacingWorkload(bin, dir, scale string, log io.Writer) ([]byte, error) {
	fmt.Fprintf(log, "the pacing workload (%s)\n", scale)
	cmd := exec.Command(bin, "-test.v", "-test.run", "^$", "-test.bench", "^"+pacingBench+"$",
		"-test.benchtime", "1x", "-test.count", "1", "-test.timeout", "0", "-pacing", scale)
	cmd.Dir = dir
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	for line := range strings.Lines(buf.String()) {
		if _, ok := parseResult(line); ok {
			fmt.Fprint(log, "  "+line)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the pacing workload: %w\n%s", err, tail(buf.String(), 30))
	}
	return buf.Bytes(), nil
}

var pacingServers = map[string]string{
	"retry-after": "`Retry-After` only",
	"ratelimit":   "`Retry-After` and the `RateLimit` fields",
}

// handful is how many refusals issue 38 allows in all when the server states its limit on
// every answer.
const handful = 5

// writePacing writes the section of the pacing workload: a row per server and contender,
// and issue 38's goals checked against remedy's default client.
func writePacing(b *strings.Builder, m Meta, runs []PacingRun) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	first := runs[0]
	p("\n## Pacing: many callers, one API key, one rate limit\n\n")
	p("The workload of issue 38: %d callers start at once and make %d calls each — a POST with an Idempotency-Key of its own — through one client, ",
		first.Callers, first.Calls/max(first.Callers, 1))
	p("all with the same API key, into a loopback server that admits %d requests per fixed %s window per key and refuses the others with `429` and `Retry-After`: ",
		first.Limit, formatWindow(first.Window))
	p("the seconds until the window ends, rounded up, as servers state them. ")
	p("The second server also states its limit on every answer, in the IETF draft's structured fields (`RateLimit-Policy: \"per-key\";q=%d;w=%d`, `RateLimit: \"per-key\";r=<remaining>;t=<seconds>`) ",
		first.Limit, int(first.Window/time.Second))
	p("and in the older `RateLimit-Limit`, `-Remaining` and `-Reset`. Neither states a wait in milliseconds. ")
	p("Each client has its defaults, but for an `http.Client` shared by all (it adds the key): remedy's `NewClient` (pacing on: the client's own `MemoryPacer`), ")
	p("remedy with `WithPacer(nil)` (pacing off: each call learns the limit for itself; a stated wait still spends no retry budget), ")
	p("two remedy clients in one process, each with a `redispacer.Pacer` of its own on a local `redis-server`, every other call through each (nothing of the pacing shared but Redis), the same in two processes (the test binary run twice, half of the callers in each), go-retryablehttp's `NewClient()` (four retries, each waiting the `Retry-After` of its own refusal), ")
	p("failsafe-go's `failsafehttp.NewRetryPolicyBuilder()` (two retries, waiting the `Retry-After` of its own refusal).\n\n")
	p("*Sent after a known reset* counts the requests the client sent after it had read a `429` whose `Retry-After` announced a reset still ahead. ")
	p("A request already on its way when the refusal was known is not counted, whatever the server saw first: one the client had sent, or, with remedy's pacer, one whose call had last asked its pacer before the pacer held what the refusal said (the pacer is wrapped to note when; for a pacer in Redis, the other client can know a refusal only once Redis holds it, a round trip after it was read; a call that slept on a hold and sent without asking again counts). ")
	p("The floor is the calls over the rate, as the issue counts it (%d calls at %d per %s: %s); ", first.Calls, first.Limit, formatWindow(first.Window), formatSeconds(first.Floor))
	p("with fixed windows the last call can be served as its window opens, one window sooner, so a ratio a little below 1 is possible; a run in which calls failed has no ratio, since it ended when the client gave up. ")
	p("Each row is one run (not rounds): the figures are counts, and a time the server's windows set more than the machine.\n\n")
	if m.Quick {
		p("> **Quick run**: the workload scaled down to %d callers × %d calls at %d requests per window — the same shape (as many callers as a window admits, all at once, several windows of calls) on %d windows instead of ten. `go run ./cmd/report` runs the issue's: 50 callers × 10 calls at 50 per window.\n\n",
			first.Callers, first.Calls/max(first.Callers, 1), first.Limit, (first.Calls+first.Limit-1)/max(first.Limit, 1))
	}
	p("| server | client | calls completed | refused (429) | requests | sent after a known reset | total time | ÷ floor |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range runs {
		// A run in which calls failed ended when the client gave up: its time is no pace.
		ratio := "—"
		if r.Completed == r.Calls && r.Floor > 0 {
			ratio = fmt.Sprintf("%.2f×", r.Total.Seconds()/r.Floor.Seconds())
		}
		p("| %s | %s | %d of %d | %d | %d | %d | %s | %s |\n", pacingServers[r.Server], pacingName(r.Contender),
			r.Completed, r.Calls, r.Refused, r.Requests, r.AfterReset, formatSeconds(r.Total), ratio)
	}
	var checks []string
	for _, r := range runs {
		if r.Contender != "remedy" && r.Contender != "remedy-redis-2proc" {
			continue
		}
		var missed []string
		if r.Completed != r.Calls {
			missed = append(missed, plural(r.Calls-r.Completed, "call")+" failed")
		}
		if r.AfterReset != 0 {
			missed = append(missed, plural(r.AfterReset, "request")+" sent after a known reset")
		}
		if r.Total > r.Floor*12/10 {
			missed = append(missed, fmt.Sprintf("%.2f× the floor", r.Total.Seconds()/r.Floor.Seconds()))
		}
		if r.Server == "ratelimit" && r.Refused > handful {
			missed = append(missed, fmt.Sprintf("%d refused", r.Refused))
		}
		verdict := "reached"
		if len(missed) > 0 {
			verdict = "**not reached**: " + strings.Join(missed, ", ")
		}
		checks = append(checks, fmt.Sprintf("%s against %s, %s", pacingName(r.Contender), pacingServers[r.Server], verdict))
	}
	p("\nIssue 38's goal for remedy's defaults, and for two processes sharing `redispacer`: every call completes, nothing is sent after a known reset, the total within 1.2× the floor, ")
	p("and with the `RateLimit` fields stated at most a handful (%d) of requests refused in all", handful)
	if len(checks) == 0 {
		p(" — not measured in this run.\n")
		return
	}
	p(". In this run: %s.\n", strings.Join(checks, "; "))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func pacingName(c string) string {
	switch c {
	case "remedy":
		return "remedy (pacing on)"
	case "remedy-nopacer":
		return "remedy, `WithPacer(nil)`"
	case "remedy-redis":
		return "remedy, two clients sharing `redispacer`"
	case "remedy-redis-2proc":
		return "remedy, two processes sharing `redispacer`"
	}
	return (&Group{}).name(c)
}

func formatWindow(d time.Duration) string {
	if d == time.Second {
		return "1-second"
	}
	return d.String()
}
