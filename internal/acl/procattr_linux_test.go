package acl

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the reference redis-server die with the test binary.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
