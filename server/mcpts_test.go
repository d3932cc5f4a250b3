package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/internal/testkit/interop"
	"github.com/remedy-go/remedy/server"
)

// tsClientDir holds the TypeScript client and its npm lock.
const tsClientDir = "testdata/mcp-ts"

// tsResult is a tool result as client.mjs records it.
type tsResult struct {
	IsError           bool            `json:"isError"`
	ContentCount      int             `json:"contentCount"`
	Text              string          `json:"text"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Meta              map[string]any  `json:"_meta"`
}

// tsReport is what client.mjs prints.
type tsReport struct {
	Server struct {
		Name string `json:"name"`
	} `json:"server"`
	ProtocolVersion string `json:"protocolVersion"`
	SessionID       string `json:"sessionId"`
	Terminated      bool   `json:"terminated"`
	Tools           []struct {
		Name                 string         `json:"name"`
		HasConfirmationToken bool           `json:"hasConfirmationToken"`
		HasIdempotencyKey    bool           `json:"hasIdempotencyKey"`
		Required             []any          `json:"required"`
		Annotations          map[string]any `json:"annotations"`
		HasErrorsSection     bool           `json:"hasErrorsSection"`
	} `json:"tools"`
	BadCreate    tsResult `json:"badCreate"`
	Confirmation struct {
		Required  tsResult `json:"required"`
		Confirmed tsResult `json:"confirmed"`
		Replay    tsResult `json:"replay"`
	} `json:"confirmation"`
	Elicitation struct {
		Declined  tsResult `json:"declined"`
		Accepted  tsResult `json:"accepted"`
		Questions []struct {
			Message    string         `json:"message"`
			Meta       map[string]any `json:"meta"`
			Properties []string       `json:"properties"`
		} `json:"questions"`
	} `json:"elicitation"`
	Charges       []tsResult `json:"charges"`
	Reports       []tsResult `json:"reports"`
	ChargeDeleted tsResult   `json:"chargeDeleted"`
}

// requireNode skips the test when node or the client's packages are missing, or fails it when
// REMEDY_REQUIRE_NODE=1 says they must be there (CI, after npm ci).
func requireNode(t *testing.T) {
	t.Helper()
	const fix = "run `cd server/testdata/mcp-ts && npm ci` (needs node and npm)"
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not on PATH"
	} else if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules")); errors.Is(err, fs.ErrNotExist) {
		missing = "server/" + tsClientDir + "/node_modules does not exist"
	}
	interop.Need(t, "the TypeScript MCP client", missing, fix)
}

// tsEnvelope reads a failed result the way any remedy client reads a tool failure: its text is
// the canonical envelope, and its structuredContent the same JSON.
func tsEnvelope(t *testing.T, res tsResult) *remedy.Envelope {
	t.Helper()
	require.True(t, res.IsError, "not a failure: %s", res.Text)
	require.Equal(t, 1, res.ContentCount, "one text content")
	require.JSONEq(t, res.Text, string(res.StructuredContent), "structuredContent is the text's envelope")
	env, ok := remedy.Parse(0, nil, []byte(res.Text))
	require.True(t, ok, "%s", res.Text)
	return env
}

// tsMode is how the TypeScript client reaches the reference server.
type tsMode string

const (
	tsStateful  tsMode = "stateful"  // streamable HTTP, the default /mcp: a session per client
	tsStateless tsMode = "stateless" // streamable HTTP, MCPOptions.Stateless: no sessions
	tsStdio     tsMode = "stdio"     // `remedy serve --stdio`, launched by the SDK's stdio transport
)

// tsRun is one row of the matrix: an SDK, how it reaches the server, the protocol it is told to
// speak (client.mjs's argument) and the one it must end up speaking.
type tsRun struct {
	sdk, protocol, want string
	mode                tsMode
}

// tsRuns is the matrix. v1 (@modelcontextprotocol/sdk 1.x) offers 2025-11-25 in initialize
// and nothing else: it cannot be told to speak 2026-07-28. v2 speaks 2026-07-28 when pinned
// to it (server/discover instead of initialize), which the go-sdk's streamable HTTP handler
// accepts only when it is stateless: the stateful /mcp answers the probe -32022 with the
// legacy versions it supports, so there v2 is run in its auto mode, which must fall back to
// the initialize handshake on the same endpoint.
var tsRuns = []tsRun{
	{sdk: "v1", mode: tsStateful, protocol: "2025-11-25", want: "2025-11-25"},
	{sdk: "v1", mode: tsStateless, protocol: "2025-11-25", want: "2025-11-25"},
	{sdk: "v1", mode: tsStdio, protocol: "2025-11-25", want: "2025-11-25"},
	{sdk: "v2", mode: tsStateful, protocol: "2025-11-25", want: "2025-11-25"},
	{sdk: "v2", mode: tsStateful, protocol: "auto", want: "2025-11-25"},
	{sdk: "v2", mode: tsStateless, protocol: "2025-11-25", want: "2025-11-25"},
	{sdk: "v2", mode: tsStateless, protocol: "2026-07-28", want: "2026-07-28"},
	{sdk: "v2", mode: tsStdio, protocol: "2025-11-25", want: "2025-11-25"},
	{sdk: "v2", mode: tsStdio, protocol: "2026-07-28", want: "2026-07-28"},
}

// row is the run's line in the README's interoperability table.
func (r tsRun) row(t *testing.T) interop.Row {
	t.Helper()
	row := interop.Row{Peer: "TypeScript MCP SDK v1", Package: "@modelcontextprotocol/sdk", Role: "client",
		Tested: []string{"tools/list: schemas, annotations, error docs", "invalid arguments as an envelope with issues",
			"idempotency key: one execution, replay in _meta", "confirmation token: confirmed once, then refused",
			"503 with retry_after_ms, then success"}}
	if r.sdk == "v2" {
		row.Peer, row.Package = "TypeScript MCP SDK v2", "@modelcontextprotocol/client"
	}
	v, err := interop.NPMVersion(tsClientDir, row.Package)
	require.NoError(t, err)
	row.Version = v
	switch r.mode {
	case tsStdio:
		row.Transport = "MCP stdio"
	default:
		row.Transport = "MCP streamable HTTP (" + string(r.mode) + ")"
	}
	row.Transport += ", " + r.want
	if r.protocol == "auto" {
		row.Transport += " (after a server/discover probe for 2026-07-28)"
		row.Tested = append(row.Tested, "server/discover refused, initialize fallback")
	}
	if r.mode == tsStateful {
		row.Tested = append(row.Tested, "session id, DELETE ends the session")
	}
	if r.elicits() {
		row.Tested = append(row.Tested, "elicitation: a person's confirmation declined, then accepted")
	} else {
		row.Tested = append(row.Tested, "elicitation declared, which a stateless endpoint cannot send: token flow")
	}
	return row
}

// elicits reports whether the server can ask the run's client a question (MCP elicitation): on
// a session it can send requests on (stateful HTTP, stdio), or in the tool's result at protocol
// 2026-07-28; a stateless endpoint cannot ask a client of an older protocol.
func (r tsRun) elicits() bool { return r.mode != tsStateless || r.want >= "2026-07-28" }

// TestTypeScriptMCPClient runs the official TypeScript SDK's clients (clients that are not
// ours, and that validate every result against their own schemas) against the billing API:
// v1 (@modelcontextprotocol/sdk) and v2 (@modelcontextprotocol/client), with one script, over
// stateful and stateless streamable HTTP and over stdio, in each protocol version the SDK can
// be told to speak (tsRuns).
func TestTypeScriptMCPClient(t *testing.T) {
	requireNode(t)
	t.Parallel()
	remedyBin := buildRemedy(t)
	for _, run := range tsRuns {
		t.Run(run.sdk+"/"+string(run.mode)+"/"+run.protocol, func(t *testing.T) {
			t.Parallel()
			testTypeScriptMCPClient(t, run, remedyBin)
		})
	}
}

// buildRemedy builds the remedy command into a directory of t's, for the SDK's stdio transport
// to launch (the binary the test runs in has no serve command).
func buildRemedy(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "remedy")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/remedy-go/remedy/cmd/remedy")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build ./cmd/remedy:\n%s", out)
	return bin
}

func testTypeScriptMCPClient(t *testing.T, run tsRun, remedyBin string) {
	c := interop.Record(t, run.row(t))

	// The server: in this process for HTTP, so that its store can be asked how many times each
	// operation ran; `remedy serve --stdio` (the demo API) in a process of the SDK's for stdio,
	// whose store is seen only through tool results. Either way the revenue report is rebuilding
	// at first (NewDemo's, at start and after each change; here by Busy): its first answer is 503.
	var api *server.API
	var store *billing.Store // nil over stdio
	target := remedyBin
	if run.mode == tsStdio {
		var err error
		api, _, err = billing.NewDemo() // the tools remedy serve offers, to compare the list with
		require.NoError(t, err)
	} else {
		var opts []server.Option
		if run.mode == tsStateless {
			opts = append(opts, server.WithMCP(server.MCPOptions{Stateless: true}))
		}
		var srv *httptest.Server
		api, store, srv = billingServer(t, opts...)
		store.Busy(1)
		target = srv.URL + server.DefaultMCPPath
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs", run.sdk, run.protocol, target)
	cmd.Dir = tsClientDir
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "client.mjs failed:\n%s", stderr.String())

	var rep tsReport
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), "%s", stdout.String())

	c.Run(t, "connect", func(t *testing.T) {
		assert.Equal(t, "billing", rep.Server.Name)
		assert.Equal(t, run.want, rep.ProtocolVersion, "the protocol version negotiated")
		switch run.mode {
		case tsStateful:
			assert.NotEmpty(t, rep.SessionID, "the stateful endpoint gives a session id")
			assert.True(t, rep.Terminated, "DELETE ends the session")
		case tsStateless:
			assert.Empty(t, rep.SessionID, "a stateless endpoint gives no session id")
		case tsStdio:
			// One process is one session: there is no session id to check.
		}
	})

	c.Run(t, "tools", func(t *testing.T) {
		require.Len(t, rep.Tools, len(api.Operations()))
		tools := map[string]int{}
		for i, tool := range rep.Tools {
			tools[tool.Name] = i
		}
		for _, op := range api.Operations() {
			i, ok := tools[op.ID]
			require.True(t, ok, "%s is a tool", op.ID)
			tool := rep.Tools[i]
			assert.Equal(t, op.Confirm, tool.HasConfirmationToken, "%s: confirmationToken advertised where it applies", op.ID)
			assert.Equal(t, op.Idempotency != server.IdempotencyOff, tool.HasIdempotencyKey, "%s: idempotencyKey advertised where it applies", op.ID)
			assert.Equal(t, op.Idempotency == server.IdempotencyRequired, slices.Contains(tool.Required, any(remedy.ArgIdempotencyKey)), op.ID)
			assert.True(t, tool.HasErrorsSection, "%s: the description lists its errors", op.ID)
			require.NotNil(t, tool.Annotations, op.ID)
			assert.Equal(t, op.Method == "GET", tool.Annotations["readOnlyHint"] == true, "%s: readOnlyHint", op.ID)
			if op.ID == "delete_customer" {
				assert.Equal(t, true, tool.Annotations["destructiveHint"], "delete_customer is destructive")
			}
		}
	})

	c.Run(t, "invalid arguments", func(t *testing.T) {
		env := tsEnvelope(t, rep.BadCreate)
		assert.Equal(t, "invalid_body", env.Code)
		assert.Equal(t, remedy.DialectAgent, env.Dialect, "the canonical envelope")
		paths := map[string]bool{}
		for _, is := range env.Issues {
			paths[is.Path] = true
		}
		assert.True(t, paths["/currency"], "an issue at /currency: %s", rep.BadCreate.Text)
		assert.True(t, paths["/amount"], "an issue at /amount: %s", rep.BadCreate.Text)
	})

	c.Run(t, "transient failure", func(t *testing.T) {
		require.GreaterOrEqual(t, len(rep.Reports), 2, "a 503, then the report")
		env := tsEnvelope(t, rep.Reports[0])
		assert.Equal(t, "unavailable", env.Code)
		assert.True(t, env.Retryable, "%s", rep.Reports[0].Text)
		assert.Equal(t, billing.RetryWait, env.RetryAfter, "the wait to retry after")
		last := rep.Reports[len(rep.Reports)-1]
		require.False(t, last.IsError, "the report, once rebuilt: %s", last.Text)
	})

	c.Run(t, "idempotency", func(t *testing.T) {
		require.Len(t, rep.Charges, 2)
		var charges [2]billing.Charge
		for i, res := range rep.Charges {
			require.False(t, res.IsError, "charge %d: %s", i, res.Text)
			require.NoError(t, json.Unmarshal(res.StructuredContent, &charges[i]), "%s", res.StructuredContent)
		}
		assert.NotEmpty(t, charges[0].ID)
		assert.Equal(t, charges[0], charges[1], "the same charge")
		assert.Nil(t, rep.Charges[0].Meta[remedy.MetaReplayed], "the first call is not a replay")
		assert.Equal(t, true, rep.Charges[1].Meta[remedy.MetaReplayed], "the second is, in _meta")

		// What the server's store says, seen from outside: the report sums the charges taken.
		require.NotEmpty(t, rep.Reports)
		last := rep.Reports[len(rep.Reports)-1]
		require.False(t, last.IsError, "%s", last.Text)
		var report billing.Report
		require.NoError(t, json.Unmarshal(last.StructuredContent, &report), "%s", last.StructuredContent)
		assert.Equal(t, 500, report.Charged, "one charge of 500 for two calls")
		if store != nil {
			assert.Equal(t, 1, store.Effects("charge"), "one execution for two calls")
		}
	})

	c.Run(t, "confirmation", func(t *testing.T) {
		env := tsEnvelope(t, rep.Confirmation.Required)
		assert.Equal(t, "confirmation_required", env.Code)
		assert.NotEmpty(t, env.ConfirmationToken)

		ok := rep.Confirmation.Confirmed
		require.False(t, ok.IsError, "%s", ok.Text)
		var del billing.Deleted
		require.NoError(t, json.Unmarshal(ok.StructuredContent, &del), "%s", ok.StructuredContent)
		assert.Equal(t, billing.Deleted{ID: "cus_ada", Deleted: true}, del)
		assert.JSONEq(t, ok.Text, string(ok.StructuredContent))

		// The spent token is refused by the confirmation gate, before the handler: the
		// deletion did not run again (over stdio, that refusal is all there is to see of it).
		env = tsEnvelope(t, rep.Confirmation.Replay)
		assert.Equal(t, "confirmation_invalid", env.Code, "a token confirms one call")
		if store != nil {
			deleted := 1 // cus_ada, by the token; cus_grace by the person below, where asked
			if run.elicits() {
				deleted++
			}
			assert.Equal(t, deleted, store.Effects("delete_customer"))
		}

		env = tsEnvelope(t, rep.ChargeDeleted)
		assert.Equal(t, "not_found", env.Code, "the customer is gone: %s", rep.ChargeDeleted.Text)
	})

	c.Run(t, "elicitation", func(t *testing.T) {
		el := rep.Elicitation
		if !run.elicits() {
			assert.Empty(t, el.Questions, "a stateless endpoint cannot ask an older client")
			env := tsEnvelope(t, el.Declined)
			assert.Equal(t, "confirmation_required", env.Code, "the token flow, unchanged")
			assert.NotEmpty(t, env.ConfirmationToken)
			return
		}
		require.Len(t, el.Questions, 2, "one question per call")
		for _, q := range el.Questions {
			assert.Contains(t, q.Message, "delete_customer")
			assert.Contains(t, q.Message, `{"id":"cus_grace"}`, "the exact arguments")
			assert.Equal(t, []string{"approve"}, q.Properties, "one boolean to approve")
			assert.Equal(t, map[string]any{"operation": "delete_customer", "arguments": map[string]any{"id": "cus_grace"}},
				q.Meta[remedy.MetaConfirmation])
		}
		env := tsEnvelope(t, el.Declined)
		assert.Equal(t, "confirmation_declined", env.Code)
		assert.Empty(t, env.ConfirmationToken, "no token the model could replay")
		ok := el.Accepted
		require.False(t, ok.IsError, "%s", ok.Text)
		var del billing.Deleted
		require.NoError(t, json.Unmarshal(ok.StructuredContent, &del), "%s", ok.StructuredContent)
		assert.Equal(t, billing.Deleted{ID: "cus_grace", Deleted: true}, del)
	})
}
