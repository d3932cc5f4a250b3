package billing_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/examples/billing"
)

// New serves the billing API; a call that breaks its schema is answered with the envelope that
// names the fix, and the store counts no side effect for it.
func ExampleNew() {
	api, store, err := billing.New()
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/v1/invoices", "application/json",
		strings.NewReader(`{"customer_id":"cus_ada","currency":"EUR","amount":1200}`))
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	env, _ := remedy.Parse(resp.StatusCode, resp.Header, body)
	fmt.Println(env.Status, env.Code)
	for _, is := range env.Issues {
		fmt.Println(is.Path, is.Code, string(is.SuggestedValue))
	}
	fmt.Println("invoices created:", store.Effects("create_invoice"))
	// Output:
	// 422 invalid_body
	// /currency enum "eur"
	// invoices created: 0
}
