package server

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"streamd/internal/testutil"
	"streamd/server/resp"
)

// heapInUse is the heap's bytes in objects (live and not yet swept), as
// runtime/metrics reports them.
func heapInUse() int64 { return readMetric("/memory/classes/heap/objects:bytes") }

// heapFree is heap memory the runtime holds from the OS without using it
// (freed, not yet returned by the scavenger).
func heapFree() int64 { return readMetric("/memory/classes/heap/free:bytes") }

func readMetric(name string) int64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// rawCmd sends args on nc and reads one reply, returning its size on the
// wire.
func rawCmd(t *testing.T, nc net.Conn, args ...string) int64 {
	t.Helper()
	if _, err := nc.Write(resp.AppendCommand(nil, toBytes(args)...)); err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	rr := resp.NewReplyReader(bufio.NewReader(countingReader{nc, &n}))
	v, err := rr.Read()
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	if v.Kind == '-' {
		t.Fatalf("%q: %s", args, v.Str)
	}
	return n.Load()
}

// fillStream adds n entries to key (pipelined) and makes group g's
// consumer c read them all, so every entry is pending.
func fillStream(t *testing.T, addr, key string, n int) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	r := resp.NewReplyReader(bufio.NewReader(nc))
	const batch = 2000
	for i := 0; i < n; i += batch {
		var b []byte
		m := min(batch, n-i)
		for j := 0; j < m; j++ {
			b = resp.AppendCommand(b, []byte("XADD"), []byte(key), []byte("*"),
				[]byte("field"), []byte("value-"+strconv.Itoa(i+j)))
		}
		if _, err := nc.Write(b); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < m; j++ {
			if _, err := r.Read(); err != nil {
				t.Fatal(err)
			}
		}
	}
	rawCmd(t, nc, "XGROUP", "CREATE", key, "g", "0")
	rawCmd(t, nc, "XREADGROUP", "GROUP", "g", "c", "STREAMS", key, ">")
}

// TestBigReplyMemory measures what a huge reply costs a client that does
// not read it: the heap's peak growth while the server is stuck writing
// XRANGE - + and XINFO STREAM FULL COUNT 0 of a 200k-entry stream (all
// pending in a group), against the reply's size on the wire; and that the
// memory is released once the client is gone. The peak is logged and
// held to a generous bound; the release is polled for.
func TestBigReplyMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 200k-entry stream")
	}
	n := 200_000
	if raceEnabled {
		n = 50_000
	}
	srv, addr := startTestServer(t, nil)
	fillStream(t, addr, "s", n)
	for _, cmd := range [][]string{
		{"XRANGE", "s", "-", "+"},
		{"XINFO", "STREAM", "s", "FULL", "COUNT", "0"},
	} {
		t.Run(cmd[0], func(t *testing.T) {
			reader, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			wire := rawCmd(t, reader, cmd...)
			reader.Close()

			runtime.GC()
			base, baseFree := heapInUse(), heapFree()
			slow, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer slow.Close()
			out0 := srv.stats.NetOutput.Load()
			var peak atomic.Int64
			peak.Store(base)
			stop := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				tick := time.NewTicker(200 * time.Microsecond)
				defer tick.Stop()
				for {
					if h := heapInUse(); h > peak.Load() {
						peak.Store(h)
					}
					select {
					case <-stop:
						return
					case <-tick.C:
					}
				}
			}()
			if _, err := slow.Write(resp.AppendCommand(nil, toBytes(cmd)...)); err != nil {
				t.Fatal(err)
			}
			// The server is stuck once its output has not moved for a
			// while (the sockets' buffers are full).
			last, still := int64(-1), 0
			testutil.Eventually(t, 60*time.Second, 20*time.Millisecond, func() error {
				out := srv.stats.NetOutput.Load() - out0
				if out > 0 && out == last {
					still++
				} else {
					still = 0
				}
				last = out
				if still < 25 {
					return fmt.Errorf("output or heap still moving (%d bytes written)", out)
				}
				return nil
			})
			close(stop)
			<-sampled
			growth := peak.Load() - base
			t.Logf("%s: wire %d bytes, written before stall %d, peak heap growth %d (%.2f× wire)",
				cmd[0], wire, last, growth, float64(growth)/float64(wire))
			if growth > 2*wire {
				t.Errorf("peak heap growth %d is over 2× the reply's %d bytes", growth, wire)
			}

			slow.Close()
			testutil.Eventually(t, 30*time.Second, 50*time.Millisecond, func() error {
				runtime.GC()
				if h := heapInUse(); h > base+wire/4+(4<<20) {
					return fmt.Errorf("heap %d still above baseline %d after the client left (reply %d)", h, base, wire)
				}
				return nil
			})
			// And the scavenger gives the freed pages back to the OS.
			t0 := time.Now()
			testutil.Eventually(t, 60*time.Second, 50*time.Millisecond, func() error {
				runtime.GC()
				if f := heapFree(); f > baseFree+wire/4+(4<<20) {
					return fmt.Errorf("%d bytes of free heap still held from the OS (%d before, reply %d)", f, baseFree, wire)
				}
				return nil
			})
			t.Logf("%s: memory back to baseline and returned to the OS %v after the client left", cmd[0], time.Since(t0).Round(time.Millisecond))
		})
	}
}

func toBytes(args []string) [][]byte {
	bs := make([][]byte, len(args))
	for i, a := range args {
		bs[i] = []byte(a)
	}
	return bs
}

// TestPushesHeldDuringBigReplyAreLimited checks that a tracking client
// stuck reading a huge reply (its pushes are held until the reply is
// queued whole, so they never split it) is still disconnected once the
// held pushes pass the output limit, and writers are not blocked by it.
func TestPushesHeldDuringBigReplyAreLimited(t *testing.T) {
	_, addr := startTestServer(t, nil)
	w := dial(t, addr)
	value := strings.Repeat("v", 100<<10)
	for i := 0; i < 200; i++ { // 20 MB, well past what the sockets buffer
		mustDo(t, w, "XADD", "big", "*", "f", value)
	}
	slow := dial(t, addr)
	mustDo(t, slow, "HELLO", "3")
	mustDo(t, slow, "CLIENT", "TRACKING", "on", "BCAST")
	id := strings.TrimPrefix(mustDo(t, slow, "CLIENT", "ID"), "(integer) ")
	if err := slow.Send("XRANGE", "big", "-", "+"); err != nil {
		t.Fatal(err)
	}
	// slow reads nothing from here on.
	connected := func() bool {
		v, err := w.Do("CLIENT", "LIST")
		if err != nil {
			t.Fatalf("CLIENT LIST: %v", err)
		}
		return strings.Contains(v.Str, "id="+id+" ")
	}
	key := strings.Repeat("k", 1<<20)
	n := pushOutputLimit/len(key) + 8
	for i := 0; i < n; i++ {
		if err := w.Send("XADD", fmt.Sprintf("%s%d", key, i), "*", "f", "v"); err != nil {
			t.Fatalf("XADD %d: %v", i, err)
		}
		if v, err := w.Receive(5 * time.Second); err != nil || v.Kind != '$' {
			t.Fatalf("XADD %d blocked or failed: %v %v", i, v, err)
		}
	}
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		if connected() {
			return fmt.Errorf("client %s still connected", id)
		}
		return nil
	})
}
