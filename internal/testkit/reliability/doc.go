// Package reliability holds the fault-injecting proxy that stands between remedy's client and
// the reference server, and the reliability suite that runs through it: exactly-once execution
// under lost, reset, delayed, refused and duplicated requests, the server under load, and hostile
// inputs. The suite runs with `go test ./internal/testkit/reliability` (add -short for a quicker pass).
package reliability
