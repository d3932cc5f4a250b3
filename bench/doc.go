// Package bench measures remedy against what a user would pick instead — encoding/json,
// plain net/http, hashicorp/go-retryablehttp, failsafe-go and huma — in one run on one
// machine. It is a module of its own so that the peers stay out of remedy's go.mod.
//
// The benchmarks are in the _test.go files, each contender beside its baseline, named
// Benchmark<Group>/<case>/<contender>. BENCHMARKS.md at the repository root is written from
// one run of them by the report command:
//
//	cd bench && go run ./cmd/report          # the full run, several minutes
//	cd bench && go run ./cmd/report -quick   # one short round, to check that it all works
package bench
