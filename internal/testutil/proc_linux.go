package testutil

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
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

// Alive reports whether pid is a process that has not yet died (a zombie
// waiting to be reaped counts as dead): tests that check a child did not
// outlive its parent wait for it to turn false.
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
