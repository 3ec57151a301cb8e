package server

import (
	"strconv"
	"strings"
	"testing"
)

// memoryStatsShape renders MEMORY STATS's shape: each field's name and
// reply kind, nested maps in brackets.
func memoryStatsShape(v Value) string {
	var b strings.Builder
	b.WriteByte(v.Kind)
	for i := 0; i+1 < len(v.Elems); i += 2 {
		b.WriteString(" " + v.Elems[i].Str + ":")
		if e := v.Elems[i+1]; e.Kind == '*' || e.Kind == '%' {
			b.WriteString("[" + memoryStatsShape(e) + "]")
		} else {
			b.WriteByte(e.Kind)
		}
	}
	return b.String()
}

// TestMemoryStatsShapeVsRedis compares MEMORY STATS's field names, order
// and reply kinds with redis-server's, in RESP2 (flat arrays) and RESP3
// (maps, doubles).
func TestMemoryStatsShapeVsRedis(t *testing.T) {
	raddr := startRedis(t)
	_, saddr := startTestServer(t, nil)
	var shapes [2][2]string
	for i, addr := range []string{raddr, saddr} {
		c := dial(t, addr)
		mustDo(t, c, "XADD", "s", "1-1", "f", "v")
		mustDo(t, c, "EXPIRE", "s", "100")
		for j, proto := range []string{"2", "3"} {
			mustDo(t, c, "HELLO", proto)
			v, err := c.Do("MEMORY", "STATS")
			if err != nil {
				t.Fatal(err)
			}
			shapes[i][j] = memoryStatsShape(v)
		}
		c.Close()
	}
	for j := range 2 {
		if shapes[1][j] != shapes[0][j] {
			t.Errorf("RESP%d MEMORY STATS shape:\n streamd %s\n redis   %s", j+2, shapes[1][j], shapes[0][j])
		}
	}
}

// TestInfoMemoryAccounting checks INFO memory's figures against each
// other and against MEMORY USAGE: used_memory is the overhead plus the
// dataset, grows by what a key holds and drops when it is deleted, and
// the RSS is the process's.
func TestInfoMemoryAccounting(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	defer c.Close()
	num := func(f map[string]string, k string) int64 {
		t.Helper()
		n, err := strconv.ParseInt(f[k], 10, 64)
		if err != nil {
			t.Fatalf("INFO %s = %q", k, f[k])
		}
		return n
	}
	before := infoFields(t, c, "INFO", "memory")
	value := strings.Repeat("x", 1000)
	for range 2000 {
		mustDo(t, c, "XADD", "big", "*", "f", value)
	}
	f := infoFields(t, c, "INFO", "memory")
	used, overhead, dataset := num(f, "used_memory"), num(f, "used_memory_overhead"), num(f, "used_memory_dataset")
	if used != overhead+dataset || num(f, "used_memory_startup") > overhead || num(f, "used_memory_peak") < used {
		t.Errorf("INFO memory: %v", f)
	}
	usage, err := c.Do("MEMORY", "USAGE", "big")
	if err != nil || usage.Int < 2000*1000 {
		t.Fatalf("MEMORY USAGE big = %v %v", usage, err)
	}
	// The key is all that changed in the keyspace (clients' output may
	// move by a reply).
	if grew := used - num(before, "used_memory"); grew < usage.Int-4096 || grew > usage.Int+4096 {
		t.Errorf("used_memory grew by %d, MEMORY USAGE big = %d", grew, usage.Int)
	}
	if rss := num(f, "used_memory_rss"); rss < 1<<20 || f["mem_fragmentation_ratio"] == "" {
		t.Errorf("used_memory_rss %d, mem_fragmentation_ratio %q", rss, f["mem_fragmentation_ratio"])
	}
	mustDo(t, c, "DEL", "big")
	if after := num(infoFields(t, c, "INFO", "memory"), "used_memory"); after > used-usage.Int+4096 {
		t.Errorf("used_memory %d after DEL, %d before, the key held %d", after, used, usage.Int)
	}
}
