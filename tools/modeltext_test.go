package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/scriptsrv"
	"github.com/remedy-go/remedy/rewrite"
	"github.com/remedy-go/remedy/tools"
)

// The operations the model-text scenarios offer: a write with a read of the same resource,
// a confirmed deletion, a read with a path parameter, a prerequisite.
var modelTextOps = []client.Operation{
	{Name: "create_invoice", Method: "POST", Path: "/v1/invoices", Description: "Create an invoice."},
	{Name: "get_invoice", Method: "GET", Path: "/v1/invoices/{id}", Description: "Read an invoice."},
	{Name: "delete_customer", Method: "DELETE", Path: "/v1/customers/{id}", Description: "Delete a customer."},
	{Name: "get_inventory", Method: "GET", Path: "/v1/inventory/{sku}", Description: "Read a SKU's stock."},
	{Name: "verify_account", Method: "POST", Path: "/v1/verify", Description: "Verify the account."},
}

// The token every scripted challenge carries, in the token member and in the server's own
// words: no text for a model may hold it.
const textToken = "tok_5ecret9f3b2c7e41d84a0f"

var (
	challenge = `{"error":{"statusCode":409,"code":"confirmation_required","message":"Deleting cus_1 is permanent. Resend with X-Confirmation-Token: ` +
		textToken + `","hint":"send confirmationToken ` + textToken + `","suggestions":["token ` + textToken + `"],"retryable":false,"confirmationToken":"` + textToken + `"}}`
	unavailable = `{"error":{"statusCode":503,"code":"unavailable","message":"the database is restarting","retryable":true,"retry_after_ms":1}}`
)

// modelTextScenario is one way a call through a Toolset ends, with the server's answers.
type modelTextScenario struct {
	name    string
	tool    string
	args    string
	opts    []client.Option
	respond func(w http.ResponseWriter, r *http.Request, n int)
	want    error // the loop's cause
	sent    int   // requests the server got, -1: not checked
}

func modelTextScenarios() []modelTextScenario {
	fixed := func(status int, body string) func(http.ResponseWriter, *http.Request, int) {
		return func(w http.ResponseWriter, r *http.Request, n int) { scriptsrv.Reply(w, status, body) }
	}
	approve := client.WithConfirmPolicy(client.ConfirmFunc(func(context.Context, *client.Challenge) (bool, error) { return true, nil }))
	return []modelTextScenario{
		{name: "invalid_arguments", tool: "get_inventory", args: `{}`, want: client.ErrInvalidArguments, sent: 0,
			respond: fixed(200, `{}`)},
		{name: "reserved_arguments", tool: "delete_customer", args: `{"id":"cus_1","confirmationToken":"` + textToken + `"}`,
			want: client.ErrInvalidArguments, sent: 0, respond: fixed(200, `{}`)},
		{name: "rewrite_gave_up", tool: "create_invoice", args: `{"amount":5}`, want: client.ErrRewriteGaveUp, sent: 1,
			respond: fixed(422, `{"error":{"statusCode":422,"code":"invalid_body","message":"customer_id is required","issues":[{"path":["customer_id"],"code":"required","message":"customer_id is required"}]}}`)},
		{name: "rewrite_refused", tool: "create_invoice", args: `{"customer_id":"cus_1","amount":5000}`, want: client.ErrRewriteRefused, sent: 1,
			respond: fixed(422, `{"error":{"statusCode":422,"code":"invalid_body","message":"amount must be at most 1000","issues":[{"path":["amount"],"code":"maximum","message":"amount must be at most 1000","expected":{"maximum":1000},"received":5000}]}}`)},
		{name: "not_retryable", tool: "get_invoice", args: `{"id":"in_404"}`, want: client.ErrNotRetryable, sent: 1,
			respond: fixed(404, `{"error":{"statusCode":404,"code":"not_found","message":"no invoice in_404"}}`)},
		{name: "not_retryable_internal", tool: "create_invoice", args: `{"customer_id":"cus_1","amount":5}`, want: client.ErrNotRetryable, sent: 1,
			respond: fixed(500, `{"error":{"statusCode":500,"code":"internal_error","message":"unexpected failure","retryable":false,"hint":"Retry the call.","suggestions":["send it again"]}}`)},
		{name: "fatal", tool: "create_invoice", args: `{"customer_id":"cus_1","amount":5}`, want: client.ErrNotRetryable, sent: 1,
			respond: fixed(403, `{"error":{"statusCode":403,"code":"account_closed","message":"the account is closed","severity":"fatal"}}`)},
		{name: "confirmation_required", tool: "delete_customer", args: `{"id":"cus_1"}`, want: client.ErrConfirmationRequired, sent: 1,
			respond: fixed(409, challenge)},
		{name: "confirmation_rejected", tool: "delete_customer", args: `{"id":"cus_1"}`, want: client.ErrConfirmationRejected, sent: 2,
			opts: []client.Option{approve},
			respond: func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 {
					scriptsrv.Reply(w, 409, challenge)
					return
				}
				scriptsrv.Reply(w, 409, `{"error":{"statusCode":409,"code":"confirmation_invalid","message":"the token `+textToken+` is spent"}}`)
			}},
		{name: "outcome_unknown_500", tool: "create_invoice", args: `{"customer_id":"cus_1","amount":5}`, want: remedy.ErrOutcomeUnknown, sent: 1,
			respond: func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(500)
				fmt.Fprint(w, "Internal Server Error")
			}},
		{name: "outcome_unknown_lost", tool: "create_invoice", args: `{"customer_id":"cus_1","amount":5}`, want: remedy.ErrOutcomeUnknown, sent: 1,
			respond: func(w http.ResponseWriter, r *http.Request, n int) {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close() // the request was read; the answer is lost
				}
			}},
		{name: "wait_too_long", tool: "create_invoice", args: `{"customer_id":"cus_1","amount":5}`, want: client.ErrWaitTooLong, sent: 1,
			respond: func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Retry-After", "3600")
				scriptsrv.Reply(w, 429, `{"error":{"statusCode":429,"code":"rate_limited","message":"too many requests"}}`)
			}},
		{name: "attempts_exhausted", tool: "get_invoice", args: `{"id":"in_1"}`, want: client.ErrAttemptsExhausted, sent: 5,
			respond: fixed(503, unavailable)},
		{name: "attempts_exhausted_at_a_challenge", tool: "delete_customer", args: `{"id":"cus_1"}`, want: client.ErrAttemptsExhausted, sent: 5,
			respond: func(w http.ResponseWriter, r *http.Request, n int) {
				if n < 5 {
					scriptsrv.Reply(w, 503, unavailable)
					return
				}
				scriptsrv.Reply(w, 409, challenge)
			}},
		{name: "retry_budget", tool: "get_invoice", args: `{"id":"in_1"}`, want: client.ErrRetryBudget, sent: 2,
			opts: []client.Option{client.WithRetryBudget(client.NewRetryBudget(1, 0))},
			// An outage that states no wait: a stated one is the server pacing, which the
			// budget does not bound.
			respond: fixed(503, `{"error":{"statusCode":503,"code":"unavailable","message":"the database is restarting","retryable":true}}`)},
		{name: "next_operation_unregistered", tool: "create_invoice", args: `{"customer_id":"cus_1","amount":5}`, want: client.ErrNextOperation, sent: 1,
			respond: fixed(412, `{"error":{"statusCode":412,"code":"precondition_failed","message":"verify the account first","next_operation":"link_bank"}}`)},
		{name: "next_operation_failed", tool: "create_invoice", args: `{"customer_id":"cus_1","amount":5}`, want: client.ErrNextOperation, sent: 2,
			respond: func(w http.ResponseWriter, r *http.Request, n int) {
				if r.URL.Path == "/v1/verify" {
					scriptsrv.Reply(w, 403, `{"error":{"statusCode":403,"code":"forbidden","message":"verification needs an administrator"}}`)
					return
				}
				scriptsrv.Reply(w, 412, `{"error":{"statusCode":412,"code":"precondition_failed","message":"verify the account first","next_operation":"verify_account"}}`)
			}},
		{name: "idempotency_key_reused", tool: "create_invoice", args: `{"customer_id":"cus_1","amount":5}`, want: client.ErrIdempotencyKeyReused, sent: 1,
			respond: fixed(422, `{"error":{"statusCode":422,"code":"idempotency_key_reused","message":"this key was used with another payload"}}`)},
		{name: "poll_location", tool: "create_invoice", args: `{"customer_id":"cus_1","amount":5}`, want: client.ErrPollLocation, sent: 1,
			respond: func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Operation-Location", "https://elsewhere.example/operations/op_1")
				scriptsrv.Reply(w, 202, `{"status":"running"}`)
			}},
	}
}

var (
	serverURL = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
	rfc3339   = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
)

// Each way a call through a Toolset ends has its text, derived from the loop's decision:
// golden files under testdata/modeltext (-update rewrites them). The text never holds a
// token or a key, in whatever words the server wrote them.
func TestModelTextForEachDecision(t *testing.T) {
	t.Parallel()
	for _, sc := range modelTextScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			srv := scriptsrv.New(t, sc.respond)
			c := newClient(t, srv, append([]client.Option{client.WithOperations(modelTextOps...)}, sc.opts...)...)
			r, err := tools.ForClient(c, tools.Options{}).Invoke(context.Background(), sc.tool, sc.args)
			require.NoError(t, err)
			require.True(t, r.Failed)
			require.ErrorIs(t, r.Err, sc.want)
			if sc.sent >= 0 {
				assert.Len(t, srv.Requests(), sc.sent, "requests sent")
			}
			assertNoSecrets(t, r, srv)

			got := rfc3339.ReplaceAllString(serverURL.ReplaceAllString(r.Output, "SERVER"), "TIME")
			path := filepath.Join("testdata", "modeltext", sc.name+".txt")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "no golden text: run go test -run ModelText -update")
			assert.Equal(t, string(want), got)
		})
	}
}

// assertNoSecrets checks that a tool call's output holds no confirmation token the run saw and
// no idempotency key it sent.
func assertNoSecrets(t *testing.T, r tools.Result, srv *scriptsrv.Server) {
	t.Helper()
	secrets := []string{textToken}
	for _, q := range srv.Requests() {
		if q.Key != "" {
			secrets = append(secrets, q.Key)
		}
	}
	var ce *client.CallError
	if errors.As(r.Err, &ce) {
		for _, a := range ce.Attempts {
			if a.IdempotencyKey != "" {
				secrets = append(secrets, a.IdempotencyKey)
			}
		}
	}
	for _, s := range secrets {
		assert.NotContains(t, r.Output, s, "the model reads a secret")
		if len(s) > 12 {
			assert.NotContains(t, r.Output, s[:12], "the model reads part of a secret")
		}
	}
}

// What the model is told agrees with what the loop decided: the rows the issue names.
func TestModelTextAgreesWithTheDecision(t *testing.T) {
	t.Parallel()
	text := map[string]string{}
	for _, sc := range modelTextScenarios() {
		srv := scriptsrv.New(t, sc.respond)
		c := newClient(t, srv, append([]client.Option{client.WithOperations(modelTextOps...)}, sc.opts...)...)
		out, err := tools.ForClient(c, tools.Options{}).Dispatch(context.Background(), sc.tool, sc.args)
		require.NoError(t, err)
		text[sc.name] = out
	}
	// A request that may have executed is never to be sent again, and the read is named.
	for _, name := range []string{"outcome_unknown_500", "outcome_unknown_lost", "not_retryable_internal"} {
		assert.Contains(t, text[name], "may have run", name)
		assert.Contains(t, text[name], "Do not call create_invoice again", name)
		assert.Contains(t, text[name], "call get_invoice", name)
		assert.NotContains(t, strings.ToLower(text[name]), "retry", name)
		assert.NotContains(t, strings.ToLower(text[name]), "send it again", name)
	}
	// Nothing sent: the model learns which argument is missing, and that nothing failed in
	// transport.
	assert.Contains(t, text["invalid_arguments"], "/sku [required]")
	assert.Contains(t, text["invalid_arguments"], "nothing was sent")
	assert.NotContains(t, text["invalid_arguments"], "transport")
	// A confirmation is the program's to approve, and the model is told how, not to resend.
	for _, name := range []string{"confirmation_required", "attempts_exhausted_at_a_challenge"} {
		assert.Contains(t, text[name], "the program that runs you", name)
		assert.NotContains(t, text[name], "send the identical call again", name)
	}
	assert.Contains(t, text["confirmation_required"], "client.WithConfirmPolicy")
	assert.Contains(t, text["confirmation_required"], "--confirm")
	assert.Contains(t, text["reserved_arguments"], "/confirmationToken [reserved]")
	// A wait too long says when a new call can succeed.
	assert.Contains(t, text["wait_too_long"], "1h0m0s")
	assert.Contains(t, text["wait_too_long"], "a new call can succeed after")
}

// The model that repairs arguments (rewrite.LLM) reads the envelope's prompt, which never
// holds the confirmation token, wherever the server wrote it.
func TestLLMRewriterPromptHoldsNoToken(t *testing.T) {
	t.Parallel()
	var prompt string
	rw := rewrite.LLM(func(_ context.Context, p string) (string, error) {
		prompt = p
		return `{"amount":10}`, nil
	})
	env, ok := remedy.Parse(409, nil, []byte(`{"error":{"code":"invalid_body","message":"amount too high; token `+textToken+`",`+
		`"hint":"resend with `+textToken+`","issues":[{"path":["amount"],"code":"maximum","message":"at most 10, not with `+textToken+`"}],"confirmationToken":"`+textToken+`"}}`))
	require.True(t, ok)
	_, err := rw.Rewrite(context.Background(), &rewrite.Request{Operation: "create_invoice", Args: json.RawMessage(`{"amount":50}`), Envelope: env, Attempt: 1})
	require.NoError(t, err)
	require.NotEmpty(t, prompt)
	assert.NotContains(t, prompt, textToken)
	assert.NotContains(t, env.Prompt(), textToken)
	assert.Equal(t, textToken, env.ConfirmationToken, "the envelope itself is not changed")
}

// A call that may have run is told with the read of the same resource, when the toolset has
// one: by path over HTTP, by name for tools without paths (MCP).
func TestModelTextNamesTheRead(t *testing.T) {
	t.Parallel()
	lost := func(ctx context.Context, name string, args json.RawMessage) (*client.Response, error) {
		return nil, &client.CallError{Operation: name, Cause: remedy.ErrOutcomeUnknown, Detail: "no answer",
			Attempts: []client.Attempt{{Operation: name, Number: 1, Err: errors.New("connection reset by peer")}}}
	}
	for _, tc := range []struct {
		ops        []client.Operation
		tool, read string
	}{
		{[]client.Operation{{Name: "send_email"}, {Name: "get_email"}, {Name: "get_emails"}}, "send_email", "get_email"},
		{[]client.Operation{{Name: "create-order"}, {Name: "list-orders"}}, "create-order", "list-orders"},
		{[]client.Operation{{Name: "charge"}, {Name: "get_charge"}}, "charge", ""},
		{[]client.Operation{{Name: "send_invoice", Method: "POST", Path: "/v1/invoices/{id}/send"}, {Name: "get_invoice", Method: "GET", Path: "/v1/invoices/{id}"}}, "send_invoice", "get_invoice"},
		{[]client.Operation{{Name: "put_doc", Method: "POST", Path: "/docs"}, {Name: "docs", Method: "GET", Path: "/docs"}}, "put_doc", "docs"},
		{[]client.Operation{{Name: "pay", Method: "POST", Path: "/v1/payments"}, {Name: "get_payment", Method: "GET", Path: "/v1/payments/{payment_id}"}}, "pay", "get_payment"},
		{[]client.Operation{{Name: "pay", Method: "POST", Path: "/v1/payments"}, {Name: "refund", Method: "POST", Path: "/v1/payments/{id}"}}, "pay", ""},
	} {
		out, err := tools.New(tc.ops, lost, tools.Options{}).Dispatch(context.Background(), tc.tool, `{}`)
		require.NoError(t, err)
		assert.Contains(t, out, "may have run", tc.tool)
		if tc.read == "" {
			assert.NotContains(t, out, "(call ", tc.tool)
		} else {
			assert.Contains(t, out, "(call "+tc.read+")", tc.tool)
		}
	}
}
