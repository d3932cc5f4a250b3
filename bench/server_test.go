package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"regexp"
	"testing"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/remedy-go/remedy/server"
)

// order is the input of the validated POST, with the same constraints written twice: once
// for remedy's server (the schema tag) and once for huma (its own tags). The bare handler
// checks them by hand in checkOrder.
type order struct {
	CustomerID string     `json:"customer_id" schema:"pattern=^cus_[a-z0-9]+$" pattern:"^cus_[a-z0-9]+$"`
	Email      string     `json:"email" schema:"format=email" format:"email"`
	Currency   string     `json:"currency" schema:"enum=usd,eur,gbp" enum:"usd,eur,gbp"`
	Items      []orderRow `json:"items" schema:"minItems=1;maxItems=50" minItems:"1" maxItems:"50"`
	Note       string     `json:"note,omitempty" schema:"maxLength=200" maxLength:"200"`
	Gift       bool       `json:"gift,omitempty"`
}

type orderRow struct {
	SKU      string  `json:"sku" schema:"minLength=1;maxLength=32" minLength:"1" maxLength:"32"`
	Quantity int     `json:"quantity" schema:"minimum=1;maximum=100" minimum:"1" maximum:"100"`
	Price    float64 `json:"price" schema:"minimum=0" minimum:"0"`
}

// created is the answer of all three servers.
type created struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

var answer = created{ID: "ord_1", Status: "created"}

// validOrder is a realistic input: three items, every constraint met.
var validOrder = []byte(`{"customer_id":"cus_8f3k2","email":"ada@example.com","currency":"eur",
"items":[{"sku":"book-1","quantity":2,"price":12.5},{"sku":"pen-7","quantity":10,"price":1.2},{"sku":"bag-3","quantity":1,"price":49}],
"note":"leave at the door","gift":true}`)

// invalidOrder breaks three constraints: the pattern, the enum and a maximum.
var invalidOrder = []byte(`{"customer_id":"CUS-8F3K2","email":"ada@example.com","currency":"usd$",
"items":[{"sku":"book-1","quantity":250,"price":12.5}]}`)

// remedyServer is the operation on remedy's reference server.
func remedyServer(tb testing.TB, opts ...server.OpOption) *server.API {
	tb.Helper()
	api, err := server.New()
	if err != nil {
		tb.Fatal(err)
	}
	opts = append([]server.OpOption{server.OperationID("create_order")}, opts...)
	if err := server.Post(api, "/v1/orders", func(ctx context.Context, in order) (created, error) {
		return answer, nil
	}, opts...); err != nil {
		tb.Fatal(err)
	}
	return api
}

// humaServer is the same operation on huma, with its adapter for net/http's ServeMux and its
// default configuration (which also serves the OpenAPI document and adds a $schema link to
// responses, as a huma user gets).
func humaServer() http.Handler {
	mux := http.NewServeMux()
	api := humago.New(mux, huma.DefaultConfig("Orders", "1.0.0"))
	type input struct{ Body order }
	type output struct{ Body created }
	huma.Register(api, huma.Operation{OperationID: "create_order", Method: http.MethodPost, Path: "/v1/orders"},
		func(ctx context.Context, in *input) (*output, error) {
			return &output{Body: answer}, nil
		})
	return mux
}

var customerPattern = regexp.MustCompile(`^cus_[a-z0-9]+$`)

// checkOrder is what a careful hand-written handler checks: the same constraints as the
// tags, every violation listed.
func checkOrder(in *order) []string {
	var bad []string
	if !customerPattern.MatchString(in.CustomerID) {
		bad = append(bad, "/customer_id: must match ^cus_[a-z0-9]+$")
	}
	if _, err := mail.ParseAddress(in.Email); err != nil {
		bad = append(bad, "/email: must be an email address")
	}
	switch in.Currency {
	case "usd", "eur", "gbp":
	default:
		bad = append(bad, "/currency: must be one of usd, eur, gbp")
	}
	if n := len(in.Items); n < 1 || n > 50 {
		bad = append(bad, "/items: must hold 1 to 50 items")
	}
	if utf8.RuneCountInString(in.Note) > 200 {
		bad = append(bad, "/note: must be at most 200 characters")
	}
	for i, it := range in.Items {
		if n := utf8.RuneCountInString(it.SKU); n < 1 || n > 32 {
			bad = append(bad, fmt.Sprintf("/items/%d/sku: must be 1 to 32 characters", i))
		}
		if it.Quantity < 1 || it.Quantity > 100 {
			bad = append(bad, fmt.Sprintf("/items/%d/quantity: must be 1 to 100", i))
		}
		if it.Price < 0 {
			bad = append(bad, fmt.Sprintf("/items/%d/price: must not be negative", i))
		}
	}
	return bad
}

// bareServer is the operation as a bare net/http handler: ServeMux routing, encoding/json
// with unknown fields refused (as both schemas refuse them), checkOrder, a 422 listing the
// violations.
func bareServer() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/orders", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var in order
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		if bad := checkOrder(&in); len(bad) > 0 {
			w.WriteHeader(http.StatusUnprocessableEntity)
			json.NewEncoder(w).Encode(map[string][]string{"errors": bad})
			return
		}
		json.NewEncoder(w).Encode(answer)
	})
	return mux
}

// serverContenders are the three servers of the validated POST.
func serverContenders(tb testing.TB) []struct {
	name string
	h    http.Handler
} {
	return []struct {
		name string
		h    http.Handler
	}{{"remedy", remedyServer(tb)}, {"net-http", bareServer()}, {"huma", humaServer()}}
}

// serve sends body to h as a POST /v1/orders and returns the recorded response.
func serve(h http.Handler, body []byte, key string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/v1/orders", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// BenchmarkServer is a validated POST served by remedy's reference server, a bare net/http
// handler and huma, through handler.ServeHTTP with a recorder (no network, so that the
// server's own cost is what is measured): a valid order answered 200, and an order breaking
// three constraints answered 422 with every violation.
func BenchmarkServer(b *testing.B) {
	for _, tc := range []struct {
		name string
		body []byte
		want int
	}{{"valid", validOrder, 200}, {"invalid", invalidOrder, 422}} {
		for _, c := range serverContenders(b) {
			b.Run(tc.name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				report := measureCPU(b)
				for b.Loop() {
					if w := serve(c.h, tc.body, ""); w.Code != tc.want {
						b.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body)
					}
				}
				report()
			})
		}
	}
}
