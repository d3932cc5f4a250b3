// Package remedyhuma installs remedy's contract in an existing Huma v2 API, through Huma's own
// extension points and without a change to any handler: Huma's errors become remedy's envelope
// (a code from server's registry, issues with JSON Pointers, the violated subschema inline, a
// hint, whether and when to retry), operations marked in their metadata require a
// payload-bound, single-use confirmation and replay their results under an Idempotency-Key
// (server's stores, keys scoped by principal), and the OpenAPI document carries the extensions
// remedy's client and conformance kit read.
//
//	api := humago.New(mux, huma.DefaultConfig("Billing", "1.0.0"))
//	api, err := remedyhuma.Install(api, remedyhuma.Options{})
//	huma.Register(api, remedyhuma.Confirm(huma.Operation{...}), deleteCustomer) // as before
//	mux.Handle("/", remedyhuma.Fallback(api)) // unknown routes: 404 not_found, 405 with Allow
package remedyhuma
