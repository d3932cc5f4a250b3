package frameworks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/time/rate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/interop/frameworks/rpcpb"
	"github.com/remedy-go/remedy/interop/frameworks/rpcpb/rpcpbconnect"
)

// shortDelay is the wait the short rate limit states: one order a second per customer.
const shortDelay = time.Second

// shortLimit is a rate limit as a service writes it with golang.org/x/time/rate: one order
// per shortDelay for each customer.
type shortLimit struct {
	mu     sync.Mutex
	limits map[string]*rate.Limiter
}

func (l *shortLimit) allow(customer string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.limits == nil {
		l.limits = make(map[string]*rate.Limiter)
	}
	lim := l.limits[customer]
	if lim == nil {
		lim = rate.NewLimiter(rate.Every(shortDelay), 1)
		l.limits[customer] = lim
	}
	return lim.Allow()
}

// connectShortLimit is the orders service as a connect user writes a rate limit with a short
// wait: when shortLimit refuses, ResourceExhausted with a google.rpc.RetryInfo detail stating
// its period (connect's documentation on errors: connect.NewError, NewErrorDetail,
// AddDetail). Connect answers 429 with the detail in the body; the loop must wait what it
// says, and not less.
type connectShortLimit struct{ limit shortLimit }

func (s *connectShortLimit) CreateOrder(_ context.Context, req *connect.Request[rpcpb.CreateOrderRequest]) (*connect.Response[rpcpb.Order], error) {
	if vs := orderViolations(req.Msg); len(vs) > 0 {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("the order is not valid"))
	}
	if !s.limit.allow(req.Msg.GetCustomer()) {
		return nil, connectError(connect.CodeResourceExhausted, "one order a second per customer",
			&errdetails.RetryInfo{RetryDelay: durationpb.New(shortDelay)})
	}
	return connect.NewResponse(&rpcpb.Order{Id: "ord_" + req.Msg.GetCustomer()}), nil
}

// serveConnectShortLimit mounts it as connect's getting-started guide does.
func serveConnectShortLimit(t *testing.T) string {
	mux := http.NewServeMux()
	mux.Handle(rpcpbconnect.NewOrdersHandler(&connectShortLimit{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// gatewayShortLimit is the same service in gRPC, behind grpc-gateway: a status with the
// RetryInfo detail (google.rpc's error model), which the gateway writes in its JSON body with
// a 429.
type gatewayShortLimit struct {
	rpcpb.UnimplementedOrdersServer
	limit shortLimit
}

func (s *gatewayShortLimit) CreateOrder(_ context.Context, req *rpcpb.CreateOrderRequest) (*rpcpb.Order, error) {
	if vs := orderViolations(req); len(vs) > 0 {
		return nil, status.Error(codes.InvalidArgument, "the order is not valid")
	}
	if !s.limit.allow(req.GetCustomer()) {
		return nil, withDetails(codes.ResourceExhausted, "one order a second per customer",
			&errdetails.RetryInfo{RetryDelay: durationpb.New(shortDelay)})
	}
	return &rpcpb.Order{Id: "ord_" + req.GetCustomer()}, nil
}

func serveGatewayShortLimit(t *testing.T) string {
	t.Helper()
	return serveGatewayWith(t, &gatewayShortLimit{})
}

// shortRateLimit places two orders for one customer in a row on a service with shortLimit
// (served by serve, its CreateOrder at path): the second is refused with a wait of
// shortDelay, which the loop must spend before it sends the order again, and then succeed.
// Judged by the server's clock: the retry arrived no earlier than shortDelay after the refusal
// was answered.
func shortRateLimit(t *testing.T, serve func(*testing.T) string, path string) string {
	t.Helper()
	base, count := counted(t, proxyTo(t, serve(t)))
	client := newClient(t, base, []remedy.Operation{{Name: "createOrder", Method: http.MethodPost, Path: path}})
	args := json.RawMessage(`{"customer":"quick","currency":"USD","quantity":1}`)
	for i := range 2 {
		ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
		_, err := client.Call(ctx, "createOrder", args)
		cancel()
		if err != nil {
			t.Fatalf("order %d: %v", i+1, err)
		}
	}
	reqs := count.since(0)
	created, refused := 0, 0
	for i, s := range reqs {
		switch {
		case s.status >= 200 && s.status <= 299:
			created++
		case s.status == http.StatusTooManyRequests:
			refused++
			if i+1 == len(reqs) {
				t.Fatalf("the refusal of request %d was not retried", i+1)
			}
			if waited := reqs[i+1].arrived.Sub(s.answered); waited < shortDelay {
				t.Errorf("request %d arrived %v after the refusal, which asked for %v", i+2, waited, shortDelay)
			}
		default:
			t.Errorf("request %d answered %d", i+1, s.status)
		}
	}
	if created != 2 || refused == 0 {
		t.Errorf("the server created %d orders (want 2) and refused %d (want at least 1)", created, refused)
	}
	return fmt.Sprintf("RetryInfo %v: waited, succeeded (%d requests for 2 orders)", shortDelay, len(reqs))
}

// windowRateLimit calls GET /limited (2 or 5 a minute) until the framework refuses: the wait it
// states (60 s) is over the loop's MaxWait, so the call must stop at once with RetryLater, and
// the server must have received one request per call: nothing resent early.
func windowRateLimit(t *testing.T, base string, count *counter) string {
	t.Helper()
	client := newClient(t, base, []remedy.Operation{{Name: "limited", Method: http.MethodGet, Path: "/limited"}})
	mark := count.mark()
	calls := 0
	var err error
	for err == nil && calls < 10 {
		ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
		_, err = client.Call(ctx, "limited", nil)
		cancel()
		calls++
	}
	var later *remedy.RetryLater
	if !errors.As(err, &later) {
		t.Fatalf("after %d calls: %v, want a RetryLater", calls, err)
	}
	if n := len(count.since(mark)); n != calls {
		t.Errorf("the server received %d requests for %d calls", n, calls)
	}
	if later.After <= 30*time.Second {
		t.Errorf("RetryLater after %v: the window's wait is a minute", later.After)
	}
	return fmt.Sprintf("call %d refused (1-minute window): RetryLater, not resent", calls)
}
