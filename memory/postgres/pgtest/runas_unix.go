//go:build unix

package pgtest

import (
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// runAs makes cmd run as u (the caller is root): PostgreSQL refuses to
// run as root.
func runAs(cmd *exec.Cmd, u *user.User) {
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	cmd.Env = append(cmd.Environ(), "HOME="+u.HomeDir, "USER="+u.Username, "LOGNAME="+u.Username)
}
