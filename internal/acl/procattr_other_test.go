//go:build !linux

package acl

import "os/exec"

// dieWithParent is a no-op where Pdeathsig does not exist.
func dieWithParent(cmd *exec.Cmd) {}
