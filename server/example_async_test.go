package server_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/server"
)

// An operation that takes time runs in the background: its call is answered 202 Accepted with
// a status resource, which the reference client polls until the result is there.
func ExampleAsync() {
	type Export struct {
		Currency string `json:"currency" schema:"enum=usd,eur"`
	}
	type File struct {
		URL string `json:"url"`
	}
	api, err := server.New(server.WithAsync(server.AsyncOptions{PollAfter: 10 * time.Millisecond}))
	if err != nil {
		panic(err)
	}
	err = server.Post(api, "/v1/exports", func(ctx context.Context, in Export) (File, error) {
		time.Sleep(20 * time.Millisecond) // the work that takes time
		return File{URL: "/files/" + in.Currency + ".csv"}, nil
	}, server.OperationID("export"), server.Async(), server.Idempotent())
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	defer api.Shutdown(context.Background())

	c, err := client.New(client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "export", Method: "POST", Path: "/v1/exports"}))
	if err != nil {
		panic(err)
	}
	resp, err := c.Call(context.Background(), "export", map[string]any{"currency": "usd"})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Attempts[0].Status, resp.Attempts[0].Decision.Action)
	fmt.Println(resp.Status, string(resp.Body))
	// Output:
	// 202 poll
	// 200 {"url":"/files/usd.csv"}
}
