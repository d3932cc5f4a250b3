//go:build !unix

package redistest

import (
	"errors"
	"os"
)

// Pausing a process needs SIGSTOP, which only Unix has.
func pause(*os.Process) error  { return errors.New("redistest: Pause needs a Unix system") }
func resume(*os.Process) error { return errors.New("redistest: Resume needs a Unix system") }
