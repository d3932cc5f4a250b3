package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
)

// TestServeHostCheck: a REST DELETE naming another host (the request a web page sends through
// DNS rebinding) is refused 403 before the handler runs, on REST as on MCP; --allow-host adds
// a name, and the loopback names keep working.
func TestServeHostCheck(t *testing.T) {
	t.Parallel()
	send := func(t *testing.T, method, url, host, body string) (int, *remedy.Envelope) {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		env, _ := remedy.ParseResponse(resp)
		return resp.StatusCode, env
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

	t.Run("loopback only, by default", func(t *testing.T) {
		t.Parallel()
		urls, _, _ := startServe(t, "--addr", "127.0.0.1:0")
		base, openapi, mcp := urls[0], urls[1], urls[2]

		status, env := send(t, "DELETE", base+"/v1/customers/cus_ada", "evil.example", "")
		require.Equal(t, 403, status)
		assert.Equal(t, "forbidden", env.Code)
		assert.False(t, env.Retryable)
		status, _ = send(t, "GET", openapi, "evil.example:80", "")
		assert.Equal(t, 403, status, "the OpenAPI document too")
		status, env = send(t, "POST", mcp, "evil.example", initialize)
		assert.Equal(t, 403, status, "MCP as before")
		assert.Equal(t, "forbidden", env.Code)

		// The customer is still there: the refused DELETE never ran.
		status, _ = send(t, "GET", openapi, "localhost:1234", "")
		assert.Equal(t, 200, status)
		status, env = send(t, "POST", base+"/v1/invoices", strings.TrimPrefix(base, "http://"),
			`{"customer_id":"cus_ada","amount":100,"currency":"eur"}`)
		assert.Equal(t, 201, status, "the customer was not deleted: %+v", env)
	})

	t.Run("--allow-host", func(t *testing.T) {
		t.Parallel()
		urls, _, _ := startServe(t, "--addr", "127.0.0.1:0", "--allow-host", "api.example.com")
		base, mcp := urls[0], urls[2]
		status, _ := send(t, "GET", base+"/v1/reports/revenue", "api.example.com:8080", "")
		assert.NotEqual(t, 403, status, "an allowed name is served")
		status, _ = send(t, "GET", base+"/v1/reports/revenue", "localhost", "")
		assert.NotEqual(t, 403, status, "the loopback names stay allowed")
		status, _ = send(t, "GET", base+"/v1/reports/revenue", "evil.example", "")
		assert.Equal(t, 403, status)
		status, _ = send(t, "POST", mcp, "api.example.com", initialize)
		assert.Equal(t, 200, status, "MCP answers the allowed name too")
	})

	t.Run("a bad --allow-host", func(t *testing.T) {
		t.Parallel()
		remedyCmd(t, "", "serve", "--allow-host", "http://x/").wantExit(t, exitUsage)
	})
}
