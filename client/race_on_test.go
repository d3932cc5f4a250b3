//go:build race

package client_test

// raceEnabled reports a build with the race detector, under which sync.Pool drops a quarter of
// what is put back, on purpose: allocation counts are then not the program's. .ci/run checks
// them in a run without it.
const raceEnabled = true
