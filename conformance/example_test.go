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

type noteFilter struct {
	Tag string `query:"tag" json:"-" schema:"enum=work,home"`
}

// Probe a server built on the reference server: every rule that can be checked without
// executing anything passes, on the operation that reads; those that need writes say so, and
// Skipped lists, rule by rule, the checks of create_note they would make.
func ExampleRun() {
	api, err := server.New()
	if err != nil {
		panic(err)
	}
	_ = server.Post(api, "/notes", func(_ context.Context, in note) (note, error) { return in, nil },
		server.OperationID("create_note"), server.Idempotent())
	_ = server.Get(api, "/notes", func(_ context.Context, in noteFilter) ([]note, error) { return nil, nil },
		server.OperationID("list_notes"))
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
		if r.Outcome != conformance.Skip {
			for _, why := range r.Skipped {
				fmt.Println("  skipped:", why)
			}
		}
	}
	fmt.Println("ok:", report.OK())
	// Output:
	// pass openapi
	// pass openapi-error-codes
	// pass envelope
	// pass retryable-stated
	// pass invalid-input-refused
	//   skipped: needs Options.Writes (remedy probe --writes): would send POST /notes (create_note) invalid requests that a server which does not validate would execute: missing required /tag, wrong type at /tag, out of enum at /tag, out of range at /title, an unexpected member, malformed JSON
	// pass issues-point-at-fields
	//   skipped: needs Options.Writes (remedy probe --writes): would send POST /notes (create_note) invalid requests that a server which does not validate would execute: missing required /tag, wrong type at /tag, out of enum at /tag, out of range at /title, an unexpected member, malformed JSON
	// pass schema-inline
	//   skipped: needs Options.Writes (remedy probe --writes): would send POST /notes (create_note) invalid requests that a server which does not validate would execute: missing required /tag, wrong type at /tag, out of enum at /tag, out of range at /title, an unexpected member, malformed JSON
	// pass no-internal-detail
	// skip trace-id: no 5xx was met
	// skip rate-limit-wait: no 429 or 503 was met; Options.Burst (remedy probe --burst) provokes one
	// pass unknown-route
	// skip confirmation-bound: no operation requires confirmation (x-confirmation-required)
	// skip confirmation-single-use: no operation requires confirmation (x-confirmation-required)
	// skip idempotent-replay: needs Options.Writes (remedy probe --writes): would execute POST /notes (create_note) twice under one Idempotency-Key
	// skip idempotency-key-reuse: needs Options.Writes (remedy probe --writes): would execute POST /notes (create_note) twice under one Idempotency-Key
	// skip idempotency-errors-not-stored: needs Options.Writes (remedy probe --writes): would execute POST /notes (create_note) twice under one Idempotency-Key
	// ok: true
}
