package conformance

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
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

// Result is one rule's outcome, with what decided it.
type Result struct {
	Rule
	Outcome Outcome `json:"outcome"`
	// Detail says why the rule failed or was skipped, or what a pass covered.
	Detail string `json:"detail,omitempty"`
	// Evidence holds the exchanges that decided: the offending ones for a failure (the first
	// few), one representative for a pass.
	Evidence []Exchange `json:"evidence,omitempty"`
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
	// and skips.
	Verbose bool
}

// WriteText writes the report as a table for people: one line per rule with its outcome and
// statement; then each failure with why and its evidence, each skip with why, and a last
// line counting the outcomes. The details, the evidence and the target quote the server or the
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
		if res.Detail != "" {
			fmt.Fprintf(&b, ": %s", termsafe.String(res.Detail))
		}
		b.WriteByte('\n')
		for _, ex := range res.Evidence {
			fmt.Fprintf(&b, "    > %s\n", termsafe.String(ex.Request))
			switch {
			case ex.Status != 0:
				fmt.Fprintf(&b, "    < %d %s\n", ex.Status, termsafe.String(ex.Response))
			case ex.Response != "":
				fmt.Fprintf(&b, "    < %s\n", termsafe.String(ex.Response))
			}
		}
	}
	if n := r.Count(Skip); n > 0 {
		b.WriteByte('\n')
		for _, res := range r.Results {
			if res.Outcome == Skip {
				fmt.Fprintf(&b, "%s %s: %s\n", o.mark(res.Outcome), termsafe.String(res.ID), termsafe.String(res.Detail))
			}
		}
	}
	fmt.Fprintf(&b, "\n%s: %d passed, %d failed, %d skipped (%s)\n", termsafe.String(r.Target),
		r.Count(Pass), r.Count(Fail), r.Count(Skip), r.Duration.Round(time.Millisecond))
	_, err := io.WriteString(w, b.String())
	return err
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
// after the target, one test case per rule, a failure element (with the evidence) for each
// failure and a skipped element for each skip.
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
			c.Failure = &failure{Message: res.Detail, Text: evidenceText(res.Evidence)}
		case Skip:
			c.Skipped = &skipped{Message: res.Detail}
		default:
			c.SystemOut = strings.TrimSpace(res.Detail + "\n" + evidenceText(res.Evidence))
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
