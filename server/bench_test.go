package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/remedy-go/remedy/server"
)

// benchOrder is a realistic input: nested items, a pattern, an enum, bounds, a format.
type benchOrder struct {
	CustomerID string     `json:"customer_id" schema:"pattern=^cus_[a-z0-9]+$"`
	Email      string     `json:"email" schema:"format=email"`
	Currency   string     `json:"currency" schema:"enum=usd,eur,gbp"`
	Items      []benchRow `json:"items" schema:"minItems=1;maxItems=50"`
	Note       string     `json:"note,omitempty" schema:"maxLength=200"`
	Gift       bool       `json:"gift,omitempty"`
}

type benchRow struct {
	SKU      string  `json:"sku" schema:"minLength=1;maxLength=32"`
	Quantity int     `json:"quantity" schema:"minimum=1;maximum=100"`
	Price    float64 `json:"price" schema:"minimum=0"`
}

var benchBody = []byte(`{"customer_id":"cus_8f3k2","email":"ada@example.com","currency":"eur",
"items":[{"sku":"book-1","quantity":2,"price":12.5},{"sku":"pen-7","quantity":10,"price":1.2},{"sku":"bag-3","quantity":1,"price":49}],
"note":"leave at the door","gift":true}`)

// BenchmarkPipeline is a validated POST through the whole pipeline (route, authenticate, rate
// limit, read, validate, bind, handler, encode), beside a bare net/http handler that only
// decodes the same struct with encoding/json and encodes the same answer, in one run.
func BenchmarkPipeline(b *testing.B) {
	answer := map[string]string{"id": "ord_1", "status": "created"}
	api, err := server.New()
	if err != nil {
		b.Fatal(err)
	}
	if err := server.Post(api, "/v1/orders", func(ctx context.Context, in benchOrder) (map[string]string, error) {
		return answer, nil
	}, server.OperationID("create_order")); err != nil {
		b.Fatal(err)
	}
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in benchOrder
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, "bad", 400)
			return
		}
		body, _ := json.Marshal(answer)
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	serve := func(b *testing.B, h http.Handler) {
		req := httptest.NewRequest("POST", "/v1/orders", bytes.NewReader(benchBody))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	run := func(b *testing.B, h http.Handler) {
		b.ReportAllocs()
		for b.Loop() {
			serve(b, h)
		}
	}
	b.Run("Pipeline", func(b *testing.B) { run(b, api) })
	b.Run("Baseline", func(b *testing.B) { run(b, bare) })
	// Both in turns, so that they meet the same noise: the pipeline's time over the bare
	// handler's.
	b.Run("Paired", func(b *testing.B) {
		var pipe, base time.Duration
		for b.Loop() {
			t0 := time.Now()
			serve(b, bare)
			t1 := time.Now()
			serve(b, api)
			t2 := time.Now()
			base += t1.Sub(t0)
			pipe += t2.Sub(t1)
		}
		n := float64(b.N)
		b.ReportMetric(float64(pipe.Nanoseconds())/n, "pipeline-ns/op")
		b.ReportMetric(float64(base.Nanoseconds())/n, "bare-ns/op")
		b.ReportMetric(float64(pipe)/float64(base), "x-bare")
	})
}

// benchInvalid breaks three constraints of benchOrder: the pattern, the enum and a maximum.
var benchInvalid = []byte(`{"customer_id":"CUS-8F3K2","email":"ada@example.com","currency":"usd$",
"items":[{"sku":"book-1","quantity":250,"price":12.5}]}`)

// BenchmarkRefusal is an invalid POST through the whole pipeline: the refusal explained from
// the text (validator.explainText) and written by encodeMade, as the bench module's
// BenchmarkServer/invalid measures it against its peers.
func BenchmarkRefusal(b *testing.B) {
	api, err := server.New()
	if err != nil {
		b.Fatal(err)
	}
	if err := server.Post(api, "/v1/orders", func(ctx context.Context, in benchOrder) (map[string]string, error) {
		return nil, nil
	}, server.OperationID("create_order")); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", "/v1/orders", bytes.NewReader(benchInvalid))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		api.ServeHTTP(w, req)
		if w.Code != 422 {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkIdempotent is an idempotent POST through the pipeline with the memory store: a
// first execution (a new key each time: claim, run, store) and a replay (one key: claim finds
// the result), beside the same operation without a key.
func BenchmarkIdempotent(b *testing.B) {
	// Room for every key of the runs: a full store would refuse them (503).
	store := server.NewMemoryStore(server.MemoryOptions{MaxRecords: 1 << 30, ScopeRecords: 1 << 30})
	api, err := server.New(server.WithIdempotency(server.IdempotencyOptions{Store: store}))
	if err != nil {
		b.Fatal(err)
	}
	answer := map[string]string{"id": "ord_1", "status": "created"}
	if err := server.Post(api, "/v1/orders", func(ctx context.Context, in benchOrder) (map[string]string, error) {
		return answer, nil
	}, server.OperationID("create_order"), server.Idempotent()); err != nil {
		b.Fatal(err)
	}
	BenchIdempotent(b, api)
}
