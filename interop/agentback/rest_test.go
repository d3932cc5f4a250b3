package agentback_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/interop"
	"github.com/remedy-go/remedy/tools"
)

// The operations of app.mjs as its OpenAPI document names them: AgentBack's operationId is
// the controller class and the method, and cannot be set.
const (
	opCreateOrder  = "Shop.createOrder"
	opCloseAccount = "Shop.closeAccount"
	opCharge       = "Shop.charge"
	opQuote        = "Shop.quote"
	opReport       = "Shop.report"
)

// restClient is remedy's client for the app at base, with its operations read from AgentBack's
// OpenAPI document.
func restClient(t *testing.T, base string, opts ...client.Option) *client.Client {
	t.Helper()
	opts = append([]client.Option{client.WithBaseURL(base)}, opts...)
	c, err := client.New(opts...)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	n, err := c.LoadOpenAPI(ctx, "/openapi.json")
	require.NoError(t, err)
	require.Equal(t, 5, n, "the app's five operations")
	return c
}

// approveAll approves every confirmation and records the challenges it saw.
type approveAll struct {
	mu   sync.Mutex
	seen []client.Challenge
}

func (p *approveAll) Approve(_ context.Context, ch *client.Challenge) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, *ch)
	return true, nil
}

func (p *approveAll) challenges() []client.Challenge {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]client.Challenge(nil), p.seen...)
}

// delta is what executed between two counts.
func delta(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// TestClientREST runs remedy's client against the AgentBack app over REST: every flow of the
// loop against AgentBack's own validation, confirmation, idempotency and rate limiting.
func TestClientREST(t *testing.T) {
	requireNode(t)
	t.Parallel()
	a := startApp(t, 1)
	c := interop.Record(t, row(t, "@agentback/rest", "server", transportREST,
		"operations from OpenAPI", "validation repair", "lossy repair refused", "unrepairable pattern",
		"confirmation", "confirmation before validation", "idempotent retry after a lost response",
		"429 wait", "503 wait", "tool names every model API takes"))
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()

	c.Run(t, "operations from OpenAPI", func(t *testing.T) {
		restClient(t, a.url)
		_, doc := a.raw(t, http.MethodGet, "/openapi.json", "")
		ops, err := client.OperationsFromOpenAPI(doc)
		require.NoError(t, err)
		var names []string
		for _, op := range ops {
			names = append(names, op.Name)
			if op.Name == opCharge {
				assert.Equal(t, client.KeysHonoured, op.Keys, "the idempotency-key header parameter says keys are honoured")
			}
		}
		assert.ElementsMatch(t, []string{opCreateOrder, opCloseAccount, opCharge, opQuote, opReport}, names)
	})

	// AgentBack's operationIds (Shop.createOrder) are names OpenAI and Anthropic refuse for a
	// tool: the toolset offers portable ones, and the model's call by that name runs the
	// operation against the app.
	c.Run(t, "tool names every model API takes", func(t *testing.T) {
		tools := tools.ForClient(restClient(t, a.url), tools.Options{})
		valid := regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_-]{0,62}$`)
		names := map[string]string{}
		for _, d := range tools.Definitions() {
			assert.Regexp(t, valid, d.Name, "the tool for %s", d.Operation)
			names[d.Operation] = d.Name
		}
		assert.Equal(t, "Shop_createOrder", names[opCreateOrder])
		defs, err := tools.Definitions().OpenAI()
		require.NoError(t, err)
		assert.NotContains(t, string(defs), `"name":"Shop.`)
		before := a.counts(t)
		out, err := tools.Dispatch(ctx, names[opCreateOrder], `{"customer_id":"cus_ada","currency":"eur","amount":1200}`)
		require.NoError(t, err)
		assert.Contains(t, out, `"currency":"eur"`)
		assert.Equal(t, map[string]int{"create_order": 1}, delta(before, a.counts(t)))
	})

	c.Run(t, "validation repair", func(t *testing.T) {
		// The check before sending off: AgentBack's refusal is what is repaired (with it on, the
		// schema from the OpenAPI document repairs the call before it is sent: TestCLIREST).
		cl := restClient(t, a.url, client.WithSchemaCheck(client.CheckOff))
		before := a.counts(t)
		resp, err := cl.Call(ctx, opCreateOrder, json.RawMessage(`{"customer_id":"cus_ada","currency":"EUR","amount":"1200"}`))
		require.NoError(t, err)
		assert.Equal(t, http.StatusCreated, resp.Status)
		var order map[string]any
		require.NoError(t, json.Unmarshal(resp.Body, &order))
		assert.Equal(t, "eur", order["currency"])
		assert.Equal(t, 1200.0, order["amount"])
		require.Len(t, resp.Attempts, 2)
		first := resp.Attempts[0]
		assert.Equal(t, http.StatusUnprocessableEntity, first.Status)
		require.NotNil(t, first.Envelope)
		assert.Equal(t, "invalid_body", first.Envelope.Code)
		// AgentBack says retryable: true, meaning "with corrected input": the same request
		// fails the same way, and remedy reads it so.
		assert.False(t, first.Envelope.Retryable, "a failure that names fields is never retried unchanged")
		assert.Equal(t, remedy.RetryFromBody, first.Envelope.RetrySource, "the body said")
		assert.Equal(t, client.ActRewrite, first.Decision.Action, "repaired, never resent unchanged")
		rules := map[string]string{}
		for _, ch := range first.Changes {
			rules[ch.Path] = ch.Rule + " " + string(ch.Old) + " -> " + string(ch.New)
		}
		assert.Equal(t, map[string]string{
			"/currency": `enum_match "EUR" -> "eur"`, // the enum read from the inline schema
			"/amount":   `coerce "1200" -> 1200`,
		}, rules)
		assert.Equal(t, map[string]int{"create_order": 1}, delta(before, a.counts(t)))
	})

	c.Run(t, "lossy repair refused", func(t *testing.T) {
		cl := restClient(t, a.url)
		before := a.counts(t)
		_, err := cl.Call(ctx, opCreateOrder, json.RawMessage(`{"customer_id":"cus_ada","currency":"eur","amount":99999999}`))
		require.ErrorIs(t, err, client.ErrRewriteRefused)
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		require.NotNil(t, ce.Proposal)
		assert.JSONEq(t, `{"customer_id":"cus_ada","currency":"eur","amount":1000000}`, string(ce.Proposal.New))
		require.Len(t, ce.Proposal.Changes, 1)
		assert.Equal(t, "clamp", ce.Proposal.Changes[0].Rule)
		assert.Len(t, ce.Attempts, 1, "nothing sent but the caller's arguments")
		assert.Empty(t, delta(before, a.counts(t)))
	})

	c.Run(t, "unrepairable pattern", func(t *testing.T) {
		// A pattern says what is wrong, not what is right: no rewrite, nothing resent.
		cl := restClient(t, a.url)
		_, err := cl.Call(ctx, opCreateOrder, json.RawMessage(`{"customer_id":"ada","currency":"eur","amount":1200}`))
		require.ErrorIs(t, err, client.ErrRewriteGaveUp)
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		assert.Len(t, ce.Attempts, 1)
		require.NotNil(t, ce.Envelope)
		require.Len(t, ce.Envelope.Issues, 1)
		assert.Equal(t, "/customer_id", ce.Envelope.Issues[0].Path)
	})

	c.Run(t, "confirmation", func(t *testing.T) {
		args := json.RawMessage(`{"account_id":"acct_1","reason":"fraud"}`)
		before := a.counts(t)
		_, err := restClient(t, a.url).Call(ctx, opCloseAccount, args)
		require.ErrorIs(t, err, client.ErrConfirmationRequired, "the default policy refuses")
		var ce *client.CallError
		require.ErrorAs(t, err, &ce)
		require.NotNil(t, ce.Challenge)
		assert.NotEmpty(t, ce.Challenge.Token)
		assert.JSONEq(t, string(args), string(ce.Challenge.Args))
		assert.Empty(t, delta(before, a.counts(t)), "not executed without confirmation")

		policy := &approveAll{}
		resp, err := restClient(t, a.url, client.WithConfirmPolicy(policy), client.WithSchemaCheck(client.CheckOff)).Call(ctx, opCloseAccount, args)
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.Status)
		require.Len(t, resp.Attempts, 2)
		assert.Equal(t, client.ActConfirm, resp.Attempts[0].Decision.Action)
		assert.True(t, resp.Attempts[1].Confirmed)
		require.Len(t, policy.challenges(), 1)
		assert.Equal(t, map[string]int{"close_account": 1}, delta(before, a.counts(t)))
	})

	c.Run(t, "confirmation before validation", func(t *testing.T) {
		// AgentBack confirms the payload as proposed, before validating it (remedy's server
		// validates first). The policy approves an invalid payload; the confirmed attempt is
		// refused as invalid; the repaired payload is a new question for the policy.
		policy := &approveAll{}
		before := a.counts(t)
		resp, err := restClient(t, a.url, client.WithConfirmPolicy(policy), client.WithSchemaCheck(client.CheckOff)).Call(ctx, opCloseAccount,
			json.RawMessage(`{"account_id":"acct_2","reason":"FRAUD"}`))
		require.NoError(t, err)
		var statuses []int
		for _, at := range resp.Attempts {
			statuses = append(statuses, at.Status)
		}
		assert.Equal(t, []int{409, 422, 409, 200}, statuses)
		seen := policy.challenges()
		require.Len(t, seen, 2)
		assert.JSONEq(t, `{"account_id":"acct_2","reason":"FRAUD"}`, string(seen[0].Args))
		assert.JSONEq(t, `{"account_id":"acct_2","reason":"fraud"}`, string(seen[1].Args))
		assert.Equal(t, map[string]int{"close_account": 1}, delta(before, a.counts(t)))
	})

	c.Run(t, "idempotent retry after a lost response", func(t *testing.T) {
		proxy := lossyProxy(t, a.url, "/v1/charges")
		// A connection per request: net/http resends a request that carries an
		// Idempotency-Key on its own when a reused connection fails, and this is the loop's
		// retry under test.
		cl := restClient(t, proxy.url, client.WithHTTPClient(&http.Client{
			Transport: &http.Transport{DisableKeepAlives: true}}))
		before := a.counts(t)
		resp, err := cl.Call(ctx, opCharge, json.RawMessage(`{"customer_id":"cus_ada","amount":4200,"currency":"usd"}`))
		require.NoError(t, err)
		assert.Equal(t, http.StatusCreated, resp.Status)
		assert.True(t, resp.Replayed, "AgentBack's idempotency-replayed: true")
		require.Len(t, resp.Attempts, 2)
		assert.Zero(t, resp.Attempts[0].Status, "the first answer was lost")
		assert.Error(t, resp.Attempts[0].Err)
		assert.Equal(t, client.ActRetry, resp.Attempts[0].Decision.Action)
		keys := proxy.keys()
		require.Len(t, keys, 2)
		assert.NotEmpty(t, keys[0])
		assert.Equal(t, keys[0], keys[1], "the same key on the retry")
		assert.Equal(t, map[string]int{"charge": 1}, delta(before, a.counts(t)), "executed once")
	})

	c.Run(t, "429 wait", func(t *testing.T) {
		cl := restClient(t, a.url)
		// The limit is one quote a second: a quote just before the call fills the window. On a
		// machine slow enough to let a second pass between the two, try again (bounded).
		for range 5 {
			a.raw(t, http.MethodGet, "/v1/quotes?currency=eur", "")
			resp, err := cl.Call(ctx, opQuote, map[string]any{"currency": "gbp"})
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.Status)
			first := resp.Attempts[0]
			if first.Status != http.StatusTooManyRequests {
				continue
			}
			require.NotNil(t, first.Envelope)
			// extension-rate-limit's 429 has neither a code nor a retryable flag: both come
			// from the status.
			assert.Equal(t, "too_many_requests", first.Envelope.Code)
			assert.True(t, first.Envelope.Retryable)
			assert.Equal(t, remedy.RetryFromStatus, first.Envelope.RetrySource)
			assert.Equal(t, time.Second, first.Envelope.RetryAfter, "Retry-After: 1")
			assert.Equal(t, client.ActRetry, first.Decision.Action)
			assert.Equal(t, time.Second, first.Decision.Asked)
			assert.Equal(t, http.StatusOK, resp.Attempts[len(resp.Attempts)-1].Status)
			return
		}
		t.Fatal("no call was rate limited in 5 rounds")
	})

	c.Run(t, "503 wait", func(t *testing.T) {
		cl := restClient(t, a.url)
		a.busy(t, 1)
		before := a.counts(t)
		resp, err := cl.Call(ctx, opReport, nil)
		require.NoError(t, err)
		require.Len(t, resp.Attempts, 2)
		first := resp.Attempts[0]
		assert.Equal(t, http.StatusServiceUnavailable, first.Status)
		require.NotNil(t, first.Envelope)
		assert.Equal(t, "unavailable", first.Envelope.Code)
		assert.Equal(t, time.Second, first.Envelope.RetryAfter, "Retry-After: 1, set by the route")
		assert.Equal(t, client.ActRetry, first.Decision.Action)
		assert.Equal(t, time.Second, first.Decision.Asked)
		assert.Equal(t, http.StatusOK, resp.Status)
		assert.Equal(t, map[string]int{"report": 1}, delta(before, a.counts(t)))
	})
}

// proxy is a lossyProxy.
type proxy struct {
	url string
	mu  sync.Mutex
	key []string
}

func (p *proxy) keys() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.key...)
}

// lossyProxy forwards every request to target, and loses the answer to the first request for
// path: the request reaches the app and executes, and the caller's connection is closed before
// any answer. It records the Idempotency-Key of the requests for path.
func lossyProxy(t *testing.T, target, path string) *proxy {
	t.Helper()
	p := &proxy{}
	var lost bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		answer, err := io.ReadAll(resp.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if r.URL.Path == path {
			p.mu.Lock()
			p.key = append(p.key, r.Header.Get("Idempotency-Key"))
			lose := !lost
			lost = true
			p.mu.Unlock()
			if lose {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
				return
			}
		}
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		w.Write(answer)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}
