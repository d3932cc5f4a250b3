package main

import (
	"context"

	"github.com/remedy-go/remedy/internal/demo/quickstart"
)

var demoCommand = &command{
	name:     "demo",
	summary:  "run an agent repairing five calls against the example API, attempt by attempt",
	synopsis: "remedy demo",
	about: `Demo starts the example billing API on loopback and runs an agent against it
through remedy's loop: a wrong enum and a number as text repaired from the
envelope, a prerequisite run first, a charge whose response is lost replayed
instead of charged twice, a server-named wait, and a confirmation. It prints every
attempt and a summary of the side effects the server executed. It needs no network.`,
	examples: []string{"remedy demo"},
	exits: `0 every scenario ended as expected, each side effect executed once
1 one did not
2 usage error`,
	run: func(_ context.Context, in *invocation) error {
		if _, err := in.parse(0, 0); err != nil {
			return err
		}
		if err := quickstart.Run(in.stdout); err != nil {
			return &exitError{code: exitFailed, msg: "demo: " + err.Error()}
		}
		return nil
	},
}
