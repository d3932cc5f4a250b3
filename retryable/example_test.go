package retryable_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/retryable"
)

// A go-retryablehttp client that retries what the server says is retryable (here a 503, then
// a success) and reports what is not as the *Envelope (here a validation failure: a retry
// cannot fix the arguments).
func ExampleNewClient() {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/invoices" && r.Method == http.MethodPost:
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, `{"error":{"code":"invalid_currency","message":"currency must be usd or eur",
				"field":"currency","allowed_values":["usd","eur"],"retryable":false}}`)
		case calls.Add(1) < 3:
			w.Header().Set("Retry-After-Ms", "5")
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			io.WriteString(w, `{"id":"inv_1"}`)
		}
	}))
	defer srv.Close()

	client := retryable.NewClient()
	client.RetryWaitMin, client.RetryWaitMax = time.Millisecond, 50*time.Millisecond

	resp, err := client.Get(srv.URL + "/invoices/inv_1")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body), "after", calls.Load(), "attempts")

	_, err = client.Post(srv.URL+"/invoices", "application/json", []byte(`{"currency":"gbp"}`))
	var env *remedy.Envelope
	if errors.As(err, &env) {
		fmt.Println(err)
		fmt.Println(env.Issues[0].Path, string(env.Issues[0].AllowedValues[0]), env.Retryable)
	}
	// Output:
	// 200 {"id":"inv_1"} after 3 attempts
	// remedy: giving up after 1 attempt: invalid_currency (422): currency must be usd or eur
	// /currency "usd" false
}
