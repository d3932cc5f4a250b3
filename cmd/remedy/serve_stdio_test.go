package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy/mcp"
)

// TestServeStdio: serve --stdio answers MCP on its standard files, and remedy's MCP client
// repairs a call over it as over HTTP; the input's end ends serve with status 0.
func TestServeStdio(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	toServe, fromClient := io.Pipe()
	toClient, fromServe := io.Pipe()
	var stderr lockedBuffer
	code, exited := -1, make(chan struct{})
	go func() {
		defer close(exited)
		code = run(ctx, []string{"serve", "--stdio"}, toServe, fromServe, &stderr)
		fromServe.Close()
	}()

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&sdk.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	for _, want := range []string{"create_invoice", "charge", "archive_customer", "revenue_report"} {
		if !names[want] {
			t.Errorf("no tool %s among %v", want, names)
		}
	}

	c, err := mcp.NewClient(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Call(ctx, "create_invoice", map[string]any{"customer_id": "cus_ada", "amount": 1200, "currency": "EUR"})
	if err != nil {
		t.Fatalf("the wrong enum was not repaired over stdio: %v", err)
	}
	if !strings.Contains(string(resp.Body), `"currency":"eur"`) {
		t.Errorf("body %s: want the repaired currency", resp.Body)
	}

	cs.Close() // closes the server's input
	select {
	case <-exited:
	case <-ctx.Done():
		t.Fatalf("serve --stdio did not end with its input\nstderr: %s", stderr.String())
	}
	if code != exitOK {
		t.Errorf("serve --stdio exited %d, want 0\nstderr: %s", code, stderr.String())
	}
}

func TestServeStdioUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"serve", "--stdio", "--addr", "127.0.0.1:0"},
		{"serve", "--stdio", "--stateless"},
		{"serve", "--stdio", "--redis", "127.0.0.1:6379"},
		{"serve", "--stdio", "--allow-host", "example.com"},
	} {
		r := remedyCmd(t, "", args...)
		r.wantExit(t, exitUsage)
		if !strings.Contains(r.stderr, "--stdio serves no HTTP") {
			t.Errorf("%v: %s", args, r)
		}
	}
}

// TestServeStateless: with --stateless a tools/call needs no session (a stateful endpoint
// refuses a call without one), and remedy call works over it.
func TestServeStateless(t *testing.T) {
	t.Parallel()
	for _, stateless := range []bool{false, true} {
		args := []string{"--addr", "127.0.0.1:0"}
		if stateless {
			args = append(args, "--stateless")
		}
		urls, _, _ := startServe(t, args...)
		req, err := http.NewRequest(http.MethodPost, urls[2], strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"revenue_report","arguments":{"currency":"eur"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"result":`); got != stateless {
			t.Errorf("stateless=%v: a call without a session answered %d %s", stateless, resp.StatusCode, body)
		}
		remedyCmd(t, "", "call", "--mcp", urls[2], "create_invoice", wrongEnum).wantExit(t, exitOK)
	}
}
