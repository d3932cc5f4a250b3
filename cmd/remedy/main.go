// Command remedy makes API failures repairable from a shell: it calls any API that publishes
// an OpenAPI document (or any MCP endpoint) through remedy's try → rewrite → retry loop and
// shows every attempt, probes a live server for the contract and lints an OpenAPI document,
// with reports for people and for CI, and serves the example billing API to try it on.
//
//	remedy serve --addr 127.0.0.1:8080
//	remedy call http://127.0.0.1:8080 create_invoice '{"customer_id":"cus_ada","currency":"EUR","amount":1200}'
//	remedy probe --writes http://127.0.0.1:8080
//	remedy lint openapi.json
//
// Exit status: 0 success, 1 the check failed, 2 usage error, 3 could not run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/remedy-go/remedy/internal/termsafe"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK        = 0 // the call succeeded; probe or lint found no failure
	exitFailed    = 1 // the check failed: a rule failed, the call did not succeed
	exitUsage     = 2 // the command line is wrong
	exitCannotRun = 3 // the server, a file or Redis could not be used
)

// streams are the command's standard files.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// command is one subcommand: its help and what it does.
type command struct {
	name     string
	summary  string        // one line, for the list of commands
	synopsis string        // the usage line
	about    string        // what it does, in a paragraph or two
	examples []string      // command lines
	exits    string        // what its exit statuses mean
	more     func() string // more help, after the flags: lists of rules, say
	// run defines its flags on in.fs, parses in.args with in.parse and runs the command.
	run func(ctx context.Context, in *invocation) error
}

// invocation is one run of a command: its flags, its arguments and its standard files.
type invocation struct {
	streams
	cmd  *command
	fs   *flag.FlagSet
	args []string
}

func (c *command) invoke(ctx context.Context, args []string, s streams) error {
	return c.run(ctx, &invocation{streams: s, cmd: c, fs: newFlagSet(c), args: args})
}

var commands = []*command{serveCommand, callCommand, probeCommand, lintCommand, versionCommand}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

const usageHead = `remedy makes API failures repairable by agents: call an API through remedy's
try → rewrite → retry loop, probe a server for the contract, lint an OpenAPI
document, or serve the example API to try them on.

Usage:
  remedy <command> [flags] [arguments]

Commands:
`

const usageTail = `
Exit status:
  0  success: the call succeeded; probe or lint found no failure
  1  the check failed: a rule failed, the call did not succeed or needs --confirm
  2  usage error: unknown command or flag, wrong number of arguments, invalid JSON
     argument, unknown operation, bad --example
  3  could not run: server or Redis unreachable, file unreadable, document unusable

Errors are one line on stderr, starting "remedy: ".
Run 'remedy help <command>' or 'remedy <command> --help' for a command's flags.
`

func writeUsage(w io.Writer) {
	var b strings.Builder
	b.WriteString(usageHead)
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(&b, "  %-8s %s\n", "help", "print the usage of a command")
	b.WriteString("\nExamples:\n")
	for _, c := range commands {
		if len(c.examples) > 0 {
			fmt.Fprintf(&b, "  %s\n", c.examples[0])
		}
	}
	b.WriteString(usageTail)
	io.WriteString(w, b.String())
}

// run runs the command line args (without the program's name) and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	s := streams{stdin: stdin, stdout: stdout, stderr: stderr}
	defer func() {
		// A bug must not end in a stack trace: say it in one line.
		if p := recover(); p != nil {
			code = report(stderr, &exitError{code: exitCannotRun, msg: fmt.Sprintf("internal error: %v", p)})
		}
	}()
	if len(args) == 0 {
		writeUsage(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(rest) > 0 && !(len(rest) == 1 && rest[0] == "help") {
			if len(rest) > 1 {
				return report(stderr, usagef("help takes one command, got %d arguments", len(rest)))
			}
			c := lookup(rest[0])
			if c == nil {
				return report(stderr, usagef("unknown command %q (see 'remedy --help')", rest[0]))
			}
			return report(stderr, c.invoke(ctx, []string{"--help"}, s))
		}
		writeUsage(stdout)
		return exitOK
	case "-version", "--version":
		name = "version"
	}
	c := lookup(name)
	if c == nil {
		if strings.HasPrefix(name, "-") {
			return report(stderr, usagef("flag %s comes after a command (see 'remedy --help')", name))
		}
		return report(stderr, usagef("unknown command %q (see 'remedy --help')", name))
	}
	return report(stderr, c.invoke(ctx, rest, s))
}

// exitError ends a command with an exit status and, unless msg is empty, one line on stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usagef(format string, a ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, a...)}
}

func cannotRunf(format string, a ...any) error {
	return &exitError{code: exitCannotRun, msg: fmt.Sprintf(format, a...)}
}

// errCheckFailed: the command ran and its output says what failed; nothing more to print.
var errCheckFailed = &exitError{code: exitFailed}

// errHelpShown: the usage was asked for and printed.
var errHelpShown = &exitError{code: exitOK}

// report prints err as one line on stderr and returns its exit status. The line is escaped
// (termsafe): an error may quote a server (a message, a tool's name, a status line), and what
// a server said must not act on the terminal.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		ee = &exitError{code: exitFailed, msg: err.Error()}
	}
	if ee.msg != "" {
		fmt.Fprintf(stderr, "remedy: %s\n", termsafe.String(oneLine(ee.msg)))
	}
	return ee.code
}

// oneLine folds a message that spans lines (some libraries' errors do) into one.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), "; ")
}

// newFlagSet returns the command's flag set: errors are returned, not printed, and the usage
// is printed by parse.
func newFlagSet(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet("remedy "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses the arguments with the flags defined on in.fs, flags and positional arguments
// in any order ("--" ends the flags), and checks the number of positional arguments. --help
// prints the command's usage to stdout and returns errHelpShown.
func (in *invocation) parse(minArgs, maxArgs int) ([]string, error) {
	c, fs, args := in.cmd, in.fs, in.args
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			writeCommandUsage(in.stdout, c, fs)
			return nil, errHelpShown
		}
		if err != nil {
			return nil, usagef("%s: %v (see 'remedy %s --help')", c.name, err, c.name)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...) // after "--", everything is an argument
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if len(pos) < minArgs || len(pos) > maxArgs {
		want := fmt.Sprintf("%d", minArgs)
		switch {
		case maxArgs > minArgs+1:
			want = fmt.Sprintf("%d to %d", minArgs, maxArgs)
		case maxArgs == minArgs+1:
			want = fmt.Sprintf("%d or %d", minArgs, maxArgs)
		}
		return nil, usagef("%s takes %s arguments, got %d (usage: %s)", c.name, want, len(pos), c.synopsis)
	}
	return pos, nil
}

// set reports whether the command line set the flag called name.
func (in *invocation) set(name string) bool {
	set := false
	in.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func writeCommandUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n\n%s\n", c.synopsis, strings.TrimSpace(c.about))
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			b.WriteString("\nFlags:\n")
			first = false
		}
		name, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(&b, "  --%s", f.Name)
		if name != "" {
			fmt.Fprintf(&b, " %s", name)
		}
		fmt.Fprintf(&b, "\n        %s", usage)
		switch f.DefValue {
		case "", "0", "false", "0s":
		default:
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		}
		b.WriteByte('\n')
	})
	if c.more != nil {
		fmt.Fprintf(&b, "\n%s", c.more())
	}
	if len(c.examples) > 0 {
		b.WriteString("\nExamples:\n")
		for _, e := range c.examples {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	if c.exits != "" {
		b.WriteString("\nExit status:\n")
		for _, line := range strings.Split(strings.TrimSpace(c.exits), "\n") {
			fmt.Fprintf(&b, "  %s\n", strings.TrimSpace(line))
		}
	}
	io.WriteString(w, b.String())
}

var versionCommand = &command{
	name:     "version",
	summary:  "print remedy's version",
	synopsis: "remedy version",
	about:    "Version prints the version of the remedy module this command was built from.",
	examples: []string{"remedy version"},
	exits:    "0 printed, 2 usage error",
	run: func(_ context.Context, in *invocation) error {
		if _, err := in.parse(0, 0); err != nil {
			return err
		}
		fmt.Fprintf(in.stdout, "remedy %s\n", version())
		return nil
	},
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// isTerminal reports whether w is a terminal (a character device), without a dependency.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// useColor: ANSI colors only for a terminal, and never when NO_COLOR is set (no-color.org).
func useColor(w io.Writer) bool {
	return isTerminal(w) && os.Getenv("NO_COLOR") == ""
}
