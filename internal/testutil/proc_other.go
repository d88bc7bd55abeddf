//go:build !linux

package testutil

import (
	"os"
	"os/exec"
	"syscall"
)

// DieWithTest does nothing where the kernel cannot tie a child's life to
// its parent's; see the Linux version.
func DieWithTest(cmd *exec.Cmd) {}

// Alive reports whether pid is a process that still answers signal 0;
// see the Linux version, which also counts a zombie as dead.
func Alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}
