package agentback_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/internal/testkit/interop"
	"github.com/remedy-go/remedy/server"
)

// outcome is one call as client.mjs records it.
type outcome struct {
	OK      bool            `json:"ok"`
	Data    json.RawMessage `json:"data"`
	Status  int             `json:"status"`
	Message string          `json:"message"`
	Body    struct {
		Error struct {
			StatusCode        int    `json:"statusCode"`
			Code              string `json:"code"`
			Message           string `json:"message"`
			Retryable         *bool  `json:"retryable"`
			RetryAfterMs      int    `json:"retry_after_ms"`
			ConfirmationToken string `json:"confirmationToken"`
		} `json:"error"`
	} `json:"body"`
	// Typed: the body parsed as AgentBack's envelope (ClientError.parsedBody); TypeErrors say
	// why not.
	Typed      bool              `json:"typed"`
	TypeErrors []string          `json:"typeErrors"`
	Headers    map[string]string `json:"headers"`
}

// clientReport is what client.mjs prints.
type clientReport struct {
	Validation struct {
		First      outcome         `json:"first"`
		Fixed      json.RawMessage `json:"fixed"`
		Repaired   outcome         `json:"repaired"`
		OutOfRange outcome         `json:"outOfRange"`
	} `json:"validation"`
	Confirmation struct {
		First, Confirmed, Again outcome
	} `json:"confirmation"`
	Idempotency struct {
		NoKey, First, Replay, Reused outcome
	} `json:"idempotency"`
	Retry struct {
		First  outcome `json:"first"`
		WaitMs int     `json:"waitMs"`
		Second outcome `json:"second"`
	} `json:"retry"`
	RateLimited  *outcome `json:"rateLimited"`
	RateTries    []int    `json:"rateTries"`
	UnknownRoute outcome  `json:"unknownRoute"`
}

// TestAgentBackClient runs AgentBack's HTTP client (@agentback/client) against the reference
// server's billing API, as remedy serve serves it: what that client does with our failures —
// it reads them typed as AgentBack's envelope, and hands them to its caller; retries,
// confirmation and idempotency keys are the caller's to do, with AgentBack's header names.
func TestAgentBackClient(t *testing.T) {
	node := requireNode(t)
	t.Parallel()
	c := interop.Record(t, row(t, "@agentback/client", "client", transportREST,
		"failures typed as AgentBack's envelope", "repair from issues", "confirmation (x-confirmation-token)",
		"idempotency (idempotency-key)", "retry after 503", "429"))

	api, store, err := billing.NewDemo()
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	// A clock that stands still: the bucket of one request never refills, whatever the
	// machine's speed.
	frozen := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	limitedAPI, _, err := billing.NewDemo(server.WithRateLimit(server.RateLimitOptions{PerSecond: 1, Burst: 1}), server.WithClock(func() time.Time { return frozen }))
	require.NoError(t, err)
	limited := httptest.NewServer(limitedAPI)
	t.Cleanup(limited.Close)

	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", srv.URL, limited.URL)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "client.mjs failed:\n%s", stderr.String())
	var rep clientReport
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), "%s", stdout.String())

	// failed checks a failure as the client handed it over: the status, our code, the message
	// the client took from error.message, and the body read typed as AgentBack's envelope.
	failed := func(t *testing.T, o outcome, status int, code string) {
		t.Helper()
		require.False(t, o.OK, "%+v", o)
		assert.Equal(t, status, o.Status)
		assert.Equal(t, code, o.Body.Error.Code)
		assert.Equal(t, o.Body.Error.Message, o.Message, "ClientError.message is error.message")
		assert.True(t, o.Typed, "parsed as AgentBack's envelope: %v", o.TypeErrors)
	}

	c.Run(t, "failures typed as AgentBack's envelope", func(t *testing.T) {
		failed(t, rep.Validation.First, 422, "invalid_body")
		failed(t, rep.UnknownRoute, 404, "not_found")
		// A bound violated: our issue says expected as a schema fragment and received as the
		// JSON value sent, where AgentBack's ParseIssue has strings. The client then has only
		// the untyped body.
		o := rep.Validation.OutOfRange
		assert.Equal(t, 422, o.Status)
		assert.False(t, o.Typed)
		assert.Equal(t, []string{
			"error.issues.0.expected: Invalid input: expected string, received object",
			"error.issues.0.received: Invalid input: expected string, received number",
		}, o.TypeErrors)
	})

	c.Run(t, "repair from issues", func(t *testing.T) {
		assert.JSONEq(t, `{"customer_id":"cus_ada","currency":"eur","amount":1200}`, string(rep.Validation.Fixed),
			"each issue's suggested_value")
		require.True(t, rep.Validation.Repaired.OK, "%+v", rep.Validation.Repaired)
		var inv billing.Invoice
		require.NoError(t, json.Unmarshal(rep.Validation.Repaired.Data, &inv))
		assert.Equal(t, "eur", inv.Currency)
		assert.Equal(t, 1200, inv.Amount)
		assert.Equal(t, 1, store.Effects("create_invoice"))
	})

	c.Run(t, "confirmation (x-confirmation-token)", func(t *testing.T) {
		conf := rep.Confirmation
		failed(t, conf.First, 409, "confirmation_required")
		assert.NotEmpty(t, conf.First.Body.Error.ConfirmationToken)
		require.True(t, conf.Confirmed.OK, "%+v", conf.Confirmed)
		assert.JSONEq(t, `{"id":"cus_ada","deleted":true}`, string(conf.Confirmed.Data))
		failed(t, conf.Again, 409, "confirmation_invalid")
		assert.Equal(t, 1, store.Effects("delete_customer"))
	})

	c.Run(t, "idempotency (idempotency-key)", func(t *testing.T) {
		idem := rep.Idempotency
		failed(t, idem.NoKey, 400, "idempotency_key_required")
		require.True(t, idem.First.OK, "%+v", idem.First)
		require.True(t, idem.Replay.OK, "%+v", idem.Replay)
		assert.JSONEq(t, string(idem.First.Data), string(idem.Replay.Data))
		assert.Equal(t, "true", idem.Replay.Headers["idempotency-replayed"])
		assert.Empty(t, idem.First.Headers["idempotency-replayed"])
		failed(t, idem.Reused, 422, "idempotency_key_reused")
		assert.Equal(t, 1, store.Effects("charge"))
	})

	c.Run(t, "retry after 503", func(t *testing.T) {
		r := rep.Retry
		failed(t, r.First, 503, "unavailable")
		require.NotNil(t, r.First.Body.Error.Retryable)
		assert.True(t, *r.First.Body.Error.Retryable)
		assert.Equal(t, int(billing.RetryWait/time.Millisecond), r.First.Body.Error.RetryAfterMs)
		assert.Equal(t, "1", r.First.Headers["retry-after"], "Retry-After in whole seconds, rounded up")
		assert.Equal(t, r.First.Body.Error.RetryAfterMs, r.WaitMs, "the caller waited retry_after_ms")
		assert.True(t, r.Second.OK, "%+v", r.Second)
	})

	c.Run(t, "429", func(t *testing.T) {
		// The first call takes the bucket's one request (and meets the demo's report being
		// rebuilt); the second is refused.
		assert.Equal(t, []int{503, 429}, rep.RateTries)
		require.NotNil(t, rep.RateLimited)
		o := *rep.RateLimited
		failed(t, o, 429, "rate_limited")
		require.NotNil(t, o.Body.Error.Retryable)
		assert.True(t, *o.Body.Error.Retryable)
		assert.Positive(t, o.Body.Error.RetryAfterMs)
		for _, h := range []string{"retry-after", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"} {
			assert.NotEmpty(t, o.Headers[h], h)
		}
	})
}
