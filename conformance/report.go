package conformance

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/remedy-go/remedy/internal/termsafe"
)

// Outcome is what a rule's check came to.
type Outcome string

// Outcomes.
const (
	Pass Outcome = "pass"
	Fail Outcome = "fail"
	// Skip: nothing the run could observe tells either way (no 5xx came back, no operation
	// needs confirmation, writes were not allowed, ...); Detail says why.
	Skip Outcome = "skip"
)

// Rule is one clause of the contract: a stable ID to refer to it by, and what it requires in
// one line.
type Rule struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
}

// Exchange is evidence: one request the run sent and an excerpt of the response.
type Exchange struct {
	Request  string `json:"request"` // "POST /v1/invoices {"amount":"x"}", the body cut to a few hundred bytes
	Status   int    `json:"status,omitempty"`
	Response string `json:"response,omitempty"` // the body (or the failure to get one), cut likewise
}

// Finding is one failed check: why it failed, and the exchange that showed it.
type Finding struct {
	Detail   string   `json:"detail"`
	Exchange Exchange `json:"exchange"`
}

// Result is one rule's outcome, with what decided it.
type Result struct {
	Rule
	Outcome Outcome `json:"outcome"`
	// Detail says why the rule failed or was skipped, or what a pass covered. For a failure
	// it is the first finding, and how many more there are.
	Detail string `json:"detail,omitempty"`
	// Evidence holds the exchanges that decided: the offending ones for a failure (the first
	// few), one representative for a pass.
	Evidence []Exchange `json:"evidence,omitempty"`
	// Findings holds every failed check of the rule, in the order the run met them.
	Findings []Finding `json:"findings,omitempty"`
	// Skipped lists the checks of the rule that the run did not make, and why, whatever the
	// outcome: a rule can pass on the operations it checked and skip others ("needs
	// Options.Writes (remedy probe --writes): would send POST /payments ...").
	Skipped []string `json:"skipped,omitempty"`
}

// skips lists why checks of the rule were skipped: for a skipped rule its detail first.
func (r Result) skips() []string {
	var out []string
	if r.Outcome == Skip && r.Detail != "" {
		out = append(out, r.Detail)
	}
	for _, s := range r.Skipped {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Report is the outcome of a run: one Result per rule, in the order the rules are listed.
type Report struct {
	Target   string        `json:"target"` // the base URL probed, or the document linted
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration_ns"`
	Results  []Result      `json:"results"`
}

// OK reports whether no rule failed (skips do not count against it).
func (r *Report) OK() bool { return r.Count(Fail) == 0 }

// Count is how many rules came to o.
func (r *Report) Count(o Outcome) int {
	n := 0
	for _, res := range r.Results {
		if res.Outcome == o {
			n++
		}
	}
	return n
}

// Result returns the result of the rule id.
func (r *Report) Result(id string) (Result, bool) {
	for _, res := range r.Results {
		if res.ID == id {
			return res, true
		}
	}
	return Result{}, false
}

// Failed lists the IDs of the rules that failed, in order.
func (r *Report) Failed() []string {
	var ids []string
	for _, res := range r.Results {
		if res.Outcome == Fail {
			ids = append(ids, res.ID)
		}
	}
	return ids
}

// TextOptions shape WriteText's output.
type TextOptions struct {
	// Color marks outcomes with ANSI colors: for a terminal, not for a file or a pipe.
	Color bool
	// Verbose adds the evidence of passes and the detail of every rule, not only of failures
	// and skips, and shows every finding of a failure and every skipped check, where the
	// default shows the first and counts the rest.
	Verbose bool
}

// WriteText writes the report as a table for people: one line per rule with its outcome and
// statement; then each failure with why and its evidence, each skip with why (and the checks
// skipped by rules that passed or failed on others), and a last line counting the outcomes. The details, the evidence and the target quote the server or the
// document (a response's body, an operation's name): they are written escaped, their control
// characters, escape sequences and bidirectional or invisible characters shown as \x1b,
// \u202e..., so that what a server sent cannot act on the terminal or break a line.
func (r *Report) WriteText(w io.Writer, o TextOptions) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", o.mark(res.Outcome), termsafe.String(res.ID), termsafe.String(res.Statement))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Failures with their evidence, each in a paragraph; then skips, one line each; passes
	// only when verbose.
	var b strings.Builder
	for _, res := range r.Results {
		if res.Outcome == Skip || (res.Outcome == Pass && !o.Verbose) {
			continue
		}
		fmt.Fprintf(&b, "\n%s %s", o.mark(res.Outcome), termsafe.String(res.ID))
		if o.Verbose && len(res.Findings) > 1 {
			fmt.Fprintf(&b, ": %d findings\n", len(res.Findings))
			for _, f := range res.Findings {
				fmt.Fprintf(&b, "  - %s\n", termsafe.String(f.Detail))
				writeExchange(&b, "      ", f.Exchange)
			}
			continue
		}
		detail := res.Detail
		if n := len(res.Findings); n > 1 {
			detail = fmt.Sprintf("%s (and %d more: --verbose or --json lists every one)", res.Findings[0].Detail, n-1)
		}
		if detail != "" {
			fmt.Fprintf(&b, ": %s", termsafe.String(detail))
		}
		b.WriteByte('\n')
		for _, ex := range res.Evidence {
			writeExchange(&b, "    ", ex)
		}
	}
	sep := false
	for _, res := range r.Results {
		skips := res.skips()
		if len(skips) == 0 {
			continue
		}
		if !sep {
			b.WriteByte('\n')
			sep = true
		}
		label := o.mark(Skip) + " " + termsafe.String(res.ID)
		if res.Outcome != Skip {
			label += " (some checks)"
		}
		if !o.Verbose && len(skips) > 1 {
			fmt.Fprintf(&b, "%s: %s (and %d more: --verbose lists every one)\n", label, termsafe.String(skips[0]), len(skips)-1)
			continue
		}
		for _, s := range skips {
			fmt.Fprintf(&b, "%s: %s\n", label, termsafe.String(s))
		}
	}
	fmt.Fprintf(&b, "\n%s: %d passed, %d failed, %d skipped (%s)\n", termsafe.String(r.Target),
		r.Count(Pass), r.Count(Fail), r.Count(Skip), r.Duration.Round(time.Millisecond))
	_, err := io.WriteString(w, b.String())
	return err
}

func writeExchange(b *strings.Builder, indent string, ex Exchange) {
	fmt.Fprintf(b, "%s> %s\n", indent, termsafe.String(ex.Request))
	switch {
	case ex.Status != 0:
		fmt.Fprintf(b, "%s< %d %s\n", indent, ex.Status, termsafe.String(ex.Response))
	case ex.Response != "":
		fmt.Fprintf(b, "%s< %s\n", indent, termsafe.String(ex.Response))
	}
}

func (o TextOptions) mark(out Outcome) string {
	s := strings.ToUpper(string(out))
	if !o.Color {
		return s
	}
	switch out {
	case Pass:
		return "\x1b[32m" + s + "\x1b[0m"
	case Fail:
		return "\x1b[31m" + s + "\x1b[0m"
	default:
		return "\x1b[33m" + s + "\x1b[0m"
	}
}

// WriteJSON writes the report as one indented JSON object, for machines.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteJUnit writes the report as JUnit XML, which CI systems display: one test suite named
// after the target, one test case per rule, a failure element (with every finding) for each
// failure and a skipped element for each skip; the checks a rule skipped go to its output.
func (r *Report) WriteJUnit(w io.Writer) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	type skipped struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Skipped   *skipped `xml:"skipped,omitempty"`
		SystemOut string   `xml:"system-out,omitempty"`
	}
	type testsuite struct {
		XMLName   xml.Name   `xml:"testsuite"`
		Name      string     `xml:"name,attr"`
		Tests     int        `xml:"tests,attr"`
		Failures  int        `xml:"failures,attr"`
		Skipped   int        `xml:"skipped,attr"`
		Time      string     `xml:"time,attr"`
		Timestamp string     `xml:"timestamp,attr"`
		Cases     []testcase `xml:"testcase"`
	}
	s := testsuite{Name: "remedy conformance: " + r.Target, Tests: len(r.Results), Failures: r.Count(Fail),
		Skipped: r.Count(Skip), Time: seconds(r.Duration), Timestamp: r.Started.UTC().Format(time.RFC3339)}
	for _, res := range r.Results {
		c := testcase{Name: res.ID + ": " + res.Statement, Classname: "remedy.conformance", Time: "0"}
		switch res.Outcome {
		case Fail:
			c.Failure = &failure{Message: res.Detail, Text: findingsText(res)}
		case Skip:
			c.Skipped = &skipped{Message: res.Detail}
		default:
			c.SystemOut = strings.TrimSpace(res.Detail + "\n" + evidenceText(res.Evidence))
		}
		for _, s := range res.Skipped {
			if s != c.SystemOut && (c.Skipped == nil || s != c.Skipped.Message) {
				c.SystemOut = strings.TrimSpace(c.SystemOut + "\nskipped: " + s)
			}
		}
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// findingsText is every finding of a failed result with its exchange; for a result without
// findings (a report read from elsewhere), its evidence.
func findingsText(res Result) string {
	if len(res.Findings) == 0 {
		return evidenceText(res.Evidence)
	}
	var b strings.Builder
	for _, f := range res.Findings {
		fmt.Fprintf(&b, "%s\n%s", f.Detail, evidenceText([]Exchange{f.Exchange}))
	}
	return b.String()
}

func evidenceText(ev []Exchange) string {
	var b strings.Builder
	for _, ex := range ev {
		fmt.Fprintf(&b, "> %s\n", ex.Request)
		if ex.Status != 0 || ex.Response != "" {
			fmt.Fprintf(&b, "< %d %s\n", ex.Status, ex.Response)
		}
	}
	return b.String()
}
