package server

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
)

// TestTransientAccept: out of descriptors, buffers or memory and aborted
// connections are waited out; a closed listener or any other error ends
// the accept loop.
func TestTransientAccept(t *testing.T) {
	op := func(e error) error {
		return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", e)}
	}
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if !transientAccept(op(e)) {
			t.Errorf("%v: not transient", e)
		}
	}
	for _, err := range []error{net.ErrClosed, op(syscall.EINVAL), errors.New("other")} {
		if transientAccept(err) {
			t.Errorf("%v: transient", err)
		}
	}
}
