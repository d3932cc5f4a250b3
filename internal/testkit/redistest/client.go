package redistest

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Client returns a client of the server on addr, with hooks added, closed when tb ends.
func Client(tb testing.TB, addr string, hooks ...redis.Hook) *redis.Client {
	tb.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr})
	for _, h := range hooks {
		client.AddHook(h)
	}
	tb.Cleanup(func() { client.Close() })
	return client
}

// prefixes numbers the key spaces Prefix hands out.
var prefixes atomic.Int64

// Prefix is a key prefix no other caller in the process gets: each store or pacer of a test
// has its own key space on a shared server.
func Prefix() string {
	return fmt.Sprintf("test%d:", prefixes.Add(1))
}
