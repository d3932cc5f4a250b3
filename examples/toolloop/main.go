// Command toolloop is a tool-call loop written by hand over the function-calling JSON of
// OpenAI's Chat Completions API, with remedy's Toolset running the calls. The model is offered
// the billing API's operations as tools (Toolset.Definitions().OpenAI(), each description
// ending with the errors the operation may answer with); a call it gets wrong comes back as
// the tool message's text — Envelope.Prompt: what failed, which field to fix and how — from
// which the model corrects its arguments and calls again. The client has no rewriter, so the
// repair is the model's own.
//
//	cd examples/toolloop && go run .
//
// It serves the reference server's billing API on loopback and loads its operations from
// /openapi.json. The model is a stand-in written in Go (standin.go), so that the program needs
// no network and no API key. It takes the JSON body a chat completion endpoint takes (model,
// messages, tools) and returns the body such an endpoint returns, keeping nothing between
// turns, and it knows the billing API only from the tools. Its first call takes the user's
// words as they stand ("CUS-ADA", "Euro", "12.00") and is refused; its second is what it makes
// of the tool message, read issue by issue against the tool's schema.
//
// To talk to a real model, replace standIn in run by an endpoint that POSTs the same JSON to
// /v1/chat/completions of OpenAI or of any server compatible with it, and set modelName to a
// model that calls tools (TestOverHTTP runs this function against the stand-in served over
// HTTP):
//
//	chat := func(ctx context.Context, request []byte) ([]byte, error) {
//		req, err := http.NewRequestWithContext(ctx, http.MethodPost,
//			"https://api.openai.com/v1/chat/completions", bytes.NewReader(request))
//		if err != nil {
//			return nil, err
//		}
//		req.Header.Set("Content-Type", "application/json")
//		req.Header.Set("Authorization", "Bearer "+os.Getenv("OPENAI_API_KEY"))
//		resp, err := http.DefaultClient.Do(req)
//		if err != nil {
//			return nil, err
//		}
//		defer resp.Body.Close()
//		body, err := io.ReadAll(resp.Body)
//		if err == nil && resp.StatusCode != http.StatusOK {
//			err = fmt.Errorf("%s: %s", resp.Status, body)
//		}
//		return body, err
//	}
//
// A real model reads the schema too, and may well get the call right the first time; the
// repair text is for the times it does not.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/client/transcript"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/tools"
)

const (
	modelName    = "stand-in"
	systemPrompt = "You are a billing assistant. Do what the user asks with the tools. When a tool " +
		"answers with a failure, fix the arguments it names and call the tool again."
	userRequest = "Please invoice customer CUS-ADA for 12.00 Euro (May consulting)."
	// maxTurns bounds the model's turns, so that a model that never stops calling tools cannot
	// keep the loop going.
	maxTurns = 6
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "toolloop:", err)
		os.Exit(1)
	}
}

// run holds the conversation with the stand-in model and prints it.
func run(out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, store, err := converse(ctx, out, standIn)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\ncreate_invoice executed %d time(s) on the server\n", store.Effects("create_invoice"))
	return nil
}

// converse serves the billing API on loopback, offers its operations to model as tools, and
// runs the model's tool calls until it answers the user. It returns every message and the
// API's store.
func converse(ctx context.Context, out io.Writer, model endpoint) ([]message, *billing.Store, error) {
	api, store, err := billing.New()
	if err != nil {
		return nil, nil, err
	}
	srv := httptest.NewServer(api)
	defer srv.Close()

	// No rewriter: a failure that names a fix ends the call at once, and its text goes back to
	// the model, which makes the fix. Each HTTP attempt is printed under the tool call.
	c, err := client.New(
		client.WithBaseURL(srv.URL),
		client.WithRewriter(nil), // the model makes every repair
		client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) { transcript.Attempt(out, a) }}),
	)
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.LoadOpenAPI(ctx, "/openapi.json"); err != nil {
		return nil, nil, err
	}
	tools := tools.ForClient(c, tools.Options{})
	defs := tools.Definitions()
	toolsJSON, err := defs.OpenAI()
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Name
	}
	fmt.Fprintf(out, "billing API on %s; the model is offered its operations as tools: %s\n\n",
		srv.URL, strings.Join(names, ", "))

	messages := []message{{Role: "system", Content: systemPrompt}, {Role: "user", Content: userRequest}}
	for _, m := range messages {
		printMessage(out, m)
	}
	for range maxTurns {
		reply, err := complete(ctx, model, chatRequest{Model: modelName, Messages: messages, Tools: toolsJSON})
		if err != nil {
			return messages, store, err
		}
		messages = append(messages, reply)
		printMessage(out, reply)
		if len(reply.ToolCalls) == 0 {
			return messages, store, nil
		}
		for _, call := range reply.ToolCalls {
			// A failure comes back as text for the model with a nil error; an error means the
			// context ended, and the conversation with it.
			content, err := tools.Dispatch(ctx, call.Function.Name, call.Function.Arguments)
			if err != nil {
				return messages, store, err
			}
			m := message{Role: "tool", ToolCallID: call.ID, Content: content}
			messages = append(messages, m)
			printMessage(out, m)
		}
	}
	return messages, store, fmt.Errorf("the model did not answer within %d turns", maxTurns)
}

// complete sends the request to the model and returns its message.
func complete(ctx context.Context, model endpoint, req chatRequest) (message, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return message{}, err
	}
	body, err = model(ctx, body)
	if err != nil {
		return message{}, fmt.Errorf("model: %w", err)
	}
	var resp chatResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return message{}, fmt.Errorf("model: the response is not a chat completion: %w", err)
	}
	if len(resp.Choices) == 0 || resp.Choices[0].Message.Role != "assistant" {
		return message{}, errors.New("model: the response holds no assistant message")
	}
	return resp.Choices[0].Message, nil
}

// printMessage writes a message as a line, or as an indented block when it has several.
func printMessage(out io.Writer, m message) {
	label := m.Role
	if m.ToolCallID != "" {
		label += " (" + m.ToolCallID + ")"
	}
	for _, c := range m.ToolCalls {
		fmt.Fprintf(out, "%s: calls %s %s (%s)\n", label, c.Function.Name, c.Function.Arguments, c.ID)
	}
	switch content := strings.TrimSpace(m.Content); {
	case content == "":
	case !strings.Contains(content, "\n"):
		fmt.Fprintf(out, "%s: %s\n", label, content)
	default:
		fmt.Fprintf(out, "%s:\n", label)
		for line := range strings.Lines(content) {
			fmt.Fprintf(out, "    | %s\n", strings.TrimRight(line, "\n"))
		}
	}
}
