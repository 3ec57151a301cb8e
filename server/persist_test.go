package server

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/testutil"
	"streamd/replication"
)

// durableServer is an in-process server on a shard kept in a TempDir.
type durableServer struct {
	t       *testing.T
	dir     string
	srv     *Server
	sh      *replication.Shard
	addr    string
	serveCh chan error
	stopped bool
}

// pquietLog discards log output.
func pquietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// startDurable opens a shard on dir and serves it on 127.0.0.1:0; the
// test's cleanup stops it (without a snapshot) unless stop ran.
func startDurable(t *testing.T, dir string) *durableServer {
	t.Helper()
	sh, err := replication.Open(replication.Options{Dir: dir, Logger: pquietLog()})
	if err != nil {
		t.Fatalf("open shard: %v", err)
	}
	return serveShard(t, dir, sh, nil)
}

// serveShard serves sh; prepare, if set, runs on the server before Serve.
func serveShard(t *testing.T, dir string, sh *replication.Shard, prepare func(*Server)) *durableServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		sh.Close(false)
		t.Fatalf("listen: %v", err)
	}
	cfg := config.Default()
	cfg.Dir = dir
	srv := New(cfg, sh, pquietLog())
	if prepare != nil {
		prepare(srv)
	}
	d := &durableServer{t: t, dir: dir, srv: srv, sh: sh, addr: ln.Addr().String(), serveCh: make(chan error, 1)}
	go func() { d.serveCh <- srv.Serve(ln) }()
	t.Cleanup(func() { d.stop(false) })
	return d
}

// stop does what cmd/streamd does at shutdown: close the server, then the
// shard (snapshotting it when save is set).
func (d *durableServer) stop(save bool) {
	if d.stopped {
		return
	}
	d.stopped = true
	if err := d.srv.Close(); err != nil {
		d.t.Errorf("server close: %v", err)
	}
	if err := <-d.serveCh; err != nil {
		d.t.Errorf("serve: %v", err)
	}
	if err := d.sh.Close(save); err != nil {
		d.t.Errorf("shard close(%v): %v", save, err)
	}
}

// dial connects a raw RESP client, closed at cleanup.
func (d *durableServer) dial() *respConn {
	d.t.Helper()
	c, err := dialRESP(d.addr)
	if err != nil {
		d.t.Fatalf("dial: %v", err)
	}
	d.t.Cleanup(func() { c.Close() })
	return c
}

// pdo runs a command and fails the test on a transport error.
func pdo(t *testing.T, c *respConn, args ...string) Value {
	t.Helper()
	v, err := c.Do(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// pexpect runs a command and checks its rendered reply.
func pexpect(t *testing.T, c *respConn, want string, args ...string) {
	t.Helper()
	if got := pdo(t, c, args...).String(); got != want {
		t.Fatalf("%v = %s, want %s", args, got, want)
	}
}

// pinfo runs INFO section and parses its "k:v" lines.
func pinfo(t *testing.T, c *respConn, section string) map[string]string {
	t.Helper()
	v := pdo(t, c, "INFO", section)
	if v.Kind != '$' {
		t.Fatalf("INFO %s: %s", section, v)
	}
	out := map[string]string{}
	for _, line := range strings.Split(v.Str, "\r\n") {
		if k, val, ok := strings.Cut(line, ":"); ok {
			out[k] = val
		}
	}
	return out
}

// pinfoInt returns an integer INFO field.
func pinfoInt(t *testing.T, f map[string]string, k string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(f[k], 10, 64)
	if err != nil {
		t.Fatalf("INFO %s = %q: %v", k, f[k], err)
	}
	return n
}

func TestPersistSaveBgsaveLastsaveInfo(t *testing.T) {
	d := startDurable(t, t.TempDir())
	c := d.dial()
	started := d.srv.startTime.Unix()

	f := pinfo(t, c, "persistence")
	for k, want := range map[string]string{"loading": "0", "aof_enabled": "1", "aof_last_write_status": "ok",
		"rdb_bgsave_in_progress": "0", "rdb_last_bgsave_status": "ok", "aof_fsync": "always", "rdb_saves": "0"} {
		if f[k] != want {
			t.Errorf("INFO %s = %q, want %q", k, f[k], want)
		}
	}
	for i := 0; i < 3; i++ {
		if v := pdo(t, c, "XADD", "s", "*", "f", strconv.Itoa(i)); v.Kind != '$' {
			t.Fatalf("XADD: %s", v)
		}
	}
	f = pinfo(t, c, "persistence")
	if n := pinfoInt(t, f, "rdb_changes_since_last_save"); n < 3 {
		t.Errorf("rdb_changes_since_last_save = %d after 3 writes, want >= 3", n)
	}
	if n := pinfoInt(t, f, "raft_applied_index"); n < 3 {
		t.Errorf("raft_applied_index = %d after 3 writes", n)
	}

	pexpect(t, c, "+OK", "SAVE")
	f = pinfo(t, c, "persistence")
	if n := pinfoInt(t, f, "rdb_changes_since_last_save"); n != 0 {
		t.Errorf("rdb_changes_since_last_save = %d after SAVE, want 0", n)
	}
	if n := pinfoInt(t, f, "rdb_saves"); n != 1 {
		t.Errorf("rdb_saves = %d, want 1", n)
	}
	last := pdo(t, c, "LASTSAVE")
	if last.Kind != ':' || last.Int < started || last.Int > time.Now().Unix() {
		t.Fatalf("LASTSAVE = %s, want a time in [%d, now]", last, started)
	}
	if got := pinfoInt(t, f, "rdb_last_save_time"); got != last.Int {
		t.Errorf("rdb_last_save_time = %d, LASTSAVE = %d", got, last.Int)
	}

	pdo(t, c, "XADD", "s", "*", "f", "after-save")
	pexpect(t, c, "+Background saving started", "BGSAVE")
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		f = pinfo(t, c, "persistence")
		if f["rdb_bgsave_in_progress"] != "0" || f["rdb_saves"] != "2" {
			return errors.New("bgsave still running: " + f["rdb_bgsave_in_progress"] + " saves " + f["rdb_saves"])
		}
		return nil
	})
	if f["rdb_last_bgsave_status"] != "ok" || pinfoInt(t, f, "rdb_last_bgsave_time_sec") < 0 {
		t.Errorf("after BGSAVE: status %q, time %q", f["rdb_last_bgsave_status"], f["rdb_last_bgsave_time_sec"])
	}
	pexpect(t, c, "(error) ERR syntax error", "BGSAVE", "now")
	pexpect(t, c, "(error) ERR wrong number of arguments for 'save' command", "SAVE", "x")
	pexpect(t, c, "(error) ERR wrong number of arguments for 'lastsave' command", "LASTSAVE", "x")

	// While a background save runs (simulated: its duration is the
	// shard's), SAVE and BGSAVE are refused and BGSAVE SCHEDULE queues.
	d.srv.persist.mu.Lock()
	d.srv.persist.bgsaveRunning = true
	d.srv.persist.bgsaveStart = time.Now()
	d.srv.persist.mu.Unlock()
	pexpect(t, c, "(error) ERR Background save already in progress", "SAVE")
	pexpect(t, c, "(error) ERR Background save already in progress", "BGSAVE")
	pexpect(t, c, "+Background saving scheduled", "BGSAVE", "SCHEDULE")
	if f := pinfo(t, c, "persistence"); f["rdb_bgsave_in_progress"] != "1" || f["rdb_current_bgsave_time_sec"] == "-1" {
		t.Errorf("while running: in_progress %q current %q", f["rdb_bgsave_in_progress"], f["rdb_current_bgsave_time_sec"])
	}
	d.srv.persist.mu.Lock()
	d.srv.persist.bgsaveRunning, d.srv.persist.bgsaveQueued = false, false
	d.srv.persist.mu.Unlock()
}

func TestPersistConfigAppendfsync(t *testing.T) {
	d := startDurable(t, t.TempDir())
	c := d.dial()
	pexpect(t, c, `["appendonly", "yes"]`, "CONFIG", "GET", "appendonly")
	pexpect(t, c, `["appendfsync", "always"]`, "CONFIG", "GET", "appendfsync")
	pexpect(t, c, "+OK", "CONFIG", "SET", "appendfsync", "everysec")
	pexpect(t, c, `["appendfsync", "everysec"]`, "CONFIG", "GET", "appendfsync")
	if f := pinfo(t, c, "persistence"); f["aof_fsync"] != "everysec" {
		t.Errorf("aof_fsync = %q after CONFIG SET", f["aof_fsync"])
	}
	if st := d.sh.Stats(); st.Fsync != replication.FsyncEverySec {
		t.Errorf("shard fsync = %v, want everysec", st.Fsync)
	}
	pdo(t, c, "XADD", "s", "*", "f", "v")
	pexpect(t, c, "(error) ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) must be one of the following: always, everysec",
		"CONFIG", "SET", "appendfsync", "sometimes")
	pexpect(t, c, "+OK", "CONFIG", "SET", "appendfsync", "ALWAYS")
	pexpect(t, c, `["appendfsync", "always"]`, "CONFIG", "GET", "appendfsync")
	if st := d.sh.Stats(); st.Fsync != replication.FsyncAlways {
		t.Errorf("shard fsync = %v, want always", st.Fsync)
	}
	pexpect(t, c, "(error) ERR CONFIG SET failed (possibly related to argument 'appendonly') - streamd supports only 'yes' (the Raft log is always on)",
		"CONFIG", "SET", "appendonly", "no")
}

// shutdownAndReopen sends SHUTDOWN args, checks the connection closes
// without a reply and Done fires, stops the server as cmd/streamd does and
// reopens the directory: the new server has the data either way.
func shutdownAndReopen(t *testing.T, wantSave bool, args ...string) {
	dir := t.TempDir()
	d := startDurable(t, dir)
	c := d.dial()
	var ids []string
	for i := 0; i < 5; i++ {
		v := pdo(t, c, "XADD", "s", "*", "n", strconv.Itoa(i))
		ids = append(ids, v.Str)
	}
	if err := c.Send(args...); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Receive(10 * time.Second); err == nil {
		t.Fatalf("%v answered %s; want the connection closed", args, v)
	}
	select {
	case <-d.srv.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("%v: Done not closed", args)
	}
	if got := d.srv.ShutdownSave(); got != wantSave {
		t.Fatalf("%v: ShutdownSave = %v, want %v", args, got, wantSave)
	}
	d.stop(d.srv.ShutdownSave())

	sh, err := replication.Open(replication.Options{Dir: dir, Logger: pquietLog()})
	if err != nil {
		t.Fatalf("reopen after %v: %v", args, err)
	}
	if wantSave && sh.Stats().LastSaveUnix == 0 {
		t.Errorf("%v: no snapshot after reopen", args)
	}
	d2 := serveShard(t, dir, sh, nil)
	c2 := d2.dial()
	v := pdo(t, c2, "XRANGE", "s", "-", "+")
	if len(v.Elems) != len(ids) {
		t.Fatalf("after %v and restart: XRANGE = %s, want %d entries", args, v, len(ids))
	}
	for i, e := range v.Elems {
		if e.Elems[0].Str != ids[i] || e.Elems[1].Elems[1].Str != strconv.Itoa(i) {
			t.Errorf("entry %d = %s, want %s n %d", i, e, ids[i], i)
		}
	}
}

func TestShutdownNoSave(t *testing.T)  { shutdownAndReopen(t, false, "SHUTDOWN", "NOSAVE") }
func TestShutdownSave(t *testing.T)    { shutdownAndReopen(t, true, "SHUTDOWN", "SAVE", "NOW") }
func TestShutdownDefault(t *testing.T) { shutdownAndReopen(t, true, "shutdown") }

func TestShutdownErrors(t *testing.T) {
	d := startDurable(t, t.TempDir())
	c := d.dial()
	pexpect(t, c, "(error) ERR No shutdown in progress.", "SHUTDOWN", "ABORT")
	pexpect(t, c, "(error) ERR syntax error", "SHUTDOWN", "ABORT", "NOW")
	pexpect(t, c, "(error) ERR syntax error", "SHUTDOWN", "NOSAVE", "SAVE")
	pexpect(t, c, "(error) ERR syntax error", "SHUTDOWN", "later")
	pexpect(t, c, "+OK", "MULTI")
	pexpect(t, c, "(error) ERR Command not allowed inside a transaction", "SHUTDOWN")
	pexpect(t, c, "+OK", "DISCARD")
	select {
	case <-d.srv.Done():
		t.Fatal("Done closed by a refused SHUTDOWN")
	default:
	}
	pexpect(t, c, "+PONG", "PING")
	v := pdo(t, c, "COMMAND", "INFO", "shutdown", "save", "bgsave", "lastsave")
	if len(v.Elems) != 4 {
		t.Fatalf("COMMAND INFO: %s", v)
	}
	for i, name := range []string{"shutdown", "save", "bgsave", "lastsave"} {
		if v.Elems[i].Nil || v.Elems[i].Elems[0].Str != name {
			t.Errorf("COMMAND INFO %s: %s", name, v.Elems[i])
		}
	}
}

// pipelineXAdds sends n pipelined "XADD s * n <i>" and waits for the first
// reply, so that writes are in flight.
func pipelineXAdds(t *testing.T, c *respConn, n int) {
	t.Helper()
	var b strings.Builder
	for i := range n {
		b.WriteString("*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$1\r\nn\r\n$" +
			strconv.Itoa(len(strconv.Itoa(i))) + "\r\n" + strconv.Itoa(i) + "\r\n")
	}
	if err := c.SendRaw([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Receive(10 * time.Second); err != nil { // at least one in flight
		t.Fatal(err)
	}
}

// TestCloseAnswersOrFailsInFlight pipelines writes and closes the server
// meanwhile: every reply the client got is an acknowledged entry that is
// there after a restart, and the rest of the stream is a connection close.
func TestCloseAnswersOrFailsInFlight(t *testing.T) {
	dir := t.TempDir()
	d := startDurable(t, dir)
	c := d.dial()
	const n = 300
	pipelineXAdds(t, c, n)
	acked := 1
	closed := make(chan struct{})
	go func() { d.stop(true); close(closed) }()
	for {
		v, err := c.Receive(10 * time.Second)
		if err != nil {
			break
		}
		if v.Kind != '$' {
			t.Fatalf("reply %d: %s", acked, v)
		}
		acked++
	}
	<-closed
	sh, err := replication.Open(replication.Options{Dir: dir, Logger: pquietLog()})
	if err != nil {
		t.Fatal(err)
	}
	c2 := serveShard(t, dir, sh, nil).dial()
	got := pdo(t, c2, "XLEN", "s").Int
	if got < int64(acked) {
		t.Fatalf("after restart XLEN = %d, but %d XADDs were acknowledged", got, acked)
	}
	t.Logf("%d of %d acknowledged before the close, %d present after restart", acked, n, got)
}

// TestServeCloseRace: Close right after Serve starts (a past race: the
// background tasks' wg.Add must happen before Close's Wait). Run with -race.
func TestServeCloseRace(t *testing.T) {
	for i := 0; i < 50; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		sh := replication.NewShard()
		s := New(config.Default(), sh, pquietLog())
		done := make(chan error, 1)
		go func() { done <- s.Serve(ln) }()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("Serve after Close: %v", err)
		}
		if err := sh.Close(false); err != nil {
			t.Fatal(err)
		}
	}
}
