// Command quickstart starts the reference server with a small billing API on loopback and runs
// an agent against it through remedy's loop: every call starts wrong in a way agents' calls
// do, and the transcript shows, attempt by attempt, what failed, what the envelope said and
// what the loop did about it. It ends with a summary of each scenario and of the side effects
// the server executed. It needs no network and finishes in well under a second.
//
//	go run ./examples/quickstart
//
// The scenarios live in internal/demo/quickstart, which `remedy demo` runs too; the API is
// internal/demo/billing.
package main

import (
	"fmt"
	"os"

	"github.com/remedy-go/remedy/internal/demo/quickstart"
)

func main() {
	if err := quickstart.Run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}
