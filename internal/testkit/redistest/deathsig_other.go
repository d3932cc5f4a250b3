//go:build !linux

package redistest

import "os/exec"

// setParentDeathSignal does nothing off Linux: the server is stopped by the test's cleanup.
func setParentDeathSignal(*exec.Cmd) {}
