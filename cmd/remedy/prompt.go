package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/remedy-go/remedy"
)

// canPrompt reports whether the call can ask its user: stdin and stderr are both terminals,
// or stdin says it is one (a terminal a test plays, see terminal).
func canPrompt(s streams) bool {
	if t, ok := s.stdin.(terminal); ok {
		return t.Terminal()
	}
	return isTerminalFile(s.stdin) && isTerminal(s.stderr)
}

// terminal is a stdin that says whether a person types into it: what a test gives to drive
// the prompt without a real terminal.
type terminal interface {
	io.Reader
	Terminal() bool
}

// isTerminalFile reports whether r is a terminal (a character device).
func isTerminalFile(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// prompter asks the user on the terminal to approve a confirmation: the operation, the
// payload and what the server said go to w (stderr, so that --json's stdout stays one
// object), and one line is read from r. Only y or yes approves; anything else, the end of the
// input or a read error refuses. Questions are asked one at a time.
type prompter struct {
	mu sync.Mutex
	r  *bufio.Reader
	w  io.Writer
	// onApprove is told what was approved, for the transcript.
	onApprove func(line string)
}

func newPrompter(r io.Reader, w io.Writer, onApprove func(string)) *prompter {
	return &prompter{r: bufio.NewReader(r), w: w, onApprove: onApprove}
}

// Approve asks.
func (p *prompter) Approve(ctx context.Context, ch *remedy.Challenge) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return false, err
	}
	who := "the server asks to confirm this call"
	if ch.Elicited {
		who = "the server asks you (MCP elicitation) to confirm this call"
	}
	fmt.Fprintf(p.w, "%s:\n  operation: %s\n", who, ch.Operation)
	if len(ch.Args) > 0 {
		fmt.Fprintf(p.w, "  payload:   %s\n", compactJSON(ch.Args))
	}
	if msg := strings.TrimSpace(ch.Message); msg != "" && !ch.Elicited {
		fmt.Fprintf(p.w, "  message:   %s\n", msg)
	} else if ch.Elicited && len(ch.Args) == 0 {
		// The arguments were too long for the question's metadata: its text shows them, cut.
		fmt.Fprintf(p.w, "  %s\n", strings.ReplaceAll(msg, "\n", "\n  "))
	}
	fmt.Fprint(p.w, "approve? [y/N] ")
	line, err := p.r.ReadString('\n')
	answer := strings.ToLower(strings.TrimSpace(line))
	if err != nil && answer == "" {
		fmt.Fprintln(p.w)
		return false, nil
	}
	if answer != "y" && answer != "yes" {
		return false, nil
	}
	if p.onApprove != nil {
		p.onApprove(fmt.Sprintf("approved at the terminal: %s %s", ch.Operation, compactJSON(ch.Args)))
	}
	return true, nil
}
