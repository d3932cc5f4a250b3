package frameworks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/time/rate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/interop/frameworks/rpcpb"
	"github.com/remedy-go/remedy/interop/frameworks/rpcpb/rpcpbconnect"
)

// shortDelay is the wait the short rate limit states: one order a second per customer.
const shortDelay = time.Second

// connectShortLimit is the orders service as a connect user writes a rate limit with a short
// wait: a golang.org/x/time/rate limiter per customer, and, when it refuses, ResourceExhausted
// with a google.rpc.RetryInfo detail stating the limiter's period (connect's documentation on
// errors: connect.NewError, NewErrorDetail, AddDetail). It answers 429 with the detail in
// the body; the loop must wait what it says, and not less.
type connectShortLimit struct {
	mu     sync.Mutex
	limits map[string]*rate.Limiter
}

func (s *connectShortLimit) CreateOrder(_ context.Context, req *connect.Request[rpcpb.CreateOrderRequest]) (*connect.Response[rpcpb.Order], error) {
	if vs := orderViolations(req.Msg); len(vs) > 0 {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("the order is not valid"))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limits == nil {
		s.limits = make(map[string]*rate.Limiter)
	}
	lim := s.limits[req.Msg.GetCustomer()]
	if lim == nil {
		lim = rate.NewLimiter(rate.Every(shortDelay), 1)
		s.limits[req.Msg.GetCustomer()] = lim
	}
	if !lim.Allow() {
		return nil, connectError(connect.CodeResourceExhausted, "one order a second per customer",
			&errdetails.RetryInfo{RetryDelay: durationpb.New(shortDelay)})
	}
	return connect.NewResponse(&rpcpb.Order{Id: "ord_" + req.Msg.GetCustomer()}), nil
}

// connectShortLimitApp mounts it as connect's getting-started guide does.
func connectShortLimitApp(s *connectShortLimit) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(rpcpbconnect.NewOrdersHandler(s))
	return mux
}

// shortRateLimit places two orders for one customer in a row on connectShortLimit: the
// second is refused with a wait of shortDelay, which the loop must spend before it sends the
// order again, and then succeed. Judged by the server's clock: the retry arrived no earlier
// than shortDelay after the refusal was answered.
func shortRateLimit(t *testing.T) string {
	t.Helper()
	base, count := counted(t, connectShortLimitApp(&connectShortLimit{}))
	client := newClient(t, base, []remedy.Operation{{Name: "createOrder", Method: http.MethodPost, Path: rpcpbconnect.OrdersCreateOrderProcedure}})
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
