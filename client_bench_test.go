package remedy_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/remedy-go/remedy"
)

// BenchmarkClientSuccess is the loop's cost on the happy path: one successful call to a
// loopback server through the client, beside the same request through a plain net/http
// client in the same run. Compare ns/op and allocs/op of each pair.
func BenchmarkClientSuccess(b *testing.B) {
	result := []byte(`{"id":"ord_1","status":"created","total":{"amount":1250,"currency":"usd"}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(result)
	}))
	defer srv.Close()
	hc := srv.Client()
	args := []byte(`{"customer_id":"cus_123","currency":"usd","items":[{"sku":"a","quantity":2}]}`)
	c, err := remedy.NewClient(remedy.WithHTTPClient(hc), remedy.WithBaseURL(srv.URL),
		remedy.WithOperations(remedy.Operation{Name: "create_order", Path: "/v1/orders"},
			remedy.Operation{Name: "get_order", Method: "GET", Path: "/v1/orders/{id}"}))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()

	b.Run("Call/POST", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Call(ctx, "create_order", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Baseline/POST", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/orders", bytes.NewReader(args))
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
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
			resp, err := c.Do(ctx, req)
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
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	})
}
