//go:build !race

package client_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
