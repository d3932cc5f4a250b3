package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
)

// A Guard gives a handler of another framework (here plain net/http) the reference server's
// confirmation gate and idempotency: the first call is answered with a challenge, the call
// carrying its token runs, and a retry under the same key is replayed without running again.
func ExampleNewGuard() {
	guard, err := server.NewGuard()
	if err != nil {
		panic(err)
	}
	op := &server.Operation{ID: "refund", Method: "POST", Path: "/refund", Confirm: true,
		Idempotency: server.IdempotencyOptional}
	runs := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		guard.Serve(w, r, body, op, "", func(w http.ResponseWriter, confirm func() error) error {
			// The framework's own validation would come here, before the gate.
			if err := confirm(); err != nil {
				return err // a challenge, or a token refused: the Guard answers it
			}
			runs++
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"refunded":true}`)
			return nil
		})
	}))
	defer srv.Close()

	send := func(token string) *http.Response {
		req, _ := http.NewRequest("POST", srv.URL+"/refund", strings.NewReader(`{"amount":5}`))
		req.Header.Set(remedy.HeaderIdempotencyKey, "refund-1")
		if token != "" {
			req.Header.Set(remedy.HeaderConfirmationToken, token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		return resp
	}
	resp := send("")
	e, _ := remedy.ParseResponse(resp)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, e.Code)
	resp = send(e.ConfirmationToken)
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	resp = send("")
	resp.Body.Close()
	fmt.Println(resp.StatusCode, "replayed:", resp.Header.Get(remedy.HeaderReplayed), "runs:", runs)
	// Output:
	// 409 confirmation_required
	// 201
	// 201 replayed: true runs: 1
}
