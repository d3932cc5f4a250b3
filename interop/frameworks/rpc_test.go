package frameworks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/remedy-go/remedy/interop/frameworks/rpcpb"
)

// The RPC frameworks (grpc-gateway, connect, twirp) have no validator of their own: the
// application checks a request and answers with the framework's error facility
// (google.rpc.Status details, twirp's argument errors). orderRules is that application
// check, shared by the three so that each records the same failures; each framework's file
// turns a violation into its own error.

// violation is one field an order breaks: the field's path in the form google.rpc.BadRequest
// documents ("lines[1].sku"), and what is wrong with it.
type violation struct {
	field, description string
	required           bool // the field is missing
}

// maxQuantity is the bound the application puts on quantity.
const maxQuantity = 100

func orderViolations(req *rpcpb.CreateOrderRequest) []violation {
	var out []violation
	if req.GetCustomer() == "" {
		out = append(out, violation{field: "customer", description: "is required", required: true})
	}
	if req.GetCurrency() == rpcpb.Currency_CURRENCY_UNSPECIFIED {
		// protojson, told to discard unknown fields as these frameworks tell it, reads an
		// unknown enum name as the enum's zero value: the application refuses that.
		out = append(out, violation{field: "currency", description: "must be one of USD, EUR, GBP"})
	}
	if req.GetQuantity() > maxQuantity {
		out = append(out, violation{field: "quantity", description: "must be at most " + strconv.Itoa(maxQuantity)})
	}
	for i, l := range req.GetLines() {
		if l.GetSku() == "" {
			out = append(out, violation{field: fmt.Sprintf("lines[%d].sku", i), description: "is required", required: true})
		}
	}
	return out
}

// retryDelay is the wait the application states when a customer's budget is spent: the
// limiter's whole period, so that the stated wait is never too short.
const retryDelay = 30 * time.Second

// customerLimit is the application's per-customer rate limit: one order per retryDelay.
type customerLimit struct {
	mu sync.Mutex
	m  map[string]*rate.Limiter
}

func (l *customerLimit) allow(customer string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = make(map[string]*rate.Limiter)
	}
	lim := l.m[customer]
	if lim == nil {
		lim = rate.NewLimiter(rate.Every(retryDelay), 1)
		l.m[customer] = lim
	}
	return lim.Allow()
}

// protojsonCanonical is the form of a body written with protojson that the corpus keeps.
// protobuf-go deliberately makes its output unstable between builds (internal/detrand: a
// random space after commas, and a non-breaking space after "proto:" in its error texts, "to
// discourage users from performing error string comparisons"), so that the same answer
// differs from one test binary to the next. The corpus keeps it compacted, with a plain
// space; Parse is checked on the bytes as the framework sent them.
func protojsonCanonical(body []byte) []byte {
	body = bytes.ReplaceAll(body, []byte("proto:\u00a0"), []byte("proto: "))
	var b bytes.Buffer
	if json.Compact(&b, body) != nil {
		return body
	}
	return b.Bytes()
}
