package billing

import (
	"context"
	"sync"

	"github.com/remedy-go/remedy/server"
)

// ExportInvoices is export_invoices's input.
type ExportInvoices struct {
	Currency string `json:"currency" schema:"enum=usd,eur,gbp;default=usd" doc:"The invoices exported: those in this currency."`
}

// Export is export_invoices's result: where the file is, and what it holds.
type Export struct {
	URL      string `json:"url"`
	Invoices int    `json:"invoices"`
}

// exports holds the exports back until released (HoldExports), so that a demo shows an
// operation still running when it is polled.
type exports struct {
	mu   sync.Mutex
	gate chan struct{}
}

// AddExports registers export_invoices on api: an operation that takes time (server.Async),
// answered 202 Accepted and polled at its status resource, its submission covered by an
// idempotency key. It is apart from New, so that the billing API's other users keep its
// operations as they are.
func (s *Store) AddExports(api *server.API) error {
	return server.Post(api, "/v1/exports", s.exportInvoices, server.OperationID("export_invoices"),
		server.Summary("Export a currency's invoices to a file; runs in the background"),
		server.Async(), server.Idempotent())
}

// HoldExports makes the exports wait, once started, until release is called.
func (s *Store) HoldExports() (release func()) {
	gate := make(chan struct{})
	s.exp.mu.Lock()
	s.exp.gate = gate
	s.exp.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(gate) }) }
}

func (s *Store) exportInvoices(ctx context.Context, in ExportInvoices) (Export, error) {
	s.exp.mu.Lock()
	gate := s.exp.gate
	s.exp.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return Export{}, ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, inv := range s.invoices {
		if inv.Currency == in.Currency {
			n++
		}
	}
	s.effect("export_invoices")
	return Export{URL: "/files/invoices-" + in.Currency + ".csv", Invoices: n}, nil
}
