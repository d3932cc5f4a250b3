// Package bench measures remedy against what a user would pick instead — encoding/json,
// plain net/http, hashicorp/go-retryablehttp, failsafe-go and huma — and its parser against
// floors (goccy/go-json's Valid, bytes.Count), in one run on one machine. It is a module of
// its own so that the peers stay out of remedy's go.mod.
//
// The benchmarks are in the _test.go files, each contender beside its baselines, named
// Benchmark<Group>/<case>/<contender>; each reports its CPU time per operation (cpu-ns/op)
// beside its wall time. BenchmarkPacing is not a timing loop: it runs issue 38's workload once
// per client — many callers sharing one API key against a rate-limited loopback server — and
// reports counts (calls completed, requests refused, requests sent after the client knew a
// reset still ahead) and the total time against the floor. BENCHMARKS.md at the repository
// root, and the table of the README's "Measured against the peers", are written from one run
// of them by the report command:
//
//	cd bench && go run ./cmd/report          # the full run, several minutes
//	cd bench && go run ./cmd/report -quick   # one short round, to check that it all works
package bench
