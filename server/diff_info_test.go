package server

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// infoFields parses an INFO reply into field → value.
func infoMap(t *testing.T, c *respConn, section string) map[string]string {
	t.Helper()
	v, err := c.Do("INFO", section)
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	out := map[string]string{}
	for _, l := range strings.Split(v.Str, "\r\n") {
		if k, val, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, "#") {
			out[k] = val
		}
	}
	return out
}

// infoFormats classify an INFO value: what a tool parsing it relies on.
var infoFormats = []struct {
	name string
	re   *regexp.Regexp
}{
	{"integer", regexp.MustCompile(`^-?\d+$`)},
	{"decimal .2f", regexp.MustCompile(`^-?\d+\.\d\d$`)},
	{"percent", regexp.MustCompile(`^\d+\.\d\d%$`)},
	{"human bytes", regexp.MustCompile(`^(\d+B|\d+\.\d\d[KMGTP])$`)},
	{"word", regexp.MustCompile(`^[a-z-]+$`)},
}

func infoFormat(v string) string {
	for _, f := range infoFormats {
		if f.re.MatchString(v) {
			return f.name
		}
	}
	return "other: " + v
}

// toolFields are the INFO fields monitoring tools read that issue 12
// names, by section.
var toolFields = map[string][]string{
	"memory": {"used_memory", "used_memory_human", "used_memory_rss", "used_memory_rss_human", "used_memory_peak",
		"used_memory_peak_human", "used_memory_peak_perc", "total_system_memory", "total_system_memory_human",
		"maxmemory", "maxmemory_human", "maxmemory_policy", "mem_fragmentation_ratio", "mem_fragmentation_bytes"},
	"stats": {"total_connections_received", "total_commands_processed", "instantaneous_ops_per_sec",
		"total_net_input_bytes", "total_net_output_bytes", "instantaneous_input_kbps", "instantaneous_output_kbps",
		"rejected_connections", "expired_keys", "evicted_keys", "keyspace_hits", "keyspace_misses", "total_error_replies"},
}

// latencyLine is Redis 7's INFO latencystats line with the default
// percentiles.
var latencyLine = regexp.MustCompile(`^p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}$`)

// TestInfoFieldsVsRedis compares INFO's field names and value formats (not
// values) with redis-server's for the fields tools read, INFO
// latencystats' line format, and CONFIG GET/SET of latency-tracking and
// latency-tracking-info-percentiles (values and errors).
func TestInfoFieldsVsRedis(t *testing.T) {
	raddr := startRedis(t)
	_, saddr := startTestServer(t, nil)
	redis, ours := dial(t, raddr), dial(t, saddr)
	for _, c := range []*respConn{redis, ours} {
		for _, args := range [][]string{{"XADD", "s", "*", "f", "v"}, {"XLEN", "s"}, {"XRANGE", "nokey", "-", "+"}} {
			if _, err := c.Do(args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	for section, names := range toolFields {
		want, got := infoMap(t, redis, section), infoMap(t, ours, section)
		for _, n := range names {
			w, ok := want[n]
			if !ok {
				t.Errorf("redis-server has no INFO %s field %s", section, n)
				continue
			}
			g, ok := got[n]
			if !ok {
				t.Errorf("INFO %s: no %s (redis: %s)", section, n, w)
				continue
			}
			if infoFormat(g) != infoFormat(w) {
				t.Errorf("INFO %s %s: streamd %q (%s), redis %q (%s)", section, n, g, infoFormat(g), w, infoFormat(w))
			}
		}
	}
	for _, c := range []*respConn{redis, ours} {
		lat := infoMap(t, c, "latencystats")
		for _, name := range []string{"xadd", "xlen", "xrange"} {
			if l := lat["latency_percentiles_usec_"+name]; !latencyLine.MatchString(l) {
				t.Errorf("%s: latency_percentiles_usec_%s:%q", c.nc.RemoteAddr(), name, l)
			}
		}
		// Not in INFO's default sections.
		if _, ok := infoMap(t, c, "")["latency_percentiles_usec_xadd"]; ok {
			t.Errorf("%s: INFO shows latencystats by default", c.nc.RemoteAddr())
		}
	}
	p := &diffPair{t: t, redis: redis, ours: ours}
	for _, args := range [][]string{
		{"CONFIG", "GET", "latency-tracking"}, {"CONFIG", "GET", "latency-tracking-info-percentiles"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", "50 99.99 100 0.5"},
		{"CONFIG", "GET", "latency-tracking-info-percentiles"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", "101"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", "50 x"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", ""},
		{"CONFIG", "GET", "latency-tracking-info-percentiles"},
		{"CONFIG", "SET", "latency-tracking", "maybe"},
		{"CONFIG", "SET", "latency-tracking", "no"},
		{"CONFIG", "GET", "latency-tracking"},
		{"CONFIG", "SET", "latency-tracking", "yes"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", "99.9 50"},
	} {
		p.do(args...)
	}
	for _, c := range []*respConn{redis, ours} {
		l := infoMap(t, c, "latencystats")["latency_percentiles_usec_xadd"]
		if !regexp.MustCompile(`^p99\.9=\d+\.\d{3},p50=\d+\.\d{3}$`).MatchString(l) {
			t.Errorf("%s: after CONFIG SET: latency_percentiles_usec_xadd:%q", c.nc.RemoteAddr(), l)
		}
	}
}

// TestInfoStatsCount checks the counters behind INFO stats move as Redis's
// do: keyspace hits and misses for the stream reads, expired keys, bytes
// in and out, latency-tracking off stops new histograms, RESETSTAT zeroes.
func TestInfoStatsCount(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	stat := func(name string) int64 {
		t.Helper()
		n, err := strconv.ParseInt(infoMap(t, c, "stats")[name], 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return n
	}
	do := func(args ...string) Value {
		t.Helper()
		v, err := c.Do(args...)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	do("XADD", "s", "1-1", "f", "v")
	do("XGROUP", "CREATE", "s", "g", "0")
	in0, out0 := stat("total_net_input_bytes"), stat("total_net_output_bytes")
	hits0, misses0 := stat("keyspace_hits"), stat("keyspace_misses")
	// hits: XRANGE, XREVRANGE, XLEN, XREAD (s), XINFO STREAM, XPENDING, EXISTS, TYPE, TTL = 9
	// misses: XLEN, XREAD (m), XINFO STREAM, EXISTS, TYPE = 5
	for _, args := range [][]string{
		{"XRANGE", "s", "-", "+"}, {"XREVRANGE", "s", "+", "-"}, {"XLEN", "s"}, {"XLEN", "m"},
		{"XREAD", "STREAMS", "s", "m", "0", "0"}, {"XINFO", "STREAM", "s"}, {"XINFO", "STREAM", "m"},
		{"XPENDING", "s", "g"}, {"EXISTS", "s", "m"}, {"TYPE", "s"}, {"TYPE", "m"}, {"TTL", "s"},
		{"XADD", "w", "*", "f", "v"}, {"DEL", "w"},
	} {
		do(args...)
	}
	if h, m := stat("keyspace_hits")-hits0, stat("keyspace_misses")-misses0; h != 9 || m != 5 {
		t.Errorf("keyspace_hits +%d, keyspace_misses +%d; want +9, +5", h, m)
	}
	// Each INFO request and reply is counted too, so the totals only grow
	// by at least the bytes of the commands above.
	if in, out := stat("total_net_input_bytes"), stat("total_net_output_bytes"); in-in0 < 200 || out-out0 < 200 {
		t.Errorf("net bytes: in %d→%d, out %d→%d", in0, in, out0, out)
	}
	do("XADD", "e", "*", "f", "v")
	do("PEXPIRE", "e", "1")
	deadline := time.Now().Add(10 * time.Second)
	for stat("expired_keys") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("expired_keys stays 0 after a key expired")
		}
		do("XADD", "e2", "*", "f", "v") // a write; the sweep also runs on its own
	}
	if stat("evicted_keys") != 0 {
		t.Error("evicted_keys is not 0")
	}
	do("CONFIG", "SET", "latency-tracking", "no")
	do("CONFIG", "RESETSTAT")
	do("XLEN", "s")
	if v := do("INFO", "latencystats"); strings.Contains(v.Str, "latency_percentiles_usec_xlen") {
		t.Errorf("latency-tracking no, RESETSTAT: %q", v.Str)
	}
	// RESETSTAT zeroed the counters: since, one XLEN hit and the INFO
	// requests' bytes.
	if in, h, e := stat("total_net_input_bytes"), stat("keyspace_hits"), stat("expired_keys"); in > 200 || h != 1 || e != 0 {
		t.Errorf("after RESETSTAT: total_net_input_bytes %d, keyspace_hits %d, expired_keys %d", in, h, e)
	}
	do("CONFIG", "SET", "latency-tracking", "yes")
	do("XLEN", "s")
	if v := do("INFO", "latencystats"); !strings.Contains(v.Str, "latency_percentiles_usec_xlen:p50=") {
		t.Errorf("latency-tracking yes: %q", v.Str)
	}
}
