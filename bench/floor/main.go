// Command floor is the P1 floor of bench/writepath.sh (MODE=floor): the
// least a Go server with one goroutine per connection does for a durable
// XADD, to measure what is reachable on this machine before any of
// streamd's work (Raft, the state machine, dispatch, replies) is counted.
//
// Each connection's goroutine parses the requests it has (RESP arrays of
// bulk strings; any command), queues them as one group and waits; one log
// goroutine takes every queued group, appends one line per request to a
// file, fdatasyncs it, and wakes the groups; each answers an ID per request
// ("ms-seq" shaped) and flushes. That is Redis's appendfsync always
// without its single thread. With -loop (Linux), one event loop does it
// all instead, as Redis does (loop_linux.go). It is a benchmark tool, not a
// server: no errors beyond closing the connection, no reading back.
package main

import (
	"bufio"
	"flag"
	"log"
	"net"
	"os"
	"strconv"
	"sync"
)

// group is one connection's requests waiting for the same fdatasync.
type group struct {
	n     int
	first uint64 // the first ID's sequence, set by the log goroutine
	done  chan struct{}
}

// logQueue holds the groups not yet written.
type logQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	groups []*group
}

func (q *logQueue) add(g *group) {
	q.mu.Lock()
	q.groups = append(q.groups, g)
	if len(q.groups) == 1 {
		q.cond.Signal()
	}
	q.mu.Unlock()
}

// run writes and syncs every queued group, then wakes them, forever.
func (q *logQueue) run(f *os.File) {
	var taken []*group
	var buf []byte
	var seq uint64
	for {
		q.mu.Lock()
		for len(q.groups) == 0 {
			q.cond.Wait()
		}
		taken, q.groups = q.groups, taken[:0]
		q.mu.Unlock()
		buf = buf[:0]
		for _, g := range taken {
			for range g.n {
				buf = append(buf, "XADD s * f v\n"...)
			}
		}
		writeSync(f, buf)
		for _, g := range taken {
			g.first = seq + 1
			seq += uint64(g.n)
			close(g.done)
		}
	}
}

// writeSync appends b to f and syncs it (datasync).
func writeSync(f *os.File, b []byte) {
	if _, err := f.Write(b); err != nil {
		log.Fatal(err)
	}
	if err := datasync(f); err != nil {
		log.Fatal(err)
	}
}

// skipRequest reads past one request (*N then N bulk strings); ping
// reports a PING (answered +PONG, not logged), for the scripts' readiness
// check.
func skipRequest(r *bufio.Reader) (ping bool, err error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return false, err
	}
	n, _ := strconv.Atoi(string(line[1 : len(line)-2]))
	for i := range n {
		l, err := r.ReadSlice('\n')
		if err != nil {
			return false, err
		}
		m, _ := strconv.Atoi(string(l[1 : len(l)-2]))
		if i == 0 && m == 4 {
			b, err := r.Peek(4)
			if err != nil {
				return false, err
			}
			ping = n == 1 && (string(b) == "PING" || string(b) == "ping")
		}
		if _, err := r.Discard(m + 2); err != nil {
			return false, err
		}
	}
	return ping, nil
}

func serve(c net.Conn, q *logQueue) {
	defer c.Close()
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	var id []byte
	for {
		ping, err := skipRequest(r)
		if err != nil {
			return
		}
		if ping {
			w.WriteString("+PONG\r\n")
			if w.Flush() != nil {
				return
			}
			continue
		}
		n := 1
		for r.Buffered() > 0 {
			if _, err := skipRequest(r); err != nil {
				return
			}
			n++
		}
		g := &group{n: n, done: make(chan struct{})}
		q.add(g)
		<-g.done
		for i := range uint64(n) {
			id = strconv.AppendUint(append(id[:0], "1700000000000-"...), g.first+i, 10)
			w.WriteString("$")
			w.WriteString(strconv.Itoa(len(id)))
			w.WriteString("\r\n")
			w.Write(id)
			w.WriteString("\r\n")
		}
		if err := w.Flush(); err != nil {
			return
		}
	}
}

func main() {
	port := flag.Int("port", 6399, "port on 127.0.0.1")
	dir := flag.String("dir", ".", "directory of the log file")
	loop := flag.Bool("loop", false, "one event loop (epoll) instead of a goroutine per connection")
	hops := flag.Bool("hops", false, "with -loop: each turn's log write crosses two goroutines, as Raft's")
	flag.Parse()
	f, err := os.OpenFile(*dir+"/floor.log", os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	if *loop {
		serveLoop(*port, f, *hops)
		return
	}
	q := &logQueue{}
	q.cond = sync.NewCond(&q.mu)
	go q.run(f)
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(*port))
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(c, q)
	}
}
