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
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/interop/frameworks/rpcpb"
	"github.com/remedy-go/remedy/interop/frameworks/rpcpb/rpcpbconnect"
)

// shortDelay is the wait the short rate limit states.
const shortDelay = time.Second

// shortLimit is a rate limit with a short stated wait, as a service writes it: a customer's
// first order is refused with a wait of shortDelay, and the customer's orders are refused
// until that wait has passed (each refusal stating the wait left). A refusal every time, not
// a token bucket whose refusals depend on how fast the test's calls follow each other on a
// loaded machine.
type shortLimit struct {
	mu    sync.Mutex
	first map[string]time.Time // when each customer was first refused
}

// allow reports whether the customer may order now, and otherwise how long it must wait.
func (l *shortLimit) allow(customer string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.first == nil {
		l.first = make(map[string]time.Time)
	}
	t0, seen := l.first[customer]
	if !seen {
		l.first[customer] = time.Now()
		return false, shortDelay
	}
	if left := shortDelay - time.Since(t0); left > 0 {
		return false, left
	}
	return true, 0
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
	if ok, wait := s.limit.allow(req.Msg.GetCustomer()); !ok {
		return nil, connectError(connect.CodeResourceExhausted, "a new customer waits before ordering",
			&errdetails.RetryInfo{RetryDelay: durationpb.New(wait)})
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
	if ok, wait := s.limit.allow(req.GetCustomer()); !ok {
		return nil, withDetails(codes.ResourceExhausted, "a new customer waits before ordering",
			&errdetails.RetryInfo{RetryDelay: durationpb.New(wait)})
	}
	return &rpcpb.Order{Id: "ord_" + req.GetCustomer()}, nil
}

func serveGatewayShortLimit(t *testing.T) string {
	t.Helper()
	return serveGatewayWith(t, &gatewayShortLimit{})
}

// shortRateLimit places an order for a new customer on a service with shortLimit (served by
// serve, its CreateOrder at path): the order is refused with a wait of shortDelay, which the
// loop must spend before it sends the order again, and then succeed. Judged by the server's
// clock: the retry arrived no earlier than shortDelay after the refusal was answered, and the
// server refused nothing else.
func shortRateLimit(t *testing.T, serve func(*testing.T) string, path string) string {
	t.Helper()
	base, count := counted(t, proxyTo(t, serve(t)))
	c := newClient(t, base, []client.Operation{{Name: "createOrder", Method: http.MethodPost, Path: path}})
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	if _, err := c.Call(ctx, "createOrder", json.RawMessage(`{"customer":"quick","currency":"USD","quantity":1}`)); err != nil {
		t.Fatalf("the order: %v", err)
	}
	reqs := count.since(0)
	if len(reqs) != 2 || reqs[0].status != http.StatusTooManyRequests || reqs[1].status < 200 || reqs[1].status > 299 {
		for i, s := range reqs {
			t.Logf("request %d: %d", i+1, s.status)
		}
		t.Fatalf("the server received %d requests, want a refusal and then the order", len(reqs))
	}
	if waited := reqs[1].arrived.Sub(reqs[0].answered); waited < shortDelay {
		t.Errorf("the retry arrived %v after the refusal, which asked for %v", waited, shortDelay)
	}
	return fmt.Sprintf("RetryInfo %v: waited, then created (2 requests)", shortDelay)
}

// windowRateLimit calls GET /limited (2 or 5 a minute) until the client stops: the wait the
// framework states (60 s) is over the loop's MaxWait, so a call must stop at once with
// RetryLater. Where the framework's answers say how many requests remain (RateLimit fields),
// the client holds the call that would be refused, and sends nothing once none remain; where
// they do not, the framework refuses one call and none is resent. Either way, by the server's
// count: no request arrived after a refusal, and none was sent twice.
func windowRateLimit(t *testing.T, base string, count *counter) string {
	t.Helper()
	c := newClient(t, base, []client.Operation{{Name: "limited", Method: http.MethodGet, Path: "/limited"}})
	mark := count.mark()
	calls := 0
	var err error
	for err == nil && calls < 10 {
		ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
		_, err = c.Call(ctx, "limited", nil)
		cancel()
		calls++
	}
	var later *client.RetryLater
	if !errors.As(err, &later) {
		t.Fatalf("after %d calls: %v, want a RetryLater", calls, err)
	}
	if later.After <= 30*time.Second {
		t.Errorf("RetryLater after %v: the window's wait is a minute", later.After)
	}
	reqs := count.since(mark)
	refused := 0
	for i, r := range reqs {
		if r.status == http.StatusTooManyRequests {
			refused++
			if i != len(reqs)-1 {
				t.Errorf("request %d arrived after a refusal", i+2)
			}
		}
	}
	switch {
	case len(reqs) == calls && refused == 1:
		return "refused once (1-minute window): RetryLater, not resent"
	case len(reqs) == calls-1 && refused == 0:
		// The number of calls the window let through is not said: where the window stands
		// when the test begins is the framework's, not the client's.
		return "held before sending once its RateLimit fields said none remain: RetryLater, none refused"
	}
	t.Errorf("the server received %d requests (%d refused) for %d calls", len(reqs), refused, calls)
	return "failed"
}
