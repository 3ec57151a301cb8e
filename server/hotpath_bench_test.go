package server

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"sync"
	"testing"

	"streamd/config"
	"streamd/replication"
)

// Benchmarks of the write and group-read hot paths as redis-benchmark drives
// them: several connections over loopback, each sending pipelines of one
// command repeated, against a durable shard with appendfsync everysec (so
// the CPU cost shows, not the disk). One op is one command. Run with
//
//	go test -run '^$' -bench HotPath -benchmem ./server/

// hotPathServer serves a durable everysec shard on 127.0.0.1:0 and returns
// its address; everything stops when b ends.
func hotPathServer(b *testing.B) string { return hotPathServerFsync(b, replication.FsyncEverySec) }

// hotPathServerFsync is hotPathServer with the given appendfsync policy.
func hotPathServerFsync(b *testing.B, fsync replication.FsyncPolicy) string {
	b.Helper()
	sh, err := replication.Open(replication.Options{Dir: b.TempDir(), Fsync: fsync,
		Logger: pquietLog()})
	if err != nil {
		b.Fatalf("open shard: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		sh.Close(false)
		b.Fatal(err)
	}
	cfg := config.Default()
	srv := New(cfg, sh, pquietLog())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	b.Cleanup(func() {
		srv.Close()
		if err := <-done; err != nil {
			b.Errorf("Serve: %v", err)
		}
		sh.Close(false)
	})
	return ln.Addr().String()
}

// encodeCommand renders args as a RESP multibulk request.
func encodeCommand(args ...string) []byte {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&buf, "$%d\r\n%s\r\n", len(a), a)
	}
	return buf.Bytes()
}

// skipReply reads one reply of a simple shape (status, error, integer,
// bulk, or arrays of those, nested) and fails on an error reply.
func skipReply(r *bufio.Reader) error {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return err
	}
	switch line[0] {
	case '+', ':':
		return nil
	case '-':
		return fmt.Errorf("error reply %q", line)
	case '$':
		n := atoiLine(line)
		if n < 0 {
			return nil
		}
		_, err = r.Discard(n + 2)
		return err
	case '*':
		n := atoiLine(line)
		for i := 0; i < n; i++ {
			if err := skipReply(r); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unexpected reply %q", line)
}

// atoiLine parses the length in a "$N\r\n" or "*N\r\n" line without
// allocating.
func atoiLine(line []byte) int {
	n, neg := 0, false
	for _, c := range line[1:] {
		switch {
		case c == '-':
			neg = true
		case c >= '0' && c <= '9':
			n = n*10 + int(c-'0')
		}
	}
	if neg {
		return -n
	}
	return n
}

// drive sends b.N commands (cmd(i) for the i-th of a connection) over
// conns connections in pipelines of depth, and checks every reply.
func drive(b *testing.B, addr string, conns, depth int, cmd func(conn, i int) []byte) {
	b.Helper()
	per := (b.N + conns - 1) / conns
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	b.ResetTimer()
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			defer nc.Close()
			r := bufio.NewReaderSize(nc, 64<<10)
			var out []byte
			for sent := 0; sent < per; {
				n := min(depth, per-sent)
				out = out[:0]
				for j := 0; j < n; j++ {
					out = append(out, cmd(c, sent+j)...)
				}
				if _, err := nc.Write(out); err != nil {
					errs <- err
					return
				}
				for j := 0; j < n; j++ {
					if err := skipReply(r); err != nil {
						errs <- err
						return
					}
				}
				sent += n
			}
		}(c)
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

func benchXAdd(b *testing.B, depth int) { benchXAddFsync(b, depth, 16, replication.FsyncEverySec) }

func benchXAddFsync(b *testing.B, depth, conns int, fsync replication.FsyncPolicy) {
	addr := hotPathServerFsync(b, fsync)
	req := encodeCommand("XADD", "s", "*", "f", "v")
	drive(b, addr, conns, depth, func(int, int) []byte { return req })
}

// BenchmarkHotPathXAddDurableP16 is redis-benchmark -c 50 -P 16 XADD s * f v
// against the durable default (appendfsync always): group commit, one
// fsync per log entry.
func BenchmarkHotPathXAddDurableP16(b *testing.B) { benchXAddFsync(b, 16, 50, replication.FsyncAlways) }

// BenchmarkHotPathXAddP16 is redis-benchmark -P 16 XADD s * f v.
func BenchmarkHotPathXAddP16(b *testing.B) { benchXAdd(b, 16) }

// BenchmarkHotPathXAddP1 is redis-benchmark -P 1 XADD s * f v.
func BenchmarkHotPathXAddP1(b *testing.B) { benchXAdd(b, 1) }

// BenchmarkHotPathReadGroupAckP16 alternates XREADGROUP COUNT 1 (one new
// entry per call) and XACK of an ID never delivered (the ack path without
// the entry), each connection on its own consumer, over a stream
// preloaded with enough entries.
func BenchmarkHotPathReadGroupAckP16(b *testing.B) {
	addr := hotPathServer(b)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReader(nc)
	const preload = 1 << 20
	n := min(b.N, preload)
	add := encodeCommand("XADD", "g", "*", "f", "v")
	for sent := 0; sent < n; {
		k := min(256, n-sent)
		nc.Write(bytes.Repeat(add, k))
		for j := 0; j < k; j++ {
			if err := skipReply(r); err != nil {
				b.Fatal(err)
			}
		}
		sent += k
	}
	nc.Write(encodeCommand("XGROUP", "CREATE", "g", "grp", "0"))
	if err := skipReply(r); err != nil {
		b.Fatal(err)
	}
	nc.Close()
	reads := make([][]byte, 16)
	for c := range reads {
		reads[c] = encodeCommand("XREADGROUP", "GROUP", "grp", fmt.Sprintf("c%d", c), "COUNT", "1",
			"STREAMS", "g", ">")
	}
	ack := encodeCommand("XACK", "g", "grp", "1-1")
	drive(b, addr, 16, 16, func(c, i int) []byte {
		if i%2 == 0 {
			return reads[c]
		}
		return ack
	})
}
