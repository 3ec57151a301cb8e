//go:build linux

package server

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// loopConn is a loop client's connection (Client.nc). While the loop owns
// it, the socket is a bare descriptor outside Go's poller (fd), so data
// arriving wakes only the loop's epoll, not Go's; Close from any goroutine
// asks the loop to close it. Handed to the goroutine path, it becomes a
// net.Conn of Go's again (nc) and every method goes to it.
type loopConn struct {
	l            *eventLoop
	c            *Client
	laddr, raddr net.Addr

	mu       sync.Mutex
	fd       int // the loop's descriptor; -1 once closed
	inLoop   bool
	closeReq bool
	nc       net.Conn // after the hand-off
	// rawUsers counts Writes on fd in progress; fd is closed when the
	// last ends if closeFD is set meanwhile.
	rawUsers int
	closeFD  bool
}

// conn is the goroutine path's connection, nil while the loop owns it.
func (w *loopConn) conn() net.Conn {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nc
}

// Read is the goroutine path's (the loop reads through loopSource).
func (w *loopConn) Read(p []byte) (int, error) {
	if nc := w.conn(); nc != nil {
		return nc.Read(p)
	}
	return 0, errors.New("read of an event loop connection")
}

// Write writes all of p: on the goroutine path's connection, or on the
// loop's descriptor, waiting in poll(2) while the socket is full (a reply
// written as it is rendered, or a push's drain goroutine). A close shuts
// the socket down, which ends such a wait.
func (w *loopConn) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.nc != nil {
		nc := w.nc
		w.mu.Unlock()
		return nc.Write(p)
	}
	if w.fd < 0 || w.closeFD {
		w.mu.Unlock()
		return 0, net.ErrClosed
	}
	fd := w.fd
	w.rawUsers++
	w.mu.Unlock()
	defer w.endRaw()
	written := 0
	for written < len(p) {
		n, err := syscall.Write(fd, p[written:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			pfd := []pollFd{{fd: int32(fd), events: pollOut}}
			if err := poll(pfd, -1); err != nil && err != syscall.EINTR {
				return written, err
			}
			continue
		case err != nil:
			return written, err
		}
		written += n
	}
	return written, nil
}

// endRaw ends a Write on fd, closing fd if it was let go meanwhile.
func (w *loopConn) endRaw() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rawUsers--
	if w.closeFD && w.rawUsers == 0 && w.fd >= 0 {
		syscall.Close(w.fd)
		w.fd = -1
	}
}

// dropFD lets the loop's descriptor go: closed now, or by the last Write
// on it (shut down first when shut is set, so that Write's wait ends).
func (w *loopConn) dropFD(shut bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 || w.closeFD {
		return
	}
	w.closeFD = true
	if w.rawUsers > 0 {
		if shut {
			syscall.Shutdown(w.fd, syscall.SHUT_RDWR)
		}
		return
	}
	syscall.Close(w.fd)
	w.fd = -1
}

// Close closes the connection, through the loop while it owns it.
func (w *loopConn) Close() error {
	w.mu.Lock()
	if w.inLoop {
		if !w.closeReq {
			w.closeReq = true
			w.l.post(nil, w.c)
		}
		w.mu.Unlock()
		return nil
	}
	nc := w.nc
	w.mu.Unlock()
	w.dropFD(true)
	if nc != nil {
		return nc.Close()
	}
	return nil
}

// CloseRead half-closes the connection (a graceful shutdown): the loop, or
// the goroutine path's reader, then reads the end of the stream.
func (w *loopConn) CloseRead() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.nc != nil {
		if cr, ok := w.nc.(interface{ CloseRead() error }); ok {
			return cr.CloseRead()
		}
		return errors.ErrUnsupported
	}
	if w.fd < 0 {
		return net.ErrClosed
	}
	return syscall.Shutdown(w.fd, syscall.SHUT_RD)
}

// FD is the descriptor CLIENT LIST shows: the loop's, or the goroutine
// path's connection's.
func (w *loopConn) FD() int64 {
	w.mu.Lock()
	nc, fd := w.nc, w.fd
	w.mu.Unlock()
	if nc != nil {
		return netConnFD(nc)
	}
	return int64(fd)
}

func (w *loopConn) LocalAddr() net.Addr  { return w.laddr }
func (w *loopConn) RemoteAddr() net.Addr { return w.raddr }

// Deadlines apply on the goroutine path's connection; the loop sets none.

func (w *loopConn) SetDeadline(t time.Time) error {
	if nc := w.conn(); nc != nil {
		return nc.SetDeadline(t)
	}
	return nil
}

func (w *loopConn) SetReadDeadline(t time.Time) error {
	if nc := w.conn(); nc != nil {
		return nc.SetReadDeadline(t)
	}
	return nil
}

func (w *loopConn) SetWriteDeadline(t time.Time) error {
	if nc := w.conn(); nc != nil {
		return nc.SetWriteDeadline(t)
	}
	return nil
}

// handOff makes the descriptor a Go connection for the goroutine path and
// ends the loop's ownership; closeReq reports whether a close was asked
// for meanwhile. On an error (no descriptor left) the connection is closed.
func (w *loopConn) handOff() (closeReq bool, err error) {
	w.mu.Lock()
	fd := w.fd
	w.mu.Unlock()
	var nc net.Conn
	if nfd, err2 := dupCloexec(fd); err2 != nil {
		err = err2
	} else {
		f := os.NewFile(uintptr(nfd), "client")
		nc, err = net.FileConn(f)
		f.Close()
	}
	w.mu.Lock()
	w.inLoop = false
	closeReq = w.closeReq
	w.nc = nc
	w.mu.Unlock()
	w.dropFD(false)
	return closeReq, err
}

// release ends the loop's ownership of a connection it closes.
func (w *loopConn) release() {
	w.mu.Lock()
	w.inLoop = false
	w.mu.Unlock()
	w.dropFD(true)
}

// loopSource is the reader under a loop client's RequestReader: one
// non-blocking read of the socket while the loop owns it, the connection's
// own (blocking) reads once it is handed to a goroutine.
type loopSource struct {
	fd     int
	w      *loopConn
	inLoop bool
	total  *atomic.Int64
}

func (r *loopSource) Read(p []byte) (int, error) {
	if !r.inLoop {
		n, err := r.w.Read(p)
		r.total.Add(int64(n))
		return n, err
	}
	for {
		n, err := syscall.Read(r.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return 0, errWouldBlock
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		r.total.Add(int64(n))
		return n, nil
	}
}

// dupCloexec duplicates a descriptor, close-on-exec.
func dupCloexec(fd int) (int, error) {
	nfd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(nfd), nil
}

// pollFd is struct pollfd.
type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

const pollOut = 0x4 // POLLOUT

// poll is poll(2) (ms < 0: no timeout).
func poll(fds []pollFd, ms int) error {
	_, _, errno := syscall.Syscall(syscall.SYS_POLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), uintptr(ms))
	if errno != 0 {
		return errno
	}
	return nil
}
