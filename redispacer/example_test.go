package redispacer_test

import (
	"context"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/redispacer"
)

// Every agent of the fleet that calls the API with one key is given the same Redis and the
// same prefix: when the API answers any of them 429 with Retry-After, the calls of all wait
// until then. (No output: the example needs a Redis server.)
func Example() {
	rdb := redis.NewClient(&redis.Options{
		Addr: "redis:6379",
		// So that a call's context, and the pacer's timeout, bound a Redis that accepts
		// connections and answers nothing, not only one that is down.
		ContextTimeoutEnabled: true,
	})
	defer rdb.Close()
	// One prefix per API key (never the key itself): the processes sharing the key share
	// its limits; another key, another prefix.
	pacer := redispacer.New(rdb, redispacer.Options{Prefix: "pace:orders-team:"})

	c, err := client.New(
		client.WithBaseURL("https://api.example.com"),
		client.WithOperations(client.Operation{Name: "create_order", Method: "POST", Path: "/v1/orders"}),
		client.WithPacer(pacer),
	)
	if err != nil {
		panic(err)
	}
	resp, err := c.Call(context.Background(), "create_order", map[string]any{"sku": "A-1", "qty": 2})
	if err != nil {
		// A wait held for the origin that the call cannot spend (past Limits.MaxWait) ends
		// it at once with client.RetryLater, nothing sent; a Redis that does not answer
		// paces nothing.
		log.Fatal(err)
	}
	log.Println(resp.Status)
}
