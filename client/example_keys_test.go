package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
)

// A POST whose answer is lost after it ran is sent again only to a server known to honour
// its Idempotency-Key. This server does honour keys (a repeated key gets the stored answer,
// Idempotency-Replayed: true), and it loses the first answer for every key. The client that
// is not told so stops, because to it a second send could mean a second SMS; the client
// told that the server honours keys sends the request again, and gets the first result back.
func ExampleWithIdempotencyKeys() {
	var mu sync.Mutex
	seen := map[string]int{}
	sent := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(remedy.HeaderIdempotencyKey)
		mu.Lock()
		seen[key]++
		n := seen[key]
		if n == 1 {
			sent++
		}
		mu.Unlock()
		if n == 1 { // the SMS is sent, then the connection drops before the answer
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		w.Header().Set(remedy.HeaderReplayed, "true")
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()

	for _, keys := range []client.KeySupport{client.KeysUnknown, client.KeysHonoured} {
		c, err := client.New(
			client.WithBaseURL(srv.URL),
			client.WithOperations(client.Operation{Name: "send_sms", Method: "POST", Path: "/v1/sms"}),
			client.WithIdempotencyKeys(keys),
		)
		if err != nil {
			panic(err)
		}
		resp, err := c.Call(context.Background(), "send_sms", json.RawMessage(`{"to":"+15550100","text":"hi"}`))
		switch {
		case errors.Is(err, remedy.ErrOutcomeUnknown):
			fmt.Printf("keys %s: stopped, the SMS may have been sent\n", keys)
		case err != nil:
			fmt.Printf("keys %s: %v\n", keys, err)
		default:
			fmt.Printf("keys %s: %d, replayed %t, after %d attempts\n", keys, resp.Status, resp.Replayed, len(resp.Attempts))
		}
	}
	fmt.Println("SMS sent:", sent, "(one per call)")
	// Output:
	// keys unknown: stopped, the SMS may have been sent
	// keys honoured: 201, replayed true, after 2 attempts
	// SMS sent: 2 (one per call)
}

// Replayed reads a replay in every spelling APIs mark it with: here Stripe's.
func ExampleReplayed() {
	h := http.Header{}
	h.Set("Idempotent-Replayed", "true")
	fmt.Println(remedy.Replayed(h))
	// Output: true
}
