package server_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// BenchIdempotent runs the idempotency benchmarks against api, whose create_order at
// /v1/orders is Idempotent and takes benchBody.
func BenchIdempotent(b *testing.B, api http.Handler) {
	// Keys new to the store in every run (-count repeats a sub-benchmark in one call).
	fresh := func() string { return strconv.FormatInt(time.Now().UnixNano(), 36) + "-" }
	serve := func(b *testing.B, key string, want int, replayed bool) {
		req := httptest.NewRequest("POST", "/v1/orders", bytes.NewReader(benchBody))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, req)
		if w.Code != want || (w.Header().Get("Idempotency-Replayed") == "true") != replayed {
			b.Fatalf("status %d, replayed %q: %s", w.Code, w.Header().Get("Idempotency-Replayed"), w.Body)
		}
	}
	b.Run("NoKey", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			serve(b, "", 200, false)
		}
	})
	b.Run("First", func(b *testing.B) {
		run := fresh()
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			n++
			serve(b, run+strconv.Itoa(n), 200, false)
		}
	})
	b.Run("Replay", func(b *testing.B) {
		run := fresh()
		serve(b, run+"replay", 200, false)
		b.ReportAllocs()
		for b.Loop() {
			serve(b, run+"replay", 200, true)
		}
	})
}
