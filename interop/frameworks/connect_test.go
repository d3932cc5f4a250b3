package frameworks

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/interop/frameworks/rpcpb"
	"github.com/remedy-go/remedy/interop/frameworks/rpcpb/rpcpbconnect"
)

// connectOrders answers as gatewayOrders does, with connect's errors: connect.NewError and
// AddDetail, as connect's documentation on errors shows.
type connectOrders struct{ limits customerLimit }

func (s *connectOrders) CreateOrder(_ context.Context, req *connect.Request[rpcpb.CreateOrderRequest]) (*connect.Response[rpcpb.Order], error) {
	if vs := orderViolations(req.Msg); len(vs) > 0 {
		br := &errdetails.BadRequest{}
		for _, v := range vs {
			br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: v.field, Description: v.description})
		}
		return nil, connectError(connect.CodeInvalidArgument, "the order is not valid", br)
	}
	if !s.limits.allow(req.Msg.GetCustomer()) {
		return nil, connectError(connect.CodeResourceExhausted, "too many orders for this customer",
			&errdetails.RetryInfo{RetryDelay: durationpb.New(retryDelay)},
			&errdetails.ErrorInfo{Reason: "ORDER_RATE_LIMITED", Domain: "orders.example.com"})
	}
	return connect.NewResponse(&rpcpb.Order{Id: "ord_1"}), nil
}

func connectError(c connect.Code, msg string, details ...proto.Message) error {
	err := connect.NewError(c, errors.New(msg))
	for _, d := range details {
		detail, derr := connect.NewErrorDetail(d)
		if derr != nil {
			panic(derr) // the details above always marshal
		}
		err.AddDetail(detail)
	}
	return err
}

// serveConnect mounts the generated handler on an http.ServeMux in its default setup, as
// connect's getting-started guide shows, and serves it on loopback.
func serveConnect(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(rpcpbconnect.NewOrdersHandler(&connectOrders{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestConnect(t *testing.T) {
	base := serveConnect(t)
	// The Connect protocol's unary call in JSON: POST /<service>/<method>, application/json.
	post := func(body string) request {
		return request{method: http.MethodPost, path: rpcpbconnect.OrdersCreateOrderProcedure, body: body}
	}
	const invalidArgument = "invalid_argument"
	recs := []recording{
		{
			// The allowed values are the application's words, not connect's: not read.
			name: "connect-enum", dialect: remedy.DialectConnect,
			req: post(`{"customer":"acme","currency":"YEN","quantity":1}`),
			want: want{status: 400, code: invalidArgument, issues: []issue{
				{path: "/currency"},
			}},
		},
		{
			name: "connect-maximum", dialect: remedy.DialectConnect,
			req: post(`{"customer":"acme","currency":"USD","quantity":101}`),
			want: want{status: 400, code: invalidArgument, issues: []issue{
				{path: "/quantity"},
			}},
		},
		{
			name: "connect-required", dialect: remedy.DialectConnect,
			req: post(`{"currency":"USD","quantity":1}`),
			want: want{status: 400, code: invalidArgument, issues: []issue{
				{path: "/customer"},
			}},
		},
		{
			// connect's message wraps protojson's decoding error, whose text protobuf-go
			// makes unstable on purpose (see protojsonCanonical): not read.
			name: "connect-type", dialect: remedy.DialectConnect,
			req:  post(`{"customer":"acme","currency":"USD","quantity":"two"}`),
			want: want{status: 400, code: invalidArgument},
		},
		{
			name: "connect-nested-required", dialect: remedy.DialectConnect,
			req: post(`{"customer":"acme","currency":"USD","quantity":2,"lines":[{"sku":"a-1","quantity":1},{"quantity":1}]}`),
			want: want{status: 400, code: invalidArgument, issues: []issue{
				{path: "/lines/1/sku"},
			}},
		},
		{
			// An unknown method is below the generated handler's path: it answers with
			// net/http's NotFound, plain text.
			name: "connect-unknown-method", dialect: remedy.DialectUnstructured,
			req:  request{method: http.MethodPost, path: "/remedy.interop.v1.Orders/DeleteOrder", body: `{}`},
			want: want{status: 404, code: "not_found"},
		},
		{
			name: "connect-ratelimit", dialect: remedy.DialectConnect,
			req:    post(`{"customer":"busy-co","currency":"USD","quantity":1}`),
			repeat: 1,
			want:   want{status: 429, code: "ORDER_RATE_LIMITED", retryable: true, retryAfter: retryDelay},
		},
	}
	for i := range recs {
		recs[i].canonical = protojsonCanonical
	}
	run(t, base, recs)
}

// TestConnectBinaryDetails checks the root module's small protobuf reader against
// protobuf-go's encoder: a connect error whose details carry only their binary value (what
// connect writes when it has no descriptor for a detail) is read as the debug form would be.
func TestConnectBinaryDetails(t *testing.T) {
	cases := []struct {
		name   string
		detail proto.Message
		check  func(t *testing.T, e *remedy.Envelope)
	}{
		{"violations", &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
			{Field: "lines[12].sku", Description: "is required", Reason: "REQUIRED"},
			{Field: "naïve.ünïcode", Description: "ré"},
		}}, func(t *testing.T, e *remedy.Envelope) {
			if len(e.Issues) != 2 || e.Issues[0].Path != "/lines/12/sku" || e.Issues[0].Code != "REQUIRED" ||
				e.Issues[0].Message != "is required" || e.Issues[1].Path != "/naïve/ünïcode" || e.Issues[1].Message != "ré" {
				t.Errorf("issues %+v", e.Issues)
			}
		}},
		{"fractional delay", &errdetails.RetryInfo{RetryDelay: durationpb.New(1500 * time.Millisecond)}, func(t *testing.T, e *remedy.Envelope) {
			if e.RetryAfter != 1500*time.Millisecond || !e.Retryable {
				t.Errorf("retry after %v, retryable %v", e.RetryAfter, e.Retryable)
			}
		}},
		{"long delay", &errdetails.RetryInfo{RetryDelay: durationpb.New(90 * 24 * time.Hour)}, func(t *testing.T, e *remedy.Envelope) {
			if e.RetryAfter != 90*24*time.Hour {
				t.Errorf("retry after %v", e.RetryAfter)
			}
		}},
		{"reason", &errdetails.ErrorInfo{Reason: "QUOTA_SPENT", Domain: "x.example.com", Metadata: map[string]string{"a": "b"}}, func(t *testing.T, e *remedy.Envelope) {
			if e.Code != "QUOTA_SPENT" {
				t.Errorf("code %q", e.Code)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			value, err := proto.Marshal(c.detail)
			if err != nil {
				t.Fatal(err)
			}
			body, err := json.Marshal(map[string]any{
				"code": "resource_exhausted", "message": "x",
				"details": []map[string]string{{
					"type":  string(c.detail.ProtoReflect().Descriptor().FullName()),
					"value": base64.RawStdEncoding.EncodeToString(value),
				}},
			})
			if err != nil {
				t.Fatal(err)
			}
			e, ok := remedy.Parse(429, http.Header{"Content-Type": {"application/json"}}, body)
			if !ok || e.Dialect != remedy.DialectConnect {
				t.Fatalf("not read as connect: %s", body)
			}
			c.check(t, e)
		})
	}
}
