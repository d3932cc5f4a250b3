package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
)

// jobServer answers POST /v1/exports with 202 and the status resource statusPath, whose GETs
// answer statuses in turn (the last one again and again); each answer of the list is a status
// and a body, with Retry-After-Ms: 1.
type jobServer struct {
	mu       sync.Mutex
	statuses []jobAnswer
	posts    atomic.Int32
	gets     atomic.Int32
	header   http.Header // of the 202
	extra    http.HandlerFunc
}

type jobAnswer struct {
	status int
	body   string
	header map[string]string
}

func (s *jobServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/exports":
		s.posts.Add(1)
		for k, v := range s.header {
			w.Header()[k] = v
		}
		if w.Header().Get("Location") == "" && w.Header().Get("Operation-Location") == "" && s.header == nil {
			w.Header().Set("Location", "/operations/op1")
		}
		w.Header().Set("Retry-After-Ms", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"id":"op1","status":"running"}`)
	case r.Method == http.MethodGet && r.URL.Path == "/operations/op1":
		n := int(s.gets.Add(1)) - 1
		s.mu.Lock()
		a := s.statuses[min(n, len(s.statuses)-1)]
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After-Ms", "1")
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	case s.extra != nil:
		s.extra(w, r)
	default:
		http.NotFound(w, r)
	}
}

var exportOp = client.Operation{Name: "export", Method: "POST", Path: "/v1/exports"}

func jobClient(t *testing.T, base string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(append([]client.Option{client.WithBaseURL(base), client.WithOperations(exportOp)}, opts...)...)
	require.NoError(t, err)
	return c
}

// An accepted operation is polled at its status resource until it succeeds; the result is the
// status's result member; each poll is an attempt of its own, and polls spend no retry budget
// and no attempt of MaxAttempts.
func TestPollUntilSucceeded(t *testing.T) {
	t.Parallel()
	js := &jobServer{statuses: []jobAnswer{
		{200, `{"status":"running"}`, nil},
		{200, `{"status":"InProgress"}`, nil},
		{200, `{"status":"notStarted"}`, nil},
		{200, `{"status":"running"}`, nil},
		{200, `{"status":"running"}`, nil},
		{200, `{"status":"running"}`, nil},
		{200, `{"id":"op1","status":"succeeded","result":{"url":"/files/1.csv"}}`, nil},
	}}
	srv := httptest.NewServer(js)
	defer srv.Close()
	budget := client.NewRetryBudget(2, 0)
	var polls []client.Attempt
	c := jobClient(t, srv.URL, client.WithRetryBudget(budget), client.WithLimits(client.Limits{MaxAttempts: 2}),
		client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) { polls = append(polls, *a) }}))
	resp, err := c.Call(context.Background(), "export", map[string]any{"format": "csv"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"url":"/files/1.csv"}`, string(resp.Body))
	assert.Equal(t, 200, resp.Status)
	require.Len(t, resp.Attempts, 8)
	assert.Equal(t, client.ActPoll, resp.Attempts[0].Decision.Action)
	assert.Equal(t, 202, resp.Attempts[0].Status)
	assert.False(t, resp.Attempts[0].Poll)
	for i, a := range resp.Attempts[1:] {
		assert.True(t, a.Poll, "attempt %d", i+2)
		assert.Equal(t, "GET", a.Method)
		assert.Equal(t, "/operations/op1", a.Target)
		assert.Equal(t, i+2, a.Number)
		assert.GreaterOrEqual(t, a.Decision.Wait, time.Duration(0))
	}
	assert.Equal(t, client.ActReturn, resp.Attempts[7].Decision.Action)
	assert.Len(t, polls, 8, "the hooks see every poll")
	assert.Equal(t, int32(1), js.posts.Load(), "submitted once")
	assert.Equal(t, 2.0, budget.Tokens(), "polls answered running spend no retry budget")
}

// Azure's long-running operations: Operation-Location, status words in their case, and the
// resource the succeeded status names fetched as the result.
func TestPollAzureResourceLocation(t *testing.T) {
	t.Parallel()
	js := &jobServer{header: http.Header{"Operation-Location": {"/operations/op1?api-version=1"}, "Location": {"/elsewhere"}}}
	js.statuses = []jobAnswer{
		{200, `{"status":"Running"}`, nil},
		{200, `{"status":"Succeeded","resourceLocation":"/v1/reports/7"}`, nil},
	}
	js.extra = func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/reports/7" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":7,"status":"completed","rows":3}`)
			return
		}
		http.NotFound(w, r)
	}
	srv := httptest.NewServer(js)
	defer srv.Close()
	resp, err := jobClient(t, srv.URL).Call(context.Background(), "export", nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":7,"status":"completed","rows":3}`, string(resp.Body), "the resource, as sent")
	last := resp.Attempts[len(resp.Attempts)-1]
	assert.Equal(t, "/v1/reports/7", last.Target)
	assert.True(t, last.Poll)
}

// Google's long-running operations: done false, then done with a response or an error.
func TestPollGoogleOperation(t *testing.T) {
	t.Parallel()
	t.Run("response", func(t *testing.T) {
		t.Parallel()
		js := &jobServer{statuses: []jobAnswer{
			{200, `{"name":"operations/op1","done":false}`, nil},
			{200, `{"name":"operations/op1","done":true,"response":{"@type":"x","rows":3}}`, nil},
		}}
		srv := httptest.NewServer(js)
		defer srv.Close()
		resp, err := jobClient(t, srv.URL).Call(context.Background(), "export", nil)
		require.NoError(t, err)
		assert.JSONEq(t, `{"@type":"x","rows":3}`, string(resp.Body))
	})
	t.Run("error", func(t *testing.T) {
		t.Parallel()
		js := &jobServer{statuses: []jobAnswer{
			{200, `{"name":"operations/op1","done":true,"error":{"code":3,"message":"column x does not exist"}}`, nil},
		}}
		srv := httptest.NewServer(js)
		defer srv.Close()
		_, err := jobClient(t, srv.URL).Call(context.Background(), "export", nil)
		require.ErrorIs(t, err, client.ErrOperationFailed)
		var env *remedy.Envelope
		require.ErrorAs(t, err, &env)
		assert.Equal(t, 400, env.Status)
		assert.Contains(t, env.Message, "column x does not exist")
	})
}

// A status that failed stops the call with ErrOperationFailed and the failure read as the
// envelope a synchronous call would have had; the operation is never submitted again, whatever
// the failure says of retrying.
func TestPollFailedStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, code string
		status           int
	}{
		{"ours", `{"id":"op1","status":"failed","error":{"statusCode":503,"code":"unavailable","message":"the warehouse is down","retryable":true}}`, "unavailable", 503},
		{"azure", `{"status":"Failed","error":{"code":"QuotaExceeded","message":"too many exports"}}`, "QuotaExceeded", 500},
		{"problem", `{"status":"failed","error":{"type":"https://example.com/out-of-stock","title":"Out of stock","status":409,"code":"out_of_stock","detail":"no more paper"}}`, "out_of_stock", 409},
		{"canceled", `{"status":"Canceled"}`, "operation_canceled", 500},
		{"bare", `{"status":"failed"}`, "operation_failed", 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			js := &jobServer{statuses: []jobAnswer{{200, `{"status":"running"}`, nil}, {200, tc.body, nil}}}
			srv := httptest.NewServer(js)
			defer srv.Close()
			_, err := jobClient(t, srv.URL).Call(context.Background(), "export", nil)
			require.ErrorIs(t, err, client.ErrOperationFailed)
			var env *remedy.Envelope
			require.ErrorAs(t, err, &env)
			assert.Equal(t, tc.code, env.Code)
			assert.Equal(t, tc.status, env.Status)
			if tc.name != "ours" {
				assert.False(t, env.Retryable, "a status the failure did not state says nothing of retrying")
			}
			assert.Equal(t, int32(1), js.posts.Load(), "a failed operation is not submitted again")
			assert.Equal(t, int32(2), js.gets.Load())
		})
	}
}

// A status resource that fails for good leaves the outcome unknown: the operation was
// accepted. A transient failure of a poll is polled again, spending the retry budget.
func TestPollFailures(t *testing.T) {
	t.Parallel()
	t.Run("gone", func(t *testing.T) {
		t.Parallel()
		js := &jobServer{statuses: []jobAnswer{{404, `{"error":{"code":"not_found","message":"no such operation"}}`, nil}}}
		srv := httptest.NewServer(js)
		defer srv.Close()
		_, err := jobClient(t, srv.URL).Call(context.Background(), "export", nil)
		require.ErrorIs(t, err, remedy.ErrOutcomeUnknown)
		var acc *client.Accepted
		require.ErrorAs(t, err, &acc)
		assert.Equal(t, srv.URL+"/operations/op1", acc.Location)
		assert.Equal(t, int32(1), js.posts.Load())
	})
	t.Run("transient", func(t *testing.T) {
		t.Parallel()
		js := &jobServer{statuses: []jobAnswer{
			{503, `{"error":{"code":"unavailable","message":"busy"}}`, map[string]string{"Retry-After": "0"}},
			{200, `{"status":"succeeded","result":{"ok":true}}`, nil},
		}}
		srv := httptest.NewServer(js)
		defer srv.Close()
		budget := client.NewRetryBudget(3, 0)
		resp, err := jobClient(t, srv.URL, client.WithRetryBudget(budget)).Call(context.Background(), "export", nil)
		require.NoError(t, err)
		assert.JSONEq(t, `{"ok":true}`, string(resp.Body))
		assert.Equal(t, 2.0, budget.Tokens(), "the poll sent again after a failure is a retry")
	})
}

// Polling is off for an operation that says so, and for a call made WithoutPolling: the 202
// is the result, as sent.
func TestPollOptOut(t *testing.T) {
	t.Parallel()
	js := &jobServer{statuses: []jobAnswer{{200, `{"status":"succeeded"}`, nil}}}
	srv := httptest.NewServer(js)
	defer srv.Close()
	resp, err := jobClient(t, srv.URL).Call(context.Background(), "export", nil, client.WithoutPolling())
	require.NoError(t, err)
	assert.Equal(t, 202, resp.Status)
	assert.JSONEq(t, `{"id":"op1","status":"running"}`, string(resp.Body))

	op := exportOp
	op.NoPoll = true
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithOperations(op))
	require.NoError(t, err)
	resp, err = c.Call(context.Background(), "export", nil)
	require.NoError(t, err)
	assert.Equal(t, 202, resp.Status)
	assert.Equal(t, int32(0), js.gets.Load(), "nothing polled")
}

// authTransport adds the caller's credentials to every request, as an OAuth transport does:
// the loop cannot take them off a request, so it must not send one elsewhere.
type authTransport struct{}

func (authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer secret")
	return http.DefaultTransport.RoundTrip(r)
}

// A status resource on another origin is not polled with the caller's credentials: the call
// stops with ErrPollLocation and the location, and nothing reaches the other host — named by
// the 202, by a later status, by a resourceLocation, or by a redirect of a poll.
func TestPollAnotherOrigin(t *testing.T) {
	t.Parallel()
	var stolen atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		io.WriteString(w, `{"status":"succeeded"}`)
	}))
	defer evil.Close()
	hc := &http.Client{Transport: authTransport{}}
	for _, tc := range []struct {
		name string
		js   *jobServer
	}{
		{"accepted", &jobServer{header: http.Header{"Operation-Location": {evil.URL + "/operations/op1"}}, statuses: []jobAnswer{{200, `{}`, nil}}}},
		{"resourceLocation", &jobServer{statuses: []jobAnswer{{200, `{"status":"succeeded","resourceLocation":"` + evil.URL + `/r"}`, nil}}}},
		{"redirect", &jobServer{statuses: []jobAnswer{{302, ``, map[string]string{"Location": evil.URL + "/r"}}}}},
		{"moved", &jobServer{statuses: []jobAnswer{{202, `{"status":"running"}`, map[string]string{"Location": evil.URL + "/r"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.js)
			defer srv.Close()
			_, err := jobClient(t, srv.URL, client.WithHTTPClient(hc)).Call(context.Background(), "export", nil)
			require.ErrorIs(t, err, client.ErrPollLocation)
			var acc *client.Accepted
			require.ErrorAs(t, err, &acc)
			assert.NotEmpty(t, acc.Location)
			assert.Equal(t, int32(0), stolen.Load(), "the other origin was sent a request")
		})
	}
}

// memTransport is a server in memory (no socket), so that a test runs in a synctest bubble:
// every POST is accepted, every GET answers 202 running, with Retry-After, forever.
type memTransport struct {
	retryAfter string
	gets       []time.Time
}

func (m *memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	h := http.Header{"Content-Type": {"application/json"}, "Retry-After": {m.retryAfter}, "Location": {"/operations/op1"}}
	if r.Method == http.MethodGet {
		m.gets = append(m.gets, time.Now())
	}
	return &http.Response{StatusCode: 202, Header: h, Body: io.NopCloser(strings.NewReader(`{"status":"running"}`)), Request: r}, nil
}

// A server that answers 202 forever ends with a typed error: after Limits.MaxPolls polls, or
// at the elapsed budget, never polling earlier than Retry-After asks; a wait longer than
// MaxWait is not taken at all.
func TestPollForever(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, retryAfter string, lim client.Limits) (*memTransport, error, time.Duration) {
		m := &memTransport{retryAfter: retryAfter}
		c := jobClient(t, "http://api.test", client.WithHTTPClient(&http.Client{Transport: m}), client.WithLimits(lim))
		start := time.Now()
		_, err := c.Call(context.Background(), "export", nil)
		return m, err, time.Since(start)
	}
	t.Run("MaxPolls", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m, err, _ := run(t, "2", client.Limits{MaxPolls: 7})
			require.ErrorIs(t, err, client.ErrPollsExhausted)
			assert.Len(t, m.gets, 7)
			for i := 1; i < len(m.gets); i++ {
				assert.GreaterOrEqual(t, m.gets[i].Sub(m.gets[i-1]), 2*time.Second, "poll %d came early", i+1)
			}
			var acc *client.Accepted
			require.ErrorAs(t, err, &acc)
			assert.Equal(t, "http://api.test/operations/op1", acc.Location)
			assert.Equal(t, "running", acc.Status)
		})
	})
	t.Run("MaxElapsed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lim := client.Limits{MaxElapsed: time.Minute}
			m, err, took := run(t, "7", lim)
			require.ErrorIs(t, err, client.ErrElapsedBudget)
			assert.LessOrEqual(t, took, lim.MaxElapsed)
			assert.Len(t, m.gets, 8, "60 s of 7 s waits")
			var later *client.RetryLater
			require.ErrorAs(t, err, &later)
			assert.Equal(t, 7*time.Second, later.After)
		})
	})
	t.Run("default limits, no hint", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m, err, took := run(t, "", client.Limits{})
			require.Error(t, err)
			assert.LessOrEqual(t, took, client.DefaultMaxElapsed)
			assert.LessOrEqual(t, len(m.gets), client.DefaultMaxPolls)
			assert.Greater(t, len(m.gets), 3)
		})
	})
	t.Run("wait too long", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m, err, _ := run(t, "3600", client.Limits{})
			require.ErrorIs(t, err, client.ErrWaitTooLong)
			assert.Empty(t, m.gets, "a wait that is not taken is not cut short either")
			var acc *client.Accepted
			require.ErrorAs(t, err, &acc)
		})
	})
	t.Run("deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m := &memTransport{retryAfter: "5"}
			c := jobClient(t, "http://api.test", client.WithHTTPClient(&http.Client{Transport: m}))
			ctx, cancel := context.WithTimeout(context.Background(), 12*time.Second)
			defer cancel()
			_, err := c.Call(ctx, "export", nil)
			require.ErrorIs(t, err, client.ErrDeadline)
			assert.Len(t, m.gets, 2)
		})
	})
}

// The status words and their spellings.
func TestPollStatusWords(t *testing.T) {
	t.Parallel()
	for word, ok := range map[string]bool{
		"succeeded": true, "Succeeded": true, "SUCCEEDED": true, "completed": true, "success": true, "done": true,
		"failed": false, "Failed": false, "error": false, "canceled": false, "Cancelled": false,
	} {
		js := &jobServer{statuses: []jobAnswer{
			{200, `{"status":"in_progress"}`, nil}, {200, `{"status":"pending"}`, nil}, {200, `{"status":"queued"}`, nil},
			{200, fmt.Sprintf(`{"status":%q}`, word), nil},
		}}
		srv := httptest.NewServer(js)
		_, err := jobClient(t, srv.URL).Call(context.Background(), "export", nil)
		srv.Close()
		if ok {
			assert.NoError(t, err, word)
		} else {
			assert.ErrorIs(t, err, client.ErrOperationFailed, word)
		}
		assert.Equal(t, int32(4), js.gets.Load(), word)
	}
}

// Client.Do sends the caller's own request and returns the 202 as it came.
func TestPollRawRequestsReturnAccepted(t *testing.T) {
	t.Parallel()
	js := &jobServer{statuses: []jobAnswer{{200, `{"status":"succeeded"}`, nil}}}
	srv := httptest.NewServer(js)
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/v1/exports", bytes.NewReader([]byte(`{}`)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := jobClient(t, srv.URL).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 202, resp.StatusCode)
	assert.Equal(t, int32(0), js.gets.Load())
}

var _ = errors.Is
var _ = json.Valid

// A status resource that answers 200 with a failure inside it (Cloudflare's success:false, a
// JSON-RPC error, Slack's ok:false) failed, as the same body failing a plain call does: the
// call does not return it as the operation's result (issue 35, row 1). A result resource's
// 200 with a failure inside is a failure too.
func TestPollFailureInsideA2xx(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body string }{
		{"success false", `{"success":false,"errors":[{"code":1003,"message":"the export job is unknown"}],"result":null}`},
		{"JSON-RPC error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"the job store is down"}}`},
		{"ok false", `{"ok":false,"error":"job_not_found"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			js := &jobServer{statuses: []jobAnswer{{200, `{"status":"running"}`, nil}, {200, tc.body, nil}}}
			srv := httptest.NewServer(js)
			defer srv.Close()
			resp, err := jobClient(t, srv.URL, client.WithRetryBudget(client.NewRetryBudget(1, 0))).Call(context.Background(), "export", nil)
			require.Error(t, err, "a failure is not the operation's result: %v", resp)
			var env *remedy.Envelope
			require.ErrorAs(t, err, &env, "the failure the status resource answered is kept")
			var acc *client.Accepted
			require.ErrorAs(t, err, &acc, "the operation was accepted: where to look later")
			assert.Equal(t, int32(1), js.posts.Load(), "the operation is not submitted again")
		})
	}
	t.Run("result resource", func(t *testing.T) {
		t.Parallel()
		js := &jobServer{statuses: []jobAnswer{{200, `{"status":"succeeded","resourceLocation":"/files/1"}`, nil}}}
		js.extra = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok":false,"error":"file_expired"}`)
		}
		srv := httptest.NewServer(js)
		defer srv.Close()
		_, err := jobClient(t, srv.URL).Call(context.Background(), "export", nil)
		require.ErrorIs(t, err, client.ErrNotRetryable)
		var env *remedy.Envelope
		require.ErrorAs(t, err, &env)
		assert.Equal(t, "file_expired", env.Code)
		assert.Equal(t, int32(1), js.posts.Load())
	})
}
