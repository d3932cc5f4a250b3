package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/remedy-go/remedy/client"
)

// A nil json.RawMessage or []byte is no arguments, as nil is: a value of those types in an
// interface is not nil, but holds nothing all the same.
func TestCallNilArguments(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.RawQuery != "" {
			w.WriteHeader(http.StatusBadRequest)
		}
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "report", Method: "GET", Path: "/v1/report"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []any{nil, json.RawMessage(nil), []byte(nil)} {
		resp, err := c.Call(context.Background(), "report", args)
		if err != nil {
			t.Errorf("%T(nil): %v", args, err)
			continue
		}
		if resp.Status != http.StatusOK {
			t.Errorf("%T(nil): status %d, want 200 with no query", args, resp.Status)
		}
	}
}

// A call without arguments is repaired as a call with an empty object: the rewriter can add
// the member the server names, which it cannot do to nothing.
func TestCallNilArgumentsRepaired(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("currency") != "usd" {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"statusCode":400,"code":"invalid_parameter","message":"currency is required",
				"issues":[{"path":["currency"],"code":"required","suggested_value":"usd"}]}}`))
			return
		}
		w.Write([]byte(`{"total":1}`))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "report", Method: "GET", Path: "/v1/report"}))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Call(context.Background(), "report", nil)
	if err != nil {
		t.Fatalf("not repaired: %v", err)
	}
	if len(resp.Attempts) != 2 || string(resp.Body) != `{"total":1}` {
		t.Fatalf("got %d attempts, body %s", len(resp.Attempts), resp.Body)
	}
}
