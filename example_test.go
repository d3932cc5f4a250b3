package remedy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
)

// Parse reads a vendor's error body; the field-level fact lands in Issues as a JSON Pointer,
// whatever the vendor called it.
func ExampleParse() {
	body := []byte(`{"error":{"type":"invalid_request_error","code":"parameter_missing",
		"message":"Missing required param: card[number].","param":"card[number]",
		"doc_url":"https://stripe.com/docs/error-codes/parameter-missing"}}`)
	e, ok := remedy.Parse(400, http.Header{"Request-Id": {"req_8Kp2"}}, body)
	fmt.Println(ok, e.Dialect, e.Code, e.Category)
	fmt.Println(e.Issues[0].Path, e.Retryable, e.RetrySource)
	// Output:
	// true stripe parameter_missing validation
	// /card/number false status
}

// The README's "Reading a failure", run on the reference server's answer to an invalid body: a
// validation failure names the field and its fix, and is not retryable, since sent again
// unchanged it fails the same way.
func ExampleParse_referenceServer() {
	type CreateInvoice struct {
		CustomerID string `json:"customer_id"`
		Currency   string `json:"currency" schema:"enum=usd,eur"`
		Amount     int    `json:"amount" schema:"minimum=1"`
	}
	api, _ := server.New()
	_ = server.Post(api, "/v1/invoices", func(_ context.Context, in CreateInvoice) (CreateInvoice, error) {
		return in, nil
	})
	srv := httptest.NewServer(api)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/invoices", "application/json",
		strings.NewReader(`{"customer_id":"cus_ada","currency":"USD","amount":1200}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)

	e, ok := remedy.Parse(resp.StatusCode, resp.Header, body) // or remedy.ParseResponse(resp)
	if ok {
		fmt.Println(e.Code, e.Category, e.Retryable, e.RetryAfter) // invalid_body validation false 0s
		for _, is := range e.Issues {
			fmt.Println(is.Path, jsonText(is.AllowedValues), jsonText(is.SuggestedValue)) // /currency ["usd","eur"] "usd"
		}
		fmt.Print(e.Prompt()) // a short repair instruction for a model
	}
	// Output:
	// invalid_body validation false 0s
	// /currency ["usd","eur"] "usd"
	// The call failed with invalid_body (HTTP 422): 1 issue: currency must be one of usd, eur.
	// Fix these fields:
	// - /currency [enum]: currency must be one of usd, eur (allowed "usd", "eur"; received "USD"; suggested "usd")
	// Hint: Change the body fields named in issues to what each issue expects, then send the call again.
	// Change the fields above, then call again; the same call will fail the same way.
}

// jsonText writes JSON values as JSON: fmt prints a json.RawMessage as a list of bytes.
func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }

// A 2xx can carry a failure: GraphQL errors, JSON-RPC errors, MCP isError, Slack ok:false.
func ExampleParse_inBand() {
	body := []byte(`{"ok":false,"error":"ratelimited"}`)
	e, ok := remedy.Parse(200, nil, body)
	fmt.Println(ok, e.Dialect, e.Code, e.Category, e.Retryable)

	_, ok = remedy.Parse(200, nil, []byte(`{"ok":true,"channel":"C1"}`))
	fmt.Println(ok)
	// Output:
	// true slack ratelimited rate_limit true
	// false
}

// The retry decision says which rule made it, and the wait honours the server's own units.
func ExampleParse_retry() {
	h := http.Header{"Retry-After": {"120"}}
	e, _ := remedy.Parse(503, h, nil) // an empty 503 from a proxy
	fmt.Println(e.Dialect, e.Code, e.Retryable, e.RetrySource, e.RetryAfter)

	e, _ = remedy.Parse(503, h, []byte(`{"type":"about:blank","status":503,"is_retriable":true,"retry_after_ms":1500}`))
	fmt.Println(e.Dialect, e.Retryable, e.RetrySource, e.RetryAfter)
	// Output:
	// unstructured service_unavailable true status 2m0s
	// rfc9457 true body 1.5s
}

// ParseResponse reads a bounded prefix of the body and leaves the response usable.
func ExampleParseResponse() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusConflict)
		io.WriteString(w, `{"type":"https://example.com/probs/invalid-state","status":409,
			"detail":"Invoice in_1 is a draft.","next_operation":"finalize_invoice",
			"next_operation_args":{"id":"in_1"}}`)
	}))
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	e, _ := remedy.ParseResponse(resp, remedy.WithMaxBody(64<<10))
	fmt.Println(e.Code, e.NextOperation, string(e.NextOperationArgs))
	rest, _ := io.ReadAll(resp.Body)
	fmt.Println(strings.HasPrefix(string(rest), `{"type"`))
	// Output:
	// invalid-state finalize_invoice {"id":"in_1"}
	// true
}

// Classify is the decision alone, for hot paths.
func ExampleClassify() {
	v := remedy.Classify(429, http.Header{"Retry-After": {"3"}}, []byte(`{"error":{"code":"rate_limited","message":"slow down"}}`))
	fmt.Println(v.Failure, v.Retryable, v.RetryAfter, v.Category)
	// Output: true true 3s rate_limit
}

// Prompt renders the envelope as a repair instruction for a model.
func ExampleEnvelope_Prompt() {
	body := []byte(`{"error":{"statusCode":422,"code":"invalid_body","message":"Request body failed validation.",
		"issues":[{"path":["currency"],"code":"enum","message":"must be one of usd, eur",
		"received":"USD$","allowed_values":["usd","eur"],"suggested_value":"usd"}],"retryable":false}}`)
	e, _ := remedy.Parse(422, nil, body)
	fmt.Print(e.Prompt())
	// Output:
	// The call failed with invalid_body (HTTP 422): Request body failed validation.
	// Fix these fields:
	// - /currency [enum]: must be one of usd, eur (allowed "usd", "eur"; received "USD$"; suggested "usd")
	// Change the fields above, then call again; the same call will fail the same way.
}

// MarshalJSON writes the canonical envelope the reference server emits; MarshalProblem the
// RFC 9457 form. Parse reads both back.
func ExampleEnvelope_MarshalJSON() {
	e := &remedy.Envelope{
		Status: 409, Code: "confirmation_required", Message: "Deleting a customer is permanent.",
		ConfirmationToken: "ct_9f2", Category: remedy.CategoryState,
	}
	b, _ := e.MarshalJSON()
	fmt.Println(string(b))
	p, _ := e.MarshalProblem()
	fmt.Println(string(p))
	// Output:
	// {"error":{"statusCode":409,"code":"confirmation_required","message":"Deleting a customer is permanent.","retryable":false,"category":"state","confirmationToken":"ct_9f2"}}
	// {"type":"about:blank","status":409,"detail":"Deleting a customer is permanent.","code":"confirmation_required","retryable":false,"category":"state","confirmationToken":"ct_9f2"}
}
