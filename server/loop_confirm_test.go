package server_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/server"
)

type ChargeRefund struct {
	ID       string `path:"id" schema:"pattern=^ch_"`
	Currency string `json:"currency" schema:"enum=usd,eur"`
	Amount   int    `json:"amount" schema:"minimum=1"`
}

type ChargeRefunded struct {
	ID       string `json:"id"`
	Currency string `json:"currency"`
}

// ChargeRefundLate is ChargeRefund without the enum in its schema: its handler checks the
// currency, after the confirmation gate.
type ChargeRefundLate struct {
	ID       string `path:"id" schema:"pattern=^ch_"`
	Currency string `json:"currency"`
	Amount   int    `json:"amount" schema:"minimum=1"`
}

// confirmedRefundAPI serves refund_charge, which needs confirmation and validates its body
// before the confirmation gate, and refund_charge_late, whose handler refuses a currency after
// the gate: a confirmed payload that is refused is repaired and — a new payload — challenged
// again. runs counts the refunds made.
func confirmedRefundAPI(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var runs atomic.Int64
	api, err := server.New()
	if err != nil {
		t.Fatal(err)
	}
	require.NoError(t, server.Post(api, "/v1/charges/{id}/refund", func(ctx context.Context, in ChargeRefund) (ChargeRefunded, error) {
		runs.Add(1)
		return ChargeRefunded{ID: in.ID, Currency: in.Currency}, nil
	}, server.OperationID("refund_charge"), server.Confirm()))
	require.NoError(t, server.Post(api, "/v1/charges/{id}/refund-late", func(ctx context.Context, in ChargeRefundLate) (ChargeRefunded, error) {
		if in.Currency != "usd" && in.Currency != "eur" {
			return ChargeRefunded{}, &remedy.Envelope{Status: 422, Code: "invalid_body", Message: "currency must be usd or eur",
				Issues: []remedy.Issue{{Path: "/currency", Code: "enum", Message: "currency must be usd or eur",
					Received: json.RawMessage(`"` + in.Currency + `"`), AllowedValues: []json.RawMessage{[]byte(`"usd"`), []byte(`"eur"`)}}}}
		}
		runs.Add(1)
		return ChargeRefunded{ID: in.ID, Currency: in.Currency}, nil
	}, server.OperationID("refund_charge_late"), server.Confirm()))
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return srv, &runs
}

// An invalid payload is refused before any challenge: the loop repairs it, and the policy is
// asked once, about the repaired payload.
func TestLoopRepairsBeforeConfirming(t *testing.T) {
	t.Parallel()
	srv, runs := confirmedRefundAPI(t)
	var asked []string
	approve := client.ConfirmFunc(func(_ context.Context, ch *client.Challenge) (bool, error) {
		asked = append(asked, string(ch.Args))
		return true, nil
	})
	c, err := client.New(client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "refund_charge", Method: "POST", Path: "/v1/charges/{id}/refund"}),
		client.WithConfirmPolicy(approve))
	require.NoError(t, err)
	resp, err := c.Call(context.Background(), "refund_charge", json.RawMessage(`{"id":"ch_1","currency":"USD","amount":5}`))
	require.NoError(t, err)
	assert.Equal(t, int64(1), runs.Load(), "executed once")
	var trail []string
	for _, a := range resp.Attempts {
		trail = append(trail, a.Decision.Action.String())
	}
	assert.Equal(t, []string{"rewrite", "confirm", "return"}, trail)
	require.Len(t, asked, 1, "the policy is asked about the repaired payload only")
	assert.JSONEq(t, `{"id":"ch_1","currency":"usd","amount":5}`, asked[0])
}

// Confirm, then repair, then confirm again: the policy is asked about the repaired payload
// (it sees the new arguments and the new challenge), and the call succeeds. Before, the loop
// stopped at the second challenge with "the server asked for confirmation again".
func TestLoopConfirmsAgainAfterARepair(t *testing.T) {
	t.Parallel()
	srv, runs := confirmedRefundAPI(t)
	var mu sync.Mutex
	var asked []string // the arguments of each challenge the policy saw
	approve := client.ConfirmFunc(func(_ context.Context, ch *client.Challenge) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, string(ch.Args))
		return true, nil
	})
	c, err := client.New(client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "refund_charge_late", Method: "POST", Path: "/v1/charges/{id}/refund-late"}),
		client.WithConfirmPolicy(approve))
	require.NoError(t, err)

	resp, err := c.Call(context.Background(), "refund_charge_late", json.RawMessage(`{"id":"ch_1","currency":"USD","amount":5}`))
	require.NoError(t, err)
	var out ChargeRefunded
	require.NoError(t, json.Unmarshal(resp.Body, &out))
	assert.Equal(t, "usd", out.Currency)
	assert.Equal(t, int64(1), runs.Load(), "executed once")

	var trail []string
	for _, a := range resp.Attempts {
		trail = append(trail, a.Decision.Action.String())
	}
	assert.Equal(t, []string{"confirm", "rewrite", "confirm", "return"}, trail)
	require.Len(t, asked, 2, "the policy is asked about each payload")
	assert.JSONEq(t, `{"id":"ch_1","currency":"USD","amount":5}`, asked[0])
	assert.JSONEq(t, `{"id":"ch_1","currency":"usd","amount":5}`, asked[1])
	require.Len(t, resp.Attempts[1].Changes, 1)
	assert.Equal(t, "/currency", resp.Attempts[1].Changes[0].Path)
}

// A policy that approves the first payload and refuses the repaired one stops the call with
// the new challenge: nothing executes.
func TestLoopRepairedPayloadNeedsItsOwnApproval(t *testing.T) {
	t.Parallel()
	srv, runs := confirmedRefundAPI(t)
	first := client.ConfirmFunc(func(_ context.Context, ch *client.Challenge) (bool, error) {
		return string(ch.Args) == `{"id":"ch_1","currency":"USD","amount":5}`, nil
	})
	c, err := client.New(client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "refund_charge", Method: "POST", Path: "/v1/charges/{id}/refund"}),
		client.WithConfirmPolicy(first))
	require.NoError(t, err)
	_, err = c.Call(context.Background(), "refund_charge", json.RawMessage(`{"id":"ch_1","currency":"USD","amount":5}`))
	require.ErrorIs(t, err, client.ErrConfirmationRequired)
	var ce *client.CallError
	require.ErrorAs(t, err, &ce)
	require.NotNil(t, ce.Challenge)
	assert.JSONEq(t, `{"id":"ch_1","currency":"usd","amount":5}`, string(ce.Challenge.Args))
	assert.Zero(t, runs.Load())
}
