package replication

import "testing"

func TestKeySlotMatchesRedis(t *testing.T) {
	// Values from Redis's CLUSTER KEYSLOT.
	for key, want := range map[string]int{
		"":                     0,
		"123456789":            12739, // the CRC16 check value 0x31C3
		"foo":                  12182,
		"bar":                  5061,
		"{user1000}.following": 3443,
		"{user1000}.followers": 3443,
		"user1000":             3443,
		"foo{}{bar}":           8363, // empty first tag: whole key
		"foo{{bar}}zap":        4015, // tag is "{bar"
		"foo{bar}{zap}":        5061, // first tag only
	} {
		if got := KeySlot(key); got != want {
			t.Errorf("KeySlot(%q) = %d, want %d", key, got, want)
		}
	}
}

func TestSlotRangesPartition(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 7, 16, 100} {
		next := 0
		for i := range n {
			first, last := SlotRange(i, n)
			if first != next || last < first {
				t.Fatalf("n=%d shard %d: range %d-%d, want start %d", n, i, first, last, next)
			}
			for _, s := range []int{first, last} {
				if got := ShardOfSlot(s, n); got != i {
					t.Fatalf("n=%d: ShardOfSlot(%d) = %d, want %d", n, s, got, i)
				}
			}
			next = last + 1
		}
		if next != SlotCount {
			t.Fatalf("n=%d: ranges end at %d", n, next)
		}
	}
}
