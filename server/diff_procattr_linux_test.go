package server

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes a child server die with the test binary, so a test
// process killed mid-run (timeout, closed output pipe) leaks no redis-server.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
