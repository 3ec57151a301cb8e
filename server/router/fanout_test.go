package router

import (
	"testing"

	"streamd/replication/state"
)

// TestScanCursor walks the cursor arithmetic: the shard in the high bits,
// a resumed cursor never 0, the next shard after a finished one, 0 at the
// end; one shard leaves the cursor as it is.
func TestScanCursor(t *testing.T) {
	if s, in := SplitScanCursor(12345, 1); s != 0 || in != 12345 {
		t.Fatalf("1 shard: %d %d", s, in)
	}
	if c := NextScanCursor(0, 1, 77); c != 77 {
		t.Fatalf("1 shard next = %d", c)
	}
	if c := NextScanCursor(0, 1, 0); c != 0 {
		t.Fatalf("1 shard end = %d", c)
	}
	const n = 4 // 2 bits
	c := NextScanCursor(1, n, 8)
	if s, in := SplitScanCursor(c, n); s != 1 || in != 8 {
		t.Fatalf("round trip: cursor %x → %d %d", c, s, in)
	}
	if c := NextScanCursor(2, n, 3); c>>62 != 2 || c&(1<<62-1) != 1 {
		t.Fatalf("small resumed cursor = %x, want shard 2, 1", c)
	}
	if c := NextScanCursor(2, n, 0); c != 3<<62 {
		t.Fatalf("next shard = %x", c)
	}
	if c := NextScanCursor(3, n, 0); c != 0 {
		t.Fatalf("end = %x", c)
	}
	if s, _ := SplitScanCursor(3<<62, 3); s != 3 {
		t.Fatalf("past the last of 3 shards: %d", s)
	}
}

func TestAddKeyspace(t *testing.T) {
	sum := AddKeyspace(nil, []state.DBInfo{{Keys: 1}, {Keys: 2, Expires: 1}})
	sum = AddKeyspace(sum, []state.DBInfo{{Keys: 3}, {Keys: 4, Expires: 2}, {Keys: 9}})
	if sum[0].Keys != 4 || sum[1].Keys != 6 || sum[1].Expires != 3 || len(sum) != 2 {
		t.Fatalf("sum = %+v", sum)
	}
}
