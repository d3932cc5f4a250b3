package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/remedy-go/remedy/conformance"
	"github.com/remedy-go/remedy/internal/termsafe"
)

// reachTimeout bounds the request that checks, before a probe, that the server answers.
const reachTimeout = 10 * time.Second

var probeCommand = &command{
	name:     "probe",
	summary:  "check a live server against the contract, rule by rule",
	synopsis: "remedy probe [flags] URL",
	about: `Probe runs the reference client against the server at URL as a test kit: it
reads the server's OpenAPI document, sends invalid requests to its operations
and checks, rule by rule, that each failure is an envelope an agent can act on.

Without --writes it sends nothing a server could execute to an operation that
changes state (any method but GET and HEAD): such an operation gets at most one
request, without any credentials and with a body that is not JSON, and only
when the document says it needs credentials; its other checks are skipped and
listed. With --writes it sends them the invalid requests too, which a server
that does not validate executes, and executes operations once, to check
confirmation and idempotency: probe a test deployment, not production. Valid
arguments for an operation come from --example and --examples, else from the
document.

It prints one line per rule, then the first finding of each failure with its
evidence, and the checks skipped; --verbose prints every finding and every
skipped check, and --json holds them all. Interrupted (Ctrl-C), it reports the
rules decided so far and skips the rest.`,
	examples: []string{
		"remedy probe --writes http://127.0.0.1:8080",
		`remedy probe --junit conformance.xml --header "Authorization: Bearer $TOKEN" --example 'get_invoice={"id":"in_1"}' https://staging.example.com`,
		"remedy probe --json --rule envelope --rule unknown-route http://127.0.0.1:8080",
	},
	exits: `0 no rule failed
1 a rule failed
2 usage error: bad --example or --examples, unknown --rule
3 the server could not be reached, or a file read or written`,
	more: func() string { return ruleList("Rules", conformance.Rules()) },
	run:  probe,
}

func probe(ctx context.Context, in *invocation) error {
	fs := in.fs
	var header headerFlag
	var rules listFlag
	examples := exampleFlag{}
	var report reportFlags
	fs.Var(&header, "header", "send the header `'Name: value'` with every request, such as credentials (repeatable)")
	openapi := fs.String("openapi", conformance.DefaultOpenAPIPath, "the OpenAPI document's `PATH` (or URL), relative to URL")
	writes := fs.Bool("writes", false, "allow requests a server could execute to operations that change state: invalid ones, and valid ones once each (the idempotency and confirmation rules)")
	burst := fs.Int("burst", 0, "send up to `N` requests in quick succession to provoke a 429 (0: none)")
	fs.Var(&rules, "rule", "check only the rule `ID` (repeatable; the rules are listed below)")
	fs.Var(examples, "example", "valid arguments for an operation, as `'operation={json}'` (repeatable)")
	examplesFile := fs.String("examples", "", "read valid arguments from `FILE`: a JSON object mapping operation ids to argument objects")
	report.define(fs)
	pos, err := in.parse(1, 1)
	if err != nil {
		return err
	}
	base, err := parseBaseURL(pos[0])
	if err != nil {
		return err
	}
	if *burst < 0 {
		return usagef("probe: --burst must be 0 or more, got %d", *burst)
	}
	if err := checkRules(rules); err != nil {
		return err
	}
	opts := conformance.Options{
		OpenAPIPath: *openapi,
		Header:      header.h,
		Writes:      *writes,
		Burst:       *burst,
		Rules:       rules,
	}
	if *examplesFile != "" {
		fromFile, err := readExamples(*examplesFile)
		if err != nil {
			return err
		}
		opts.Examples = fromFile
	}
	for op, args := range examples { // the command line wins over the file
		if opts.Examples == nil {
			opts.Examples = map[string]json.RawMessage{}
		}
		opts.Examples[op] = args
	}
	if err := reachable(ctx, base, *openapi, header.h); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	var done func()
	if isTerminal(in.stderr) {
		opts.Progress, done = progressLine(in.stderr)
	}
	rep, err := conformance.Run(ctx, base.String(), opts)
	if done != nil {
		done()
	}
	if err != nil {
		return usagef("probe: %v", err)
	}
	return report.write(in, rep)
}

// checkRules refuses rule IDs the probe does not know.
func checkRules(ids []string) error {
	known := conformance.Rules()
	for _, id := range ids {
		if !slices.ContainsFunc(known, func(r conformance.Rule) bool { return r.ID == id }) {
			names := make([]string, len(known))
			for i, r := range known {
				names[i] = r.ID
			}
			return usagef("probe: unknown rule %q (the rules: %s)", id, strings.Join(names, ", "))
		}
	}
	return nil
}

// reachable checks that the server answers at all, so that an unreachable server is an error
// (exit 3) rather than a report of failed rules. Any HTTP response will do.
func reachable(ctx context.Context, base *url.URL, openapi string, header http.Header) error {
	ref, err := url.Parse(openapi)
	if err != nil {
		return usagef("probe: --openapi %q: %v", openapi, err)
	}
	doc := base.ResolveReference(ref)
	ctx, cancel := context.WithTimeout(ctx, reachTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, doc.String(), nil)
	if err != nil {
		return usagef("probe: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := httpClient(header, base, doc).Do(req)
	if err != nil {
		return cannotRunf("probe: cannot reach %s: %v", base.Redacted(), err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return nil
}

// progressLine returns a Progress that keeps one line on a terminal up to date, and the
// function that clears it.
func progressLine(w io.Writer) (func(conformance.Progress), func()) {
	var mu sync.Mutex
	return func(p conformance.Progress) {
			mu.Lock()
			defer mu.Unlock()
			step := termsafe.String(p.Step) // names from the server's document
			if r := []rune(step); len(r) > 60 {
				step = string(r[:59]) + "…"
			}
			fmt.Fprintf(w, "\r\x1b[Kprobing [%d/%d] %s", p.Done, p.Total, step)
		}, func() {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprint(w, "\r\x1b[K")
		}
}

// listFlag collects a repeated flag's values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	if s == "" {
		return fmt.Errorf("empty value")
	}
	*l = append(*l, s)
	return nil
}

// exampleFlag collects repeated --example 'operation={json}' flags.
type exampleFlag map[string]json.RawMessage

func (e exampleFlag) String() string {
	ops := make([]string, 0, len(e))
	for op := range e {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	return strings.Join(ops, ",")
}

func (e exampleFlag) Set(s string) error {
	op, args, ok := strings.Cut(s, "=")
	op = strings.TrimSpace(op)
	if !ok || op == "" {
		return fmt.Errorf("want 'operation={json}', got %q", s)
	}
	raw, err := jsonObject([]byte(args))
	if err != nil {
		return fmt.Errorf("the arguments of %s: %v", op, err)
	}
	e[op] = raw
	return nil
}

// jsonObject checks that b is one JSON object and returns it trimmed.
func jsonObject(b []byte) (json.RawMessage, error) {
	b = bytes.TrimSpace(b)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		if !json.Valid(b) {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
		return nil, fmt.Errorf("not a JSON object")
	}
	if b[0] != '{' {
		return nil, fmt.Errorf("not a JSON object") // null
	}
	return b, nil
}

// readExamples reads a file mapping operation ids to argument objects.
func readExamples(path string) (map[string]json.RawMessage, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, cannotRunf("probe: cannot read --examples: %v", err)
	}
	var m map[string]json.RawMessage
	if _, err := jsonObject(b); err != nil {
		return nil, usagef("probe: --examples %s: %v", path, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, usagef("probe: --examples %s: %v", path, err)
	}
	for op, args := range m {
		raw, err := jsonObject(args)
		if err != nil {
			return nil, usagef("probe: --examples %s: the arguments of %s: %v", path, op, err)
		}
		m[op] = raw
	}
	return m, nil
}
