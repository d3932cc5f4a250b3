package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/rewrite"
)

// The README's first example: the defaults repair a currency in the wrong case (a repair that
// changes nothing the call means), and a confirmation the default policy refuses comes back
// with its challenge, for a person to approve and the caller to send again with its token.
func ExampleNew() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		token := r.Header.Get(remedy.HeaderConfirmationToken)
		fmt.Printf("server got %s token=%q\n", body, token)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case !strings.Contains(string(body), `"usd"`):
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, `{"error":{"code":"invalid_body","message":"currency must be one of usd, eur",`+
				`"issues":[{"path":["currency"],"code":"enum","allowed_values":["usd","eur"]}]}}`)
		case token != "ct_7":
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"error":{"code":"confirmation_required","message":"This charges 12.00 USD.",`+
				`"retryable":true,"confirmationToken":"ct_7"}}`)
		default:
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"id":"ord_1"}`)
		}
	}))
	defer srv.Close()
	ctx, baseURL, items := context.Background(), srv.URL, []map[string]any{{"sku": "a", "quantity": 1}}

	c, err := client.New(
		client.WithBaseURL(baseURL),
		client.WithOperations(client.Operation{Name: "create_order", Method: "POST", Path: "/v1/orders"}),
	) // the defaults make the repairs that change nothing the call means, and no other
	if err != nil {
		panic(err)
	}
	resp, err := c.Call(ctx, "create_order", map[string]any{"currency": "USD", "items": items})
	var ce *client.CallError
	if errors.As(err, &ce) && ce.Challenge != nil { // confirmation required; if a person approves:
		fmt.Println("a person approves:", ce.Challenge.Message)
		resp, err = c.Call(ctx, "create_order", ce.Challenge.Args, client.WithConfirmationToken(ce.Challenge.Token))
	}
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Status, string(resp.Body))
	// Output:
	// server got {"currency":"USD","items":[{"quantity":1,"sku":"a"}]} token=""
	// server got {"currency":"usd","items":[{"quantity":1,"sku":"a"}]} token=""
	// a person approves: This charges 12.00 USD.
	// server got {"currency":"usd","items":[{"quantity":1,"sku":"a"}]} token="ct_7"
	// 201 {"id":"ord_1"}
}

// A validation failure that names the allowed values is repaired by the Rewriter and sent
// again: the loop returns the success with every attempt.
func ExampleClient_Call() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Printf("server got %s %s\n", r.URL.Path, body)
		w.Header().Set("Content-Type", "application/json")
		if !strings.Contains(string(body), `"usd"`) {
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, `{"error":{"code":"invalid_body","message":"unknown currency","retryable":true,`+
				`"issues":[{"path":["currency"],"code":"enum","allowed_values":["usd","eur"]}]}}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"ord_1"}`)
	}))
	defer srv.Close()

	// Set each field an issue names to its first allowed value.
	fix := rewrite.Func(func(_ context.Context, r *rewrite.Request) (json.RawMessage, error) {
		var args map[string]json.RawMessage
		if err := json.Unmarshal(r.Args, &args); err != nil {
			return nil, err
		}
		for _, is := range r.Envelope.Issues {
			if len(is.AllowedValues) == 0 {
				return nil, nil // nothing to go on: give up
			}
			args[strings.TrimPrefix(is.Path, "/")] = is.AllowedValues[0]
		}
		return json.Marshal(args)
	})
	c, err := client.New(
		client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "create_order", Method: "POST", Path: "/v1/orders"}),
		client.WithRewriter(fix),
	)
	if err != nil {
		panic(err)
	}
	resp, err := c.Call(context.Background(), "create_order", json.RawMessage(`{"amount":500,"currency":"dollars"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Status, string(resp.Body))
	for _, a := range resp.Attempts {
		fmt.Println(a.Number, a.Status, a.Decision.Action)
	}
	// Output:
	// server got /v1/orders {"amount":500,"currency":"dollars"}
	// server got /v1/orders {"amount":500,"currency":"usd"}
	// 201 {"id":"ord_1"}
	// 1 422 rewrite
	// 2 201 return
}

// A server that asks for confirmation gets the byte-identical payload again with its token,
// when the ConfirmPolicy approves. (The default policy refuses: the call then ends with
// ErrConfirmationRequired and the Challenge, to approve with WithConfirmationToken.)
func ExampleClient_Call_confirmation() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		token := r.Header.Get(remedy.HeaderConfirmationToken)
		fmt.Printf("server got %s token=%q\n", body, token)
		w.Header().Set("Content-Type", "application/json")
		if token != "ct_42" {
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"error":{"code":"confirmation_required","message":"This deletes 3 orders.",`+
				`"retryable":true,"confirmationToken":"ct_42"}}`)
			return
		}
		io.WriteString(w, `{"deleted":3}`)
	}))
	defer srv.Close()

	approve := client.ConfirmFunc(func(_ context.Context, ch *client.Challenge) (bool, error) {
		fmt.Printf("approve %s %s: %s\n", ch.Operation, ch.Args, ch.Message)
		return true, nil
	})
	c, err := client.New(
		client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "delete_orders", Method: "POST", Path: "/v1/orders/delete"}),
		client.WithConfirmPolicy(approve),
	)
	if err != nil {
		panic(err)
	}
	resp, err := c.Call(context.Background(), "delete_orders", json.RawMessage(`{"customer":"cus_1"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Status, string(resp.Body), len(resp.Attempts), "attempts")
	// Output:
	// server got {"customer":"cus_1"} token=""
	// approve delete_orders {"customer":"cus_1"}: This deletes 3 orders.
	// server got {"customer":"cus_1"} token="ct_42"
	// 200 {"deleted":3} 2 attempts
}

// A failure can name the operation to run first: the loop runs it (when it is registered),
// then sends the original call again.
func ExampleClient_Call_nextOperation() {
	var finalized atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Printf("server got %s %s %s\n", r.Method, r.URL.Path, body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/invoices/in_1/finalize":
			finalized.Store(true)
			io.WriteString(w, `{"status":"open"}`)
		case !finalized.Load():
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"error":{"code":"invalid_state","message":"Invoice in_1 is a draft.","retryable":true,`+
				`"next_operation":"finalize_invoice","next_operation_args":{"id":"in_1"}}}`)
		default:
			io.WriteString(w, `{"status":"paid"}`)
		}
	}))
	defer srv.Close()

	c, err := client.New(
		client.WithBaseURL(srv.URL),
		client.WithOperations(
			client.Operation{Name: "pay_invoice", Method: "POST", Path: "/v1/invoices/{id}/pay"},
			client.Operation{Name: "finalize_invoice", Method: "POST", Path: "/v1/invoices/{id}/finalize"},
		),
	)
	if err != nil {
		panic(err)
	}
	resp, err := c.Call(context.Background(), "pay_invoice", map[string]any{"id": "in_1", "source": "card"})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Status, string(resp.Body))
	for _, a := range resp.Attempts {
		fmt.Println(a.Operation, a.Number, "depth", a.Depth, a.Decision.Action)
	}
	// Output:
	// server got POST /v1/invoices/in_1/pay {"source":"card"}
	// server got POST /v1/invoices/in_1/finalize {}
	// server got POST /v1/invoices/in_1/pay {"source":"card"}
	// 200 {"status":"paid"}
	// pay_invoice 1 depth 0 next_operation
	// finalize_invoice 1 depth 1 return
	// pay_invoice 2 depth 0 return
}

// Arguments that cannot make the request — here a path parameter left out — are refused
// before anything is sent: the error names the argument, so that the caller (or a model, told
// through a Toolset) fixes it instead of reading a transport failure.
func ExampleArgumentsError() {
	var sent atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent.Add(1) }))
	defer srv.Close()
	c, _ := client.New(client.WithBaseURL(srv.URL), client.WithOperations(
		client.Operation{Name: "get_inventory", Method: "GET", Path: "/v1/inventory/{sku}"}))

	_, err := c.Call(context.Background(), "get_inventory", json.RawMessage(`{}`))
	var ae *client.ArgumentsError
	if errors.Is(err, client.ErrInvalidArguments) && errors.As(err, &ae) {
		for _, is := range ae.Issues {
			fmt.Println(is.Path, is.Code, is.Message)
		}
	}
	fmt.Println("requests sent:", sent.Load())
	// Output:
	// /sku required missing path parameter "sku"
	// requests sent: 0
}
