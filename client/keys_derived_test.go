package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
)

// A call with the caller's key whose payload the loop repairs, run twice with the same key
// (the caller retrying after losing the answer): the repaired request goes under the same
// derived key both times, so that a server honouring keys replays it and the charge runs
// once. Another caller's key derives another key.
func TestRepairedPayloadKeyDerivedFromCallers(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	executed := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Currency string }
		json.NewDecoder(r.Body).Decode(&in)
		key := r.Header.Get("Idempotency-Key")
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, key)
		w.Header().Set("Content-Type", "application/json")
		if in.Currency != "usd" {
			w.WriteHeader(422)
			w.Write([]byte(`{"error":{"statusCode":422,"code":"invalid_body","message":"currency",
				"issues":[{"path":["currency"],"code":"enum","allowed_values":["usd"]}]}}`))
			return
		}
		if executed[key]++; executed[key] > 1 {
			w.Header().Set("Idempotency-Replayed", "true")
		}
		w.WriteHeader(201)
		w.Write([]byte(`{"id":"ch_1"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "charge", Method: "POST", Path: "/v1/charges", Keys: client.KeysHonoured}))
	require.NoError(t, err)
	call := func(key string) {
		_, err := c.Call(context.Background(), "charge", json.RawMessage(`{"amount":100,"currency":"eur"}`),
			client.WithIdempotencyKey(key))
		require.NoError(t, err)
	}
	call("order-7")
	call("order-7")
	call("order-8")
	require.Len(t, keys, 6)
	assert.Equal(t, []string{"order-7", "order-7", "order-8"}, []string{keys[0], keys[2], keys[4]}, "the caller's payload goes under the caller's key")
	assert.NotEqual(t, "order-7", keys[1], "a repaired payload has a key of its own")
	assert.Equal(t, keys[1], keys[3], "the same call repaired again goes under the same key")
	assert.NotEqual(t, keys[1], keys[5], "another caller key derives another")
	assert.Equal(t, 2, executed[keys[1]], "the second run reached the server under the first's key")
}
