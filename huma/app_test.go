package remedyhuma_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	remedyhuma "github.com/remedy-go/remedy/huma"
)

// The billing app below is an ordinary Huma v2 API: its types, handlers and registrations are
// what a Huma user writes, and none of them knows remedy. The tests install the add-on in it
// with one call (and mark operations in their metadata, or by id in the Options).

type Customer struct {
	ID    string `json:"id" pattern:"^cus_[a-z0-9]+$" doc:"The customer's id."`
	Name  string `json:"name"`
	Email string `json:"email" format:"email"`
}

type customerRef struct {
	ID string `path:"id" pattern:"^cus_[a-z0-9]+$"`
}

type customerOut struct{ Body Customer }

type InvoiceLine struct {
	SKU      string `json:"sku" minLength:"1" maxLength:"32"`
	Quantity int    `json:"quantity" minimum:"1" maximum:"100"`
}

type NewInvoice struct {
	CustomerID string        `json:"customer_id" pattern:"^cus_[a-z0-9]+$"`
	Currency   string        `json:"currency" enum:"usd,eur,gbp"`
	Amount     int           `json:"amount" minimum:"1" maximum:"1000000"`
	Lines      []InvoiceLine `json:"lines,omitempty" maxItems:"20"`
}

type Invoice struct {
	ID         string `json:"id"`
	CustomerID string `json:"customer_id"`
	Currency   string `json:"currency"`
	Amount     int    `json:"amount"`
}

type invoiceIn struct{ Body NewInvoice }

type invoiceOut struct{ Body Invoice }

type reportIn struct {
	Month string `query:"month" pattern:"^[0-9]{4}-[0-9]{2}$" required:"true"`
}

type reportOut struct {
	Body struct {
		Month string `json:"month"`
		Total int    `json:"total"`
	}
}

// billing is the app's state, and how often each handler ran.
type billing struct {
	mu        sync.Mutex
	customers map[string]Customer
	invoices  int
	busy      atomic.Int64 // how many report calls answer 503 before one succeeds

	created, deleted atomic.Int64
}

func newBilling() *billing {
	return &billing{customers: map[string]Customer{
		"cus_ada":  {ID: "cus_ada", Name: "Ada", Email: "ada@example.com"},
		"cus_gone": {ID: "cus_gone", Name: "Gone", Email: "gone@example.com"},
	}}
}

// register registers the app's operations on api, as the app always has.
func (b *billing) register(api huma.API) {
	huma.Register(api, huma.Operation{OperationID: "get_customer", Method: http.MethodGet, Path: "/v1/customers/{id}",
		Summary: "Get a customer", Errors: []int{http.StatusNotFound}},
		func(ctx context.Context, in *customerRef) (*customerOut, error) {
			b.mu.Lock()
			defer b.mu.Unlock()
			c, ok := b.customers[in.ID]
			if !ok {
				return nil, huma.Error404NotFound("no customer " + in.ID)
			}
			return &customerOut{Body: c}, nil
		})
	huma.Register(api, huma.Operation{OperationID: "create_invoice", Method: http.MethodPost, Path: "/v1/invoices",
		Summary: "Create an invoice", DefaultStatus: http.StatusCreated, Errors: []int{http.StatusNotFound}},
		func(ctx context.Context, in *invoiceIn) (*invoiceOut, error) {
			b.mu.Lock()
			defer b.mu.Unlock()
			if _, ok := b.customers[in.Body.CustomerID]; !ok {
				return nil, huma.Error404NotFound("no customer " + in.Body.CustomerID)
			}
			b.invoices++
			b.created.Add(1)
			return &invoiceOut{Body: Invoice{ID: fmt.Sprintf("inv_%d", b.invoices), CustomerID: in.Body.CustomerID,
				Currency: in.Body.Currency, Amount: in.Body.Amount}}, nil
		})
	huma.Register(api, huma.Operation{OperationID: "delete_customer", Method: http.MethodDelete, Path: "/v1/customers/{id}",
		Summary: "Delete a customer", DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound}},
		func(ctx context.Context, in *customerRef) (*struct{}, error) {
			b.mu.Lock()
			defer b.mu.Unlock()
			if _, ok := b.customers[in.ID]; !ok {
				return nil, huma.Error404NotFound("no customer " + in.ID)
			}
			delete(b.customers, in.ID)
			b.deleted.Add(1)
			return nil, nil
		})
	huma.Register(api, huma.Operation{OperationID: "get_report", Method: http.MethodGet, Path: "/v1/reports",
		Summary: "Get a monthly report", Errors: []int{http.StatusServiceUnavailable}},
		func(ctx context.Context, in *reportIn) (*reportOut, error) {
			if b.busy.Add(-1) >= 0 {
				return nil, huma.Error503ServiceUnavailable("the report is being rebuilt")
			}
			out := &reportOut{}
			out.Body.Month, out.Body.Total = in.Month, 4200
			return out, nil
		})
}

// serve starts the app on loopback with the add-on installed (the only line a Huma app adds,
// besides the router's fallback for unknown routes) and returns its URL.
func serve(t testing.TB, b *billing, opts remedyhuma.Options) string {
	t.Helper()
	mux := http.NewServeMux()
	api := humago.New(mux, huma.DefaultConfig("Billing", "1.0.0"))
	api, err := remedyhuma.Install(api, opts)
	if err != nil {
		t.Fatal(err)
	}
	b.register(api)
	mux.Handle("/", remedyhuma.Fallback(api))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// marked are the Options that mark the app's operations by id.
func marked() remedyhuma.Options {
	return remedyhuma.Options{Confirm: []string{"delete_customer"}, Idempotent: []string{"create_invoice"}}
}

func examples() map[string]json.RawMessage {
	return map[string]json.RawMessage{
		"create_invoice":  json.RawMessage(`{"customer_id":"cus_ada","currency":"usd","amount":1200}`),
		"delete_customer": json.RawMessage(`{"id":"cus_gone"}`),
		"get_customer":    json.RawMessage(`{"id":"cus_ada"}`),
		"get_report":      json.RawMessage(`{"month":"2026-01"}`),
	}
}

// startMux serves mux on loopback and returns its URL.
func startMux(t testing.TB, mux *http.ServeMux) string {
	t.Helper()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}
