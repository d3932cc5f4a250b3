package billing

import (
	"context"

	"github.com/remedy-go/remedy/server"
)

// ArchiveRef names the customer to archive.
type ArchiveRef struct {
	ID string `path:"id" json:"-" schema:"pattern=^cus_[a-z0-9]+$;example=cus_grace"`
}

// NewDemo returns the billing API as remedy serve runs it: New's, with what lets a probe see
// every rule of the contract at work from the document alone, run after run.
//
//   - archive_customer, a confirmation-gated operation that can run again: a deletion's second
//     run finds nothing, so it cannot show that a spent token is refused, run after run;
//   - a revenue report rebuilt after every change (and at start), unavailable meanwhile: the
//     first revenue_report after a change answers 503 unavailable, with a trace id and the
//     wait (RetryWait) after which it is ready.
func NewDemo(opts ...server.Option) (*server.API, *Store, error) {
	api, s, err := New(opts...)
	if err != nil {
		return nil, nil, err
	}
	err = server.Post(api, "/v1/customers/{id}/archive", s.archiveCustomer, server.OperationID("archive_customer"),
		server.Summary("Archive a customer: no new invoices or charges are expected"), server.Confirm(),
		server.Errors(server.CodeNotFound))
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	s.rebuild, s.busy = true, 1
	s.mu.Unlock()
	return api, s, nil
}

func (s *Store) archiveCustomer(_ context.Context, in ArchiveRef) (Customer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.customers[in.ID]
	if c == nil {
		return Customer{}, server.Error(server.CodeNotFound, "no customer "+in.ID)
	}
	if !c.Archived {
		c.Archived = true
		s.effect("archive_customer")
	}
	return *c, nil
}
