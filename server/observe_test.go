package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
)

type observeKey struct{}

// The observer's Start wraps the pipeline: the handler runs under the context it returned,
// the envelope's trace_id is the one TraceID reads from it (not the request's traceparent),
// and End runs once per request — a panic's 500 included — with what was answered.
func TestObserver(t *testing.T) {
	t.Parallel()
	const id = "0af7651916cd43dd8448eb211c80319c"
	var (
		mu     sync.Mutex
		served []server.Served
	)
	obs := server.Observer{
		Start: func(ctx context.Context, r *http.Request) context.Context {
			return context.WithValue(ctx, observeKey{}, r.URL.Path)
		},
		TraceID: func(ctx context.Context) string {
			if ctx.Value(observeKey{}) == "/v1/bad" {
				return "not hex" // refused: the header's id (or a random one) is used instead
			}
			return id
		},
		End: func(ctx context.Context, s *server.Served) {
			assert.NotNil(t, ctx.Value(observeKey{}), "End gets Start's context")
			mu.Lock()
			served = append(served, *s)
			mu.Unlock()
		},
	}
	type In struct {
		N int `json:"n" schema:"minimum=1"`
	}
	api, err := server.New(server.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	require.NoError(t, server.Post(api, "/v1/ok", func(ctx context.Context, in In) (In, error) {
		assert.Equal(t, "/v1/ok", ctx.Value(observeKey{}), "the handler runs under Start's context")
		return in, nil
	}, server.OperationID("ok")))
	require.NoError(t, server.Post(api, "/v1/bad", func(ctx context.Context, in In) (In, error) {
		panic("boom")
	}, server.OperationID("bad")))
	srv := httptest.NewServer(api)
	defer srv.Close()

	post := func(path, body string) *remedy.Envelope {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		env, _ := remedy.ParseResponse(resp)
		resp.Body.Close()
		return env
	}
	assert.Nil(t, post("/v1/ok", `{"n":1}`))
	env := post("/v1/ok", `{"n":0}`)
	require.NotNil(t, env)
	assert.Equal(t, id, env.TraceID, "the observer's trace id, not the header's")
	env = post("/v1/bad", `{"n":1}`)
	require.NotNil(t, env)
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", env.TraceID, "an id that is not 32 hex digits is not used")
	srv.Close() // End has run for every request

	require.Len(t, served, 3)
	byStatus := map[int]server.Served{}
	for _, s := range served {
		byStatus[s.Status] = s
	}
	assert.Equal(t, "ok", byStatus[200].Operation.ID)
	assert.Empty(t, byStatus[200].Code)
	assert.Equal(t, env.Code, byStatus[500].Code)
	assert.Equal(t, "bad", byStatus[500].Operation.ID)
	var refused server.Served
	for _, s := range served {
		if s.Status >= 400 && s.Status < 500 {
			refused = s
		}
	}
	assert.NotEmpty(t, refused.Code)
	assert.Equal(t, server.ConfirmationNone, refused.Confirmation)
}
