package storetest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/storetest"
)

// A test that holds an execution open counts the duplicates waiting for it, and lets it finish
// once all of them wait, instead of sleeping and hoping they arrived.
func ExampleWaiters() {
	ctx := context.Background()
	var w storetest.Waiters
	store := w.Watch(server.NewMemoryStore(server.MemoryOptions{}))

	// The first request claims the key and executes; two duplicates find it in flight.
	store.Claim(ctx, "ann", "charge:key-1", []byte("payload"), "request-1", time.Minute)
	store.Claim(ctx, "ann", "charge:key-1", []byte("payload"), "request-2", time.Minute)
	store.Claim(ctx, "ann", "charge:key-1", []byte("payload"), "request-3", time.Minute)
	// Another payload under the same key is refused, not a waiter.
	store.Claim(ctx, "ann", "charge:key-1", []byte("other"), "request-4", time.Minute)
	fmt.Println(w.Count())
	// Output: 2
}
