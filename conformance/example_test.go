package conformance_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/remedy-go/remedy/conformance"
	"github.com/remedy-go/remedy/server"
)

type note struct {
	Title string `json:"title" schema:"minLength=1;maxLength=80"`
	Tag   string `json:"tag" schema:"enum=work,home"`
}

// Probe a server built on the reference server: every rule that can be checked without
// executing anything passes, and those that need writes say so.
func ExampleRun() {
	api, err := server.New()
	if err != nil {
		panic(err)
	}
	_ = server.Post(api, "/notes", func(_ context.Context, in note) (note, error) { return in, nil },
		server.OperationID("create_note"), server.Idempotent())
	srv := httptest.NewServer(api)
	defer srv.Close()

	report, err := conformance.Run(context.Background(), srv.URL, conformance.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range report.Results {
		if r.Outcome == conformance.Skip {
			fmt.Printf("%s %s: %s\n", r.Outcome, r.ID, r.Detail)
		} else {
			fmt.Println(r.Outcome, r.ID)
		}
	}
	fmt.Println("ok:", report.OK())
	// Output:
	// pass openapi
	// pass openapi-error-codes
	// pass envelope
	// pass retryable-stated
	// pass invalid-input-refused
	// pass issues-point-at-fields
	// pass schema-inline
	// pass no-internal-detail
	// skip trace-id: no 5xx was met
	// skip rate-limit-wait: no 429 or 503 was met; Options.Burst (remedy probe --burst) provokes one
	// pass unknown-route
	// skip confirmation-bound: no operation requires confirmation (x-confirmation-required)
	// skip confirmation-single-use: no operation requires confirmation (x-confirmation-required)
	// skip idempotent-replay: needs Options.Writes (remedy probe --writes): the check executes an operation
	// skip idempotency-key-reuse: needs Options.Writes (remedy probe --writes): the check executes an operation
	// skip idempotency-errors-not-stored: needs Options.Writes (remedy probe --writes): the check executes an operation
	// ok: true
}
