// Command mcp shows both sides of remedy over the Model Context Protocol. The reference
// server's billing API serves its operations as MCP tools at /mcp, on the same http.Handler
// as its REST routes. An agent connects with the official go-sdk client over streamable HTTP
// and calls the tools through remedy's loop (package mcp). A failed tool call comes back as a
// result with isError carrying the same envelope as over REST, so the loop repairs, runs the
// named prerequisite and confirms exactly as it does over HTTP.
//
//	go run ./examples/mcp
//
// It prints the tool list as an agent's model sees it, then three calls that start wrong, with
// every attempt, and the side effects the server executed. It runs on loopback only.
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

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/client/transcript"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/mcp"
	"github.com/remedy-go/remedy/server"
)

func main() {
	api, store, err := billing.New()
	if err == nil {
		err = run(os.Stdout, api, store)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp:", err)
		os.Exit(1)
	}
}

// run serves api on loopback, connects an MCP client session to its /mcp endpoint, lists the
// tools and makes three calls through the loop.
func run(out io.Writer, api *server.API, store *billing.Store) error {
	srv := httptest.NewServer(api)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	session, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1.0.0"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: mcp.HTTPClient(nil)}, nil)
	if err != nil {
		return fmt.Errorf("connecting to %s/mcp: %w", srv.URL, err)
	}
	defer session.Close() // before srv.Close, which waits for the session's open stream
	fmt.Fprintf(out, "MCP session %s with %s/mcp\n", session.ID(), srv.URL)
	if err := listTools(ctx, out, session); err != nil {
		return err
	}

	cl, err := mcp.NewClient(ctx, session, // A real agent asks a person, or checks the call against what it was asked to do.
		client.WithConfirmPolicy(client.ConfirmFunc(func(context.Context, *client.Challenge) (bool, error) {
			return true, nil
		})), client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) { transcript.Attempt(out, a) }}))
	if err != nil {
		return err
	}
	calls := []struct{ title, tool, args string }{
		{"a wrong enum", "create_invoice", `{"customer_id":"cus_ada","currency":"EUR","amount":1200}`},
		{"sending a draft", "send_invoice", `{"id":"in_1"}`},
		{"a destructive call", "delete_customer", `{"id":"cus_ada"}`},
	}
	for i, c := range calls {
		fmt.Fprintf(out, "\n[%d] %s: %s %s\n", i+1, c.title, c.tool, c.args)
		resp, err := cl.Call(ctx, c.tool, json.RawMessage(c.args))
		if err != nil {
			var ce *client.CallError
			if errors.As(err, &ce) {
				return fmt.Errorf("%s did not succeed after %d attempts: %w", c.tool, len(ce.Attempts), err)
			}
			return err
		}
		fmt.Fprintf(out, "    => %s\n", resp.Body)
	}

	fmt.Fprintln(out, "\nside effects the server executed:")
	for _, op := range []string{"create_invoice", "finalize_invoice", "send_invoice", "delete_customer"} {
		fmt.Fprintf(out, "  %s ×%d\n", op, store.Effects(op))
	}
	return nil
}

// listTools prints each tool with its hints and the protocol arguments its input schema adds,
// and the "## Errors" block that ends one tool's description.
func listTools(ctx context.Context, out io.Writer, session *sdk.ClientSession) error {
	fmt.Fprintln(out, "tools:")
	var example string
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing the tools: %w", err)
		}
		var notes []string
		if a := tool.Annotations; a != nil {
			if a.ReadOnlyHint {
				notes = append(notes, "read-only")
			}
			if a.DestructiveHint != nil && *a.DestructiveHint {
				notes = append(notes, "destructive")
			}
			if a.IdempotentHint {
				notes = append(notes, "idempotent")
			}
		}
		schema, err := json.Marshal(tool.InputSchema)
		if err != nil {
			return err
		}
		var s struct{ Properties map[string]json.RawMessage }
		if err := json.Unmarshal(schema, &s); err != nil {
			return err
		}
		for _, arg := range []string{remedy.ArgConfirmationToken, remedy.ArgIdempotencyKey} {
			if _, ok := s.Properties[arg]; ok {
				notes = append(notes, "takes "+arg)
			}
		}
		fmt.Fprintln(out, strings.TrimRight(fmt.Sprintf("  %-17s %s", tool.Name, strings.Join(notes, ", ")), " "))
		if tool.Name == "send_invoice" {
			example = tool.Description
		}
	}
	if _, errs, ok := strings.Cut(example, "## Errors"); ok {
		fmt.Fprintln(out, "send_invoice's description ends with:\n  ## Errors")
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		for _, line := range lines[:min(len(lines), 4)] {
			fmt.Fprintf(out, "  %s\n", clip(line, 110))
		}
		if len(lines) > 4 {
			fmt.Fprintf(out, "  … %d more codes\n", len(lines)-4)
		}
	} else {
		return errors.New(`send_invoice's description has no "## Errors" block`)
	}
	return nil
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
