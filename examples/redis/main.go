// Command redis shows two instances of one API behind a load balancer, sharing their guard
// state in Redis (server/redisstore): a confirmation token issued by instance A is spent on
// instance B, and a charge that A executed, whose response was lost, is replayed by B when the
// agent's retry lands there, not charged twice.
//
//	redis-server --port 6379 &    # any Redis will do; the program writes keys under billing-example:
//	go run ./examples/redis -redis 127.0.0.1:6379
//
// Each instance is the reference server's billing API on its own loopback port, with its own
// Redis client, as separate processes would have. What they share is what the README's
// several-instances setup shares: one redisstore for both confirmation and idempotency
// (server.WithConfirmation and server.WithIdempotency). Their billing data stays in each
// instance's memory, which is why the side effects are counted per instance: the sum shows that
// each executed once in total. The agent is remedy's HTTP client behind a stand-in load
// balancer that sends each call's first attempt to A and its retry to B.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/client/transcript"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/redisstore"
)

// prefix starts every key the instances write: one prefix for all instances of one API.
const prefix = "billing-example:"

func main() {
	addr := flag.String("redis", "127.0.0.1:6379", "address (host:port) of the Redis the two instances share")
	flag.Parse()
	if err := run(os.Stdout, *addr); err != nil {
		fmt.Fprintln(os.Stderr, "redis:", err)
		os.Exit(1)
	}
}

// instance is one server instance: the billing API on its own port with its own Redis client.
type instance struct {
	name  string
	url   *url.URL
	store *billing.Store
}

// run starts two instances sharing the Redis at addr and makes three calls through a balancer
// in front of them.
func run(out io.Writer, addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Fail at once, and say what to do, when nothing listens at addr (go-redis would retry the
	// dial and log each failure before giving up).
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return fmt.Errorf("cannot connect to Redis at %s (start redis-server, or pass -redis host:port): %w", addr, err)
	}
	conn.Close()

	var instances []*instance
	for _, name := range []string{"A", "B"} {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		defer rdb.Close()
		shared := redisstore.New(rdb, redisstore.Options{Prefix: prefix})
		// Load is optional; it also checks that Redis answers, rather than answering 503 to
		// every call that needs the store.
		if err := shared.Load(ctx); err != nil {
			return fmt.Errorf("the Redis at %s does not answer: %w", addr, err)
		}
		api, store, err := billing.New(
			server.WithConfirmation(server.ConfirmationOptions{Store: shared}),
			server.WithIdempotency(server.IdempotencyOptions{Store: shared}),
		)
		if err != nil {
			return err
		}
		srv := httptest.NewServer(api)
		defer srv.Close()
		u, err := url.Parse(srv.URL)
		if err != nil {
			return err
		}
		instances = append(instances, &instance{name: name, url: u, store: store})
		fmt.Fprintf(out, "instance %s: %s, Redis %s\n", name, srv.URL, addr)
	}

	lb := &balancer{instances: instances}
	c, err := client.New(
		client.WithBaseURL("http://billing.internal"), // the balancer picks the instance
		client.WithHTTPClient(&http.Client{Transport: lb}),
		client.WithConfirmPolicy(client.ConfirmFunc(func(context.Context, *client.Challenge) (bool, error) {
			return true, nil
		})),
		client.WithHooks(client.Hooks{AttemptEnd: func(_ context.Context, a *client.Attempt) {
			fmt.Fprintf(out, "    on instance %s:\n", lb.last.Load().name)
			transcript.Attempt(out, a)
		}}),
	)
	if err != nil {
		return err
	}
	if _, err := c.LoadOpenAPI(ctx, "/openapi.json"); err != nil {
		return err
	}

	// 1. The challenge comes from A; the confirmed call lands on B, which takes the token from
	// Redis and runs the deletion.
	fmt.Fprintln(out, "\n[1] a confirmation issued by A, spent on B: delete_customer {\"id\":\"cus_ada\"}")
	var token string
	lb.reset()
	resp, err := c.Call(ctx, "delete_customer", map[string]any{"id": "cus_ada"})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    => %d %s\n", resp.Status, resp.Body)
	if env := resp.Attempts[0].Envelope; env != nil {
		token = env.ConfirmationToken
	}

	// 2. The same token again, on A: B spent it, and A knows, because the spending was in Redis.
	fmt.Fprintln(out, "\n[2] the same token again, on A: delete_customer {\"id\":\"cus_ada\"} with the token of [1]")
	lb.reset()
	_, err = c.Call(ctx, "delete_customer", map[string]any{"id": "cus_ada"}, client.WithConfirmationToken(token))
	if !errors.Is(err, client.ErrConfirmationRejected) {
		return fmt.Errorf("a spent token was not refused: %v", err)
	}
	fmt.Fprintf(out, "    => refused: %v\n", err)

	// 3. A executes the charge and its response is lost; the retry, with the same
	// Idempotency-Key, lands on B, which replays A's result from Redis.
	fmt.Fprintln(out, "\n[3] a charge executed by A, replayed by B: charge {\"customer_id\":\"cus_ada\",\"amount\":4200,\"currency\":\"usd\"}")
	lb.reset()
	lb.loseCharge.Store(true)
	resp, err = c.Call(ctx, "charge", map[string]any{"customer_id": "cus_ada", "amount": 4200, "currency": "usd"})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    => %d %s (replayed: %t)\n", resp.Status, resp.Body, resp.Replayed)

	fmt.Fprintln(out, "\nside effects, per instance:")
	for _, op := range []string{"delete_customer", "charge"} {
		a, b := instances[0].store.Effects(op), instances[1].store.Effects(op)
		fmt.Fprintf(out, "  %-15s A ×%d, B ×%d: %d in total\n", op, a, b, a+b)
		if a+b != 1 {
			return fmt.Errorf("%s executed %d times across the instances, want once", op, a+b)
		}
	}
	return nil
}

// balancer stands in for a load balancer: after reset, it sends the first request to A, the
// next to B, and so on in turn. When loseCharge is set, it loses the response of the next
// charge after the instance has executed it, as a connection dropped on the way back does.
type balancer struct {
	instances  []*instance
	n          atomic.Int64
	last       atomic.Pointer[instance]
	loseCharge atomic.Bool
}

func (b *balancer) reset() { b.n.Store(0) }

func (b *balancer) RoundTrip(r *http.Request) (*http.Response, error) {
	in := b.instances[int(b.n.Add(1)-1)%len(b.instances)]
	b.last.Store(in)
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = in.url.Scheme, in.url.Host, ""
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.URL.Path == "/v1/charges" && b.loseCharge.CompareAndSwap(true, false) {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("the response of instance %s was lost: %w", in.name, io.ErrUnexpectedEOF)
	}
	return resp, err
}
