package router

import (
	"net"
	"syscall"
)

// peerClosed reports whether an idle upstream's peer has closed it (or sent
// something no request asked for): a peek at its socket finds end of file,
// an error or unread bytes. An upstream to a node that died since its last
// use is dialled again instead of taking a request that nobody will read.
func peerClosed(c net.Conn) bool {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = tc.NetConn() // TLS: the socket underneath
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// Nothing to read (EAGAIN) is a live, idle connection; bytes,
		// end of file or an error are not.
		closed = err != syscall.EAGAIN && err != syscall.EINTR
		return true
	})
	return closed || err != nil
}
