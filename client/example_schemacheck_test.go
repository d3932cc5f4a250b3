package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/remedy-go/remedy/client"
)

// With the operation's schema known, arguments that break it are repaired before anything is
// sent, when the repair keeps what the call means: a server whose only answer to a wrong call
// is "bad request" gets one request, already right. WithSchemaCheck(CheckStrict) also stops,
// before sending, arguments that only a lossy repair would fix, with the proposal.
func ExampleWithSchemaCheck() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Printf("server got %s\n", body)
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()

	paint := client.Operation{Name: "paint", Method: "POST", Path: "/v1/paint", Parameters: json.RawMessage(`{
		"type": "object",
		"properties": {
			"color": {"type": "string", "enum": ["red", "green"]},
			"quantity": {"type": "integer", "minimum": 1, "maximum": 100}
		},
		"required": ["color", "quantity"]
	}`)}
	c, err := client.New(
		client.WithBaseURL(srv.URL),
		client.WithOperations(paint),
		client.WithSchemaCheck(client.CheckStrict),
	)
	if err != nil {
		panic(err)
	}
	resp, err := c.Call(context.Background(), "paint", json.RawMessage(`{"color":"RED","quantity":"5"}`))
	if err != nil {
		panic(err)
	}
	for _, ch := range resp.Attempts[0].Checked {
		fmt.Printf("checked %s: %s → %s (%s)\n", ch.Path, ch.Old, ch.New, ch.Rule)
	}

	_, err = c.Call(context.Background(), "paint", json.RawMessage(`{"color":"red","quantity":500}`))
	var ce *client.CallError
	if errors.As(err, &ce) && errors.Is(err, client.ErrInvalidArguments) {
		for _, ch := range ce.Proposal.Changes {
			fmt.Printf("not sent; proposed %s: %s → %s (%s)\n", ch.Path, ch.Old, ch.New, ch.Rule)
		}
	}
	// Output:
	// server got {"color":"red","quantity":5}
	// checked /color: "RED" → "red" (enum_match)
	// checked /quantity: "5" → 5 (coerce)
	// not sent; proposed /quantity: 500 → 100 (clamp)
}
