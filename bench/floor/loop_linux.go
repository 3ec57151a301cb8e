//go:build linux

package main

import (
	"log"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// datasync is fdatasync(2), as Redis's appendfsync always.
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

// loopConn is a connection of the event loop: bytes read and not yet
// parsed, requests waiting for the next fdatasync, replies to write.
type loopConn struct {
	fd      int
	in      []byte
	pending int
	out     []byte
}

// hopChain is -hops: a turn's log write goes through two goroutines, one
// that writes and syncs and one that hands the turn back, while the loop
// waits, as a write crosses Raft's leader loop and its FSM goroutine in
// streamd: what those hand-offs cost an event loop.
type hopChain struct {
	store chan hop
}

type hop struct {
	buf  []byte
	done chan struct{}
}

func newHopChain(f *os.File) *hopChain {
	h := &hopChain{store: make(chan hop, 1)}
	apply := make(chan hop, 1)
	go func() {
		for m := range h.store {
			writeSync(f, m.buf)
			apply <- m
		}
	}()
	go func() {
		for m := range apply {
			close(m.done)
		}
	}()
	return h
}

// write hands b to the chain and waits until it is back.
func (h *hopChain) write(b []byte) {
	done := make(chan struct{})
	h.store <- hop{buf: b, done: done}
	<-done
}

// serveLoop is -loop: Redis's design in Go. One goroutine on its own
// thread owns every socket through a level-triggered epoll: each turn it
// reads every ready connection once, appends and fdatasyncs the turn's
// requests together, then writes each connection's replies. No goroutine
// hands anything to another (unless withHops: see hopChain). Only on
// Linux.
func serveLoop(port int, f *os.File, withHops bool) {
	var hops *hopChain
	if withHops {
		hops = newHopChain(f)
	}
	runtime.LockOSThread()
	lfd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		log.Fatal(err)
	}
	syscall.SetsockoptInt(lfd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	if err := syscall.Bind(lfd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		log.Fatal(err)
	}
	if err := syscall.Listen(lfd, 1024); err != nil {
		log.Fatal(err)
	}
	ep, err := syscall.EpollCreate1(0)
	if err != nil {
		log.Fatal(err)
	}
	syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, lfd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(lfd)})
	conns := map[int]*loopConn{}
	events := make([]syscall.EpollEvent, 256)
	buf := make([]byte, 64<<10)
	var logbuf []byte
	var seq uint64
	var ready []*loopConn
	var id []byte
	for {
		n, err := syscall.EpollWait(ep, events, -1)
		if err == syscall.EINTR {
			continue
		}
		ready = ready[:0]
		for i := 0; i < n; i++ {
			fd := int(events[i].Fd)
			if fd == lfd {
				for {
					nfd, _, err := syscall.Accept4(lfd, syscall.SOCK_NONBLOCK)
					if err != nil {
						break
					}
					syscall.SetsockoptInt(nfd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
					conns[nfd] = &loopConn{fd: nfd}
					syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, nfd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(nfd)})
				}
				continue
			}
			c := conns[fd]
			// Replies are small: a write is assumed whole (a tool,
			// not a server).
			r, err := syscall.Read(fd, buf)
			if r <= 0 {
				if err == syscall.EAGAIN {
					continue
				}
				syscall.Close(fd)
				delete(conns, fd)
				continue
			}
			c.in = append(c.in, buf[:r]...)
			k, pings := parseLoop(c)
			for ; pings > 0; pings-- {
				c.out = append(c.out, "+PONG\r\n"...)
			}
			if k > 0 {
				c.pending = k
				ready = append(ready, c)
			} else if len(c.out) > 0 {
				syscall.Write(fd, c.out)
				c.out = c.out[:0]
			}
		}
		if len(ready) == 0 {
			continue
		}
		logbuf = logbuf[:0]
		for _, c := range ready {
			for j := 0; j < c.pending; j++ {
				logbuf = append(logbuf, "XADD s * f v\n"...)
			}
		}
		if hops != nil {
			hops.write(logbuf)
		} else {
			writeSync(f, logbuf)
		}
		for _, c := range ready {
			for j := 0; j < c.pending; j++ {
				seq++
				id = strconv.AppendUint(append(id[:0], "1700000000000-"...), seq, 10)
				c.out = append(c.out, '$')
				c.out = strconv.AppendInt(c.out, int64(len(id)), 10)
				c.out = append(c.out, "\r\n"...)
				c.out = append(c.out, id...)
				c.out = append(c.out, "\r\n"...)
			}
			c.pending = 0
			syscall.Write(c.fd, c.out)
			c.out = c.out[:0]
		}
	}
}

// parseLoop consumes the complete requests at the start of c.in: n
// requests to log and answer, ping PINGs to answer +PONG.
func parseLoop(c *loopConn) (n int, ping int) {
	b := c.in
	off := 0
	for {
		p := off
		if p >= len(b) || b[p] != '*' {
			break
		}
		e := indexCRLF(b, p)
		if e < 0 {
			break
		}
		k, _ := strconv.Atoi(string(b[p+1 : e]))
		p = e + 2
		ok := true
		isPing := false
		for i := 0; i < k; i++ {
			if p >= len(b) {
				ok = false
				break
			}
			e = indexCRLF(b, p)
			if e < 0 {
				ok = false
				break
			}
			m, _ := strconv.Atoi(string(b[p+1 : e]))
			p = e + 2
			if p+m+2 > len(b) {
				ok = false
				break
			}
			if i == 0 && k == 1 && m == 4 && (string(b[p:p+4]) == "PING" || string(b[p:p+4]) == "ping") {
				isPing = true
			}
			p += m + 2
		}
		if !ok {
			break
		}
		off = p
		if isPing {
			ping++
		} else {
			n++
		}
	}
	c.in = append(c.in[:0], b[off:]...)
	return
}

// indexCRLF is the index of the first "\r\n" in b at or after p, -1 if none.
func indexCRLF(b []byte, p int) int {
	for i := p; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return i
		}
	}
	return -1
}
