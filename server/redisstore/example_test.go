package redisstore_test

import (
	"context"
	"log"
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/redisstore"
)

// Every instance of the API is given the same Redis and the same prefix: a confirmation token
// issued by one instance is spent on any, and an idempotency key claimed on one is replayed by
// all. (No output: the example needs a Redis server.)
func Example() {
	client := redis.NewClient(&redis.Options{Addr: "redis:6379"})
	defer client.Close()
	store := redisstore.New(client, redisstore.Options{Prefix: "payments:"})
	// Optional: load the scripts now, so that the first requests need not fall back to EVAL.
	if err := store.Load(context.Background()); err != nil {
		log.Printf("redis is not reachable yet: %v", err) // requests will answer 503 until it is
	}

	api, err := server.New(
		server.WithConfirmation(server.ConfirmationOptions{Store: store}),
		server.WithIdempotency(server.IdempotencyOptions{Store: store}),
	)
	if err != nil {
		panic(err)
	}
	log.Fatal(http.ListenAndServe(":8080", api))
}
