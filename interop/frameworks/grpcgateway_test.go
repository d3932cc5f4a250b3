package frameworks

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/interop/frameworks/rpcpb"
)

// gatewayOrders is the gRPC service behind the gateway: it answers a violation with
// InvalidArgument carrying a google.rpc.BadRequest, a spent budget with ResourceExhausted
// carrying RetryInfo and ErrorInfo, and an order for a closed account with
// FailedPrecondition carrying a PreconditionFailure, as google.rpc's error model documents.
type gatewayOrders struct {
	rpcpb.UnimplementedOrdersServer
	limits customerLimit
}

func (s *gatewayOrders) CreateOrder(_ context.Context, req *rpcpb.CreateOrderRequest) (*rpcpb.Order, error) {
	if vs := orderViolations(req); len(vs) > 0 {
		br := &errdetails.BadRequest{}
		for _, v := range vs {
			br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: v.field, Description: v.description})
		}
		return nil, withDetails(codes.InvalidArgument, "the order is not valid", br)
	}
	if req.GetCustomer() == "closed-account" {
		return nil, withDetails(codes.FailedPrecondition, "the customer's account is closed",
			&errdetails.PreconditionFailure{Violations: []*errdetails.PreconditionFailure_Violation{
				{Type: "ACCOUNT", Subject: "customers/closed-account", Description: "reopen the account before ordering"},
			}})
	}
	if !s.limits.allow(req.GetCustomer()) {
		return nil, withDetails(codes.ResourceExhausted, "too many orders for this customer",
			&errdetails.RetryInfo{RetryDelay: durationpb.New(retryDelay)},
			&errdetails.ErrorInfo{Reason: "ORDER_RATE_LIMITED", Domain: "orders.example.com", Metadata: map[string]string{"customer": req.GetCustomer()}})
	}
	return &rpcpb.Order{Id: "ord_1"}, nil
}

// withDetails is a status error carrying details.
func withDetails(c codes.Code, msg string, details ...protoadapt.MessageV1) error {
	st, err := status.New(c, msg).WithDetails(details...)
	if err != nil {
		panic(err) // the details above always marshal
	}
	return st.Err()
}

// serveGateway runs the service on a gRPC server on loopback and, in front of it, a
// grpc-gateway ServeMux in its default setup (runtime.NewServeMux() with no options, the
// generated RegisterOrdersHandlerFromEndpoint), as grpc-gateway's README shows.
func serveGateway(t *testing.T) string {
	t.Helper()
	return serveGatewayWith(t, &gatewayOrders{})
}

// serveGatewayWith is serveGateway for another implementation of the service.
func serveGatewayWith(t *testing.T, orders rpcpb.OrdersServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	rpcpb.RegisterOrdersServer(gs, orders)
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)

	mux := runtime.NewServeMux()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if err := rpcpb.RegisterOrdersHandlerFromEndpoint(t.Context(), mux, lis.Addr().String(), opts); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestGRPCGateway(t *testing.T) {
	base := serveGateway(t)
	post := func(body string) request { return request{method: http.MethodPost, path: "/v1/orders", body: body} }
	// google.rpc.Code names, from the numbers the gateway writes (code.proto).
	const (
		invalidArgument = "INVALID_ARGUMENT"
		notFound        = "NOT_FOUND"
	)
	recs := []recording{
		{
			// The allowed values are the application's words in the violation's description,
			// not a template of the framework's: not read.
			name: "grpcgateway-enum", dialect: remedy.DialectGoogle,
			req: post(`{"customer":"acme","currency":"YEN","quantity":1}`),
			want: want{status: 400, code: invalidArgument, issues: []issue{
				{path: "/currency"},
			}},
		},
		{
			name: "grpcgateway-maximum", dialect: remedy.DialectGoogle,
			req: post(`{"customer":"acme","currency":"USD","quantity":101}`),
			want: want{status: 400, code: invalidArgument, issues: []issue{
				{path: "/quantity"},
			}},
		},
		{
			name: "grpcgateway-required", dialect: remedy.DialectGoogle,
			req: post(`{"currency":"USD","quantity":1}`),
			want: want{status: 400, code: invalidArgument, issues: []issue{
				{path: "/customer"},
			}},
		},
		{
			// protojson's decoding error names the field and the type, but protobuf-go makes
			// its error texts unstable on purpose (see protojsonCanonical): not read.
			name: "grpcgateway-type", dialect: remedy.DialectGoogle,
			req:  post(`{"customer":"acme","currency":"USD","quantity":"two"}`),
			want: want{status: 400, code: invalidArgument},
		},
		{
			name: "grpcgateway-nested-required", dialect: remedy.DialectGoogle,
			req: post(`{"customer":"acme","currency":"USD","quantity":2,"lines":[{"sku":"a-1","quantity":1},{"quantity":1}]}`),
			want: want{status: 400, code: invalidArgument, issues: []issue{
				{path: "/lines/1/sku"},
			}},
		},
		{
			name: "grpcgateway-precondition", dialect: remedy.DialectGoogle,
			req: post(`{"customer":"closed-account","currency":"USD","quantity":1}`),
			// FAILED_PRECONDITION is a 400 in the gateway's mapping (deliberately not 412).
			want: want{status: 400, code: "FAILED_PRECONDITION"},
		},
		{
			name: "grpcgateway-unknown-route", dialect: remedy.DialectGoogle,
			req:  request{method: http.MethodGet, path: "/v1/nothing"},
			want: want{status: 404, code: notFound},
		},
		{
			// A route that exists for another method: the routing error handler turns the 405
			// into UNIMPLEMENTED, which the error handler answers with a 501.
			name: "grpcgateway-method-not-allowed", dialect: remedy.DialectGoogle,
			req:  request{method: http.MethodGet, path: "/v1/orders"},
			want: want{status: 501, code: "UNIMPLEMENTED"},
		},
		{
			// ErrorInfo's reason is the specific code (google.rpc's error model); RetryInfo
			// says the call succeeds after its delay.
			name: "grpcgateway-ratelimit", dialect: remedy.DialectGoogle,
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
