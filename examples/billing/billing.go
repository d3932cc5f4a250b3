// Package billing is the small billing API that remedy's examples call: customers, invoices
// and charges, declared on the reference server (package server), which serves it over REST
// and MCP with its OpenAPI document. It is also what `remedy serve` serves and what remedy's
// own tests of both surfaces run against. It exercises every part of the contract:
// validation, a precondition naming the operation to run first, an idempotent charge, a
// confirmation-gated deletion, and a report that is sometimes unavailable for a moment. It
// counts the side effects it executes, so that a test can tell a replay from a second
// execution.
//
// Read it as the server half of the examples: each handler is a plain Go function from a
// typed input to a typed result, and each failure a server.Error with a code the client can
// act on. The package is importable, so an example copied into a module of your own runs
// against it unchanged.
package billing

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/remedy-go/remedy/server"
)

// Customer is a billed party.
type Customer struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Email    string `json:"email"`
	Archived bool   `json:"archived,omitempty"`
}

// Invoice is an amount owed by a customer; it is a draft until finalized, then can be sent.
type Invoice struct {
	ID         string `json:"id"`
	CustomerID string `json:"customer_id"`
	Currency   string `json:"currency"`
	Amount     int    `json:"amount"`
	Status     string `json:"status"` // draft, open, sent
}

// Charge is a payment taken from a customer.
type Charge struct {
	ID         string `json:"id"`
	CustomerID string `json:"customer_id"`
	Amount     int    `json:"amount"`
	Currency   string `json:"currency"`
}

// CreateInvoice is create_invoice's input.
type CreateInvoice struct {
	CustomerID string `json:"customer_id" schema:"pattern=^cus_[a-z0-9]+$;example=cus_grace" doc:"The customer billed, cus_..."`
	Currency   string `json:"currency" schema:"enum=usd,eur,gbp;default=usd" doc:"ISO 4217 code, lower case."`
	Amount     int    `json:"amount" schema:"minimum=1;maximum=1000000" doc:"In the currency's minor unit (cents)."`
	Memo       string `json:"memo,omitempty" schema:"maxLength=200"`
}

// InvoiceRef names an invoice.
type InvoiceRef struct {
	ID string `path:"id" json:"-" schema:"pattern=^in_[0-9]+$"`
}

// CreateCharge is charge's input.
type CreateCharge struct {
	CustomerID string `json:"customer_id" schema:"pattern=^cus_[a-z0-9]+$;example=cus_grace"`
	Amount     int    `json:"amount" schema:"minimum=50;maximum=1000000" doc:"In cents; at least 50."`
	Currency   string `json:"currency" schema:"enum=usd,eur,gbp;default=usd"`
}

// CustomerRef names a customer.
type CustomerRef struct {
	ID string `path:"id" json:"-" schema:"pattern=^cus_[a-z0-9]+$"`
}

// Deleted says what was deleted.
type Deleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// ReportQuery is revenue_report's input.
type ReportQuery struct {
	Currency string `query:"currency" json:"-" schema:"enum=usd,eur,gbp"`
}

// Report is revenue_report's result.
type Report struct {
	Currency string `json:"currency"`
	Invoiced int    `json:"invoiced"`
	Charged  int    `json:"charged"`
}

// Store is the API's state and the count of the side effects it executed.
type Store struct {
	mu        sync.Mutex
	customers map[string]*Customer
	invoices  map[string]*Invoice
	charges   []*Charge
	next      int
	effects   map[string]int
	// busy makes the next revenue_report calls answer 503 unavailable.
	busy int
	// rebuild makes the report unavailable once after every change (NewDemo).
	rebuild bool
	exp     exports // export_invoices's hold (export.go)
}

// Effects is how many times the operation executed a side effect (a creation, a state
// change, a deletion).
func (s *Store) Effects(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.effects[op]
}

// Busy makes the next n revenue_report calls fail with 503 unavailable and a short wait.
func (s *Store) Busy(n int) {
	s.mu.Lock()
	s.busy = n
	s.mu.Unlock()
}

// AddCustomer adds a customer and returns it.
func (s *Store) AddCustomer(id, name, email string) Customer {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Customer{ID: id, Name: name, Email: email}
	s.customers[id] = c
	return *c
}

func (s *Store) effect(op string) {
	s.effects[op]++
	if s.rebuild {
		s.busy = max(s.busy, 1)
	}
}

// RetryWait is how long a busy revenue_report asks the caller to wait.
const RetryWait = 20 * time.Millisecond

// New returns the billing API on a reference server configured by opts, and its store, which
// holds two customers, cus_ada and cus_grace (the documents' example).
func New(opts ...server.Option) (*server.API, *Store, error) {
	s := &Store{customers: map[string]*Customer{}, invoices: map[string]*Invoice{}, effects: map[string]int{}}
	s.customers["cus_ada"] = &Customer{ID: "cus_ada", Name: "Ada Lovelace", Email: "ada@example.com"}
	s.customers["cus_grace"] = &Customer{ID: "cus_grace", Name: "Grace Hopper", Email: "grace@example.com"}
	api, err := server.New(append([]server.Option{server.WithInfo(server.Info{Title: "billing", Version: "1.0.0",
		Description: "Customers, invoices and charges."})}, opts...)...)
	if err != nil {
		return nil, nil, err
	}
	steps := []error{
		server.Post(api, "/v1/invoices", s.createInvoice, server.OperationID("create_invoice"),
			server.Summary("Create a draft invoice for a customer"), server.SuccessStatus(http.StatusCreated),
			server.Idempotent(), server.Errors(server.CodeNotFound)),
		server.Get(api, "/v1/invoices/{id}", s.getInvoice, server.OperationID("get_invoice"),
			server.Summary("Read an invoice"), server.Errors(server.CodeNotFound)),
		server.Post(api, "/v1/invoices/{id}/finalize", s.finalizeInvoice, server.OperationID("finalize_invoice"),
			server.Summary("Finalize a draft invoice so that it can be sent"), server.Errors(server.CodeNotFound)),
		server.Post(api, "/v1/invoices/{id}/send", s.sendInvoice, server.OperationID("send_invoice"),
			server.Summary("Email a finalized invoice to its customer"),
			server.Errors(server.CodeNotFound, server.CodePreconditionFailed)),
		server.Post(api, "/v1/charges", s.charge, server.OperationID("charge"),
			server.Summary("Charge a customer"), server.SuccessStatus(http.StatusCreated),
			server.RequireIdempotencyKey(), server.Errors(server.CodeNotFound)),
		server.Delete(api, "/v1/customers/{id}", s.deleteCustomer, server.OperationID("delete_customer"),
			server.Summary("Delete a customer and all their invoices"), server.Confirm(),
			server.Errors(server.CodeNotFound)),
		server.Get(api, "/v1/reports/revenue", s.report, server.OperationID("revenue_report"),
			server.Summary("Revenue invoiced and charged, by currency"), server.Errors(server.CodeUnavailable)),
	}
	for _, err := range steps {
		if err != nil {
			return nil, nil, err
		}
	}
	return api, s, nil
}

func (s *Store) id(prefix string) string {
	s.next++
	return fmt.Sprintf("%s_%d", prefix, s.next)
}

func (s *Store) createInvoice(_ context.Context, in CreateInvoice) (Invoice, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.customers[in.CustomerID] == nil {
		return Invoice{}, server.Error(server.CodeNotFound, "no customer "+in.CustomerID)
	}
	inv := &Invoice{ID: s.id("in"), CustomerID: in.CustomerID, Currency: in.Currency, Amount: in.Amount, Status: "draft"}
	s.invoices[inv.ID] = inv
	s.effect("create_invoice")
	return *inv, nil
}

// onInvoice runs change on the invoice named by ref, under the lock, and returns the invoice
// as it then is.
func (s *Store) onInvoice(ref InvoiceRef, change func(inv *Invoice) error) (Invoice, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inv := s.invoices[ref.ID]
	if inv == nil {
		return Invoice{}, server.Error(server.CodeNotFound, "no invoice "+ref.ID)
	}
	if err := change(inv); err != nil {
		return Invoice{}, err
	}
	return *inv, nil
}

func (s *Store) getInvoice(_ context.Context, in InvoiceRef) (Invoice, error) {
	return s.onInvoice(in, func(*Invoice) error { return nil })
}

func (s *Store) finalizeInvoice(_ context.Context, in InvoiceRef) (Invoice, error) {
	return s.onInvoice(in, func(inv *Invoice) error {
		if inv.Status == "draft" {
			inv.Status = "open"
			s.effect("finalize_invoice")
		}
		return nil
	})
}

func (s *Store) sendInvoice(_ context.Context, in InvoiceRef) (Invoice, error) {
	return s.onInvoice(in, func(inv *Invoice) error {
		if inv.Status == "draft" {
			return server.Precondition("invoice "+inv.ID+" is a draft: finalize it before sending it",
				"draft", "open", "finalize_invoice", map[string]string{"id": inv.ID})
		}
		if inv.Status != "sent" {
			inv.Status = "sent"
			s.effect("send_invoice")
		}
		return nil
	})
}

func (s *Store) charge(_ context.Context, in CreateCharge) (Charge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.customers[in.CustomerID] == nil {
		return Charge{}, server.Error(server.CodeNotFound, "no customer "+in.CustomerID)
	}
	c := &Charge{ID: s.id("ch"), CustomerID: in.CustomerID, Amount: in.Amount, Currency: in.Currency}
	s.charges = append(s.charges, c)
	s.effect("charge")
	return *c, nil
}

func (s *Store) deleteCustomer(_ context.Context, in CustomerRef) (Deleted, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.customers[in.ID] == nil {
		return Deleted{}, server.Error(server.CodeNotFound, "no customer "+in.ID)
	}
	delete(s.customers, in.ID)
	for id, inv := range s.invoices {
		if inv.CustomerID == in.ID {
			delete(s.invoices, id)
		}
	}
	s.effect("delete_customer")
	return Deleted{ID: in.ID, Deleted: true}, nil
}

func (s *Store) report(_ context.Context, in ReportQuery) (Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy > 0 {
		s.busy--
		p := server.Error(server.CodeUnavailable, "the report is being rebuilt")
		p.RetryAfter = RetryWait
		return Report{}, p
	}
	r := Report{Currency: in.Currency}
	for _, inv := range s.invoices {
		if inv.Currency == in.Currency {
			r.Invoiced += inv.Amount
		}
	}
	for _, c := range s.charges {
		if c.Currency == in.Currency {
			r.Charged += c.Amount
		}
	}
	return r, nil
}
