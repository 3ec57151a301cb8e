package state

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"streamd/internal/testutil"
	"streamd/replication/wire"
	"streamd/streams"
)

// memShape builds one shape of key in ks (keys it names) for the accuracy
// test.
type memShape struct {
	name  string
	keys  int // keys built (the estimate is summed over them)
	build func(t *testing.T, ks *Keyspace, key string)
}

func addN(t *testing.T, ks *Keyspace, key string, n int, fields [][]byte, now int64) {
	t.Helper()
	for i := 0; i < n; i++ {
		mustApply(t, ks, wire.XAdd{Base: base(key), ID: streams.IDSpec{Auto: true}, Fields: fields, Trim: wire.Trim{Limit: -1}}, now+int64(i/4))
	}
}

var memShapes = []memShape{
	{"one entry", 2000, func(t *testing.T, ks *Keyspace, key string) {
		addN(t, ks, key, 1, fv("field", "value"), 1000)
	}},
	{"many small entries", 1, func(t *testing.T, ks *Keyspace, key string) {
		addN(t, ks, key, 100_000, fv("f", "v"), 1000)
	}},
	{"many entries, several fields", 1, func(t *testing.T, ks *Keyspace, key string) {
		addN(t, ks, key, 50_000, fv("sensor", "temperature", "value", "21.5", "unit", "C"), 1000)
	}},
	{"few large entries", 1, func(t *testing.T, ks *Keyspace, key string) {
		big := make([]byte, 20_000)
		for i := range big {
			big[i] = byte('a' + i%26)
		}
		addN(t, ks, key, 50, [][]byte{[]byte("payload"), big}, 1000)
	}},
	{"many deleted entries", 1, func(t *testing.T, ks *Keyspace, key string) {
		addN(t, ks, key, 100_000, fv("f", "v"), 1000)
		var ids []streams.ID
		res := mustQuery(t, ks, wire.XRange{Base: base(key), Start: streams.MinID, End: streams.MaxID, Count: -1}, 2000)
		for i, e := range res.([]streams.Entry) {
			if i%10 != 0 {
				ids = append(ids, e.ID)
			}
		}
		for len(ids) > 0 {
			k := min(len(ids), 1000)
			mustApply(t, ks, wire.XDel{Base: base(key), IDs: ids[:k]}, 2000)
			ids = ids[k:]
		}
	}},
	{"group, many pending, many consumers", 1, func(t *testing.T, ks *Keyspace, key string) {
		addN(t, ks, key, 100_000, fv("f", "v"), 1000)
		mustApply(t, ks, wire.XGroupCreate{Base: base(key), Group: "g", EntriesRead: -1}, 2000)
		for c := 0; c < 1000; c++ {
			mustApply(t, ks, wire.XReadGroup{Group: "g", Consumer: "consumer-" + strconv.Itoa(c), Count: 100,
				Streams: []wire.ReadStream{{Key: key, New: true}}}, 2000+int64(c))
		}
	}},
	{"group, half acknowledged", 1, func(t *testing.T, ks *Keyspace, key string) {
		addN(t, ks, key, 100_000, fv("f", "v"), 1000)
		mustApply(t, ks, wire.XGroupCreate{Base: base(key), Group: "g", EntriesRead: -1}, 2000)
		for c := 0; c < 10; c++ {
			mustApply(t, ks, wire.XReadGroup{Group: "g", Consumer: "consumer-" + strconv.Itoa(c), Count: 10_000,
				Streams: []wire.ReadStream{{Key: key, New: true}}}, 2000+int64(c))
		}
		res := mustQuery(t, ks, wire.XRange{Base: base(key), Start: streams.MinID, End: streams.MaxID, Count: -1}, 3000)
		var ids []streams.ID
		for i, e := range res.([]streams.Entry) {
			if i%2 == 0 {
				ids = append(ids, e.ID)
			}
		}
		mustApply(t, ks, wire.XAck{Base: base(key), Group: "g", IDs: ids}, 3000)
	}},
	{"broker settings, many groups with config", 1, func(t *testing.T, ks *Keyspace, key string) {
		// ACKLEVEL, retention (MAXLEN, MAXAGE, KEEPREF, GROUP-IDLE-EXPIRE,
		// so every group's activity is kept) and, per group, MAXDELIVERIES,
		// DEADLETTER and VISIBILITY; each group read once, every other one
		// with NOACK (its activity noted again from the read's own command;
		// the visibility timeout builds its PEL's time index).
		addN(t, ks, key, 1000, fv("f", "v"), 1000)
		mustApply(t, ks, wire.XCfgSet{Base: base(key), AckLevel: wire.AckLeader, Ret: wire.RetentionSet{
			SetMaxLen: true, MaxLen: 1_000_000, SetMaxAge: true, MaxAgeMs: 1 << 40, SetPolicy: true,
			Policy: wire.PolicyKeepRef, SetIdleExpire: true, IdleExpireMs: 1 << 40}}, 2000)
		for g := 0; g < 3000; g++ {
			name := fmt.Sprintf("consumer-group-%05d", g)
			mustApply(t, ks, wire.XGroupCreate{Base: base(key), Group: name, EntriesRead: -1}, 2000)
			mustApply(t, ks, wire.XGroupConfig{Base: base(key), Group: name, SetMaxDeliveries: true, MaxDeliveries: 5,
				SetDeadLetter: true, DeadLetter: fmt.Sprintf("{%s}:dead-letters:%s", key, name),
				SetVisibility: true, VisibilityMs: 30_000}, 2000)
			mustApply(t, ks, wire.XReadGroup{Group: fmt.Sprintf("consumer-group-%05d", g), Consumer: "c", Count: 1, NoAck: g%2 == 0,
				Streams: []wire.ReadStream{{Key: key, New: true}}}, 3000)
		}
	}},
	{"visibility timeout, many pending, some NACKed", 1, func(t *testing.T, ks *Keyspace, key string) {
		addN(t, ks, key, 100_000, fv("f", "v"), 1000)
		mustApply(t, ks, wire.XGroupCreate{Base: base(key), Group: "g", EntriesRead: -1}, 2000)
		mustApply(t, ks, wire.XGroupConfig{Base: base(key), Group: "g", SetVisibility: true, VisibilityMs: 1 << 40}, 2000)
		for c := 0; c < 1000; c++ {
			mustApply(t, ks, wire.XReadGroup{Group: "g", Consumer: "consumer-" + strconv.Itoa(c), Count: 100,
				Streams: []wire.ReadStream{{Key: key, New: true}}}, 2000+int64(c))
		}
		res := mustQuery(t, ks, wire.XRange{Base: base(key), Start: streams.MinID, End: streams.MaxID, Count: 20_000}, 4000)
		var ids []streams.ID
		for i, e := range res.([]streams.Entry) {
			if i%2 == 0 {
				ids = append(ids, e.ID)
			}
		}
		mustApply(t, ks, wire.XNack{Base: base(key), Group: "g", IDs: ids, RetryCount: -1}, 4000)
	}},
	{"IDMP, many producers", 1, func(t *testing.T, ks *Keyspace, key string) {
		// 300 producers, each at the default IDMP-MAXSIZE (100) after
		// evictions, with the stream's entries.
		for i := 0; i < 40_000; i++ {
			mustApply(t, ks, wire.XAdd{Base: base(key), ID: streams.IDSpec{Auto: true}, Fields: fv("f", "v"), Trim: wire.Trim{Limit: -1},
				IDMP: wire.IDMP{PID: fmt.Sprintf("producer-%03d", i%300), IID: fmt.Sprintf("message-%08d", i)}}, 1000)
		}
	}},
	{"IDMP, one producer, large IDMP-MAXSIZE", 1, func(t *testing.T, ks *Keyspace, key string) {
		mustApply(t, ks, wire.XAdd{Base: base(key), ID: streams.IDSpec{Auto: true}, Fields: fv("f", "v"), Trim: wire.Trim{Limit: -1}}, 1000)
		mustApply(t, ks, wire.XCfgSet{Base: base(key), Duration: 1000, MaxSize: 10_000}, 1000)
		for i := 0; i < 12_000; i++ {
			mustApply(t, ks, wire.XAdd{Base: base(key), ID: streams.IDSpec{Auto: true}, Fields: fv("f", "v"), Trim: wire.Trim{Limit: -1},
				IDMP: wire.IDMP{PID: "producer", IID: fmt.Sprintf("message-%08d", i)}}, 1000)
		}
	}},
	{"keys with deadlines", 1000, func(t *testing.T, ks *Keyspace, key string) {
		addN(t, ks, key, 3, fv("f", "v"), 1000)
		mustApply(t, ks, wire.Expire{Base: base(key), Ms: 1 << 50}, 1000)
	}},
}

// TestMemoryUsageMatchesHeap builds keys of several shapes and compares
// MEMORY USAGE (SAMPLES 0: every node) with the live heap they added.
func TestMemoryUsageMatchesHeap(t *testing.T) {
	for _, sh := range memShapes {
		t.Run(sh.name, func(t *testing.T) {
			ks := New()
			before := testutil.LiveHeap()
			keys := make([]string, sh.keys)
			for i := range keys {
				keys[i] = fmt.Sprintf("key:%06d", i)
				sh.build(t, ks, keys[i])
			}
			after := testutil.LiveHeap()
			var est int64
			for _, k := range keys {
				est += mustQuery(t, ks, wire.MemoryUsage{Base: base(k)}, 3000).(int64)
			}
			runtime.KeepAlive(ks)
			real := int64(after) - int64(before)
			t.Logf("%s: estimate %d, heap %d, ratio %.3f", sh.name, est, real, float64(est)/float64(real))
			if d := est - real; d < -real/10 || d > real/10 {
				t.Errorf("%s: MEMORY USAGE says %d bytes, the heap grew by %d: off by more than 10%%", sh.name, est, real)
			}
		})
	}
}
