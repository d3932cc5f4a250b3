package bench

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/redistest"
	"github.com/remedy-go/remedy/redispacer"
)

// redisPacingContender is two remedy clients, each with a redispacer.Pacer of its own on one
// throwaway redis-server, every other call through each: nothing of the pacing is shared in
// the process, so what one client learns of the limit reaches the other's calls through Redis
// alone, as it would two processes'. It skips when redis-server is not installed (unless
// REMEDY_REQUIRE_REDIS=1).
func redisPacingContender() pacingContender {
	return pacingContender{name: "remedy-redis", setup: func(tb testing.TB, hc *http.Client, base string, start time.Time) func(context.Context, int) error {
		rdb := redis.NewClient(&redis.Options{Addr: redistest.Start(tb), ContextTimeoutEnabled: true})
		tb.Cleanup(func() { rdb.Close() })
		var clients [2]*client.Client
		for i := range clients {
			own := tracePacer{Pacer: redispacer.New(rdb, redispacer.Options{}), start: start, watch: hc.Transport.(*watchTransport)}
			rc, err := client.New(client.WithHTTPClient(hc), client.WithBaseURL(base), client.WithPacer(own),
				client.WithOperations(client.Operation{Name: "create_order", Path: "/v1/orders"}))
			if err != nil {
				tb.Fatal(err)
			}
			clients[i] = rc
		}
		return func(ctx context.Context, n int) error {
			_, err := clients[n%2].Call(ctx, "create_order", orderArgs)
			return err
		}
	}}
}
