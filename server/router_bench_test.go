package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

var benchSink *Operation

func benchMatch(a *API, r *http.Request) {
	var buf [4]string
	benchSink, _ = a.routes.match(r, buf[:0])
}

// BenchmarkRouteMatch is the router alone on the requests of a small API: a literal route, a
// route with a parameter, and a miss.
func BenchmarkRouteMatch(b *testing.B) {
	a, err := New()
	if err != nil {
		b.Fatal(err)
	}
	type idIn struct {
		ID string `path:"id" json:"-"`
	}
	h := func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }
	hid := func(context.Context, idIn) (struct{}, error) { return struct{}{}, nil }
	for _, err := range []error{
		Post(a, "/v1/orders", h), Get(a, "/v1/orders", h), Get(a, "/v1/orders/{id}", hid),
		Post(a, "/v1/orders/{id}/pay", hid), Post(a, "/v1/orders/{id}/ship", hid),
		Get(a, "/v1/customers/{id}", hid), Delete(a, "/v1/customers/{id}", hid),
	} {
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct{ name, method, path string }{
		{"Literal", "POST", "/v1/orders"},
		{"Param", "POST", "/v1/orders/ord_8f3k2/pay"},
		{"Miss", "GET", "/v1/invoices/in_1"},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest(c.method, c.path, nil)
			b.ReportAllocs()
			for b.Loop() {
				benchMatch(a, r)
			}
		})
	}
}
