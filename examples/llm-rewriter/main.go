// Command llm-rewriter shows remedy's loop handing a refused call to a language model: the
// model receives the failure as a short repair prompt (Envelope.Prompt, the operation and the
// arguments as sent) and answers with the corrected arguments, which the loop sends again.
// It runs the reference server's billing API on loopback. The "model" here is a stand-in
// written in Go, so that the program needs no network and no API key. It reads the prompt as a
// model would and prints what it receives.
//
//	go run ./examples/llm-rewriter
//
// The first call goes to the model alone (rewrite.LLM). The others go through
// rewrite.Chain(rewrite.Default, rewrite.LLM(...)): the deterministic rewriter
// repairs what the envelope states outright (a suggested value, a number sent as text), and
// only what it cannot repair reaches the model (a customer id that breaks its pattern, with no
// suggestion: "CUS-ADA" must be guessed to mean "cus_ada").
//
// To plug in a real model, give rewrite.LLM a func(ctx, prompt) (string, error) around any
// vendor's client: send the prompt as the user message and return the reply's text. For
// example, with a chat-completions client:
//
//	complete := func(ctx context.Context, prompt string) (string, error) {
//		resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
//			Model:    "gpt-4.1-mini",
//			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
//		})
//		if err != nil {
//			return "", err
//		}
//		return resp.Choices[0].Message.Content, nil
//	}
//	rewriter := rewrite.Chain(rewrite.Default, rewrite.LLM(complete))
//
// The reply is trusted only as far as it is one JSON object (one Markdown code fence is
// removed); a reply that is not, or an error from complete, ends the call with that error, and
// a reply of null gives up.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/client/transcript"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/rewrite"
	"github.com/remedy-go/remedy/server"
)

func main() {
	api, store, err := billing.New()
	if err == nil {
		err = run(os.Stdout, api, store)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "llm-rewriter:", err)
		os.Exit(1)
	}
}

// run serves api on loopback and makes three calls that start wrong: one repaired by the model
// alone, two through the chain.
func run(out io.Writer, api *server.API, store *billing.Store) error {
	srv := httptest.NewServer(api)
	defer srv.Close()
	fmt.Fprintf(out, "billing API on %s; the agent loads its operations from /openapi.json\n", srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	model := &standIn{out: out}
	alone, err := newClient(ctx, out, srv.URL, rewrite.LLM(model.complete))
	if err != nil {
		return err
	}
	chained, err := newClient(ctx, out, srv.URL, rewrite.Chain(
		narrate(out, "deterministic rewriter", rewrite.Default),
		rewrite.LLM(model.complete),
	))
	if err != nil {
		return err
	}
	calls := []struct {
		title  string
		client *client.Client
		op     string
		args   string
	}{
		{"the model alone: a currency spelled out", alone,
			"create_invoice", `{"customer_id":"cus_ada","currency":"euro","amount":1200}`},
		{"the chain: what the envelope states is repaired without the model", chained,
			"create_invoice", `{"customer_id":"cus_ada","currency":"EUR","amount":"1200"}`},
		{"the chain: an id only a model can guess", chained,
			"charge", `{"customer_id":"CUS-ADA","amount":4200,"currency":"usd"}`},
	}
	for i, c := range calls {
		fmt.Fprintf(out, "\n[%d] %s: %s %s\n", i+1, c.title, c.op, c.args)
		resp, err := c.client.Call(ctx, c.op, json.RawMessage(c.args))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "    => %d %s\n", resp.Status, bytes.TrimSpace(resp.Body))
	}

	fmt.Fprintf(out, "\nthe model was asked %d times; side effects: create_invoice ×%d, charge ×%d\n",
		model.calls, store.Effects("create_invoice"), store.Effects("charge"))
	return nil
}

// newClient is an agent's HTTP client for the API at base, with the operations of its OpenAPI
// document, repairing refused calls with rewriter and printing every attempt.
func newClient(ctx context.Context, out io.Writer, base string, rewriter rewrite.Rewriter) (*client.Client, error) {
	c, err := client.New(
		client.WithBaseURL(base),
		client.WithRewriter(rewriter),
		// Unchecked: this program shows the model repairing what the server refused. With the
		// check (the default), the same rewriter repairs the arguments against the operation's
		// schema before anything is sent, the model included.
		client.WithSchemaCheck(client.CheckOff),
		client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) { transcript.Attempt(out, a) }}),
	)
	if err != nil {
		return nil, err
	}
	if _, err := c.LoadOpenAPI(ctx, "/openapi.json"); err != nil {
		return nil, err
	}
	return c, nil
}

// narrate wraps a rewriter to print what it answered: a repair, or giving up (nil), which
// makes the chain ask the next one.
func narrate(out io.Writer, name string, r rewrite.Rewriter) rewrite.Rewriter {
	return rewrite.Func(func(ctx context.Context, rw *rewrite.Request) (json.RawMessage, error) {
		fixed, err := r.Rewrite(ctx, rw)
		switch {
		case err != nil:
			fmt.Fprintf(out, "       %s: %v\n", name, err)
		case fixed == nil:
			fmt.Fprintf(out, "       %s: gives up, next in the chain\n", name)
		default:
			fmt.Fprintf(out, "       %s: %s\n", name, fixed)
		}
		return fixed, err
	})
}

// standIn plays the model. It knows nothing of the billing API: it reads the arguments and
// the fields to fix out of the prompt, and repairs each field from what the prompt says of it
// (a suggested value, an allowed value close to the one sent, a value reshaped to match the
// expected pattern, a number sent as text).
type standIn struct {
	out   io.Writer
	calls int
}

// issueLine is one "- /path [code]: message (expected ...; allowed ...; received ...)" line of
// the prompt.
var issueLine = regexp.MustCompile(`^- (/\S*).*? \(((?:expected|allowed|received|suggested) .*)\)$`)

func (m *standIn) complete(_ context.Context, prompt string) (string, error) {
	m.calls++
	fmt.Fprintln(m.out, "       model receives:")
	for line := range strings.Lines(prompt) {
		fmt.Fprintln(m.out, strings.TrimRight("       | "+line, " \n"))
	}

	_, sent, ok := strings.Cut(prompt, "Arguments sent:\n")
	if !ok {
		return "null", nil
	}
	sent, _, _ = strings.Cut(sent, "\n")
	var args map[string]any
	if err := json.Unmarshal([]byte(sent), &args); err != nil {
		return "null", nil
	}
	fixed := 0
	for line := range strings.Lines(prompt) {
		match := issueLine.FindStringSubmatch(strings.TrimSpace(line))
		if match == nil {
			continue
		}
		facts := map[string]string{}
		for part := range strings.SplitSeq(match[2], "; ") {
			name, val, _ := strings.Cut(part, " ")
			facts[name] = val
		}
		if v, ok := repair(facts); ok && set(args, match[1], v) {
			fixed++
		}
	}
	if fixed == 0 {
		return "null", nil // nothing it can repair: give up
	}
	reply, err := json.Marshal(args)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(m.out, "       model replies: %s\n", reply)
	return "```json\n" + string(reply) + "\n```", nil // models like fences; LLMRewriter removes one
}

// repair is the stand-in's guess for one field, from what the prompt said about it.
func repair(facts map[string]string) (any, bool) {
	var received any
	if json.Unmarshal([]byte(facts["received"]), &received) != nil {
		return nil, false
	}
	if s, ok := facts["suggested"]; ok {
		var v any
		return v, json.Unmarshal([]byte(s), &v) == nil
	}
	text, _ := received.(string)
	if allowed, ok := facts["allowed"]; ok {
		var values []string
		if json.Unmarshal([]byte("["+allowed+"]"), &values) != nil {
			return nil, false
		}
		for _, v := range values { // "EUR", "euro", "Euros" all mean "eur"
			if strings.HasPrefix(strings.ToLower(text), v) {
				return v, true
			}
		}
		return nil, false
	}
	var expected struct {
		Pattern string `json:"pattern"`
		Type    string `json:"type"`
	}
	if json.Unmarshal([]byte(facts["expected"]), &expected) != nil {
		// A bare type name: "integer".
		expected.Type = strings.Trim(facts["expected"], `"`)
	}
	if expected.Pattern != "" {
		re, err := regexp.Compile(expected.Pattern)
		if err != nil {
			return nil, false
		}
		lower := strings.ToLower(text)
		for _, guess := range []string{lower, strings.NewReplacer("-", "_", " ", "_", ".", "_").Replace(lower)} {
			if re.MatchString(guess) {
				return guess, true
			}
		}
		return nil, false
	}
	if expected.Type == "integer" || expected.Type == "number" {
		n, err := strconv.ParseFloat(text, 64)
		return n, err == nil
	}
	return nil, false
}

// set puts v at the JSON Pointer path in args, and reports whether the path was there.
func set(args map[string]any, path string, v any) bool {
	names := strings.Split(strings.TrimPrefix(path, "/"), "/")
	obj := args
	for _, name := range names[:len(names)-1] {
		next, ok := obj[name].(map[string]any)
		if !ok {
			return false
		}
		obj = next
	}
	last := names[len(names)-1]
	if _, ok := obj[last]; !ok {
		return false
	}
	obj[last] = v
	return true
}
