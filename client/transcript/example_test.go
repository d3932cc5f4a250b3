package transcript_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/client/transcript"
)

// Attempt, given to the AttemptEnd hook, prints each attempt of a call as it ends. The server's
// message carries a terminal escape sequence; the transcript shows it, it does not act on it.
func ExampleAttempt() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("currency") != "eur" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"code":"invalid_query","message":"\u001b[2Jcurrency must be lower case",`+
				`"issues":[{"path":["currency"],"code":"enum","allowed_values":["usd","eur"]}]}}`)
			return
		}
		io.WriteString(w, `{"invoiced":1200}`)
	}))
	defer srv.Close()

	c, err := client.New(
		client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "revenue_report", Method: "GET", Path: "/v1/reports/revenue"}),
		client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) {
			transcript.Attempt(os.Stdout, a)
		}}),
	)
	if err != nil {
		panic(err)
	}
	if _, err := c.Call(context.Background(), "revenue_report", map[string]any{"currency": "EUR"}); err != nil {
		panic(err)
	}
	// Output:
	// #1 revenue_report GET /v1/reports/revenue
	//        400 invalid_query: \x1b[2Jcurrency must be lower case
	//          issue /currency enum allowed ["usd","eur"]
	//        -> rewrite: the failure names a fix
	//           change /currency "EUR" → "eur" by enum_match
	//     #2 revenue_report GET /v1/reports/revenue
	//        200
	//        -> return: success
}
