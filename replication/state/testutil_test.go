package state

import (
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

// Test helpers shared by the state package's tests.

func fv(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

func xadd(key string, spec string) wire.XAdd {
	sp, err := streams.ParseIDSpec([]byte(spec))
	if err != nil {
		panic(err)
	}
	return wire.XAdd{Base: wire.Base{Key: key}, ID: sp, Fields: fv("f", "v"), Trim: wire.Trim{Limit: -1}}
}

func id(ms, seq uint64) streams.ID { return streams.ID{Ms: ms, Seq: seq} }

func mustApply(t *testing.T, ks *Keyspace, cmd wire.Command, now int64) any {
	t.Helper()
	res, err := ks.Apply(cmd, now)
	if err != nil {
		t.Fatalf("%T: %v", cmd, err)
	}
	return res
}

func mustQuery(t *testing.T, ks *Keyspace, q wire.Query, now int64) any {
	t.Helper()
	res, err := ks.Query(q, now)
	if err != nil {
		t.Fatalf("%T: %v", q, err)
	}
	return res
}

func entryIDs(es []streams.Entry) []streams.ID {
	out := []streams.ID{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func base(key string) wire.Base { return wire.Base{Key: key} }

func newKeys(t *testing.T, names ...string) *Keyspace {
	t.Helper()
	ks := New()
	for _, n := range names {
		mustApply(t, ks, xadd(n, "1-1"), 0)
	}
	return ks
}
