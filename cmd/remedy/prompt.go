package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/termsafe"
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
//
// What it shows is what runs: for a token challenge the loop fills Operation and Args from
// the call it will send again (the server's words are only Message), and the payload is shown
// as its exact bytes. Every string is escaped (termsafe) and written on a line of its own
// after a label, so that nothing a server sends can move the cursor, erase a line, retitle
// the window or write a line that looks like the prompt's own.
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
func (p *prompter) Approve(ctx context.Context, ch *client.Challenge) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return false, err
	}
	var b strings.Builder
	switch {
	case ch.Elicited && ch.Unverified:
		// The operation and the arguments are the server's account of the call it asks about
		// (MCP elicitation), matched to no call of this client's.
		b.WriteString("the server asks you (MCP elicitation) to confirm a call, as it describes it (not one this client is known to have sent):\n")
	case ch.Elicited:
		// The call in flight the question is about, from the client's own record.
		b.WriteString("the server asks you (MCP elicitation) to confirm this call:\n")
	default:
		b.WriteString("the server asks to confirm this call:\n")
	}
	fmt.Fprintf(&b, "  operation: %s\n", termsafe.String(ch.Operation))
	msg := strings.TrimSpace(ch.Message)
	switch {
	case len(ch.Args) > 0:
		// The exact bytes the token is bound to, escaped for display only: not compacted or
		// re-encoded, so that what is read is what is sent.
		fmt.Fprintf(&b, "  payload:   %s\n", termsafe.String(string(ch.Args)))
	case ch.Elicited:
		// No arguments in the question's metadata (remedy's server leaves out those too long
		// to show): its text shows them, cut.
		b.WriteString("  payload:   (not in the server's question: its message may show it)\n")
	}
	if msg != "" && (!ch.Elicited || len(ch.Args) == 0) {
		fmt.Fprintf(&b, "  the server's message (its words, not what runs): %s\n", termsafe.String(msg))
	}
	b.WriteString("approve? [y/N] ")
	io.WriteString(p.w, b.String())
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
		p.onApprove(fmt.Sprintf("approved at the terminal: %s %s", ch.Operation, ch.Args))
	}
	return true, nil
}
