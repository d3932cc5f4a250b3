package conformance_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/conformance"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/storetest"
)

// Archive is a confirm-gated operation that can run any number of times, unlike a deletion,
// whose second run would find nothing: with it, a token accepted twice shows.
type archiveRef struct {
	ID string `path:"id" json:"-" schema:"pattern=^cus_[a-z0-9]+$"`
}

type archived struct {
	ID       string `json:"id"`
	Archived bool   `json:"archived"`
}

// reference starts the reference server with the billing API, a rate limit, a report that
// is busy once (a 503) and a repeatable confirm-gated operation, wrapped in wrap (nil: as is),
// and returns its URL and the probe's options for it.
//
// The server's clock stands still, so the rate limit's bucket never refills: its 100 requests
// outlast the probe's other steps (47 requests against this API), and the burst, which comes
// last, meets its 429 after the same number of requests however fast the machine sends them.
// (On the real clock, a slow machine refilled the bucket as fast as the burst spent it.)
func reference(t *testing.T, wrap func(http.Handler) http.Handler, opts ...server.Option) (string, conformance.Options) {
	t.Helper()
	clock := storetest.NewClock()
	api, store, err := billing.New(append([]server.Option{server.WithClock(clock.Now), server.WithRateLimit(server.RateLimitOptions{PerSecond: 500, Burst: 100})}, opts...)...)
	require.NoError(t, err)
	require.NoError(t, server.Post(api, "/v1/customers/{id}/archive", func(_ context.Context, in archiveRef) (archived, error) {
		return archived{ID: in.ID, Archived: true}, nil
	}, server.OperationID("archive_customer"), server.Confirm(), server.Summary("Archive a customer")))
	store.AddCustomer("cus_gone", "Gone", "gone@example.com")
	store.Busy(1)
	var h http.Handler = api
	if wrap != nil {
		h = wrap(api)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, conformance.Options{Writes: true, Burst: 600, Examples: map[string]json.RawMessage{
		"create_invoice":   json.RawMessage(`{"customer_id":"cus_ada","currency":"usd","amount":1200}`),
		"charge":           json.RawMessage(`{"customer_id":"cus_ada","currency":"usd","amount":4200}`),
		"delete_customer":  json.RawMessage(`{"id":"cus_gone"}`),
		"archive_customer": json.RawMessage(`{"id":"cus_ada"}`),
	}}
}

// counting429 counts the 429s written through it.
type counting429 struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w counting429) WriteHeader(code int) {
	if code == http.StatusTooManyRequests {
		w.n.Add(1)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w counting429) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// The reference server passes every rule; the burst, and only the burst, meets a 429.
func TestReferenceServerPassesEveryRule(t *testing.T) {
	t.Parallel()
	var limited atomic.Int64
	url, opts := reference(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(counting429{w, &limited}, r)
		})
	})
	var steps []conformance.Progress
	opts.Progress = func(p conformance.Progress) { steps = append(steps, p) }
	rep, err := conformance.Run(context.Background(), url, opts)
	require.NoError(t, err)
	for _, res := range rep.Results {
		assert.Equal(t, conformance.Pass, res.Outcome, "%s: %s %v", res.ID, res.Detail, res.Evidence)
	}
	assert.Len(t, rep.Results, len(conformance.Rules()))
	assert.True(t, rep.OK())
	assert.Equal(t, int64(1), limited.Load(),
		"one 429, the burst's last request: more means the probe's other steps outgrew the bucket (see reference)")

	require.NotEmpty(t, steps)
	last := steps[len(steps)-1]
	assert.Equal(t, last.Total, last.Done, "the last progress report says the run is done")
	for i := 1; i < len(steps); i++ {
		assert.GreaterOrEqual(t, steps[i].Done, steps[i-1].Done, "progress never goes back")
	}
}

// Without writes, the rules that need a success are skipped, saying how to enable them, and
// nothing else changes.
func TestWithoutWritesTheRulesThatExecuteAreSkipped(t *testing.T) {
	t.Parallel()
	url, opts := reference(t, nil)
	opts.Writes = false
	rep, err := conformance.Run(context.Background(), url, opts)
	require.NoError(t, err)
	assert.Empty(t, rep.Failed())
	for _, id := range []string{"confirmation-bound", "confirmation-single-use", "idempotent-replay",
		"idempotency-key-reuse", "idempotency-errors-not-stored"} {
		res, _ := rep.Result(id)
		assert.Equal(t, conformance.Skip, res.Outcome, id)
		assert.Contains(t, res.Detail, "--writes", id)
	}
	res, _ := rep.Result("invalid-input-refused")
	assert.Equal(t, conformance.Pass, res.Outcome)
}

// Each broken server breaks exactly one clause of the contract, and the probe fails exactly
// that rule.
func TestEachBrokenServerFailsItsRule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rule string
		wrap func(http.Handler) http.Handler
		opts []server.Option
	}{
		{rule: "openapi", wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/openapi.json" {
					r.URL.Path = "/no-document-here"
				}
				h.ServeHTTP(w, r)
			})
		}},
		{rule: "openapi-error-codes", wrap: editDocument(func(doc map[string]any) {
			op := doc["paths"].(map[string]any)["/v1/invoices"].(map[string]any)["post"].(map[string]any)
			op["x-agent-error-codes"] = slices.DeleteFunc(op["x-agent-error-codes"].([]any), func(c any) bool { return c == "invalid_body" })
		})},
		{rule: "envelope", wrap: editErrors(func(_ *http.Request, status int, e map[string]any) {
			if status == http.StatusUnprocessableEntity {
				delete(e, "code")
				delete(e, "title")
			}
		})},
		{rule: "retryable-stated", wrap: editErrors(func(_ *http.Request, _ int, e map[string]any) { delete(e, "retryable") })},
		// The reference server's validation failures until issue 34: retryable, with issues.
		{rule: "retryable-stated", wrap: editErrors(func(_ *http.Request, _ int, e map[string]any) {
			if e["issues"] != nil {
				e["retryable"] = true
			}
		})},
		{rule: "invalid-input-refused", wrap: func(h http.Handler) http.Handler {
			// Executes what it cannot parse, as a lenient server does.
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if r.Method == "POST" && r.URL.Path == "/v1/invoices" && !json.Valid(body) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusCreated)
					io.WriteString(w, `{"id":"in_999","status":"draft"}`)
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
				h.ServeHTTP(w, r)
			})
		}},
		{rule: "issues-point-at-fields", wrap: editErrors(func(_ *http.Request, _ int, e map[string]any) {
			for _, is := range asList(e["issues"]) {
				is := is.(map[string]any)
				is["pointer"] = "/input" + is["pointer"].(string)
				is["path"] = append([]any{"input"}, asList(is["path"])...)
			}
		})},
		{rule: "schema-inline", wrap: editErrors(func(_ *http.Request, _ int, e map[string]any) { delete(e, "schema") })},
		{rule: "no-internal-detail", wrap: editErrors(func(_ *http.Request, status int, e map[string]any) {
			if status == http.StatusUnprocessableEntity {
				e["message"] = e["message"].(string) + " (/srv/billing/handlers/invoice.go:42)"
			}
		})},
		{rule: "trace-id", wrap: editErrors(func(_ *http.Request, status int, e map[string]any) {
			if status >= 500 {
				delete(e, "trace_id")
			}
		})},
		{rule: "rate-limit-wait", wrap: func(h http.Handler) http.Handler {
			return editErrors(func(_ *http.Request, _ int, e map[string]any) { delete(e, "retry_after_ms") })(
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					h.ServeHTTP(headerless{w, "Retry-After"}, r)
				}))
		}},
		{rule: "unknown-route", wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasPrefix(r.URL.Path, "/v1/") && r.URL.Path != "/openapi.json" {
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(http.StatusNotFound)
					io.WriteString(w, "<html><body><h1>404 Not Found</h1></body></html>")
					return
				}
				h.ServeHTTP(w, r)
			})
		}},
		{rule: "confirmation-bound", wrap: unboundTokens},
		{rule: "confirmation-single-use", opts: []server.Option{server.WithConfirmation(server.ConfirmationOptions{
			Store: reusable{server.NewMemoryStore(server.MemoryOptions{})}})}},
		{rule: "idempotent-replay", wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(headerless{w, remedy.HeaderReplayed}, r)
			})
		}},
		{rule: "idempotency-key-reuse", wrap: keyPerPayload},
		{rule: "idempotency-errors-not-stored", wrap: storeErrors},
	}
	broken := map[string]bool{}
	for _, c := range cases {
		broken[c.rule] = true
	}
	require.Len(t, broken, len(conformance.Rules()), "every rule has its broken server")
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) { // a rule's second broken server runs as rule#01
			t.Parallel()
			url, opts := reference(t, c.wrap, c.opts...)
			rep, err := conformance.Run(context.Background(), url, opts)
			require.NoError(t, err)
			var text bytes.Buffer
			require.NoError(t, rep.WriteText(&text, conformance.TextOptions{}))
			assert.Equal(t, []string{c.rule}, rep.Failed(), text.String())
			res, _ := rep.Result(c.rule)
			assert.NotEmpty(t, res.Detail)
			assert.NotEmpty(t, res.Evidence, "a failure shows its evidence")
		})
	}
}

// editDocument serves the OpenAPI document as edit leaves it.
func editDocument(edit func(map[string]any)) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/openapi.json" {
				h.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			var doc map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			edit(doc)
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(doc)
		})
	}
}

// editErrors passes every error envelope the server writes through edit.
func editErrors(edit func(r *http.Request, status int, e map[string]any)) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			var doc map[string]map[string]any
			if rec.Code >= 400 && json.Unmarshal(body, &doc) == nil && doc["error"] != nil {
				edit(r, rec.Code, doc["error"])
				body, _ = json.Marshal(doc)
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			w.Write(body)
		})
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// headerless drops one response header.
type headerless struct {
	http.ResponseWriter
	name string
}

func (h headerless) WriteHeader(code int) {
	h.Header().Del(h.name)
	h.ResponseWriter.WriteHeader(code)
}

func (h headerless) Write(b []byte) (int, error) {
	h.Header().Del(h.name)
	return h.ResponseWriter.Write(b)
}

// unboundTokens honours a token whatever the payload: a request carrying a token it issued is
// sent on as the request the token was issued for.
func unboundTokens(h http.Handler) http.Handler {
	var mu sync.Mutex
	issued := map[string]*http.Request{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok := r.Header.Get(remedy.HeaderConfirmationToken); tok != "" {
			mu.Lock()
			orig := issued[tok]
			mu.Unlock()
			if orig != nil {
				r.URL.Path, r.URL.RawPath = orig.URL.Path, orig.URL.RawPath
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if env, ok := remedy.Parse(rec.Code, rec.Header(), rec.Body.Bytes()); ok && env.ConfirmationToken != "" {
			mu.Lock()
			issued[env.ConfirmationToken] = r.Clone(context.Background())
			mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// reusable is a confirmation store whose tokens are never spent.
type reusable struct{ *server.MemoryStore }

func (s reusable) TakeChallenge(ctx context.Context, scope, id string) ([]byte, bool, error) {
	b, ok, err := s.MemoryStore.TakeChallenge(ctx, scope, id)
	if ok {
		_ = s.MemoryStore.PutChallenge(ctx, scope, id, b, time.Minute)
	}
	return b, ok, err
}

// keyPerPayload gives a reused key with another payload a key of its own, so that it executes.
func keyPerPayload(h http.Handler) http.Handler {
	var mu sync.Mutex
	seen := map[string][32]byte{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key := r.Header.Get(remedy.HeaderIdempotencyKey); key != "" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			sum := sha256.Sum256(body)
			mu.Lock()
			if prev, ok := seen[key]; ok && prev != sum {
				r.Header.Set(remedy.HeaderIdempotencyKey, key+"-other")
			} else {
				seen[key] = sum
			}
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// storeErrors replays a failure to any later request with the same key.
func storeErrors(h http.Handler) http.Handler {
	var mu sync.Mutex
	failed := map[string]*httptest.ResponseRecorder{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(remedy.HeaderIdempotencyKey)
		mu.Lock()
		rec := failed[key]
		mu.Unlock()
		if key == "" || rec == nil {
			rec = httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if key != "" && rec.Code >= 400 {
				mu.Lock()
				failed[key] = rec
				mu.Unlock()
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}
