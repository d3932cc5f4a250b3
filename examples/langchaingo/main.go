// Command langchaingo runs remedy's tools in a langchaingo agent. The tools are a
// remedytools.Toolset over the reference billing API, loaded from its OpenAPI document on loopback,
// and the agent is langchaingo's ReAct ("one-shot") agent under agents.NewExecutor. The client
// has no rewriter, so a refused call is not repaired by remedy: the agent's model reads the
// repair text (Envelope.Prompt) as the tool's observation and writes the corrected call
// itself. The model is a stand-in written in Go, so that the program needs no network and no
// API key. Its first call is wrong (currency "Euro", amount "12.00"), and its second is
// derived from what the observation says.
//
//	cd examples/langchaingo && go run .
//
// It is a module of its own, so that langchaingo stays out of remedy's go.mod.
//
// In your own agent, remedy's *remedytools.Tool is a langchaingo tools.Tool:
//
//	// after c.LoadOpenAPI, or client.WithOperations:
//	ts := remedytools.ForClient(c, remedytools.Options{SchemaInDescription: true})
//	var agentTools []tools.Tool
//	for _, t := range ts.Tools() {
//		agentTools = append(agentTools, t)
//	}
//	agent := agents.NewOneShotAgent(llm, agentTools)
//	answer, err := chains.Run(ctx, agents.NewExecutor(agent), "Invoice cus_ada 12.00 Euro")
//
// Set ToolOptions.SchemaInDescription: langchaingo's text agents show the model a tool's name
// and description only, and a remedy tool takes one JSON object whose schema the model must
// see. Keep ToolOptions.FailureAsError off: langchaingo's executor ends the whole run on a
// tool's error, where the model should have read the failure and fixed its call.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/client/transcript"
	"github.com/remedy-go/remedy/examples/billing"
	remedytools "github.com/remedy-go/remedy/tools"
)

// remedy does not import langchaingo; this is where the method sets are held to each other.
var _ tools.Tool = (*remedytools.Tool)(nil)

// question is what the agent is asked: the amount in euros, as a person writes it.
const question = "Invoice Ada Lovelace (customer cus_ada) for 12.00 Euro."

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "langchaingo:", err)
		os.Exit(1)
	}
}

// run asks the agent the question and checks what happened: one invoice, made after the model
// read remedy's repair text.
func run(out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := ask(ctx, out, question, remedytools.Options{SchemaInDescription: true})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nfinal answer: %s\n", res.Answer)
	fmt.Fprintf(out, "tool calls: %d; create_invoice executed %d time(s) on the server\n", len(res.Steps), res.Invoices)

	switch {
	case res.Invoices != 1:
		return fmt.Errorf("create_invoice executed %d times, want 1", res.Invoices)
	case len(res.Steps) < 2 || len(res.Refusals) == 0:
		return errors.New("the agent's first call was not refused: nothing was repaired")
	case !strings.HasPrefix(res.Steps[0].Observation, whatFailed(res.Refusals[0])):
		return fmt.Errorf("the first observation is not the envelope's repair text:\n%s", res.Steps[0].Observation)
	}
	fmt.Fprintln(out, "the first observation was remedy's repair text (what failed and the fields to fix), and the model fixed its call from it")
	return nil
}

// whatFailed is the envelope's repair text without its last line, the next step: a Toolset
// says that step from what the loop decided.
func whatFailed(e *remedy.Envelope) string {
	p := strings.TrimSuffix(e.Prompt(), "\n")
	return p[:strings.LastIndexByte(p, '\n')+1]
}

// result is what one question to the agent came to.
type result struct {
	Answer   string
	Steps    []schema.AgentStep // the executor's record: each tool call and its observation
	Refusals []*remedy.Envelope // the failures the server answered, in order
	Invoices int                // create_invoice's side effects on the server
}

// ask serves the billing API on loopback, loads its operations into a remedy client, offers
// them to a langchaingo agent as tools and asks it q.
func ask(ctx context.Context, out io.Writer, q string, opts remedytools.Options) (*result, error) {
	api, store, err := billing.New()
	if err != nil {
		return nil, err
	}
	srv := httptest.NewServer(api)
	defer srv.Close()

	res := &result{}
	var mu sync.Mutex
	c, err := client.New(
		client.WithBaseURL(srv.URL),
		client.WithRewriter(nil), // no repairs by remedy: the model repairs its own calls
		client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) {
			transcript.Attempt(out, a)
			if a.Envelope != nil {
				mu.Lock()
				res.Refusals = append(res.Refusals, a.Envelope)
				mu.Unlock()
			}
		}}),
	)
	if err != nil {
		return nil, err
	}
	n, err := c.LoadOpenAPI(ctx, "/openapi.json")
	if err != nil {
		return nil, err
	}
	ts := remedytools.ForClient(c, opts)
	var agentTools []tools.Tool
	for _, t := range ts.Tools() {
		agentTools = append(agentTools, t)
	}
	fmt.Fprintf(out, "billing API on %s: %d operations from /openapi.json, offered as langchaingo tools\n", srv.URL, n)
	fmt.Fprintf(out, "question: %s\n", q)

	agent := agents.NewOneShotAgent(&standIn{out: out}, agentTools)
	executor := agents.NewExecutor(agent, agents.WithMaxIterations(4), agents.WithReturnIntermediateSteps())
	values, err := chains.Call(ctx, executor, map[string]any{"input": q})
	res.Invoices = store.Effects("create_invoice")
	if err != nil {
		return res, err
	}
	res.Answer, _ = values["output"].(string)
	res.Steps, _ = values["intermediateSteps"].([]schema.AgentStep)
	return res, nil
}
