package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/storetest"
)

// byBearer authenticates "Bearer <name>" as the principal name; anything else is refused.
var byBearer = server.AuthenticatorFunc(func(r *http.Request, op *server.Operation) (server.Principal, error) {
	if name, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && name != "" {
		return server.Principal(name), nil
	}
	return "", server.ErrUnauthenticated
})

type DeleteAccount struct {
	ID     string `path:"id" schema:"pattern=^acct_"`
	Reason string `json:"reason" schema:"minLength=3"`
}

type Deleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// confirmAPI serves delete_account (confirmed) and close_account (confirmed too, another
// operation), counting executions.
func confirmAPI(t *testing.T, opts ...server.Option) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var runs atomic.Int64
	api, err := server.New(append([]server.Option{server.WithAuthenticator(byBearer)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	h := func(ctx context.Context, in DeleteAccount) (Deleted, error) {
		runs.Add(1)
		return Deleted{ID: in.ID, Deleted: true}, nil
	}
	require.NoError(t, server.Post(api, "/v1/accounts/{id}/delete", h, server.OperationID("delete_account"),
		server.Summary("Delete the account and all its data"), server.Confirm()))
	require.NoError(t, server.Post(api, "/v1/accounts/{id}/close", h, server.OperationID("close_account"), server.Confirm()))
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return srv, &runs
}

const deleteBody = `{"reason":"user asked"}`

// challenge asks for the operation and returns the token of the confirmation_required answer.
func challenge(t *testing.T, srv *httptest.Server, path, body, principal string) string {
	t.Helper()
	status, h, b := do(t, "POST", srv.URL+path, "application/json", body, "Authorization", "Bearer "+principal)
	env := envelope(t, status, h, b)
	require.Equal(t, 409, status, "%s", b)
	require.Equal(t, "confirmation_required", env.Code)
	require.NotEmpty(t, env.ConfirmationToken)
	return env.ConfirmationToken
}

func TestConfirmationHandshake(t *testing.T) {
	t.Parallel()
	srv, runs := confirmAPI(t)
	status, h, b := do(t, "POST", srv.URL+"/v1/accounts/acct_1/delete", "application/json", deleteBody, "Authorization", "Bearer ann")
	env := envelope(t, status, h, b)
	require.Equal(t, 409, status)
	assert.Equal(t, "confirmation_required", env.Code)
	assert.False(t, env.Retryable, "without the token, the same request is challenged again")
	assert.NotEmpty(t, env.Hint)
	assert.Contains(t, env.Message, "Delete the account and all its data", "the challenge says what will be done")
	assert.Len(t, env.ConfirmationToken, 22, "128 random bits in base64url")
	assert.Zero(t, runs.Load(), "nothing runs before the confirmation")

	// The same proposal, its JSON spelled differently, with the token: it runs.
	status, _, b = do(t, "POST", srv.URL+"/v1/accounts/acct_1/delete", "application/json", " { \"reason\" : \"user\\u0020asked\" } ",
		"Authorization", "Bearer ann", "X-Confirmation-Token", env.ConfirmationToken)
	require.Equal(t, 200, status, "%s", b)
	assert.JSONEq(t, `{"id":"acct_1","deleted":true}`, string(b))
	assert.EqualValues(t, 1, runs.Load())

	// The token is spent.
	status, h, b = do(t, "POST", srv.URL+"/v1/accounts/acct_1/delete", "application/json", deleteBody,
		"Authorization", "Bearer ann", "X-Confirmation-Token", env.ConfirmationToken)
	env = envelope(t, status, h, b)
	assert.Equal(t, 409, status)
	assert.Equal(t, "confirmation_invalid", env.Code)
	assert.False(t, env.Retryable)
	assert.EqualValues(t, 1, runs.Load())
}

func TestConfirmationRefusals(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock()
	srv, runs := confirmAPI(t, server.WithClock(clock.Now))
	send := func(path, body, principal, token string) string {
		t.Helper()
		status, h, b := do(t, "POST", srv.URL+path, "application/json", body, "Authorization", "Bearer "+principal, "X-Confirmation-Token", token)
		if status == 200 {
			return "executed"
		}
		return envelope(t, status, h, b).Code
	}
	const path = "/v1/accounts/acct_1/delete"

	t.Run("another payload, and the token is spent", func(t *testing.T) {
		token := challenge(t, srv, path, deleteBody, "ann")
		assert.Equal(t, "confirmation_invalid", send(path, `{"reason":"user asked!"}`, "ann", token))
		assert.Equal(t, "confirmation_invalid", send(path, deleteBody, "ann", token), "refused once, spent")
	})
	t.Run("another path", func(t *testing.T) {
		token := challenge(t, srv, path, deleteBody, "ann")
		assert.Equal(t, "confirmation_invalid", send("/v1/accounts/acct_2/delete", deleteBody, "ann", token))
	})
	t.Run("another query", func(t *testing.T) {
		token := challenge(t, srv, path, deleteBody, "ann")
		assert.Equal(t, "confirmation_invalid", send(path+"?dry_run=1", deleteBody, "ann", token))
	})
	t.Run("another principal", func(t *testing.T) {
		// The token is ann's: bob cannot use it, nor spend it.
		token := challenge(t, srv, path, deleteBody, "ann")
		assert.Equal(t, "confirmation_invalid", send(path, deleteBody, "bob", token))
		assert.Equal(t, "executed", send(path, deleteBody, "ann", token), "ann's token, after bob's attempt")
	})
	t.Run("another operation", func(t *testing.T) {
		token := challenge(t, srv, path, deleteBody, "ann")
		assert.Equal(t, "confirmation_invalid", send("/v1/accounts/acct_1/close", deleteBody, "ann", token))
	})
	t.Run("an unknown token", func(t *testing.T) {
		assert.Equal(t, "confirmation_invalid", send(path, deleteBody, "ann", "AAAAAAAAAAAAAAAAAAAAAA"))
		assert.Equal(t, "confirmation_invalid", send(path, deleteBody, "ann", strings.Repeat("A", 300)))
	})
	assert.EqualValues(t, 1, runs.Load(), "ann's confirmed call only")

	t.Run("expired", func(t *testing.T) {
		token := challenge(t, srv, path, deleteBody, "cy")
		clock.Advance(server.DefaultConfirmTTL + time.Second)
		assert.Equal(t, "confirmation_invalid", send(path, deleteBody, "cy", token))
		token = challenge(t, srv, path, deleteBody, "cy")
		clock.Advance(server.DefaultConfirmTTL - time.Second)
		assert.Equal(t, "executed", send(path, deleteBody, "cy", token), "just within the TTL")
	})
}

// An unauthenticated caller learns nothing, not even that the operation needs confirmation;
// an invalid proposal, or none, is refused before any challenge, and the store holds nothing;
// a valid one is challenged as sent.
func TestConfirmationOrderInPipeline(t *testing.T) {
	t.Parallel()
	store := server.NewMemoryStore(server.MemoryOptions{})
	srv, runs := confirmAPI(t, server.WithConfirmation(server.ConfirmationOptions{Store: store}))
	const path = "/v1/accounts/acct_1/delete"
	status, _, b := do(t, "POST", srv.URL+path, "application/json", deleteBody)
	assert.Equal(t, 401, status, "%s", b)

	for _, body := range []string{`{"reason":"x"}`, "", "{}", `{"reason":`} {
		status, h, b := do(t, "POST", srv.URL+path, "application/json", body, "Authorization", "Bearer ann")
		env := envelope(t, status, h, b)
		assert.Contains(t, []int{400, 422}, status, "body %q: %s", body, b)
		assert.Contains(t, []string{"invalid_body", "invalid_json"}, env.Code, "body %q", body)
		assert.Empty(t, env.ConfirmationToken, "body %q", body)
	}
	assert.Zero(t, store.Len(), "what the store holds after invalid proposals")
	assert.Zero(t, runs.Load())

	// What is confirmed is the proposal as sent: its bytes, before validation reads them.
	const sent = `{ "reason" : "user asked" }`
	token := challenge(t, srv, path, sent, "ann")
	assert.Equal(t, 1, store.Len())
	status, _, b = do(t, "POST", srv.URL+path, "application/json", sent, "Authorization", "Bearer ann", "X-Confirmation-Token", token)
	assert.Equal(t, 200, status, "%s", b)
	assert.EqualValues(t, 1, runs.Load())
}

// 100 concurrent uses of one token: one executes, the others are refused.
func TestConfirmationTokenIsSingleUse(t *testing.T) {
	t.Parallel()
	srv, runs := confirmAPI(t)
	token := challenge(t, srv, "/v1/accounts/acct_1/delete", deleteBody, "ann")
	var wg sync.WaitGroup
	var ok, refused atomic.Int64
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", srv.URL+"/v1/accounts/acct_1/delete", strings.NewReader(deleteBody))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer ann")
			req.Header.Set("X-Confirmation-Token", token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			switch resp.StatusCode {
			case 200:
				ok.Add(1)
			case 409:
				refused.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 1, ok.Load())
	assert.EqualValues(t, 99, refused.Load())
	assert.EqualValues(t, 1, runs.Load())
}
