package bench

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/redistest"
	"github.com/remedy-go/remedy/redispacer"
)

// redisPacingContender is two remedy clients sharing one redispacer.Pacer on a throwaway
// redis-server, every other call through each: what one client learns of the limit holds the
// other's calls, through Redis, as it would two processes'. It skips when redis-server is not
// installed (unless REMEDY_REQUIRE_REDIS=1).
func redisPacingContender() pacingContender {
	return pacingContender{"remedy-redis", func(tb testing.TB, hc *http.Client, base string, start time.Time) func(context.Context, int) error {
		rdb := redis.NewClient(&redis.Options{Addr: redistest.Start(tb), ContextTimeoutEnabled: true})
		tb.Cleanup(func() { rdb.Close() })
		shared := tracePacer{Pacer: redispacer.New(rdb, redispacer.Options{}), start: start}
		var clients [2]*remedy.Client
		for i := range clients {
			rc, err := remedy.NewClient(remedy.WithHTTPClient(hc), remedy.WithBaseURL(base), remedy.WithPacer(shared),
				remedy.WithOperations(remedy.Operation{Name: "create_order", Path: "/v1/orders"}))
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
