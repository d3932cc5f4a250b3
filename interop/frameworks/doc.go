// Package frameworks records the default failures of the web frameworks and validators most
// HTTP APIs are built on, live, and checks what remedy.Parse reads from each against facts
// written from the framework's documentation. It is a module of its own so that the
// frameworks' dependencies stay out of remedy's go.mod.
//
// Each framework runs in its documented default setup on loopback (the Go ones in this test
// process, the Node ones from npm with the lockfile of node/), answers the same failing
// requests (a wrong enum, a bound, a missing field, a wrong type, a nested field, a query
// parameter, an unknown route, a rate limit where the framework has a standard middleware),
// and its answers are compared byte for byte with the recordings in the root module's corpus,
// testdata/envelopes/<dialect>/<framework>-<case>.http. A new version of a framework that
// changes its output fails the test; `go test -capture` records the answers again (then
// regenerate the root module's golden files: go test -run Golden -update).
//
// TestRepair runs remedy's client, set up as the README shows it, against the same live
// servers with wrong arguments (lossless, lossy and unrepairable ones, and a rate limit),
// without and with the operations' schema, and judges it by each server's own count of the
// requests it received and the items it created: its table is the README's repair table.
package frameworks
