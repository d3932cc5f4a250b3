package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/billing"
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
	Tools []struct {
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
	Charges []tsResult `json:"charges"`
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
	if missing == "" {
		return
	}
	if os.Getenv("REMEDY_REQUIRE_NODE") == "1" {
		t.Fatalf("the TypeScript MCP client cannot run: %s; %s", missing, fix)
	}
	t.Skipf("the TypeScript MCP client cannot run: %s; %s", missing, fix)
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

// TestTypeScriptMCPClient runs the official TypeScript SDK's clients (clients that are not
// ours, and that validate every result against their own schemas) against the billing API:
// v1 (@modelcontextprotocol/sdk) and v2 (@modelcontextprotocol/client), with one script.
func TestTypeScriptMCPClient(t *testing.T) {
	requireNode(t)
	t.Parallel()
	for _, sdk := range []string{"v1", "v2"} {
		t.Run(sdk, func(t *testing.T) {
			t.Parallel()
			testTypeScriptMCPClient(t, sdk)
		})
	}
}

func testTypeScriptMCPClient(t *testing.T, sdk string) {
	api, store, srv := billingServer(t)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs", srv.URL+server.DefaultMCPPath, sdk)
	cmd.Dir = tsClientDir
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "client.mjs failed:\n%s", stderr.String())

	var rep tsReport
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), "%s", stdout.String())

	t.Run("tools", func(t *testing.T) {
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

	t.Run("invalid arguments", func(t *testing.T) {
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

	t.Run("confirmation", func(t *testing.T) {
		env := tsEnvelope(t, rep.Confirmation.Required)
		assert.Equal(t, "confirmation_required", env.Code)
		assert.NotEmpty(t, env.ConfirmationToken)

		ok := rep.Confirmation.Confirmed
		require.False(t, ok.IsError, "%s", ok.Text)
		var del billing.Deleted
		require.NoError(t, json.Unmarshal(ok.StructuredContent, &del), "%s", ok.StructuredContent)
		assert.Equal(t, billing.Deleted{ID: "cus_ada", Deleted: true}, del)
		assert.JSONEq(t, ok.Text, string(ok.StructuredContent))

		env = tsEnvelope(t, rep.Confirmation.Replay)
		assert.Equal(t, "confirmation_invalid", env.Code, "a token confirms one call")
		assert.Equal(t, 1, store.Effects("delete_customer"))
	})

	t.Run("idempotency", func(t *testing.T) {
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
		assert.Equal(t, 1, store.Effects("charge"), "one execution for two calls")
	})
}
