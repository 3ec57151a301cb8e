package server

// TestDifferential runs every testdata/diff/*.txt script against a fresh
// real redis-server and a fresh in-process streamd, in RESP2 and RESP3, and
// compares the replies structurally (type and value) after the script's
// normalisations.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"streamd/internal/testutil"
)

// maxMismatchesPerRun bounds the mismatches reported for one script run
// (later ones usually follow from the first).
const maxMismatchesPerRun = 8

// diffTrace (STREAMD_DIFF_TRACE=1) logs every command with Redis's reply,
// for writing and reviewing scripts.
var diffTrace = os.Getenv("STREAMD_DIFF_TRACE") != ""

// diffStats counts what the differential test compared.
type diffStats struct {
	mu         sync.Mutex
	compared   int
	deliberate int
	reasons    map[string]int // deliberate difference → occurrences
}

func (s *diffStats) add(compared int, reasons []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compared += compared
	s.deliberate += len(reasons)
	for _, r := range reasons {
		s.reasons[r]++
	}
}

// diffSide is one server under comparison and its open connections.
type diffSide struct {
	name    string
	addr    string
	proto   int
	conns   map[string]*respConn
	dead    map[string]bool
	pending map[string]bool
	norm    diffNormCtx
}

func newDiffSide(name, addr string, proto int) *diffSide {
	return &diffSide{name: name, addr: addr, proto: proto, conns: map[string]*respConn{},
		dead: map[string]bool{}, pending: map[string]bool{}, norm: diffNormCtx{ids: map[string]string{}}}
}

// conn returns the named connection, dialling (and sending HELLO 3 for a
// RESP3 run) on first use or after the server closed it.
func (d *diffSide) conn(name string) (*respConn, error) {
	if c, ok := d.conns[name]; ok && !d.dead[name] {
		return c, nil
	}
	if c, ok := d.conns[name]; ok {
		c.Close()
	}
	c, err := dialRESP(d.addr)
	if err != nil {
		return nil, err
	}
	if d.proto == 3 {
		if v, err := c.Do("HELLO", "3"); err != nil || v.Kind != '%' {
			c.Close()
			return nil, fmt.Errorf("HELLO 3 on %s: %v %v", d.name, v, err)
		}
	}
	d.conns[name], d.dead[name] = c, false
	return c, nil
}

// receive reads a reply; a failed read reads as a closed connection (the
// same value on both sides, since Redis and streamd both close after a
// protocol error) and the connection is redialled on next use.
func (d *diffSide) receive(name string, c *respConn) Value {
	v, err := c.Receive(10 * time.Second)
	if err != nil {
		d.dead[name] = true
		return Value{Kind: '!', Str: "connection closed"}
	}
	return v
}

func (d *diffSide) closeAll() {
	for _, c := range d.conns {
		c.Close()
	}
}

// blockedClients reads INFO's blocked_clients on a throwaway connection.
func (d *diffSide) blockedClients() (int, error) {
	c, err := dialRESP(d.addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	v, err := c.Do("INFO", "clients")
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`blocked_clients:(\d+)`).FindStringSubmatch(v.Str)
	if m == nil {
		return 0, fmt.Errorf("%s: no blocked_clients in INFO clients: %q", d.name, v.Str)
	}
	return strconv.Atoi(m[1])
}

func TestDifferential(t *testing.T) {
	testutil.RequireTool(t, "redis-server")
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "diff", "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts in testdata/diff: %v", err)
	}
	sort.Strings(paths)
	var scripts []*diffScript
	for _, p := range paths {
		s, err := loadDiffScript(p, filepath.Base(p))
		if err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, s)
	}
	drop72 := !redisAtLeast72(t)
	stats := &diffStats{reasons: map[string]int{}}
	t.Run("scripts", func(t *testing.T) {
		for _, s := range scripts {
			for _, proto := range s.Protos {
				s, proto := s, proto
				t.Run(fmt.Sprintf("%s/resp%d", strings.TrimSuffix(s.Name, ".txt"), proto), func(t *testing.T) {
					t.Parallel()
					redisAddr := startRedis(t)
					streamdAddr := startStreamd(t)
					compared, reasons := runDiffScript(t, s, proto, redisAddr, streamdAddr, drop72)
					stats.add(compared, reasons)
				})
			}
		}
	})
	var rs []string
	for r, n := range stats.reasons {
		rs = append(rs, fmt.Sprintf("  %dx %s", n, r))
	}
	sort.Strings(rs)
	t.Logf("differential: %d commands compared, %d deliberate differences", stats.compared, stats.deliberate)
	if len(rs) > 0 {
		t.Logf("deliberate differences:\n%s", strings.Join(rs, "\n"))
	}
}

// redisAtLeast72 reports whether the installed reference redis-server is
// 7.2 or later (then XINFO's 7.2 fields are compared, not dropped).
func redisAtLeast72(t *testing.T) bool {
	addr := startRedis(t)
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := c.Do("INFO", "server")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`redis_version:(\d+)\.(\d+)`).FindStringSubmatch(v.Str)
	if m == nil {
		t.Fatalf("no redis_version in INFO: %q", v.Str)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	t.Logf("reference redis-server %s.%s", m[1], m[2])
	return major > 7 || (major == 7 && minor >= 2)
}

// runDiffScript runs one script in one protocol on both servers in lock
// step and reports mismatches; it returns the number of replies compared
// and the deliberate differences met.
func runDiffScript(t *testing.T, s *diffScript, proto int, redisAddr, streamdAddr string, drop72 bool) (int, []string) {
	redis := newDiffSide("redis", redisAddr, proto)
	streamd := newDiffSide("streamd", streamdAddr, proto)
	defer redis.closeAll()
	defer streamd.closeAll()
	sides := []*diffSide{redis, streamd}
	cur := "main"
	compared, mismatches := 0, 0
	var reasons []string
	where := func(st diffStep) string {
		return fmt.Sprintf("%s:%d [RESP%d] %s", s.Name, st.Line, proto, quoteArgs(st.Args))
	}
	for _, st := range s.Steps {
		var got [2]Value
		var cmd []string
		switch st.Op {
		case "conn":
			cur = st.Args[0]
			continue
		case "sleep":
			ms, _ := strconv.Atoi(st.Args[0])
			time.Sleep(time.Duration(ms) * time.Millisecond) // time must pass (idle), not state
			continue
		case "wait-blocked":
			want, _ := strconv.Atoi(st.Args[0])
			for _, d := range sides {
				testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
					n, err := d.blockedClients()
					if err == nil && n != want {
						err = fmt.Errorf("%s: blocked_clients %d, want %d (%s)", d.name, n, want, where(st))
					}
					return err
				})
			}
			continue
		case "async":
			for _, d := range sides {
				c, err := d.conn(cur)
				if err != nil {
					t.Fatalf("%s: %s: %v", where(st), d.name, err)
				}
				if err := c.Send(st.Args...); err != nil {
					t.Fatalf("%s: %s: send: %v", where(st), d.name, err)
				}
				d.pending[cur] = true
			}
			continue
		case "await":
			for i, d := range sides {
				if !d.pending[cur] {
					t.Fatalf("%s: await with no async command on conn %s", where(st), cur)
				}
				c, _ := d.conn(cur)
				got[i] = d.receive(cur, c)
				d.pending[cur] = false
			}
			cmd = []string{"AWAIT"}
		case "pushes":
			for i, d := range sides {
				c, err := d.conn(cur)
				if err != nil {
					t.Fatalf("%s: %s: %v", where(st), d.name, err)
				}
				// A PING flushes pushes that arrived before its reply.
				if _, err := c.Do("PING"); err != nil {
					t.Fatalf("%s: %s: %v", where(st), d.name, err)
				}
				got[i] = Value{Kind: '*', Elems: c.Pushes}
				c.Pushes = nil
			}
			cmd = []string{"PUSHES"}
		case "raw", "cmd":
			for i, d := range sides {
				c, err := d.conn(cur)
				if err != nil {
					t.Fatalf("%s: %s: %v", where(st), d.name, err)
				}
				if st.Op == "raw" {
					err = c.SendRaw([]byte(st.Args[0]))
				} else {
					err = c.Send(st.Args...)
				}
				if err != nil {
					d.dead[cur] = true
					got[i] = Value{Kind: '!', Str: "connection closed"}
					continue
				}
				got[i] = d.receive(cur, c)
			}
			cmd = st.Args
			if st.Op == "raw" {
				cmd = strings.Fields(strings.TrimSpace(st.Args[0]))
				if len(cmd) == 0 {
					cmd = []string{"RAW"}
				}
			}
		}
		upper := append([]string{strings.ToUpper(cmd[0])}, cmd[1:]...)
		var norm [2]Value
		for i, d := range sides {
			v := got[i]
			for _, r := range st.Norms {
				v = diffNormRules[r](upper, v)
			}
			norm[i] = d.norm.mapAutoIDs(v)
		}
		if drop72 && (upper[0] == "XINFO" || upper[0] == "AWAIT" || upper[0] == "EXEC") {
			if v, dropped := dropXinfo72(norm[1]); dropped {
				norm[1] = v
				reasons = append(reasons, "XINFO 7.2 consumer fields (active-time, inactive) dropped from streamd's reply: the reference redis-server is 7.0")
			}
		}
		if drop72 {
			var why []string
			norm[1], why = dropRedis8(upper, norm[1])
			reasons = append(reasons, why...)
			if v, changed := aclTo70(upper, norm[1]); changed {
				norm[1] = v
				reasons = append(reasons, "ACL 7.2 texts (NOPERM wording, sanitize-payload, ACL LOG entry-id/timestamps) "+
					"mapped to 7.0's in streamd's reply: the reference redis-server is 7.0")
			}
		}
		compared++
		if diffTrace {
			t.Logf("%s\n  -> %s", where(st), got[0])
		}
		equal := norm[0].Equal(norm[1])
		switch {
		case st.ExpectDiff != "":
			t.Logf("deliberate difference at %s (%s)\n  redis:   %s\n  streamd: %s", where(st), st.ExpectDiff, got[0], got[1])
			reasons = append(reasons, st.ExpectDiff)
			if equal {
				t.Errorf("%s: expect-diff (%s) but both replied %s", where(st), st.ExpectDiff, norm[0])
			}
			if want := st.StreamdReply[proto]; want != "" && got[1].String() != want {
				t.Errorf("%s: streamd replied\n  %s\nwant\n  %s", where(st), got[1], want)
			}
		case !equal:
			mismatches++
			if mismatches <= maxMismatchesPerRun {
				t.Errorf("mismatch at %s\n  redis:   %s\n  streamd: %s", where(st), norm[0], norm[1])
			}
		}
	}
	if mismatches > maxMismatchesPerRun {
		t.Errorf("%s [RESP%d]: %d more mismatches not shown", s.Name, proto, mismatches-maxMismatchesPerRun)
	}
	return compared, reasons
}

// quoteArgs renders a command for messages.
func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\r\n\"'#\\") {
			a = strconv.Quote(a)
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// TestDiffScriptParse pins the script syntax.
func TestDiffScriptParse(t *testing.T) {
	text := strings.Join([]string{
		"# a comment",
		"proto 3",
		"norm idle",
		`XADD s 1-1 f "a b\x41\n" 'c d' # trailing`,
		"expect-diff strings are out of scope",
		"streamd-reply (error) ERR x",
		"SET k v",
		"conn other",
		"async XREAD BLOCK 0 STREAMS s $",
		"await",
		`raw "PING\r\n"`,
	}, "\n")
	s, err := parseDiffScript("t.txt", text)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Protos) != 1 || s.Protos[0] != 3 {
		t.Errorf("protos = %v", s.Protos)
	}
	want := []diffStep{
		{Line: 4, Op: "cmd", Args: []string{"XADD", "s", "1-1", "f", "a bA\n", "c d"}, Norms: []string{"idle"}},
		{Line: 7, Op: "cmd", Args: []string{"SET", "k", "v"}, Norms: []string{"idle"}, ExpectDiff: "strings are out of scope", StreamdReply: [4]string{2: "(error) ERR x", 3: "(error) ERR x"}},
		{Line: 8, Op: "conn", Args: []string{"other"}, Norms: []string{"idle"}},
		{Line: 9, Op: "async", Args: []string{"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}, Norms: []string{"idle"}},
		{Line: 10, Op: "await", Args: []string{}, Norms: []string{"idle"}},
		{Line: 11, Op: "raw", Args: []string{"PING\r\n"}, Norms: []string{"idle"}},
	}
	if len(s.Steps) != len(want) {
		t.Fatalf("steps = %+v", s.Steps)
	}
	for i, w := range want {
		g := s.Steps[i]
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("step %d = %+v, want %+v", i, g, w)
		}
	}
	for _, bad := range []string{"proto 4", "norm nosuchrule", "expect-diff", `XADD "open`, "expect-diff x\nconn a"} {
		if _, err := parseDiffScript("bad.txt", bad); err == nil {
			t.Errorf("%q parsed without error", bad)
		}
	}
}
