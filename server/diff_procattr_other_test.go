//go:build !linux

package server

import "os/exec"

// dieWithParent is a no-op where the kernel offers no parent-death signal;
// t.Cleanup still stops the child on a normal test exit.
func dieWithParent(cmd *exec.Cmd) {}
