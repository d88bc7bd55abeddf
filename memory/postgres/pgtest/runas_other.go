//go:build !unix

package pgtest

import (
	"os/exec"
	"os/user"
)

// runAs does nothing where there is no root to step down from.
func runAs(cmd *exec.Cmd, u *user.User) {}
