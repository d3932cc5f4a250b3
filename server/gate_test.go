package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
)

// A Guard gives a plain net/http handler the pipeline's idempotency and confirmation: a
// challenge, the confirmed call once, a replay without a second execution, a reused key
// refused, and a failure that does not keep its key.
func TestGuardServesAnotherFrameworksHandler(t *testing.T) {
	g, err := server.NewGuard()
	if err != nil {
		t.Fatal(err)
	}
	var ran atomic.Int64
	op := &server.Operation{ID: "refund", Method: "POST", Path: "/refund", Confirm: true, Idempotency: server.IdempotencyOptional}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		g.Serve(w, r, body, op, server.Principal(r.Header.Get("X-User")), func(w http.ResponseWriter, confirm func() error) error {
			if strings.Contains(string(body), "bad") {
				w.WriteHeader(http.StatusUnprocessableEntity) // the framework's own refusal
				return nil
			}
			if err := confirm(); err != nil {
				return err
			}
			ran.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"refunded":true}`)
			return nil
		})
	}))
	defer srv.Close()
	call := func(body, key, token string) (int, http.Header, *remedy.Envelope) {
		req, _ := http.NewRequest("POST", srv.URL+"/refund", strings.NewReader(body))
		req.Header.Set("X-User", "ada")
		if key != "" {
			req.Header.Set(remedy.HeaderIdempotencyKey, key)
		}
		if token != "" {
			req.Header.Set(remedy.HeaderConfirmationToken, token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		env, _ := remedy.Parse(resp.StatusCode, resp.Header, b)
		return resp.StatusCode, resp.Header, env
	}
	status, _, env := call(`{"amount":5}`, "k1", "")
	if status != 409 || env.Code != server.CodeConfirmationRequired {
		t.Fatalf("challenge: %d %v", status, env)
	}
	if status, _, _ := call(`{"amount":5}`, "k1", env.ConfirmationToken); status != 201 {
		t.Fatalf("confirmed: %d", status)
	}
	if status, h, _ := call(`{"amount":5}`, "k1", ""); status != 201 || h.Get(remedy.HeaderReplayed) != "true" {
		t.Fatalf("replay: %d %v", status, h)
	}
	if status, _, env := call(`{"amount":6}`, "k1", ""); status != 422 || env.Code != server.CodeIdempotencyKeyReused {
		t.Fatalf("reused: %d %v", status, env)
	}
	if status, _, _ := call(`{"bad":1}`, "k2", ""); status != 422 {
		t.Fatalf("refused: %d", status)
	}
	if status, _, env := call(`{"amount":7}`, "k2", ""); status != 409 || env.Code != server.CodeConfirmationRequired {
		t.Fatalf("after a refusal the key is free: %d %v", status, env)
	}
	if n := ran.Load(); n != 1 {
		t.Errorf("the handler ran %d times, want 1", n)
	}
}
