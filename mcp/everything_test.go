package mcp_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/interop"
	"github.com/remedy-go/remedy/mcp"
)

// everythingDir holds the npm lock of the MCP reference test server.
const everythingDir = "testdata/everything"

// everythingPackage is the MCP reference test server, written with the TypeScript SDK to
// exercise every feature of the protocol for the builders of clients.
const everythingPackage = "@modelcontextprotocol/server-everything"

// requireEverything skips the test when node or the server's package is missing, or fails it
// when REMEDY_REQUIRE_NODE=1 says they must be there (CI, after npm ci).
func requireEverything(t *testing.T) {
	t.Helper()
	const fix = "run `cd mcp/testdata/everything && npm ci` (needs node and npm)"
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not on PATH"
	} else if _, err := os.Stat(everythingMain()); errors.Is(err, fs.ErrNotExist) {
		missing = "mcp/" + everythingDir + "/node_modules does not hold " + everythingPackage
	}
	interop.Need(t, "server-everything", missing, fix)
}

// everythingMain is the package's bin (mcp-server-everything): its first argument names the
// transport, stdio (the default) or streamableHttp.
func everythingMain() string {
	return filepath.Join(everythingDir, "node_modules", everythingPackage, "dist", "index.js")
}

// everythingRun is one row: a transport, and the protocol version the go-sdk client is told
// to ask for. The server is built on the TypeScript SDK v1, which speaks 2025-11-25 at most:
// asked for 2026-07-28 (the go-sdk's default), the client probes with server/discover and
// must fall back to the initialize handshake, settling on 2025-11-25.
type everythingRun struct {
	http     bool
	protocol string // ClientSessionOptions.ProtocolVersion
}

func (r everythingRun) name() string {
	if r.http {
		return "http/" + r.protocol
	}
	return "stdio/" + r.protocol
}

// row is the run's line in the README's interoperability table.
func (r everythingRun) row(t *testing.T) interop.Row {
	t.Helper()
	v, err := interop.NPMVersion(everythingDir, everythingPackage)
	require.NoError(t, err)
	row := interop.Row{Peer: "MCP server-everything", Package: everythingPackage, Version: v, Role: "server",
		Transport: "MCP stdio, 2025-11-25",
		Tested: []string{"tools/list", "text results (echo, get-sum)", "a number sent as text repaired from zod's message", "structuredContent kept as the server's bytes",
			"image and embedded resource content kept in Body", "resource links kept in Body",
			"SDK input validation error read as an envelope with issues",
			"readOnlyHint/idempotentHint read for retry safety", "long-running tool"}}
	if r.http {
		row.Transport = "MCP streamable HTTP (stateful), 2025-11-25"
	}
	if r.protocol != "2025-11-25" {
		row.Transport += " (after a server/discover probe for " + r.protocol + ")"
	}
	return row
}

// TestEverythingServer runs remedy's MCP client against server-everything, the reference test
// server of MCP (a server that is not ours), over stdio and streamable HTTP, with the go-sdk's
// own client transports.
func TestEverythingServer(t *testing.T) {
	requireEverything(t)
	t.Parallel()
	for _, run := range []everythingRun{
		{http: false, protocol: "2025-11-25"},
		{http: false, protocol: "2026-07-28"},
		{http: true, protocol: "2025-11-25"},
		{http: true, protocol: "2026-07-28"},
	} {
		t.Run(run.name(), func(t *testing.T) {
			t.Parallel()
			testEverything(t, run)
		})
	}
}

// everythingTimeout bounds a run: a hang guard, never a measure of speed.
const everythingTimeout = 60 * time.Second

func testEverything(t *testing.T, run everythingRun) {
	c := interop.Record(t, run.row(t))
	ctx, cancel := context.WithTimeout(context.Background(), everythingTimeout)
	t.Cleanup(cancel)

	var transport sdk.Transport
	if run.http {
		transport = &sdk.StreamableClientTransport{Endpoint: startEverythingHTTP(t) + "/mcp"}
	} else {
		cmd := exec.CommandContext(ctx, "node", everythingMain(), "stdio")
		cmd.Stderr = io.Discard // it logs there
		cmd.WaitDelay = 5 * time.Second
		// It does not exit when its input ends once it has asked the client for its roots (a
		// request of its own stays open): Close sends SIGTERM soon after closing its input,
		// rather than after the default 5 s.
		transport = &sdk.CommandTransport{Command: cmd, TerminateDuration: 100 * time.Millisecond}
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "remedy-everything-interop", Version: "1.0.0"}, nil).
		Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: run.protocol})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })

	var attempts []client.Attempt // of the last call, for the checks that look at what was sent
	cl, err := mcp.NewClient(ctx, cs, client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) { attempts = append(attempts, *a) }}))
	require.NoError(t, err)
	call := func(t *testing.T, tool string, args any) *client.Response {
		t.Helper()
		attempts = nil
		resp, err := cl.Call(ctx, tool, args)
		require.NoError(t, err, tool)
		return resp
	}

	c.Run(t, "connect", func(t *testing.T) {
		res := cs.InitializeResult()
		require.NotNil(t, res)
		assert.Equal(t, "2025-11-25", res.ProtocolVersion, "the newest version the server speaks")
		require.NotNil(t, res.ServerInfo)
		assert.Equal(t, "mcp-servers/everything", res.ServerInfo.Name)
	})

	c.Run(t, "tools/list", func(t *testing.T) {
		ops := map[string]client.Operation{}
		for _, op := range cl.Transport().Operations() {
			ops[op.Name] = op
		}
		for _, name := range []string{"echo", "get-sum", "get-tiny-image", "get-resource-reference",
			"get-resource-links", "get-structured-content", "trigger-long-running-operation", "toggle-simulated-logging"} {
			assert.Contains(t, ops, name)
		}
		var schema struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(ops["get-sum"].Parameters, &schema), "%s", ops["get-sum"].Parameters)
		assert.Equal(t, "number", schema.Properties["a"].Type, "the input schema, as offered to a model")
	})

	c.Run(t, "text", func(t *testing.T) {
		assert.Equal(t, "Echo: a message", string(call(t, "echo", map[string]any{"message": "a message"}).Body))
		assert.Equal(t, "The sum of 2 and 3 is 5.", string(call(t, "get-sum", map[string]any{"a": 2, "b": 3}).Body))
	})

	c.Run(t, "structured content", func(t *testing.T) {
		body := call(t, "get-structured-content", map[string]any{"location": "Chicago"}).Body
		// The text rendering is JSON.stringify of the same object: Body is those bytes.
		assert.Equal(t, `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}`, string(body))
	})

	c.Run(t, "image", func(t *testing.T) {
		var items []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Data     string `json:"data"`
			MIMEType string `json:"mimeType"`
		}
		body := call(t, "get-tiny-image", nil).Body
		require.NoError(t, json.Unmarshal(body, &items), "Body is the content items: %.200s", body)
		require.Len(t, items, 3)
		assert.Equal(t, "text", items[0].Type)
		assert.Equal(t, "image", items[1].Type)
		assert.Equal(t, "image/png", items[1].MIMEType)
		png, err := base64.StdEncoding.DecodeString(items[1].Data)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n"), "the image's bytes, base64 as sent")
		assert.Equal(t, "text", items[2].Type)
	})

	c.Run(t, "resources", func(t *testing.T) {
		var items []struct {
			Type     string `json:"type"`
			URI      string `json:"uri"`
			Name     string `json:"name"`
			Resource *struct {
				URI      string `json:"uri"`
				MIMEType string `json:"mimeType"`
				Text     string `json:"text"`
			} `json:"resource"`
		}
		body := call(t, "get-resource-reference", map[string]any{"resourceType": "Text", "resourceId": 2}).Body
		require.NoError(t, json.Unmarshal(body, &items), "%s", body)
		require.Len(t, items, 3)
		assert.Equal(t, "resource", items[1].Type)
		require.NotNil(t, items[1].Resource)
		assert.Equal(t, "text/plain", items[1].Resource.MIMEType)
		assert.True(t, strings.HasPrefix(items[1].Resource.Text, "Resource 2: "), "%s", items[1].Resource.Text)
		assert.NotEmpty(t, items[1].Resource.URI)

		items = nil
		body = call(t, "get-resource-links", map[string]any{"count": 2}).Body
		require.NoError(t, json.Unmarshal(body, &items), "%s", body)
		require.Len(t, items, 3, "a text and two links")
		for _, it := range items[1:] {
			assert.Equal(t, "resource_link", it.Type)
			assert.NotEmpty(t, it.URI)
			assert.NotEmpty(t, it.Name)
		}
	})

	c.Run(t, "invalid arguments", func(t *testing.T) {
		// The SDK's "Input validation error" (zod's issues, one line each) is read as an
		// envelope with an issue at /a. No repair is possible for a word where a number
		// goes: the call stops, and the byte-identical payload is not sent again.
		_, err := cl.Call(ctx, "get-sum", map[string]any{"a": "two", "b": 3})
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		require.NotNil(t, ce.Envelope, "%v", err)
		assert.ErrorIs(t, err, client.ErrRewriteGaveUp)
		assert.Len(t, ce.Attempts, 1, "a byte-identical payload is not sent again")
		assert.Equal(t, "invalid_arguments", ce.Envelope.Code)
		assert.False(t, ce.Envelope.Retryable)
		require.Len(t, ce.Envelope.Issues, 1, "%+v", ce.Envelope.Issues)
		assert.Equal(t, "/a", ce.Envelope.Issues[0].Path)
		assert.Contains(t, ce.Envelope.Issues[0].Message, "expected number")
		assert.JSONEq(t, `"number"`, string(ce.Envelope.Issues[0].Expected), "zod 4's message states the type")
	})

	c.Run(t, "invalid arguments repaired", func(t *testing.T) {
		// A number sent as text: zod 4's message states the type, and the default rewriter
		// converts "2" to 2 without changing what the call means. (The check before sending
		// off, so that the server's refusal is what is repaired.)
		unchecked, err := mcp.NewClient(ctx, cs, client.WithSchemaCheck(client.CheckOff))
		require.NoError(t, err)
		resp, err := unchecked.Call(ctx, "get-sum", map[string]any{"a": "2", "b": 3})
		require.NoError(t, err)
		assert.Equal(t, "The sum of 2 and 3 is 5.", string(resp.Body))
		require.Len(t, resp.Attempts, 2)
		require.Len(t, resp.Attempts[0].Changes, 1)
		assert.Equal(t, "/a", resp.Attempts[0].Changes[0].Path)

		// By default the tool's input schema from tools/list repairs it before sending.
		resp, err = cl.Call(ctx, "get-sum", map[string]any{"a": "2", "b": 3})
		require.NoError(t, err)
		assert.Equal(t, "The sum of 2 and 3 is 5.", string(resp.Body))
		require.Len(t, resp.Attempts, 1)
		require.Len(t, resp.Attempts[0].Checked, 1)
		assert.Equal(t, "/a", resp.Attempts[0].Checked[0].Path)
	})

	c.Run(t, "annotations", func(t *testing.T) {
		// readOnlyHint and idempotentHint make a tool safe to send again after a lost answer,
		// with no idempotency key (it takes none); a tool that says neither is not.
		for _, name := range []string{"echo", "get-sum", "get-tiny-image", "trigger-long-running-operation"} {
			ok, idempotent := cl.Transport().Registered(name)
			assert.True(t, ok && idempotent, "%s says readOnlyHint and idempotentHint", name)
		}
		ok, idempotent := cl.Transport().Registered("toggle-simulated-logging")
		assert.True(t, ok, "listed")
		assert.False(t, idempotent, "toggle-simulated-logging says neither")

		call(t, "echo", map[string]any{"message": "once"})
		require.Len(t, attempts, 1)
		assert.Empty(t, attempts[0].IdempotencyKey, "no key is sent to a tool that takes none")
	})

	c.Run(t, "long-running", func(t *testing.T) {
		// Two steps of 50 ms on the server's clock; nothing here measures time.
		resp := call(t, "trigger-long-running-operation", map[string]any{"duration": 0.1, "steps": 2})
		assert.Equal(t, "Long running operation completed. Duration: 0.1 seconds, Steps: 2.", string(resp.Body))
	})
}

// startEverythingHTTP starts server-everything's streamable HTTP server on 127.0.0.1 and a
// free port (loopback.mjs sees to both), and returns its base URL once it listens. The server
// is interrupted when t ends.
func startEverythingHTTP(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), everythingTimeout)
	cmd := exec.CommandContext(ctx, "node", "--import", "./loopback.mjs",
		filepath.Join("node_modules", everythingPackage, "dist", "index.js"), "streamableHttp")
	cmd.Dir = everythingDir
	cmd.Env = append(os.Environ(), "PORT=0")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) } // it shuts down on SIGINT
	cmd.WaitDelay = 5 * time.Second                                       // then it is killed
	// Read through a pipe of ours, which Wait does not close under the reader: Wait ends
	// when the server's stderr does (or WaitDelay after the interrupt), then the reader's does.
	stderr, w := io.Pipe()
	cmd.Stderr = w
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		w.Close()
	})

	const marker = "loopback.mjs: listening on "
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, marker) {
				select {
				case addr <- strings.TrimPrefix(line, marker):
				default:
				}
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		require.True(t, ok, "server-everything exited before it listened")
		require.True(t, strings.HasPrefix(a, "127.0.0.1:"), "listening on %s", a)
		return "http://" + a
	case <-ctx.Done():
		t.Fatalf("server-everything did not listen: %v", ctx.Err())
		return ""
	}
}
