package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
)

// An operation is a typed function; its input schema comes from the Go type, and a call that
// breaks it is answered with an envelope that names every field at fault and, where it is
// obvious, the fix.
func ExamplePost() {
	type Item struct {
		SKU      string `json:"sku"`
		Quantity int    `json:"quantity" schema:"minimum=1;maximum=100"`
	}
	type CreateOrder struct {
		Currency string `json:"currency" schema:"enum=usd,eur,gbp"`
		Items    []Item `json:"items" schema:"minItems=1"`
	}
	type Order struct {
		ID string `json:"id"`
	}
	api, err := server.New()
	if err != nil {
		panic(err)
	}
	err = server.Post(api, "/v1/orders", func(ctx context.Context, in CreateOrder) (Order, error) {
		return Order{ID: "ord_1"}, nil
	}, server.OperationID("create_order"), server.SuccessStatus(201))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(api)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/v1/orders", "application/json",
		strings.NewReader(`{"currency":"USD","items":[{"sku":"a","quantity":500}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	env, _ := remedy.Parse(resp.StatusCode, resp.Header, body)
	fmt.Println(env.Status, env.Code)
	// "USD" is obviously "usd", so the server suggests it; 500 items are not 100, so the
	// bound is only what was expected.
	for _, is := range env.Issues {
		if is.SuggestedValue != nil {
			fmt.Println(is.Path, is.Code, "suggested:", string(is.SuggestedValue))
		} else {
			fmt.Println(is.Path, is.Code, "expected:", string(is.Expected))
		}
	}
	// Output:
	// 422 invalid_body
	// /currency enum suggested: "usd"
	// /items/0/quantity maximum expected: {"maximum":100}
}

// Handlers fail with registered codes; a precondition names the operation that repairs it.
func ExamplePrecondition() {
	p := server.Precondition("the order is not paid", "created", "paid", "pay_order", map[string]string{"id": "ord_1"})
	fmt.Println(p.Code, p.NextOperation, string(p.NextOperationArgs))
	// Output:
	// precondition_failed pay_order {"id":"ord_1"}
}
