//go:build !race

package remedy_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
