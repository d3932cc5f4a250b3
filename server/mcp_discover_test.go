package server_test

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/server"
)

// discoverBody is a SEP-2575 server/discover at protocol version 2026-07-28, as mcp-go's and
// the go-sdk's clients probe before they initialize.
const discoverBody = `{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`

// discoverAnswer is the one JSON-RPC message of an answer to discoverBody.
type discoverAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		SupportedVersions []string `json:"supportedVersions"`
	} `json:"result"`
	Error *struct {
		Code    int                                `json:"code"`
		Message string                             `json:"message"`
		Data    mcp.UnsupportedProtocolVersionData `json:"data"`
	} `json:"error"`
}

// discover sends discoverBody with the headers protocol 2026-07-28 asks for, and reads the
// answer.
func discover(t *testing.T, url string, header ...string) (int, discoverAnswer) {
	t.Helper()
	status, _, body := mcpPost(t, nil, url, discoverBody, append([]string{"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover"}, header...)...)
	msgs := rpcMessages(t, body)
	require.Len(t, msgs, 1, "%s", body)
	b, err := json.Marshal(msgs[0])
	require.NoError(t, err)
	var a discoverAnswer
	require.NoError(t, json.Unmarshal(b, &a), "%s", body)
	return status, a
}

// A stateful endpoint does not speak 2026-07-28, a protocol without sessions: it answers a
// discover for it with the error unsupported protocol version, listing the versions it
// speaks, as the SDK answers any other request of that version there. A client that took a
// discover result listing other versions as agreement (mcp-go v1.2.1) would stay on
// 2026-07-28 and see every later request refused; with the error, every client falls back to
// initialize, and gets a session.
func TestMCPStatefulDiscoverRefusesSessionlessVersion(t *testing.T) {
	t.Parallel()
	_, _, srv := billingServer(t)
	status, a := discover(t, srv.URL)
	assert.Equal(t, 400, status)
	assert.JSONEq(t, `7`, string(a.ID))
	require.NotNil(t, a.Error, "an error, not a result")
	assert.Equal(t, mcp.CodeUnsupportedProtocolVersion, a.Error.Code)
	assert.Equal(t, "2026-07-28", a.Error.Data.Requested)
	assert.Contains(t, a.Error.Data.Supported, "2025-11-25")
	for _, v := range a.Error.Data.Supported {
		assert.Less(t, v, "2026-07-28", "only versions with sessions")
	}

	// The header alone says the version too.
	status, _, body := mcpPost(t, nil, srv.URL, `{"jsonrpc":"2.0","id":"d","method":"server/discover"}`,
		"Mcp-Protocol-Version", "2026-07-28")
	assert.Equal(t, 400, status, "%s", body)
	assert.Contains(t, string(body), `"code":-32022`)

	// A discover without an id, or with one that is not JSON-RPC's, is the SDK's to refuse.
	for _, id := range []string{``, `"id":{"a":1},`, `"id":null,`} {
		status, _, body = mcpPost(t, nil, srv.URL, `{"jsonrpc":"2.0",`+id+`"method":"server/discover"}`,
			"Mcp-Protocol-Version", "2026-07-28")
		assert.NotContains(t, string(body), `"code":-32022`, "status %d", status)
	}

	// A discover at a version with sessions is the SDK's to answer.
	status, _, body = mcpPost(t, nil, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`)
	assert.NotContains(t, string(body), `"code":-32022`, "status %d", status)
}

// The refusal holds no session place: a discover is answered even when every place is taken,
// where an initialize is refused 503.
func TestMCPStatefulDiscoverHoldsNoSession(t *testing.T) {
	t.Parallel()
	_, _, srv := billingServer(t, server.WithMCP(server.MCPOptions{MaxSessions: 1}))
	openSession(t, srv.URL)
	status, a := discover(t, srv.URL)
	assert.Equal(t, 400, status)
	require.NotNil(t, a.Error)
	assert.Equal(t, mcp.CodeUnsupportedProtocolVersion, a.Error.Code)
	status, _, body := mcpPost(t, nil, srv.URL, initializeBody)
	assert.Equal(t, 503, status, "%s", body)
}

// The go-sdk's client, left to its default (2026-07-28), falls back to initialize against the
// stateful endpoint and gets a session; against a stateless one it speaks 2026-07-28.
func TestMCPDefaultClientVersion(t *testing.T) {
	t.Parallel()
	_, _, srv := billingServer(t)
	cs := connect(t, srv.URL, nil)
	assert.Equal(t, "2025-11-25", cs.InitializeResult().ProtocolVersion)
	assert.NotEmpty(t, cs.ID(), "a session")

	_, _, stateless := billingServer(t, server.WithMCP(server.MCPOptions{Stateless: true}))
	status, a := discover(t, stateless.URL)
	assert.Equal(t, 200, status)
	require.NotNil(t, a.Result, "a stateless endpoint speaks 2026-07-28")
	assert.Contains(t, a.Result.SupportedVersions, "2026-07-28")
	cs = connect(t, stateless.URL, nil)
	assert.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	assert.Empty(t, cs.ID(), "no session")
}
