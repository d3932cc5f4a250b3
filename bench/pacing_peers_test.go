package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/remedy-go/remedy/client"
)

// remedyPacingContenders are remedy's default client, as NewClient makes it but for the
// shared http.Client and the base URL: with its pacer (the default) and without
// (WithPacer(nil), today's behaviour before issue 38).
func remedyPacingContenders() []pacingContender {
	contender := func(name string, paced bool, opts ...client.Option) pacingContender {
		return pacingContender{name: name, setup: func(tb testing.TB, hc *http.Client, base string, start time.Time) func(context.Context, int) error {
			opts := append([]client.Option{client.WithHTTPClient(hc), client.WithBaseURL(base),
				client.WithOperations(client.Operation{Name: "create_order", Path: "/v1/orders"})}, opts...)
			if paced {
				// The client's own MemoryPacer, as NewClient makes it, noting when it finds the origin clear.
				opts = append(opts, client.WithPacer(tracePacer{Pacer: client.NewPacer(), start: start, watch: hc.Transport.(*watchTransport)}))
			}
			rc, err := client.New(opts...)
			if err != nil {
				tb.Fatal(err)
			}
			return func(ctx context.Context, _ int) error {
				_, err := rc.Call(ctx, "create_order", orderArgs)
				return err
			}
		}}
	}
	return []pacingContender{contender("remedy", true), contender("remedy-nopacer", false, client.WithPacer(nil))}
}

// peerPacingContenders are go-retryablehttp's default client (which waits a 429's
// Retry-After, per request) and failsafe-go's HTTP retry policy with its defaults (two
// retries, its DelayFunc waiting a 429's Retry-After), closing each retried answer as
// failsafe-go leaves that to the user. Neither shares what one request learnt with the others.
func peerPacingContenders() []pacingContender {
	return []pacingContender{
		{name: "retryablehttp", setup: func(_ testing.TB, hc *http.Client, base string, _ time.Time) func(context.Context, int) error {
			c := retryablehttp.NewClient()
			c.HTTPClient = hc
			c.Logger = nil
			return func(ctx context.Context, n int) error {
				req, err := retryablehttp.NewRequestWithContext(ctx, "POST", base+"/v1/orders", orderArgs)
				if err != nil {
					return err
				}
				setOrderHeaders(req.Header, n)
				return readOrder(c.Do(req))
			}
		}},
		{name: "failsafe", setup: func(_ testing.TB, hc *http.Client, base string, _ time.Time) func(context.Context, int) error {
			policy := failsafehttp.NewRetryPolicyBuilder().
				OnRetryScheduled(func(e failsafe.ExecutionScheduledEvent[*http.Response]) {
					if resp := e.LastResult(); resp != nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				}).
				Build()
			c := &http.Client{Transport: failsafehttp.NewRoundTripper(hc.Transport, policy)}
			return func(ctx context.Context, n int) error {
				req, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/orders", bytes.NewReader(orderArgs))
				if err != nil {
					return err
				}
				setOrderHeaders(req.Header, n)
				return readOrder(c.Do(req))
			}
		}},
	}
}

// setOrderHeaders puts on a peer's request what remedy sends: the same content types and an
// Idempotency-Key of the call's own.
func setOrderHeaders(h http.Header, n int) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, application/problem+json")
	h.Set("Idempotency-Key", fmt.Sprintf("bench-pacing-%06d", n))
}

// readOrder reads and closes the answer; a call completes on a 200.
func readOrder(resp *http.Response, err error) error {
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %d", errStatus, resp.StatusCode)
	}
	return nil
}
