package state

import (
	"unsafe"

	"streamd/internal/memsize"
)

// Memory accounting of a stream's IDMP state (memory.go): the struct, its
// producers map, and what each producer and each recorded iid hold, kept
// as a running count (IDMP.mem) by insert, removeHead and clear, so that
// settling a key after an XADD … IDMP stays O(1).

// Sizes of the IDMP state's allocations.
var (
	idmpBytes     = memsize.Class(int64(unsafe.Sizeof(IDMP{})))
	producerBytes = memsize.Class(int64(unsafe.Sizeof(producer{})))
	iidRecBytes   = memsize.Class(int64(unsafe.Sizeof(iidRec{})))
)

// idmpSlot is a slot of the producers map and of a producer's iids map: a
// string key and a pointer. The keys share the strings the producer and
// the record hold (pid, iid), so only the slots count.
const idmpSlot = 16 + 8

// memory returns the bytes m holds: 0 for nil (a stream that never used
// IDMP nor changed its settings). O(1).
func (m *IDMP) memory() int64 {
	if m == nil {
		return 0
	}
	return idmpBytes + memsize.Map(int64(len(m.producers)), idmpSlot) + m.mem
}

// producerMemory is what a producer with no iid holds: its struct, its
// pid and its (empty) iids map.
func producerMemory(p *producer) int64 {
	return producerBytes + memsize.String(len(p.pid)) + memsize.Map(0, idmpSlot)
}

// iidMemory is what the record r adds to its producer, which held n iids
// before it: the record, its iid and the growth of the producer's map.
func iidMemory(r *iidRec, n int) int64 {
	return iidRecBytes + memsize.String(len(r.iid)) + memsize.Map(int64(n+1), idmpSlot) - memsize.Map(int64(n), idmpSlot)
}
