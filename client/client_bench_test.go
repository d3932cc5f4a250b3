package client_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/rewrite"
)

// BenchmarkClientSuccess is the loop's cost on the happy path: one successful call to a
// loopback server through the client, beside the same request (the same bytes on the wire)
// through a plain net/http client in the same run. Compare ns/op and allocs/op of each pair.
// Call/POST and Call/GET run under a context without a deadline; Call/POST/deadline under a
// caller's own deadline, beside the same baseline. Do/GET compares with Baseline/GET less its Accept header, which Do does not add.
func BenchmarkClientSuccess(b *testing.B) {
	srv, hc, c, args := benchOrders(b)
	ctx := context.Background()

	b.Run("Call/POST", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Call(ctx, "create_order", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	// postBaseline sends the same request on the wire as Call does: its headers, a fixed key.
	postBaseline := func(b *testing.B, ctx context.Context) {
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/orders", bytes.NewReader(args))
			req.Header["Content-Type"] = []string{"application/json"}
			req.Header["Accept"] = []string{"application/json, application/problem+json"}
			req.Header["Idempotency-Key"] = []string{"JQKVWPSA2FOBYKG6XNISW5XD37"}
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	}
	b.Run("Baseline/POST", func(b *testing.B) { postBaseline(b, ctx) })
	b.Run("Call/POST/deadline", func(b *testing.B) {
		// A context with its own deadline, as most callers pass: the loop derives none.
		dctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Call(dctx, "create_order", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Baseline/POST/deadline", func(b *testing.B) {
		dctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		postBaseline(b, dctx)
	})
	b.Run("Call/GET", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Call(ctx, "get_order", []byte(`{"id":"ord_1"}`)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Do/GET", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/orders/ord_1", nil)
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	})
	b.Run("Baseline/GET", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/orders/ord_1", nil)
			req.Header["Accept"] = []string{"application/json, application/problem+json"} // as Call sends
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	})
}

// BenchmarkLoopOverhead is the loop alone: one call that succeeds at once over a transport
// that does nothing, so that what is measured is the loop's own cost per call (the decision,
// the records, the idempotency key).
func BenchmarkLoopOverhead(b *testing.B) {
	ok := &client.Response{Status: 200, Body: []byte(`{"id":"ord_1"}`)}
	loop := client.Loop{Transport: client.TransportFunc(func(context.Context, *client.Request) (*client.Response, error) {
		r := *ok
		return &r, nil
	})}
	call := client.Call{Operation: "create_order", Args: []byte(`{"currency":"usd"}`)}
	ctx := context.Background()
	b.Run("POST", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			loop.Do(ctx, call)
		}
	})
	idem := call
	idem.Idempotent = true
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	b.Run("GET/deadline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			loop.Do(dctx, idem)
		}
	})
}

// BenchmarkClientPaired sends each call through the client and the same request through a
// plain net/http client in turns, so that both meet the same noise of a shared machine, and
// reports each side's mean and the client's overhead in percent.
func BenchmarkClientPaired(b *testing.B) {
	srv, hc, c, args := benchOrders(b)
	ctx := context.Background()
	plain := func(method, path string, body []byte, key string) {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, _ := http.NewRequestWithContext(ctx, method, srv.URL+path, rd)
		if body != nil {
			req.Header["Content-Type"] = []string{"application/json"}
		}
		req.Header["Accept"] = []string{"application/json, application/problem+json"}
		if key != "" {
			req.Header["Idempotency-Key"] = []string{key}
		}
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	paired := func(b *testing.B, viaClient, viaPlain func()) {
		var cl, base time.Duration
		for b.Loop() {
			t0 := time.Now()
			viaPlain()
			t1 := time.Now()
			viaClient()
			t2 := time.Now()
			base += t1.Sub(t0)
			cl += t2.Sub(t1)
		}
		n := float64(b.N)
		b.ReportMetric(float64(cl.Nanoseconds())/n, "client-ns/op")
		b.ReportMetric(float64(base.Nanoseconds())/n, "plain-ns/op")
		b.ReportMetric(100*(float64(cl)/float64(base)-1), "overhead-%")
	}
	b.Run("Call/POST", func(b *testing.B) {
		paired(b, func() {
			if _, err := c.Call(ctx, "create_order", args); err != nil {
				b.Fatal(err)
			}
		}, func() { plain("POST", "/v1/orders", args, "JQKVWPSA2FOBYKG6XNISW5XD37") })
	})
	b.Run("Call/GET", func(b *testing.B) {
		paired(b, func() {
			if _, err := c.Call(ctx, "get_order", []byte(`{"id":"ord_1"}`)); err != nil {
				b.Fatal(err)
			}
		}, func() { plain("GET", "/v1/orders/ord_1", nil, "") })
	})
}

// BenchmarkRetryPaired is BenchmarkRetry of the bench module taken in turns: a POST answered
// 503 (no Retry-After) and then 200, through the client and through go-retryablehttp (the
// same bytes on the wire, every wait zero), each call alternating with the other's and in
// alternating order, so that both meet the same noise of a shared machine. It reports each
// side's mean, and the ratio of their medians and of their tenth percentiles, which move
// least from run to run.
func BenchmarkRetryPaired(b *testing.B) {
	newServer := func() *httptest.Server {
		var n atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			if n.Add(1)%2 == 1 {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusServiceUnavailable)
				io.WriteString(w, `{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"The order service is restarting."}`)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"ord_1","status":"created","total":{"amount":1250,"currency":"usd"}}`)
		}))
		b.Cleanup(srv.Close)
		return srv
	}
	ours, theirs := newServer(), newServer()
	c, err := client.New(client.WithHTTPClient(ours.Client()), client.WithBaseURL(ours.URL),
		client.WithOperations(client.Operation{Name: "create_order", Path: "/v1/orders"}),
		client.WithBackoff(func() backoff.BackOff { return &backoff.ZeroBackOff{} }),
		client.WithRetryBudget(client.NewRetryBudget(100, 1)))
	if err != nil {
		b.Fatal(err)
	}
	rh := retryablehttp.NewClient()
	rh.HTTPClient, rh.Logger = theirs.Client(), nil
	rh.RetryWaitMin, rh.RetryWaitMax = 0, 0
	args := []byte(`{"customer_id":"cus_123","currency":"usd","items":[{"sku":"a","quantity":2}]}`)
	ctx := context.Background()
	inTurns(b, func() {
		if _, err := c.Call(ctx, "create_order", args); err != nil {
			b.Fatal(err)
		}
	}, func() {
		req, _ := retryablehttp.NewRequestWithContext(ctx, "POST", theirs.URL+"/v1/orders", args)
		req.Header["Content-Type"] = []string{"application/json"}
		req.Header["Accept"] = []string{"application/json, application/problem+json"}
		req.Header["Idempotency-Key"] = []string{"JQKVWPSA2FOBYKG6XNISW5XD37"}
		resp, err := rh.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	})
}

// inTurns runs ours and theirs one after the other, in alternating order, and reports each
// side's mean and the ratios of their medians and tenth percentiles.
func inTurns(b *testing.B, ours, theirs func()) {
	var o, t []float64
	for i := 0; b.Loop(); i++ {
		var do, dt time.Duration
		if i%2 == 0 {
			t0 := time.Now()
			ours()
			t1 := time.Now()
			theirs()
			do, dt = t1.Sub(t0), time.Since(t1)
		} else {
			t0 := time.Now()
			theirs()
			t1 := time.Now()
			ours()
			dt, do = t1.Sub(t0), time.Since(t1)
		}
		o, t = append(o, float64(do)), append(t, float64(dt))
	}
	mean := func(xs []float64) float64 {
		var sum float64
		for _, x := range xs {
			sum += x
		}
		return sum / float64(len(xs))
	}
	b.ReportMetric(mean(o), "client-ns/op")
	b.ReportMetric(mean(t), "peer-ns/op")
	slices.Sort(o)
	slices.Sort(t)
	b.ReportMetric(o[len(o)/2]/t[len(t)/2], "median-ratio")
	b.ReportMetric(o[len(o)/10]/t[len(t)/10], "p10-ratio")
}

// benchOrders is the loopback order server the client benchmarks call, a plain client for it,
// a remedy client with its two operations, and the arguments of a creation.
func benchOrders(b *testing.B) (*httptest.Server, *http.Client, *client.Client, []byte) {
	result := []byte(`{"id":"ord_1","status":"created","total":{"amount":1250,"currency":"usd"}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(result)
	}))
	b.Cleanup(srv.Close)
	hc := srv.Client()
	c, err := client.New(client.WithHTTPClient(hc), client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "create_order", Path: "/v1/orders"},
			client.Operation{Name: "get_order", Method: "GET", Path: "/v1/orders/{id}"}))
	if err != nil {
		b.Fatal(err)
	}
	return srv, hc, c, []byte(`{"customer_id":"cus_123","currency":"usd","items":[{"sku":"a","quantity":2}]}`)
}

// ordersSchema is benchOrders' arguments schema, as an OpenAPI document would give it.
const ordersSchema = `{"type":"object","required":["customer_id","currency","items"],"additionalProperties":false,
	"properties":{"customer_id":{"type":"string","pattern":"^cus_[a-z0-9]+$"},
	"currency":{"type":"string","enum":["usd","eur","gbp"]},
	"items":{"type":"array","minItems":1,"items":{"type":"object","required":["sku","quantity"],
		"properties":{"sku":{"type":"string","maxLength":32},"quantity":{"type":"integer","minimum":1,"maximum":100}}}}}}`

// BenchmarkSchemaCheck is the cost of checking valid arguments against the call's schema
// before sending: the loop alone (a transport that does nothing), and a call through the client
// to a loopback server, each with the schema and without, in turns (Paired) so that both meet
// the same noise; check-% is what the check adds.
func BenchmarkSchemaCheck(b *testing.B) {
	args := []byte(`{"customer_id":"cus_123","currency":"usd","items":[{"sku":"a","quantity":2}]}`)
	ok := &client.Response{Status: 200, Body: []byte(`{"id":"ord_1"}`)}
	loop := client.Loop{Rewriter: rewrite.Default, Transport: client.TransportFunc(func(context.Context, *client.Request) (*client.Response, error) {
		r := *ok
		return &r, nil
	})}
	plain := client.Call{Operation: "create_order", Args: args}
	checked := plain
	checked.Schema = []byte(ordersSchema)
	ctx := context.Background()
	if _, err := loop.Do(ctx, checked); err != nil {
		b.Fatal(err)
	}
	b.Run("Loop/schema", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			loop.Do(ctx, checked)
		}
	})
	b.Run("Loop/none", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			loop.Do(ctx, plain)
		}
	})

	srv, hc, _, _ := benchOrders(b)
	c, err := client.New(client.WithHTTPClient(hc), client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "plain", Path: "/v1/orders"},
			client.Operation{Name: "checked", Path: "/v1/orders", Parameters: []byte(ordersSchema)}))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Call/Paired", func(b *testing.B) {
		var with, without time.Duration
		for b.Loop() {
			t0 := time.Now()
			if _, err := c.Call(ctx, "plain", args); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if _, err := c.Call(ctx, "checked", args); err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			without += t1.Sub(t0)
			with += t2.Sub(t1)
		}
		n := float64(b.N)
		b.ReportMetric(float64(with.Nanoseconds())/n, "schema-ns/op")
		b.ReportMetric(float64(without.Nanoseconds())/n, "none-ns/op")
		b.ReportMetric(100*(float64(with)/float64(without)-1), "check-%")
	})
}
