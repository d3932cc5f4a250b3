package frameworks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/twitchtv/twirp"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/interop/frameworks/rpcpb"
)

// twirpOrders answers as gatewayOrders does, with twirp's errors: twirp.RequiredArgumentError
// for a missing field, twirp.InvalidArgumentError for another violation (twirp's error
// carries one argument), and a ResourceExhausted error for a spent budget, as twirp's
// documentation on errors shows. Twirp has no detail for a wait.
type twirpOrders struct{ limits customerLimit }

func (s *twirpOrders) CreateOrder(_ context.Context, req *rpcpb.CreateOrderRequest) (*rpcpb.Order, error) {
	if vs := orderViolations(req); len(vs) > 0 {
		v := vs[0]
		if v.required {
			return nil, twirp.RequiredArgumentError(v.field)
		}
		return nil, twirp.InvalidArgumentError(v.field, v.description)
	}
	if !s.limits.allow(req.GetCustomer()) {
		return nil, twirp.NewError(twirp.ResourceExhausted, "too many orders for this customer")
	}
	return &rpcpb.Order{Id: "ord_1"}, nil
}

// serveTwirp serves the generated twirp server in its default setup (NewOrdersServer with no
// options, mounted at its PathPrefix), as twirp's README shows.
func serveTwirp(t *testing.T) string {
	t.Helper()
	ts := rpcpb.NewOrdersServer(&twirpOrders{})
	mux := http.NewServeMux()
	mux.Handle(ts.PathPrefix(), ts)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestTwirp(t *testing.T) {
	base := serveTwirp(t)
	post := func(body string) request {
		return request{method: http.MethodPost, path: rpcpb.OrdersPathPrefix + "CreateOrder", body: body}
	}
	const invalidArgument = "invalid_argument"
	recs := []recording{
		{
			// meta.argument names the field; the rest of the message is the application's.
			name: "twirp-enum", dialect: remedy.DialectTwirp,
			req: post(`{"customer":"acme","currency":"YEN","quantity":1}`),
			want: want{status: 400, code: invalidArgument, issues: []issue{
				{path: "/currency"},
			}},
		},
		{
			name: "twirp-maximum", dialect: remedy.DialectTwirp,
			req: post(`{"customer":"acme","currency":"USD","quantity":101}`),
			want: want{status: 400, code: invalidArgument, issues: []issue{
				{path: "/quantity"},
			}},
		},
		{
			// twirp.RequiredArgumentError's template: "<argument> is required".
			name: "twirp-required", dialect: remedy.DialectTwirp,
			req: post(`{"currency":"USD","quantity":1}`),
			want: want{status: 400, code: invalidArgument, issues: []issue{
				{path: "/customer", code: "required"},
			}},
		},
		{
			// The generated server's "malformed" answer: its message and its cause are
			// protojson's text, unstable on purpose (see protojsonCanonical): not read.
			name: "twirp-type", dialect: remedy.DialectTwirp,
			req:  post(`{"customer":"acme","currency":"USD","quantity":"two"}`),
			want: want{status: 400, code: "malformed"},
		},
		{
			name: "twirp-nested-required", dialect: remedy.DialectTwirp,
			req: post(`{"customer":"acme","currency":"USD","quantity":2,"lines":[{"sku":"a-1","quantity":1},{"quantity":1}]}`),
			want: want{status: 400, code: invalidArgument, issues: []issue{
				{path: "/lines/1/sku", code: "required"},
			}},
		},
		{
			name: "twirp-unknown-method", dialect: remedy.DialectTwirp,
			req:  request{method: http.MethodPost, path: rpcpb.OrdersPathPrefix + "DeleteOrder", body: `{}`},
			want: want{status: 404, code: "bad_route"},
		},
		{
			// Twirp carries no wait: a 429 is retryable by its status, after a backoff.
			name: "twirp-ratelimit", dialect: remedy.DialectTwirp,
			req:    post(`{"customer":"busy-co","currency":"USD","quantity":1}`),
			repeat: 1,
			want:   want{status: 429, code: "resource_exhausted", retryable: true},
		},
	}
	for i := range recs {
		recs[i].canonical = protojsonCanonical
	}
	run(t, base, recs)
}
