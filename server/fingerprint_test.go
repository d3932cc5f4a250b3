package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/server"
)

// Payload fingerprints are exact (issue 22): two payloads that bind to different values never
// share a confirmation token or an idempotency key, even where a double cannot tell the
// numbers apart, while the same values spelled differently still do.

// ExactTransfer moves money from an account whose number is beyond 2^53, where a double no
// longer holds every integer.
type ExactTransfer struct {
	Account int64   `json:"account"`
	Amount  int64   `json:"amount,omitempty"`
	Fee     float64 `json:"fee,omitempty"`
	Memo    string  `json:"memo,omitempty"`
}

type ExactTransferred struct {
	Account int64 `json:"account"`
	Amount  int64 `json:"amount"`
	Run     int64 `json:"run"`
}

// exactAPI serves transfer (confirmed) and payout (idempotent), recording the inputs the
// handler ran with.
type exactAPI struct {
	srv  *httptest.Server
	runs atomic.Int64
	mu   sync.Mutex
	ran  []ExactTransfer
}

func newExactAPI(t *testing.T) *exactAPI {
	t.Helper()
	a := &exactAPI{}
	api, err := server.New(server.WithAuthenticator(byBearer))
	if err != nil {
		t.Fatal(err)
	}
	h := func(ctx context.Context, in ExactTransfer) (ExactTransferred, error) {
		run := a.runs.Add(1)
		a.mu.Lock()
		a.ran = append(a.ran, in)
		a.mu.Unlock()
		return ExactTransferred{Account: in.Account, Amount: in.Amount, Run: run}, nil
	}
	require.NoError(t, server.Post(api, "/v1/transfers", h, server.OperationID("transfer"), server.Confirm()))
	require.NoError(t, server.Post(api, "/v1/payouts", h, server.OperationID("payout"), server.Idempotent()))
	a.srv = httptest.NewServer(api)
	t.Cleanup(a.srv.Close)
	return a
}

// exactReply is an answer of exactAPI.
type exactReply struct {
	status int
	header http.Header
	body   []byte
}

// post sends body as principal with the Idempotency-Key key.
func (a *exactAPI) post(t *testing.T, path, body, principal, key string) exactReply {
	t.Helper()
	status, h, b := do(t, "POST", a.srv.URL+path, "application/json", body,
		"Authorization", "Bearer "+principal, "Idempotency-Key", key)
	return exactReply{status, h, b}
}

func (a *exactAPI) inputs() []ExactTransfer {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ExactTransfer(nil), a.ran...)
}

// Pairs of integers that are one double: 2^53+1 rounds to 2^53, and 2^60+100 to 2^60.
var sameDouble = []struct{ name, a, b string }{
	{"2^53+1 and 2^53", "9007199254740993", "9007199254740992"},
	{"2^60 and 2^60+100", "1152921504606846976", "1152921504606847076"},
	{"2^60+100 and 2^60", "1152921504606847076", "1152921504606846976"},
	{"-(2^53+1) and -2^53", "-9007199254740993", "-9007199254740992"},
}

// A token issued for one account does not move money from another that only a double would
// confuse with it: the call is refused, the token spent, and the handler never runs.
func TestConfirmationBindsExactNumbers(t *testing.T) {
	t.Parallel()
	for _, tt := range sameDouble {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := newExactAPI(t)
			token := challenge(t, a.srv, "/v1/transfers", `{"account":`+tt.a+`}`, "ann")
			status, h, b := do(t, "POST", a.srv.URL+"/v1/transfers", "application/json", `{"account":`+tt.b+`}`,
				"Authorization", "Bearer ann", "X-Confirmation-Token", token)
			require.Equal(t, 409, status, "the token confirmed %s, the call asks for %s: %s", tt.a, tt.b, b)
			assert.Equal(t, "confirmation_invalid", envelope(t, status, h, b).Code)
			assert.Zero(t, a.runs.Load(), "the handler ran with %v", a.inputs())

			// Spent by its misuse: not even the confirmed payload may use it now.
			status, _, _ = do(t, "POST", a.srv.URL+"/v1/transfers", "application/json", `{"account":`+tt.a+`}`,
				"Authorization", "Bearer ann", "X-Confirmation-Token", token)
			assert.Equal(t, 409, status)
			assert.Zero(t, a.runs.Load())
		})
	}
}

// The same values spelled differently — members in another order, whitespace, escapes, a
// number with trailing zeros or an exponent — are the payload that was confirmed.
func TestConfirmationAcceptsRespelledPayload(t *testing.T) {
	t.Parallel()
	const confirmed = `{"account":9007199254740993,"amount":1200,"fee":2.5,"memo":"rent"}`
	for _, sent := range []string{
		confirmed,
		`{"memo":"rent","fee":2.5,"amount":1200,"account":9007199254740993}`,
		" {\n \"fee\" : 2.50 , \"amount\" : 1.2e3 ,\t\"memo\" : \"r\\u0065nt\" , \"account\" : 9007199254740993 } ",
		`{"account":9007199254740993,"amount":120000e-2,"fee":25e-1,"memo":"rent"}`,
		`{"account":9007199254740993,"amount":1200.000,"fee":0.00000000025e10,"memo":"rent"}`,
	} {
		t.Run(sent, func(t *testing.T) {
			t.Parallel()
			a := newExactAPI(t)
			token := challenge(t, a.srv, "/v1/transfers", confirmed, "ann")
			status, _, b := do(t, "POST", a.srv.URL+"/v1/transfers", "application/json", sent,
				"Authorization", "Bearer ann", "X-Confirmation-Token", token)
			require.Equal(t, 200, status, "%s", b)
			assert.Equal(t, []ExactTransfer{{Account: 9007199254740993, Amount: 1200, Fee: 2.5, Memo: "rent"}}, a.inputs())
		})
	}
}

// An Idempotency-Key used for one amount is not replayed for another that only a double would
// confuse with it: 422 idempotency_key_reused, and nothing runs a second time.
func TestIdempotencyKeyBindsExactNumbers(t *testing.T) {
	t.Parallel()
	for _, tt := range sameDouble {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := newExactAPI(t)
			first := a.post(t, "/v1/payouts", `{"account":1,"amount":`+tt.a+`}`, "ann", "key-1")
			require.Equal(t, 200, first.status, "%s", first.body)
			assert.Contains(t, string(first.body), `"amount":`+tt.a)

			second := a.post(t, "/v1/payouts", `{"account":1,"amount":`+tt.b+`}`, "ann", "key-1")
			assert.Empty(t, second.header.Get("Idempotency-Replayed"), "the result for %s replayed for %s", tt.a, tt.b)
			require.Equal(t, 422, second.status, "%s", second.body)
			assert.Equal(t, "idempotency_key_reused", envelope(t, second.status, second.header, second.body).Code)
			assert.EqualValues(t, 1, a.runs.Load())

			// The account, an int64 too, is bound as exactly.
			third := a.post(t, "/v1/payouts", `{"account":`+tt.b+`,"amount":`+tt.a+`}`, "ann", "key-2")
			require.Equal(t, 200, third.status, "%s", third.body)
			fourth := a.post(t, "/v1/payouts", `{"account":`+tt.a+`,"amount":`+tt.a+`}`, "ann", "key-2")
			assert.Equal(t, 422, fourth.status, "%s", fourth.body)
			assert.EqualValues(t, 2, a.runs.Load())
		})
	}
}

// The same values spelled differently are the same payload: the first result is replayed.
func TestIdempotencyReplaysRespelledPayload(t *testing.T) {
	t.Parallel()
	a := newExactAPI(t)
	first := a.post(t, "/v1/payouts", `{"account":1152921504606847076,"amount":9007199254740993,"fee":0.25}`, "ann", "key-1")
	require.Equal(t, 200, first.status, "%s", first.body)
	for _, sent := range []string{
		`{"amount":9007199254740993,"fee":0.25,"account":1152921504606847076}`,
		" { \"fee\" : 2.5e-1 , \"account\" : 1152921504606847076 , \"amount\" : 9007199254740993 } ",
		`{"account":1152921504606847076,"amount":9007199254740993,"fee":0.250000000000000000000000000}`,
		`{"account":1152921504606847076,"amount":9007199254740993,"fee":25E-2}`,
	} {
		r := a.post(t, "/v1/payouts", sent, "ann", "key-1")
		assert.Equal(t, 200, r.status, "%s: %s", sent, r.body)
		assert.Equal(t, "true", r.header.Get("Idempotency-Replayed"), sent)
		assert.Equal(t, string(first.body), string(r.body), sent)
	}
	assert.EqualValues(t, 1, a.runs.Load())
}
