// Command eino runs remedy's tools in an eino ReAct agent: the operations of an API's OpenAPI
// document become eino tools (InvokableTool, in tool.go, is the part to copy), the agent's tool
// calls run through remedy's loop, and a call the server refuses comes back to the model as
// repair text — which field to fix and how — that the model reads to call again. It runs the
// reference server's billing API on loopback, with a stand-in model written in Go so that it
// needs no network and no API key.
//
//	cd examples/eino && go run .
//
// With a real model (any eino model.ToolCallingChatModel, such as eino-ext's OpenAI or Claude
// models) the code is:
//
//	c, err := client.New(client.WithBaseURL("https://api.example.com"))
//	// ...
//	_, err = c.LoadOpenAPI(ctx, "/openapi.json")
//	ts := tools.ForClient(c, tools.Options{})
//	agent, err := react.NewAgent(ctx, &react.AgentConfig{
//		ToolCallingModel: chatModel,
//		ToolsConfig: compose.ToolsNodeConfig{
//			Tools:               Tools(ts),
//			UnknownToolsHandler: ts.Dispatch, // a made-up tool name: the model is told the real ones
//		},
//	})
//	answer, err := agent.Generate(ctx, []*schema.Message{schema.UserMessage("Invoice Ada 12 euros.")})
//
// The client here has no rewriter (client.WithRewriter(nil)), so the model does the repairing;
// with the default one the loop would repair what the server's answer states outright before
// the model sees anything.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"time"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/client/transcript"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/tools"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "eino:", err)
		os.Exit(1)
	}
}

// request is what the user asks the agent.
const request = "Invoice Ada Lovelace (cus_ada) 12 euros."

// run serves the billing API on loopback, gives an eino ReAct agent its operations as tools,
// and asks the agent for an invoice. It fails unless the invoice was created exactly once.
func run(out io.Writer) error {
	api, store, err := billing.New()
	if err != nil {
		return err
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	fmt.Fprintf(out, "billing API on %s; the agent loads its operations from /openapi.json\n", srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c, err := client.New(
		client.WithBaseURL(srv.URL),
		client.WithRewriter(nil), // the model makes every repair
		client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) { transcript.Attempt(out, a) }}),
	)
	if err != nil {
		return err
	}
	if _, err := c.LoadOpenAPI(ctx, "/openapi.json"); err != nil {
		return err
	}
	tools := tools.ForClient(c, tools.Options{})
	agent, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: &standIn{out: out},
		ToolsConfig: compose.ToolsNodeConfig{
			Tools:               Tools(tools),
			UnknownToolsHandler: tools.Dispatch,
		},
	})
	if err != nil {
		return err
	}

	fmt.Fprintf(out, "\nuser: %s\n", request)
	answer, err := agent.Generate(ctx, []*schema.Message{schema.UserMessage(request)})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nagent answers: %s\n", answer.Content)

	n := store.Effects("create_invoice")
	fmt.Fprintf(out, "create_invoice executed %d time(s)\n", n)
	if n != 1 {
		return fmt.Errorf("create_invoice executed %d times, want 1", n)
	}
	return nil
}
