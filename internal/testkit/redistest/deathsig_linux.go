//go:build linux

package redistest

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal has the kernel kill the server when the test binary dies without running
// its cleanups (a -timeout panic, a SIGKILL). The signal follows the OS thread that started
// the server; Go ends threads only under runtime.LockOSThread, which Start does not use.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
