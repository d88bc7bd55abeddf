package testutil

import (
	"os/exec"
	"syscall"
)

// DieWithTest makes the kernel kill cmd's process when the test binary
// that started it dies. A go test time-out ends the binary with a panic
// that runs no cleanup, and a server left behind would keep loading the
// machine for the runs after it. Call it before cmd.Start.
func DieWithTest(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
