package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
)

// A server that answers 202 Accepted with a status resource is polled until the operation
// ends; a failed operation is an ErrOperationFailed with its envelope.
func ExampleClient_Call_accepted() {
	polls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After-Ms", "1")
		switch r.Method {
		case "POST":
			w.Header().Set("Operation-Location", "/operations/42")
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, `{"status":"notStarted"}`)
		case "GET":
			if polls++; polls < 3 {
				io.WriteString(w, `{"status":"running"}`)
				return
			}
			io.WriteString(w, `{"status":"failed","error":{"code":"quota_exceeded","message":"too many exports today"}}`)
		}
	}))
	defer srv.Close()
	c, err := client.New(client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "export", Path: "/v1/exports"}))
	if err != nil {
		panic(err)
	}
	_, err = c.Call(context.Background(), "export", nil)
	var env *remedy.Envelope
	if errors.Is(err, client.ErrOperationFailed) && errors.As(err, &env) {
		fmt.Println("failed:", env.Code, "-", env.Message)
	}
	var ce *client.CallError
	errors.As(err, &ce)
	for _, a := range ce.Attempts {
		fmt.Println(a.Method, a.Target, a.Status, a.Decision.Action)
	}
	// Output:
	// failed: quota_exceeded - too many exports today
	// POST /v1/exports 202 poll
	// GET /operations/42 200 poll
	// GET /operations/42 200 poll
	// GET /operations/42 200 stop
}

// WithoutPolling returns the 202 as it came, for a caller that follows the operation itself.
func ExampleWithoutPolling() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/operations/42")
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	c, err := client.New(client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "export", Path: "/v1/exports"}))
	if err != nil {
		panic(err)
	}
	resp, err := c.Call(context.Background(), "export", nil, client.WithoutPolling())
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Status, resp.Header.Get("Location"))
	// Output: 202 /operations/42
}
