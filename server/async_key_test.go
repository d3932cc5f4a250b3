package server_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
)

// Over MCP, an idempotency key of an Async operation holds the job it submitted, as over REST,
// whatever the call answered (issue 35, row 4): a job that failed within ToolWait is answered
// with its failure, and a second call with the same key is answered with the same failure,
// marked replayed, without running the handler again. A REST call with the same key is
// answered with the same job.
func TestAsyncKeyOverMCPReplaysTheFailure(t *testing.T) {
	t.Parallel()
	e := newExportAPI(t, []server.OpOption{server.Idempotent()}, server.WithAsync(server.AsyncOptions{ToolWait: time.Minute}))
	e.release()
	srv := httptest.NewServer(e.api)
	defer srv.Close()
	cs := connect(t, srv.URL, nil)
	args := map[string]any{"format": "fail", remedy.ArgIdempotencyKey: "export-fail-1"}

	first := call(t, cs, "export_invoices", args)
	env := toolEnvelope(t, first)
	assert.Equal(t, server.CodeConflict, env.Code)
	assert.Nil(t, first.Meta[remedy.MetaReplayed], "the first answer is no replay")

	second := call(t, cs, "export_invoices", args)
	assert.Equal(t, int32(1), e.runs.Load(), "one key, one run")
	assert.True(t, second.IsError)
	require.Len(t, second.Content, 1)
	assert.Equal(t, first.Content[0].(*mcp.TextContent).Text, second.Content[0].(*mcp.TextContent).Text, "the second answer is the first")
	a, _ := json.Marshal(first.StructuredContent)
	b, _ := json.Marshal(second.StructuredContent)
	assert.JSONEq(t, string(a), string(b))
	assert.Equal(t, true, second.Meta[remedy.MetaReplayed], "the second answer says it is a replay")

	// Over REST, the same key is the same job: its submission replayed, its status failed.
	status, h, body := post(t, "POST", srv.URL+"/v1/exports", `{"format":"fail"}`, map[string]string{remedy.HeaderIdempotencyKey: "export-fail-1"})
	require.Equal(t, 202, status, "%s", body)
	assert.Equal(t, "true", h.Get(remedy.HeaderReplayed))
	loc := h.Get("Location")
	require.True(t, strings.HasPrefix(loc, server.StatusPath+"/"), loc)
	status, _, body = post(t, "GET", srv.URL+loc, "", nil)
	require.Equal(t, 200, status)
	assert.Contains(t, string(body), `"status":"failed"`)
	assert.Contains(t, string(body), server.CodeConflict)
	assert.Equal(t, int32(1), e.runs.Load(), "one key, one run, on either surface")
}
