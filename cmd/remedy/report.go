package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/remedy-go/remedy/conformance"
)

// reportFlags choose how probe and lint write their report.
type reportFlags struct {
	json    bool
	junit   string
	verbose bool
}

func (r *reportFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&r.json, "json", false, "print the report as JSON instead of text")
	fs.StringVar(&r.junit, "junit", "", "also write the report as JUnit XML to `FILE`, for CI (the text or JSON still goes to stdout)")
	fs.BoolVar(&r.verbose, "verbose", false, "show every rule's detail and the evidence of passes too, and every finding and skipped check of a probe")
}

// write writes rep as the flags say, and returns errCheckFailed when a rule failed.
func (r *reportFlags) write(in *invocation, rep *conformance.Report) error {
	var junitErr error
	if r.junit != "" {
		junitErr = writeJUnit(r.junit, rep)
	}
	var err error
	if r.json {
		err = rep.WriteJSON(in.stdout)
	} else {
		err = rep.WriteText(in.stdout, conformance.TextOptions{Color: useColor(in.stdout), Verbose: r.verbose})
	}
	switch {
	case junitErr != nil:
		return cannotRunf("%s: cannot write the JUnit report: %v", in.cmd.name, junitErr)
	case err != nil:
		return cannotRunf("%s: %v", in.cmd.name, err)
	case !rep.OK():
		return errCheckFailed
	}
	return nil
}

func writeJUnit(path string, rep *conformance.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := rep.WriteJUnit(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ruleList lists rules for a command's help.
func ruleList(title string, rules []conformance.Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", title)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range rules {
		fmt.Fprintf(tw, "  %s\t%s\n", r.ID, r.Statement)
	}
	tw.Flush()
	return b.String()
}
