package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzRouteMatch: any path either matches no operation, or one whose route has as many
// segments as the path and whose literals the path's segments spell (unescaped), with one
// value per parameter; no path panics, and the router agrees with the mux on every path the mux matches as it is.
func FuzzRouteMatch(f *testing.F) {
	a, err := New()
	if err != nil {
		f.Fatal(err)
	}
	type idIn struct {
		ID string `path:"id" json:"-"`
	}
	h := func(context.Context, idIn) (struct{}, error) { return struct{}{}, nil }
	for _, err := range []error{
		Get(a, "/v1/orders/{id}", h), Post(a, "/v1/orders/{id}/pay", h),
		Get(a, "/v1/orders/special", func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }),
		Get(a, "/", func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }),
		Post(a, "/v1/orders", func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }),
		Delete(a, "/v1/orders", func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }),
	} {
		if err != nil {
			f.Fatal(err)
		}
	}
	for _, s := range []string{"/v1/orders/a", "/v1/orders/../pay", "//", "/v1/orders/a%2Fb/pay", "/v1/orders/%2F/pay", "/v1/%6Frders/x",
		"/v1/orders/./pay", "*", "", "/v1/orders/" + strings.Repeat("x", 2000) + "/pay", "/v1/orders/special", "/v1/orders", "/v1/%6Frders"} {
		f.Add("GET", s)
		f.Add("POST", s)
	}
	f.Fuzz(func(t *testing.T, method, raw string) {
		u, err := url.Parse(raw)
		if err != nil || (method != "GET" && method != "POST" && method != "HEAD" && method != "DELETE") {
			return
		}
		r := &http.Request{Method: method, URL: u, Host: "example.com"}
		op, vals := a.routes.match(r, nil)
		a.routes.allowed(r)
		// Whatever the mux matches as it is, the router matches too, on its fast path or not.
		if h, _ := a.routes.mux.Handler(r); h != nil {
			if e, ok := h.(*endpoint); ok && fits(e.op.route, u.EscapedPath()) && e.op != op {
				t.Fatalf("%s %q: the mux says %s, the router %v", method, u.EscapedPath(), e.op.ID, op)
			}
		}
		if op == nil {
			return
		}
		segs := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
		if len(op.route) == 0 {
			if u.EscapedPath() != "/" {
				t.Fatalf("%q matched the root", u.EscapedPath())
			}
			return
		}
		if len(segs) != len(op.route) {
			t.Fatalf("%q matched %s", u.EscapedPath(), op.Path)
		}
		n := 0
		for i, s := range op.route {
			if s.param != "" {
				if vals[n] != segs[i] {
					t.Fatalf("%q: value %q, segment %q", u.EscapedPath(), vals[n], segs[i])
				}
				n++
				continue
			}
			if got, _ := url.PathUnescape(segs[i]); got != s.lit {
				t.Fatalf("%q matched %s: %q is not %q", u.EscapedPath(), op.Path, segs[i], s.lit)
			}
		}
		if n != len(vals) {
			t.Fatalf("%d values for %d parameters", len(vals), n)
		}
	})
}
