package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/cenkalti/backoff/v4"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/remedy-go/remedy/client"
)

// orderArgs is the JSON body every client contender POSTs.
var orderArgs = []byte(`{"customer_id":"cus_123","currency":"usd","items":[{"sku":"a","quantity":2}]}`)

// orderResult is the success every test server answers.
var orderResult = []byte(`{"id":"ord_1","status":"created","total":{"amount":1250,"currency":"usd"}}`)

// unavailable is the 503 the flaky server answers: a problem document that says nothing about
// retrying and no Retry-After, so that every contender decides by the status alone and waits
// only its own backoff, which each is configured to make zero.
var unavailable = []byte(`{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"The order service is restarting."}`)

// fixedKey is the Idempotency-Key the peers send, so that they put the same bytes on the wire
// as remedy, which mints a fresh key per call (a cost counted against remedy only).
const fixedKey = "JQKVWPSA2FOBYKG6XNISW5XD37"

// orderServer answers every POST with orderResult. With flaky set it answers 503 to every
// odd request and 200 to every even one: calls run one after another, so each call of a
// contender that retries sees exactly one 503 and then the success.
type orderServer struct {
	flaky    bool
	requests atomic.Int64
}

func (s *orderServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	if s.flaky && s.requests.Add(1)%2 == 1 {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write(unavailable)
		return
	}
	w.Write(orderResult)
}

// contender is one way to make the call: it returns an error unless the call ended in the
// 200 and its body was read.
type contender struct {
	name string
	call func(ctx context.Context) error
}

// clientContenders are the clients compared, all on one http.Transport to srv (so on the same
// pooled connections), each configured to retry transient failures without waiting:
//
//   - remedy: Client.Call of a registered operation; zero backoff, and a retry budget that
//     refunds a whole token per success so that calls which each retry once never drain it
//     (the default refunds 0.1 and would, by design, stop retrying after ~110 such calls).
//   - net-http: http.Client.Do, no retries.
//   - retryablehttp: retryablehttp.Client with its default policy, RetryWaitMin and
//     RetryWaitMax 0, no logger.
//   - failsafe: http.Client over failsafehttp.NewRoundTripper with failsafehttp's retry policy,
//     delay 0. failsafe-go hands a retried response to no one and does not close it, so the
//     policy closes it (OnRetryScheduled) as a careful user must: otherwise every retried call
//     leaves its connection busy and the next call dials a new one.
func clientContenders(tb testing.TB, srv *httptest.Server) []contender {
	tb.Helper()
	hc := srv.Client()
	url := srv.URL + "/v1/orders"
	setHeaders := func(h http.Header) {
		h["Content-Type"] = []string{"application/json"}
		h["Accept"] = []string{"application/json, application/problem+json"} // as Call sends
		h["Idempotency-Key"] = []string{fixedKey}
	}
	read := func(resp *http.Response, err error) error {
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d: %s", resp.StatusCode, body)
		}
		return nil
	}

	rc, err := client.New(client.WithHTTPClient(hc), client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "create_order", Path: "/v1/orders"}),
		client.WithBackoff(func() backoff.BackOff { return &backoff.ZeroBackOff{} }),
		client.WithRetryBudget(client.NewRetryBudget(100, 1)))
	if err != nil {
		tb.Fatal(err)
	}

	retryable := retryablehttp.NewClient()
	retryable.HTTPClient = hc
	retryable.Logger = nil
	retryable.RetryWaitMin, retryable.RetryWaitMax = 0, 0

	policy := failsafehttp.NewRetryPolicyBuilder().
		WithDelay(0).
		OnRetryScheduled(func(e failsafe.ExecutionScheduledEvent[*http.Response]) {
			if resp := e.LastResult(); resp != nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}).
		Build()
	failsafeClient := &http.Client{Transport: failsafehttp.NewRoundTripper(hc.Transport, policy)}

	return []contender{
		{"remedy", func(ctx context.Context) error {
			_, err := rc.Call(ctx, "create_order", orderArgs)
			return err
		}},
		{"net-http", func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(orderArgs))
			if err != nil {
				return err
			}
			setHeaders(req.Header)
			return read(hc.Do(req))
		}},
		{"retryablehttp", func(ctx context.Context) error {
			req, err := retryablehttp.NewRequestWithContext(ctx, "POST", url, orderArgs)
			if err != nil {
				return err
			}
			setHeaders(req.Header)
			return read(retryable.Do(req))
		}},
		{"failsafe", func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(orderArgs))
			if err != nil {
				return err
			}
			setHeaders(req.Header)
			return read(failsafeClient.Do(req))
		}},
	}
}

// runContender runs c.call in the benchmark loop.
func runContender(b *testing.B, c contender) {
	ctx := context.Background()
	b.ReportAllocs()
	report := measureCPU(b)
	for b.Loop() {
		if err := c.call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	report()
}

// BenchmarkClient is one successful call, a POST with a JSON body answered 200 by a loopback
// server, through each client: what a client costs when nothing goes wrong. Every contender
// sends the same bytes on the wire.
func BenchmarkClient(b *testing.B) {
	srv := httptest.NewServer(&orderServer{})
	b.Cleanup(srv.Close)
	for _, c := range clientContenders(b, srv) {
		b.Run("success/"+c.name, func(b *testing.B) { runContender(b, c) })
	}
}

// BenchmarkRetry is a call whose first attempt is answered 503 (no Retry-After) and whose
// retry succeeds, with every wait forced to zero: what retrying costs beyond the two round
// trips. Plain net/http does not retry, so it is not a contender here.
func BenchmarkRetry(b *testing.B) {
	s := &orderServer{flaky: true}
	srv := httptest.NewServer(s)
	b.Cleanup(srv.Close)
	for _, c := range clientContenders(b, srv) {
		if c.name == "net-http" {
			continue
		}
		b.Run("503-then-200/"+c.name, func(b *testing.B) {
			s.requests.Store(0)
			runContender(b, c)
		})
	}
}
