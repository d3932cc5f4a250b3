package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/redistest"
	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/redisstore"
)

type ExportIn struct {
	Format string `json:"format" schema:"minLength=1"`
}

type ExportOut struct {
	URL  string `json:"url"`
	Rows int    `json:"rows"`
}

// exportAPI is an API with one Async operation, export_invoices, whose handler waits for its
// gate (closed: it runs at once) and then answers by its format: "fail" a conflict, "panic"
// a panic, anything else a file.
type exportAPI struct {
	api  *server.API
	gate chan struct{}
	once sync.Once
	runs atomic.Int32
}

func (e *exportAPI) release() { e.once.Do(func() { close(e.gate) }) }

func newExportAPI(t *testing.T, opOpts []server.OpOption, opts ...server.Option) *exportAPI {
	t.Helper()
	e := &exportAPI{gate: make(chan struct{})}
	api, err := server.New(append([]server.Option{server.WithAsync(server.AsyncOptions{PollAfter: 2 * time.Millisecond})}, opts...)...)
	require.NoError(t, err)
	h := func(ctx context.Context, in ExportIn) (ExportOut, error) {
		e.runs.Add(1)
		<-e.gate // not ctx: a test that ends the API releases the gate first
		switch in.Format {
		case "fail":
			return ExportOut{}, server.Error(server.CodeConflict, "the ledger is locked by another export")
		case "panic":
			panic("boom")
		}
		return ExportOut{URL: "/files/invoices." + in.Format, Rows: 3}, nil
	}
	require.NoError(t, server.Post(api, "/v1/exports", h, append([]server.OpOption{server.OperationID("export_invoices"),
		server.Async(), server.Errors(server.CodeConflict)}, opOpts...)...))
	// The same handler, synchronous, to compare failures with.
	require.NoError(t, server.Post(api, "/v1/exports/now", h, server.OperationID("export_now"), server.Errors(server.CodeConflict)))
	e.api = api
	t.Cleanup(func() {
		e.release()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		api.Shutdown(ctx)
	})
	return e
}

// shutdown releases the exports and waits until every job has stored its end.
func shutdown(t *testing.T, e *exportAPI) {
	t.Helper()
	e.release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, e.api.Shutdown(ctx))
}

func exportClient(t *testing.T, url string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(append([]client.Option{client.WithBaseURL(url), client.WithOperations(
		client.Operation{Name: "export_invoices", Method: "POST", Path: "/v1/exports"},
		client.Operation{Name: "export_now", Method: "POST", Path: "/v1/exports/now"},
	)}, opts...)...)
	require.NoError(t, err)
	return c
}

// An Async operation of the reference server, called by the reference client over REST:
// accepted, polled while it runs (the gate opens once the client has polled), and its
// result returned as the synchronous operation's would be.
func TestAsyncOverREST(t *testing.T) {
	t.Parallel()
	e := newExportAPI(t, nil)
	srv := httptest.NewServer(e.api)
	defer srv.Close()
	c := exportClient(t, srv.URL, client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) {
		if a.Poll {
			e.release() // the client saw it running at least once
		}
	}}))
	resp, err := c.Call(context.Background(), "export_invoices", map[string]any{"format": "csv"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"url":"/files/invoices.csv","rows":3}`, string(resp.Body))
	require.GreaterOrEqual(t, len(resp.Attempts), 3)
	assert.Equal(t, 202, resp.Attempts[0].Status)
	assert.Equal(t, client.ActPoll, resp.Attempts[0].Decision.Action)
	assert.True(t, resp.Attempts[1].Poll)
	assert.Equal(t, client.ActPoll, resp.Attempts[1].Decision.Action, "the first poll found it running")
	assert.True(t, strings.HasPrefix(resp.Attempts[1].Target, server.StatusPath+"/"))
	assert.Equal(t, int32(1), e.runs.Load())
}

// A failed background operation is answered with the envelope its synchronous call would
// have had; a panic is a failed operation (internal_error), and the server goes on serving.
func TestAsyncFailures(t *testing.T) {
	t.Parallel()
	e := newExportAPI(t, nil)
	e.release()
	srv := httptest.NewServer(e.api)
	defer srv.Close()
	c := exportClient(t, srv.URL)
	ctx := context.Background()

	_, err := c.Call(ctx, "export_invoices", map[string]any{"format": "fail"})
	require.ErrorIs(t, err, client.ErrOperationFailed)
	var async *remedy.Envelope
	require.ErrorAs(t, err, &async)
	_, err = c.Call(ctx, "export_now", map[string]any{"format": "fail"})
	var sync *remedy.Envelope
	require.ErrorAs(t, err, &sync)
	assert.Equal(t, sync.Status, async.Status)
	assert.Equal(t, sync.Code, async.Code)
	assert.Equal(t, server.CodeConflict, async.Code)
	assert.Equal(t, sync.Message, async.Message)
	assert.Equal(t, sync.Hint, async.Hint)

	_, err = c.Call(ctx, "export_invoices", map[string]any{"format": "panic"})
	require.ErrorIs(t, err, client.ErrOperationFailed)
	require.ErrorAs(t, err, &async)
	assert.Equal(t, server.CodeInternalError, async.Code)
	assert.NotContains(t, async.Message, "boom", "nothing of the panic reaches the caller")
	assert.NotEmpty(t, async.TraceID)

	resp, err := c.Call(ctx, "export_invoices", map[string]any{"format": "csv"})
	require.NoError(t, err, "the server serves on after a panic")
	assert.Contains(t, string(resp.Body), "invoices.csv")
}

// post sends a raw request and returns the status, the headers and the body.
func post(t *testing.T, method, url, body string, header map[string]string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

// The 202 and the status resource as a raw HTTP client sees them; another principal's poll is
// 404 (it learns nothing of the operation), and the owner's is answered.
func TestAsyncStatusResource(t *testing.T) {
	t.Parallel()
	e := newExportAPI(t, nil, server.WithAuthenticator(byBearer))
	srv := httptest.NewServer(e.api)
	defer srv.Close()
	alice := map[string]string{"Authorization": "Bearer alice"}
	status, h, body := post(t, "POST", srv.URL+"/v1/exports", `{"format":"csv"}`, alice)
	require.Equal(t, 202, status, "%s", body)
	loc := h.Get("Location")
	require.True(t, strings.HasPrefix(loc, server.StatusPath+"/"), loc)
	assert.Equal(t, loc, h.Get("Operation-Location"))
	assert.Equal(t, "1", h.Get("Retry-After"))
	var accepted struct{ ID, Operation, Status string }
	require.NoError(t, json.Unmarshal(body, &accepted))
	assert.Equal(t, server.StatusPath+"/"+accepted.ID, loc)
	assert.Equal(t, "running", accepted.Status)
	assert.Equal(t, "export_invoices", accepted.Operation)

	status, _, body = post(t, "GET", srv.URL+loc, "", map[string]string{"Authorization": "Bearer bob"})
	assert.Equal(t, 404, status, "another principal polls: %s", body)
	assert.NotContains(t, string(body), "export_invoices")
	status, _, _ = post(t, "GET", srv.URL+loc, "", nil)
	assert.Equal(t, 401, status, "an unauthenticated poll")

	status, h, body = post(t, "GET", srv.URL+loc, "", alice)
	require.Equal(t, 200, status)
	assert.JSONEq(t, `{"id":"`+accepted.ID+`","operation":"export_invoices","status":"running"}`, string(body))
	assert.NotEmpty(t, h.Get("Retry-After"))

	e.release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, e.api.Shutdown(ctx)) // waits for the job's end to be stored
	status, _, body = post(t, "GET", srv.URL+loc, "", alice)
	require.Equal(t, 200, status)
	assert.JSONEq(t, `{"id":"`+accepted.ID+`","operation":"export_invoices","status":"succeeded","result":{"url":"/files/invoices.csv","rows":3}}`, string(body))

	status, _, body = post(t, "POST", srv.URL+"/v1/exports", `{"format":"csv"}`, alice)
	assert.Equal(t, 503, status, "a submission after Shutdown: %s", body)
}

// An idempotency key covers the submission: a retried submission with the same key is the
// same operation, and the handler runs once.
func TestAsyncIdempotentSubmission(t *testing.T) {
	t.Parallel()
	e := newExportAPI(t, []server.OpOption{server.Idempotent()})
	srv := httptest.NewServer(e.api)
	defer srv.Close()
	key := map[string]string{"Idempotency-Key": "export-1"}
	s1, h1, b1 := post(t, "POST", srv.URL+"/v1/exports", `{"format":"csv"}`, key)
	s2, h2, b2 := post(t, "POST", srv.URL+"/v1/exports", `{"format":"csv"}`, key)
	require.Equal(t, 202, s1)
	require.Equal(t, 202, s2)
	assert.Equal(t, h1.Get("Location"), h2.Get("Location"), "the same operation")
	assert.JSONEq(t, string(b1), string(b2))
	assert.Equal(t, "true", h2.Get(remedy.HeaderReplayed))
	// The replay says where the status is and how soon to ask, as the first answer did.
	for _, k := range []string{"Operation-Location", "Retry-After", "Retry-After-Ms"} {
		assert.NotEmpty(t, h2.Get(k), "the replayed 202's %s", k)
		assert.Equal(t, h1.Get(k), h2.Get(k), k)
	}
	s3, h3, _ := post(t, "POST", srv.URL+"/v1/exports", `{"format":"csv"}`, map[string]string{"Idempotency-Key": "export-2"})
	require.Equal(t, 202, s3)
	assert.NotEqual(t, h1.Get("Location"), h3.Get("Location"), "another key, another operation")
	e.release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, e.api.Shutdown(ctx))
	assert.Equal(t, int32(2), e.runs.Load(), "one job per key")
}

// The background handlers are bounded: a submission that finds every worker busy is refused,
// before anything is done.
func TestAsyncWorkersBounded(t *testing.T) {
	t.Parallel()
	e := newExportAPI(t, nil, server.WithAsync(server.AsyncOptions{Workers: 1}))
	srv := httptest.NewServer(e.api)
	defer srv.Close()
	s1, _, _ := post(t, "POST", srv.URL+"/v1/exports", `{"format":"csv"}`, nil)
	s2, h2, b2 := post(t, "POST", srv.URL+"/v1/exports", `{"format":"csv"}`, nil)
	assert.Equal(t, 202, s1)
	assert.Equal(t, 503, s2, "%s", b2)
	assert.NotEmpty(t, h2.Get("Retry-After"))
	assert.Contains(t, string(b2), "unavailable")
	shutdown(t, e)
	assert.Equal(t, int32(1), e.runs.Load(), "the refused submission ran nothing")
}

// One caller cannot take every worker: beyond its own bound it is refused, and another caller
// is still served.
func TestAsyncWorkersPerCaller(t *testing.T) {
	t.Parallel()
	e := newExportAPI(t, nil, server.WithAuthenticator(byBearer), server.WithAsync(server.AsyncOptions{Workers: 4, ScopeWorkers: 2}))
	srv := httptest.NewServer(e.api)
	defer srv.Close()
	mallory := map[string]string{"Authorization": "Bearer mallory"}
	for i := range 2 {
		status, _, body := post(t, "POST", srv.URL+"/v1/exports", `{"format":"csv"}`, mallory)
		require.Equal(t, 202, status, "submission %d: %s", i+1, body)
	}
	status, _, body := post(t, "POST", srv.URL+"/v1/exports", `{"format":"csv"}`, mallory)
	assert.Equal(t, 503, status, "beyond the caller's bound: %s", body)
	status, _, body = post(t, "POST", srv.URL+"/v1/exports", `{"format":"csv"}`, map[string]string{"Authorization": "Bearer alice"})
	assert.Equal(t, 202, status, "another caller is served: %s", body)
	shutdown(t, e)
	assert.Equal(t, int32(3), e.runs.Load(), "the refused submission ran nothing")
}

// Over MCP, with the go-sdk's client: a tool call waits for an operation that ends quickly and
// answers as a synchronous call; one still running is answered with its id and a hint, and
// get_operation (listed among the tools) gives its end: the result, or the failure as an
// isError result with the same envelope.
func TestAsyncOverMCP(t *testing.T) {
	t.Parallel()
	t.Run("waited", func(t *testing.T) {
		t.Parallel()
		e := newExportAPI(t, nil, server.WithAsync(server.AsyncOptions{ToolWait: time.Minute}))
		e.release()
		srv := httptest.NewServer(e.api)
		defer srv.Close()
		cs := connect(t, srv.URL, nil)
		out := result[ExportOut](t, call(t, cs, "export_invoices", map[string]any{"format": "csv"}))
		assert.Equal(t, ExportOut{URL: "/files/invoices.csv", Rows: 3}, out)
		env := toolEnvelope(t, call(t, cs, "export_invoices", map[string]any{"format": "fail"}))
		assert.Equal(t, server.CodeConflict, env.Code)
	})
	t.Run("get_operation", func(t *testing.T) {
		t.Parallel()
		jobs := server.NewMemoryStore(server.MemoryOptions{})
		e := newExportAPI(t, nil, server.WithAsync(server.AsyncOptions{ToolWait: time.Millisecond, Store: jobs}))
		srv := httptest.NewServer(e.api)
		defer srv.Close()
		cs := connect(t, srv.URL, nil)
		tools, err := cs.ListTools(context.Background(), nil)
		require.NoError(t, err)
		var names []string
		for _, tool := range tools.Tools {
			names = append(names, tool.Name)
			if tool.Name == "export_invoices" {
				assert.Contains(t, tool.Description, server.GetOperationID, "the tool says how to follow it")
			}
		}
		assert.Contains(t, names, server.GetOperationID)

		type status struct{ ID, Operation, Status, Hint string }
		ok := result[status](t, call(t, cs, "export_invoices", map[string]any{"format": "csv"}))
		bad := result[status](t, call(t, cs, "export_invoices", map[string]any{"format": "fail"}))
		assert.Equal(t, "running", ok.Status)
		assert.Contains(t, ok.Hint, server.GetOperationID)
		assert.Contains(t, ok.Hint, ok.ID)
		running := result[status](t, call(t, cs, server.GetOperationID, map[string]any{"id": ok.ID}))
		assert.Equal(t, "running", running.Status)

		e.release()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, e.api.Shutdown(ctx)) // the jobs' ends are stored; its MCP endpoint is shut
		// The ends, read over MCP from the instance that took over (the same job store).
		next := newExportAPI(t, nil, server.WithAsync(server.AsyncOptions{Store: jobs}))
		srv2 := httptest.NewServer(next.api)
		defer srv2.Close()
		cs = connect(t, srv2.URL, nil)
		type done struct {
			Status string
			Result ExportOut
		}
		end := result[done](t, call(t, cs, server.GetOperationID, map[string]any{"id": ok.ID}))
		assert.Equal(t, "succeeded", end.Status)
		assert.Equal(t, ExportOut{URL: "/files/invoices.csv", Rows: 3}, end.Result)
		env := toolEnvelope(t, call(t, cs, server.GetOperationID, map[string]any{"id": bad.ID}))
		assert.Equal(t, server.CodeConflict, env.Code)
		env = toolEnvelope(t, call(t, cs, server.GetOperationID, map[string]any{"id": "nope"}))
		assert.Equal(t, server.CodeNotFound, env.Code)
	})
}

// Two instances sharing one Redis store: an operation accepted by one is polled on the other,
// running and then ended.
func TestAsyncAcrossInstances(t *testing.T) {
	t.Parallel()
	c := redis.NewClient(&redis.Options{Addr: redistest.Start(t)})
	t.Cleanup(func() { c.Close() })
	store := redisstore.New(c, redisstore.Options{Prefix: "async-test:"})
	opts := []server.Option{server.WithIdempotency(server.IdempotencyOptions{Store: store}), server.WithConfirmation(server.ConfirmationOptions{Store: store})}
	one := newExportAPI(t, nil, opts...)
	two := newExportAPI(t, nil, opts...)
	s1 := httptest.NewServer(one.api)
	defer s1.Close()
	s2 := httptest.NewServer(two.api)
	defer s2.Close()
	status, h, _ := post(t, "POST", s1.URL+"/v1/exports", `{"format":"csv"}`, nil)
	require.Equal(t, 202, status)
	loc := h.Get("Location")
	status, _, body := post(t, "GET", s2.URL+loc, "", nil)
	require.Equal(t, 200, status, "%s", body)
	assert.Contains(t, string(body), `"running"`)
	one.release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, one.api.Shutdown(ctx))
	status, _, body = post(t, "GET", s2.URL+loc, "", nil)
	require.Equal(t, 200, status)
	assert.Contains(t, string(body), `"succeeded"`)
	assert.Contains(t, string(body), "invoices.csv")
	assert.Equal(t, int32(0), two.runs.Load(), "the second instance ran nothing")

	// And the reference client, submitting to one instance's URL, is answered by it alone;
	// its polls reach the status through the shared store all the same.
	one2 := exportClient(t, s2.URL, client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) {
		if a.Poll {
			two.release()
		}
	}}))
	resp, err := one2.Call(context.Background(), "export_invoices", map[string]any{"format": "json"})
	require.NoError(t, err)
	assert.Contains(t, string(resp.Body), "invoices.json")
}

// The OpenAPI document describes an Async operation's 202 and its status resource.
func TestAsyncOpenAPI(t *testing.T) {
	t.Parallel()
	e := newExportAPI(t, nil)
	srv := httptest.NewServer(e.api)
	defer srv.Close()
	_, doc := loadOpenAPI(t, srv.URL) // kin-openapi validates it
	var d struct {
		Paths map[string]map[string]struct {
			OperationID string                     `json:"operationId"`
			Async       bool                       `json:"x-remedy-async"`
			Responses   map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(doc, &d))
	op := d.Paths["/v1/exports"]["post"]
	assert.True(t, op.Async)
	require.Contains(t, op.Responses, "202")
	assert.NotContains(t, op.Responses, "200", "a REST caller never gets the synchronous success")
	assert.Contains(t, string(op.Responses["202"]), "Operation-Location")
	assert.Contains(t, string(op.Responses["202"]), `"rows"`, "the result's schema")
	get := d.Paths[server.StatusPath+"/{id}"]["get"]
	assert.Equal(t, server.GetOperationID, get.OperationID)
	assert.Contains(t, string(get.Responses["200"]), "succeeded")
	assert.False(t, d.Paths["/v1/exports/now"]["post"].Async)
}

// Without an Authenticator every caller is the one principal, which has the whole job space:
// 1,100 quick submissions (more than a principal's quota when there are several) are all
// accepted, and nobody is locked out for as long as jobs are retained (issue 35, row 2).
func TestAsyncOnePrincipalHasTheWholeJobSpace(t *testing.T) {
	t.Parallel()
	api, err := server.New(server.WithAsync(server.AsyncOptions{}))
	require.NoError(t, err)
	require.NoError(t, server.Post(api, "/v1/pings", func(context.Context, ExportIn) (ExportOut, error) {
		return ExportOut{Rows: 1}, nil
	}, server.OperationID("ping"), server.Async()))
	srv := httptest.NewServer(api)
	defer srv.Close()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		api.Shutdown(ctx)
	})
	hc := srv.Client()
	statuses := map[int]int{}
	for i := 0; i < server.DefaultScopeJobs+100; {
		resp, err := hc.Post(srv.URL+"/v1/pings", "application/json", strings.NewReader(`{"format":"csv"}`))
		require.NoError(t, err, "submission %d", i)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(body), "as many background operations as it may") {
			// Every worker is busy (a loaded machine runs the pings slower than they are
			// submitted): the workers' bound, not the job space, which is what is tested here.
			// Nothing was done; submit it again once a ping has ended.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		statuses[resp.StatusCode]++
		if resp.StatusCode == http.StatusServiceUnavailable {
			t.Fatalf("submission %d refused with 503: %v: %s", i, statuses, body)
		}
		i++
	}
	assert.Zero(t, statuses[http.StatusServiceUnavailable])
}
