package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/client/transcript"
	"github.com/remedy-go/remedy/internal/closest"
	"github.com/remedy-go/remedy/internal/termsafe"
	"github.com/remedy-go/remedy/mcp"
	"github.com/remedy-go/remedy/rewrite"
)

// maxArgs bounds the JSON arguments read from stdin.
const maxArgs = 8 << 20

var callCommand = &command{
	name:     "call",
	summary:  "make one call through the loop (try, repair, retry) and print every attempt",
	synopsis: "remedy call [flags] URL OPERATION ['JSON']",
	about: `Call runs one operation through remedy's loop, as an agent would: a failure that
names its fix is repaired by remedy's deterministic rewriter and sent again, a
transient one is retried after the wait the server asks for (with the same
Idempotency-Key, so nothing runs twice), and a prerequisite the server names is
run first. It prints every attempt — what was sent, what came back, what the loop
decided, and each change made to the arguments — and the result.

OPERATION is an operationId of the server's OpenAPI document (read from --openapi)
or, with --mcp, a tool of the MCP endpoint at URL. JSON is the arguments as one
object: body members and path and query parameters by name ({} when omitted;
"-" reads it from stdin).

--rewrite says which repairs are sent. safe (the default) sends only the repairs
that keep what the call means: the server's suggested value, the only allowed
value, an exact type conversion ("1200" to 1200), an enum value that differs in
case. A repair that changes the meaning (a number clamped to a bound, a string
cut, a member dropped, one of several values chosen, an example's value taken) is
not sent: the call stops and the output shows the proposal. all sends those too;
none repairs nothing, so a failure that names a fix stops the call.

--check says what happens, before anything is sent, to arguments that break the
operation's schema (from the OpenAPI document, or the tool's input schema).
repair (the default) repairs them as --rewrite allows and sends them, repaired
or not, for the server to decide; strict stops the call, and sends nothing, when
they still break it; off sends them unchecked.

A call the server wants confirmed is confirmed with --confirm; without it, on a
terminal, remedy shows the operation and the payload and asks approve? [y/N]
(over --mcp, the server's question to the person, by MCP elicitation, is asked
the same way). With neither, the call stops, nothing is executed, and the
output says what would be confirmed.

An Idempotency-Key given with --header is the call's key: every attempt sends it
(over MCP, as the idempotencyKey argument) instead of one remedy mints.`,
	examples: []string{
		`remedy call http://127.0.0.1:8080 create_invoice '{"customer_id":"cus_ada","currency":"EUR","amount":"1200"}'`,
		`remedy call --rewrite=none http://127.0.0.1:8080 charge '{"customer_id":"cus_ada","currency":"usd","amount":"4200"}'`,
		`remedy call --rewrite=all http://127.0.0.1:8080 charge '{"customer_id":"cus_ada","currency":"usd","amount":99999999}'`,
		`remedy call --confirm http://127.0.0.1:8080 delete_customer '{"id":"cus_ada"}'`,
		`remedy call --mcp --json http://127.0.0.1:8080/mcp revenue_report '{"currency":"usd"}'`,
		`remedy call --header "Authorization: Bearer $TOKEN" https://api.example.com get_invoice '{"id":"in_1"}'`,
	},
	exits: `0 the call succeeded
2 usage error: invalid JSON arguments, arguments that cannot make the request (a path parameter missing, or, with --check=strict, a value the schema refuses; nothing is sent), unknown operation or tool, bad --rewrite or --check
2 usage error: invalid JSON arguments, unknown operation or tool, bad --rewrite
3 the server could not be reached, or its document or MCP endpoint used`,
	more: func() string { return callJSONHelp },
	run:  call,
}

// callJSONHelp documents what call --json prints.
const callJSONHelp = `JSON output (--json):
  One object: ok, status (the success's, or the last response's), replayed,
  result (the success's body), warning, and attempts, each with number,
  operation, depth, status, code, replayed, error, action, why, wait_ms and,
  when the arguments were changed after it, changes:
    [{"path": "/amount", "old": "1200", "new": 1200, "rule": "suggested_value", "lossy": false}]
  (old is absent for a member added, new for one removed; a change marked lossy
  was sent because --rewrite=all approved it; on the attempt a refused repair
  stopped, the changes proposed, each with "refused": true), and, on the first
  attempt, checked: the changes made before it was sent, where the arguments
  broke the operation's schema (see --check), in the same form.
  An unsuccessful call adds cause, detail, error and envelope (the last failure,
  in the canonical encoding), and, when the call stopped for it:
    confirmation: {operation, args, message, hint}  (rerun with --confirm)
    proposal: {operation, args, new, changes, hint}  (a repair --rewrite=safe
      did not send: args as sent, new as proposed; rerun with --rewrite=all)
`

// callConfig is what the flags and arguments of one call say.
type callConfig struct {
	base      *url.URL
	operation string
	args      json.RawMessage
	openapi   string
	header    headerFlag
	// key is the Idempotency-Key the caller gave with --header: the call's key, sent instead
	// of a minted one (over MCP, as the idempotencyKey argument).
	key     string
	confirm bool
	asks    bool // the confirm policy may approve: --confirm, or a terminal to ask at
	json    bool
	rewrite rewriteMode
	check   checkMode
	// rewriter and rewrites are what --rewrite stands for: the rewriter (nil: none) and the
	// policy that decides the repairs that change what a call means.
	rewriter rewrite.Rewriter
	rewrites rewrite.Policy
	title    string // what the transcript's first line says
}

// rewriteMode is --rewrite: which repairs the call sends.
type rewriteMode string

const (
	rewriteSafe rewriteMode = "safe" // the repairs that keep what the call means
	rewriteAll  rewriteMode = "all"  // every repair the rewriter finds
	rewriteNone rewriteMode = "none" // no repair
)

func (m *rewriteMode) String() string { return string(*m) }

func (m *rewriteMode) Set(s string) error {
	switch v := rewriteMode(s); v {
	case rewriteSafe, rewriteAll, rewriteNone:
		*m = v
		return nil
	}
	return errors.New("want safe (repairs that keep what the call means), all (every repair) or none (no repair)")
}

// checkMode is --check: what happens to arguments that break the operation's schema.
type checkMode client.SchemaCheck

func (m *checkMode) String() string { return client.SchemaCheck(*m).String() }

func (m *checkMode) Set(s string) error {
	for _, c := range []client.SchemaCheck{client.CheckRepair, client.CheckStrict, client.CheckOff} {
		if s == c.String() {
			*m = checkMode(c)
			return nil
		}
	}
	return errors.New("want repair (repair, then send), strict (stop arguments that still break the schema) or off (send unchecked)")
}

// loop returns the rewriter and the rewrite policy the mode stands for.
func (m rewriteMode) loop() (rewrite.Rewriter, rewrite.Policy) {
	switch m {
	case rewriteAll:
		return rewrite.Default, rewrite.All
	case rewriteNone:
		return nil, rewrite.Safe
	default:
		return rewrite.Default, rewrite.Safe
	}
}

func call(ctx context.Context, in *invocation) error {
	cfg := callConfig{rewrite: rewriteSafe}
	fs := in.fs
	fs.StringVar(&cfg.openapi, "openapi", "/openapi.json", "read the operations from the OpenAPI document at `PATH` (or URL), relative to URL")
	useMCP := fs.Bool("mcp", false, "URL is an MCP endpoint (streamable HTTP), and OPERATION one of its tools")
	fs.BoolVar(&cfg.confirm, "confirm", false, "approve the confirmation the server asks for (default: refuse, and say what would be confirmed)")
	fs.Var(&cfg.rewrite, "rewrite", "send the repairs `MODE` allows: safe, those that keep what the call means (a clamp, a cut, a dropped member or a chosen value stops the call and is shown); all, every repair; none, no repair")
	fs.Var(&cfg.check, "check", "check the arguments against the operation's schema before sending, `MODE`: repair, then send; strict, stop what still breaks it; off, send unchecked")
	fs.Var(&cfg.header, "header", "send the header `'Name: value'` with every request, such as credentials (repeatable)")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after `DURATION`, loading, attempts and waits included (0: no limit)")
	fs.BoolVar(&cfg.json, "json", false, "print one JSON object (ok, status, result, attempts with their changes, and why it failed) instead of the transcript; see JSON output below")
	pos, err := in.parse(2, 3)
	if err != nil {
		return err
	}
	cfg.rewriter, cfg.rewrites = cfg.rewrite.loop()
	if *useMCP {
		if in.set("openapi") {
			return usagef("call: --openapi does not apply to an MCP endpoint (--mcp)")
		}
	}
	if cfg.base, err = parseBaseURL(pos[0]); err != nil {
		return err
	}
	if cfg.key, err = callerKey(cfg.header.h); err != nil {
		return err
	}
	cfg.operation = pos[1]
	cfg.args = json.RawMessage("{}") // as the help says: an object the rewriter can add to
	if len(pos) == 3 {
		if cfg.args, err = readArgs(pos[2], in.stdin); err != nil {
			return err
		}
	}
	if *timeout < 0 {
		return usagef("call: --timeout must not be negative")
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}

	out := in.stdout
	if cfg.json {
		out = io.Discard
	}
	// The first attempt prints a line naming the call: an operation that is not there prints
	// nothing but the error. The policy decides a challenge before the attempt that met it is
	// reported, so what --confirm approved is printed under that attempt, after the title.
	var (
		named    sync.Once
		mu       sync.Mutex
		approved []string
	)
	onAttempt := func(a *client.Attempt) {
		named.Do(func() { fmt.Fprintln(out, cfg.title) })
		transcript.Attempt(out, a)
		mu.Lock()
		lines := approved
		approved = nil
		mu.Unlock()
		for _, l := range lines {
			// l holds the server's words and the payload: escaped, like the attempt's lines.
			fmt.Fprintf(out, "    %s      %s\n", strings.Repeat("  ", a.Depth), termsafe.String(l))
		}
	}
	// A confirmation is approved by --confirm, else asked at the terminal, else refused. The
	// same policy answers the MCP server's questions to the person (elicitation), which the
	// MCP client declares it can answer only when the policy can approve.
	var policy client.ConfirmPolicy = client.RefuseAll
	note := func(line string) {
		mu.Lock()
		approved = append(approved, line)
		mu.Unlock()
	}
	switch {
	case cfg.confirm:
		policy = client.ConfirmFunc(func(_ context.Context, ch *client.Challenge) (bool, error) {
			if ch.Elicited {
				note(fmt.Sprintf("--confirm: approving %s %s (the server asked, by MCP elicitation)", ch.Operation, compactJSON(ch.Args)))
			} else {
				note(fmt.Sprintf("--confirm: approving %s %s (%s)", ch.Operation, ch.Args, ch.Message))
			}
			return true, nil
		})
		cfg.asks = true
	case canPrompt(in.streams):
		policy = newPrompter(in.stdin, in.stderr, note)
		cfg.asks = true
	}
	var resp *client.Response
	if *useMCP {
		resp, err = callMCP(ctx, &cfg, policy, onAttempt)
	} else {
		resp, err = callREST(ctx, &cfg, policy, onAttempt)
	}
	var ce *client.CallError
	if err != nil && !errors.As(err, &ce) {
		return err // the call could not be made: usage or could not run, said in err
	}
	if cfg.json {
		if werr := writeCallJSON(in.stdout, resp, ce); werr != nil {
			return cannotRunf("call: %v", werr)
		}
	} else {
		writeCallText(in.stdout, resp, ce)
		if ce != nil && cfg.rewrite == rewriteNone && errors.Is(ce, client.ErrRewriteGaveUp) {
			fmt.Fprintln(in.stdout, "   --rewrite=none: rerun with --rewrite=safe to send the repairs that keep what the call means")
		}
	}
	switch {
	case ce == nil:
		return nil
	case errors.Is(ce, client.ErrInvalidArguments):
		// Found before anything was sent: the command line's arguments are wrong.
		return usagef("call: %s was not sent: %v", cfg.operation, argumentsFault(ce))
	case noResponse(ce):
		within := ""
		if ce.Cause == client.ErrDeadline && *timeout > 0 {
			within = " within --timeout " + timeout.String()
		}
		return cannotRunf("call: no response from %s%s: %v", cfg.base.Redacted(), within, unprefixed(lastTransportError(ce)))
	default:
		return errCheckFailed
	}
}

// argumentsFault is what is wrong with the call's arguments, in words.
func argumentsFault(ce *client.CallError) string {
	var ae *client.ArgumentsError
	if errors.As(ce, &ae) {
		return ae.Error()
	}
	return ce.Detail
}

// readArgs reads the JSON arguments: the argument itself, or stdin for "-". They must be one
// JSON object.
func readArgs(arg string, stdin io.Reader) (json.RawMessage, error) {
	b := []byte(arg)
	if arg == "-" {
		var err error
		if b, err = io.ReadAll(io.LimitReader(stdin, maxArgs+1)); err != nil {
			return nil, cannotRunf("call: cannot read the arguments from stdin: %v", err)
		}
		if len(b) > maxArgs {
			return nil, usagef("call: the arguments on stdin are larger than %d bytes", maxArgs)
		}
	}
	raw, err := jsonObject(b)
	if err != nil {
		return nil, usagef("call: the arguments must be one JSON object, like '{\"id\":\"in_1\"}': %v", err)
	}
	return raw, nil
}

func callREST(ctx context.Context, cfg *callConfig, policy client.ConfirmPolicy, onAttempt func(*client.Attempt)) (*client.Response, error) {
	ref, err := url.Parse(cfg.openapi)
	if err != nil {
		return nil, usagef("call: --openapi %q: %v", cfg.openapi, err)
	}
	docURL := cfg.base.ResolveReference(ref)
	c, err := client.New(
		client.WithBaseURL(cfg.base.String()),
		client.WithHTTPClient(httpClient(cfg.header.h, cfg.base, docURL)),
		client.WithRewriter(cfg.rewriter),
		client.WithRewritePolicy(cfg.rewrites),
		client.WithConfirmPolicy(policy),
		client.WithSchemaCheck(client.SchemaCheck(cfg.check)),
		client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) { onAttempt(a) }}),
	)
	if err != nil {
		return nil, cannotRunf("call: %v", unprefixed(err))
	}
	n, err := c.LoadOpenAPI(ctx, cfg.openapi)
	if err != nil {
		return nil, cannotRunf("call: cannot load the OpenAPI document %s: %v", docURL.Redacted(), unprefixed(err))
	}
	cfg.title = fmt.Sprintf("%s on %s (%d operations in %s)", cfg.operation, cfg.base.Redacted(), n, docURL.Redacted())
	resp, err := c.Call(ctx, cfg.operation, cfg.args, cfg.callOptions()...)
	var ce *client.CallError
	if errors.As(err, &ce) && len(ce.Attempts) == 0 && ce.Envelope == nil && errors.Is(ce.Cause, client.ErrNotRetryable) {
		// Nothing was sent: the only refusal before the first attempt is an operation the
		// document does not list (the arguments were checked already).
		return nil, usagef("call: %q is not an operation of %s: %s", cfg.operation, docURL.Redacted(), termsafe.String(ce.Detail))
	}
	return resp, err
}

func callMCP(ctx context.Context, cfg *callConfig, policy client.ConfirmPolicy, onAttempt func(*client.Attempt)) (*client.Response, error) {
	endpoint := cfg.base.String()
	var opts *sdk.ClientOptions
	if cfg.asks {
		// Declares elicitation: the server asks the person instead of sending a token.
		opts = &sdk.ClientOptions{ElicitationHandler: mcp.ElicitationHandler(policy)}
	}
	session, err := sdk.NewClient(&sdk.Implementation{Name: "remedy", Version: version()}, opts).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: mcp.HTTPClient(httpClient(cfg.header.h, cfg.base)),
			DisableStandaloneSSE: true}, nil)
	if err != nil {
		var hint string
		if p := cfg.base.Path; p == "" || p == "/" {
			u := *cfg.base
			u.Path = "/mcp"
			hint = fmt.Sprintf(" (the URL has no path; an MCP endpoint usually has one: did you mean %s?)", u.Redacted())
		}
		return nil, cannotRunf("call: cannot connect to the MCP endpoint %s: %v%s", cfg.base.Redacted(), err, hint)
	}
	defer session.Close()
	c, err := mcp.NewClient(ctx, session, client.WithRewriter(cfg.rewriter), client.WithRewritePolicy(cfg.rewrites), client.WithConfirmPolicy(policy), client.WithSchemaCheck(client.SchemaCheck(cfg.check)), client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) { onAttempt(a) }}))
	if err != nil {
		return nil, cannotRunf("call: cannot list the tools of %s: %v", cfg.base.Redacted(), unprefixed(err))
	}
	if ok, _ := c.Transport().Registered(cfg.operation); !ok {
		names, _ := c.Transport().Load(ctx)
		shown := make([]string, len(names)) // not in place: the transport keeps names
		for i, n := range names {
			shown[i] = termsafe.String(n)
		}
		var mean string
		if near, ok := closest.Name(cfg.operation, names); ok {
			mean = fmt.Sprintf("; did you mean %q?", termsafe.String(near))
		}
		return nil, usagef("call: %s has no tool %q%s (its tools: %s)", cfg.base.Redacted(), cfg.operation, mean, strings.Join(shown, ", "))
	}
	cfg.title = fmt.Sprintf("%s on %s (MCP)", cfg.operation, cfg.base.Redacted())
	return c.Call(ctx, cfg.operation, cfg.args, cfg.callOptions()...)
}

// callerKey takes the Idempotency-Key out of the --header set, so that the loop sends it as
// the call's key — on every attempt, in place of the one it would mint, and in the
// transcript — rather than the header transport adding it beside the loop's own.
func callerKey(h http.Header) (string, error) {
	var keys []string
	for k, vs := range h {
		if strings.EqualFold(k, remedy.HeaderIdempotencyKey) {
			keys = append(keys, vs...)
			delete(h, k)
		}
	}
	switch {
	case len(keys) == 0:
		return "", nil
	case len(keys) > 1:
		return "", usagef("call: --header gives %d Idempotency-Keys: a call has one", len(keys))
	case keys[0] == "":
		return "", usagef("call: --header gives an empty Idempotency-Key")
	}
	return keys[0], nil
}

func (cfg *callConfig) callOptions() []client.Option {
	if cfg.key == "" {
		return nil
	}
	return []client.Option{client.WithIdempotencyKey(cfg.key)}
}

// noResponse reports whether the call never got a response: the server is unreachable.
func noResponse(ce *client.CallError) bool {
	if ce.Envelope != nil || len(ce.Attempts) == 0 {
		return false
	}
	for _, a := range ce.Attempts {
		if a.Err == nil || a.Status != 0 {
			return false
		}
	}
	return true
}

func lastTransportError(ce *client.CallError) error {
	if n := len(ce.Attempts); n > 0 && ce.Attempts[n-1].Err != nil {
		return ce.Attempts[n-1].Err
	}
	return ce
}

// challenge finds the confirmation the call stopped for: its own, or a prerequisite's.
func challenge(ce *client.CallError) *client.Challenge {
	if !errors.Is(ce, client.ErrConfirmationRequired) {
		return nil
	}
	for ; ce != nil; ce = inner(ce) {
		if ce.Challenge != nil {
			return ce.Challenge
		}
	}
	return nil
}

// proposal finds the repair the call stopped for, refused by the rewrite policy: its own, or
// a prerequisite's.
func proposal(ce *client.CallError) *rewrite.Proposal {
	if !errors.Is(ce, client.ErrRewriteRefused) {
		return nil
	}
	for ; ce != nil; ce = inner(ce) {
		if ce.Proposal != nil {
			return ce.Proposal
		}
	}
	return nil
}

// inner is the call error of the next operation ce stopped for, or nil.
func inner(ce *client.CallError) *client.CallError {
	var in *client.CallError
	if !errors.As(ce.Err, &in) {
		return nil
	}
	return in
}

// proposalHint says how to send a refused repair.
const proposalHint = "nothing was sent with these changes: rerun with --rewrite=all to approve them"

// unprefixed is err's message without the "remedy: " the library starts its errors with,
// which the command's own prefix already says.
func unprefixed(err error) string {
	return strings.TrimPrefix(err.Error(), "remedy: ")
}

func plural(n int, one string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// writeCallText writes how the call ended. Each line is escaped whole (see printLine): the
// status, codes, messages, hints and errors are the server's words, the arguments and the
// proposal may be a model's.
func writeCallText(w io.Writer, resp *client.Response, ce *client.CallError) {
	if ce == nil {
		replayed := ""
		if resp.Replayed {
			replayed = ", replayed (Idempotency-Replayed: true): not executed again"
		}
		printLine(w, "=> %d%s, after %s", resp.Status, replayed, plural(len(resp.Attempts), "attempt"))
		if e := resp.Envelope; e != nil {
			printLine(w, "   %s: %s: %s", e.Severity, e.Code, e.Message)
		}
		writeBody(w, resp.Body)
		return
	}
	if ch := challenge(ce); ch != nil {
		printLine(w, "=> not executed: %s needs confirmation", ch.Operation)
		printLine(w, "   would confirm: %s %s", ch.Operation, ch.Args)
		if ch.Message != "" {
			printLine(w, "   the server says: %s", ch.Message)
		}
		printLine(w, "   rerun with --confirm to confirm this call")
		return
	}
	if p := proposal(ce); p != nil {
		op := p.Operation
		if op == "" {
			op = ce.Operation
		}
		printLine(w, "=> not sent: the repair of %s changes what the call means (after %s)", op, plural(len(ce.Attempts), "attempt"))
		if e := p.Envelope; e != nil {
			printLine(w, "   the server said: %d %s: %s", e.Status, e.Code, e.Message)
		}
		printLine(w, "   sent:     %s %s", op, compactJSON(p.Args))
		printLine(w, "   proposed: %s %s", op, compactJSON(p.New))
		for _, c := range p.Changes {
			lossy := ""
			if c.Lossy {
				lossy = " (lossy)"
			}
			printLine(w, "     change %s%s", transcript.Change(c), lossy)
		}
		printLine(w, "   %s", proposalHint)
		return
	}
	failed := fmt.Sprintf("=> failed: %s", ce.Cause)
	if ce.Detail != "" {
		failed += ": " + ce.Detail
	}
	printLine(w, "%s (after %s)", failed, plural(len(ce.Attempts), "attempt"))
	if e := ce.Envelope; e != nil {
		printLine(w, "   last failure: %d %s: %s", e.Status, e.Code, e.Message)
		if e.Hint != "" {
			printLine(w, "   hint: %s", e.Hint)
		}
	}
	if ce.Err != nil {
		printLine(w, "   because: %v", ce.Err)
	}
}

// printLine writes one line of the call's output, escaped whole (termsafe): the format is
// the command's own printable text, and what a server or a model said, a newline in it
// included, is shown instead of acting on the terminal.
func printLine(w io.Writer, format string, a ...any) {
	fmt.Fprintln(w, termsafe.String(fmt.Sprintf(format, a...)))
}

// writeBody writes a success's body: indented when it is JSON, each line escaped (a JSON
// document's own line breaks are the indentation's, since its strings hold none); otherwise
// escaped as one line, so that its line breaks are shown, not followed.
func writeBody(w io.Writer, body []byte) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, body, "", "  ") != nil {
		printLine(w, "%s", body)
		return
	}
	for l := range strings.Lines(pretty.String()) {
		printLine(w, "%s", strings.TrimSuffix(l, "\n"))
	}
}

// callOutput is what call --json prints.
type callOutput struct {
	OK       bool            `json:"ok"`
	Status   int             `json:"status,omitempty"` // the success's, or the last response's
	Replayed bool            `json:"replayed"`
	Result   json.RawMessage `json:"result,omitempty"`
	// Warning is a warning the server attached to the success, in the canonical encoding.
	Warning  json.RawMessage `json:"warning,omitempty"`
	Attempts []attemptOutput `json:"attempts"`

	// On failure: why the loop stopped, and the last envelope in the canonical encoding.
	Cause        string          `json:"cause,omitempty"`
	Detail       string          `json:"detail,omitempty"`
	Error        string          `json:"error,omitempty"`
	Envelope     json.RawMessage `json:"envelope,omitempty"`
	Confirmation *confirmOutput  `json:"confirmation,omitempty"`
	Proposal     *proposalOutput `json:"proposal,omitempty"`
}

type attemptOutput struct {
	Number    int    `json:"number"`
	Operation string `json:"operation"`
	Depth     int    `json:"depth,omitempty"`
	Status    int    `json:"status"`
	Code      string `json:"code,omitempty"`
	Replayed  bool   `json:"replayed,omitempty"`
	Error     string `json:"error,omitempty"` // the transport error, when no response came
	Action    string `json:"action"`
	Why       string `json:"why"`
	WaitMS    int64  `json:"wait_ms,omitempty"`
	// Changes are the edits made to the arguments after the attempt; on the attempt a refused
	// repair stopped, the edits proposed, marked refused.
	Changes []changeOutput `json:"changes,omitempty"`
	// Checked are the edits made to the arguments before the first attempt was sent, where
	// they broke the operation's schema.
	Checked []changeOutput `json:"checked,omitempty"`
}

// changeOutput is one rewrite.Change: lossy always present, so that a script need not know
// the default; old absent for a member added, new for one removed.
type changeOutput struct {
	Path    string          `json:"path"`
	Old     json.RawMessage `json:"old,omitempty"`
	New     json.RawMessage `json:"new,omitempty"`
	Rule    string          `json:"rule"`
	Lossy   bool            `json:"lossy"`
	Refused bool            `json:"refused,omitempty"`
}

type proposalOutput struct {
	Operation string          `json:"operation"`
	Args      json.RawMessage `json:"args"` // as sent
	New       json.RawMessage `json:"new"`  // as proposed
	Changes   []changeOutput  `json:"changes"`
	Hint      string          `json:"hint"`
}

// changesOutput is changes for call --json, marked refused when they are a refused proposal's.
func changesOutput(changes []rewrite.Change, refused bool) []changeOutput {
	if len(changes) == 0 {
		return nil
	}
	out := make([]changeOutput, len(changes))
	for i, c := range changes {
		// rawJSON: a rewriter's own account of its changes may hold bytes that are not JSON,
		// which would fail the whole output.
		out[i] = changeOutput{Path: c.Path, Old: rawJSON(c.Old), New: rawJSON(c.New), Rule: c.Rule, Lossy: c.Lossy, Refused: refused}
	}
	return out
}

type confirmOutput struct {
	Operation string          `json:"operation"`
	Args      json.RawMessage `json:"args"`
	Message   string          `json:"message,omitempty"`
	Hint      string          `json:"hint"`
}

func writeCallJSON(w io.Writer, resp *client.Response, ce *client.CallError) error {
	var o callOutput
	var attempts []client.Attempt
	if ce == nil {
		o.OK, o.Status, o.Replayed, attempts = true, resp.Status, resp.Replayed, resp.Attempts
		o.Result = rawJSON(resp.Body)
		if resp.Envelope != nil {
			o.Warning, _ = resp.Envelope.MarshalJSON()
		}
	} else {
		attempts = ce.Attempts
		if n := len(attempts); n > 0 {
			o.Status = attempts[n-1].Status
		}
		o.Cause, o.Detail, o.Error = ce.Cause.Error(), ce.Detail, ce.Error()
		if ce.Envelope != nil {
			o.Envelope, _ = ce.Envelope.MarshalJSON()
		}
		if ch := challenge(ce); ch != nil {
			o.Confirmation = &confirmOutput{Operation: ch.Operation, Args: rawJSON(ch.Args), Message: ch.Message,
				Hint: "nothing was executed: rerun with --confirm to confirm this call"}
		}
		if p := proposal(ce); p != nil {
			o.Proposal = &proposalOutput{Operation: p.Operation, Args: rawJSON(p.Args), New: rawJSON(p.New),
				Changes: changesOutput(p.Changes, false), Hint: proposalHint}
			if o.Proposal.Changes == nil {
				o.Proposal.Changes = []changeOutput{}
			}
		}
	}
	o.Attempts = make([]attemptOutput, 0, len(attempts))
	for _, a := range attempts {
		ao := attemptOutput{Number: a.Number, Operation: a.Operation, Depth: a.Depth, Status: a.Status,
			Replayed: a.Replayed, Action: a.Decision.Action.String(), Why: a.Decision.Why,
			WaitMS: a.Decision.Wait.Milliseconds()}
		if a.Envelope != nil {
			ao.Code = a.Envelope.Code
		}
		if a.Err != nil {
			ao.Error = a.Err.Error()
		}
		refused := a.Decision.Action == client.ActStop && errors.Is(a.Decision.Cause, client.ErrRewriteRefused)
		ao.Changes = changesOutput(a.Changes, refused)
		ao.Checked = changesOutput(a.Checked, false)
		o.Attempts = append(o.Attempts, ao)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(o)
}

// compactJSON is b on one line, when it is JSON (arguments read from stdin may span lines).
func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

// rawJSON is b as a JSON value: itself when it is JSON, else a string holding it.
func rawJSON(b []byte) json.RawMessage {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil
	}
	if json.Valid(b) {
		return b
	}
	s, _ := json.Marshal(string(b))
	return s
}
