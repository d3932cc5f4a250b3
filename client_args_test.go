package remedy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/remedy-go/remedy"
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
	c, err := remedy.NewClient(remedy.WithBaseURL(srv.URL),
		remedy.WithOperations(remedy.Operation{Name: "report", Method: "GET", Path: "/v1/report"}))
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
