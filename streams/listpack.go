package streams

import "streamd/internal/redisint"

// This file computes the size Redis's listpack for a node would have
// (lpBytes), which stream-node-max-bytes bounds: Redis's streamAppendItem
// starts a new node when lpBytes(tail) + the new entry's field and value
// lengths >= stream-node-max-bytes. Sizes follow listpack.c's encodings
// (an element is its encoding, its data and its back-length).

// lpMaxSize is STREAM_LISTPACK_MAX_SIZE, the bound used when
// stream-node-max-bytes is 0.
const lpMaxSize = 1 << 30

// lpBacklen is the size of an element's back-length for an element of l
// bytes (lpEncodeBacklen).
func lpBacklen(l int64) int64 {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// lpIntElem is the size of an integer element (lpEncodeIntegerGetType).
func lpIntElem(v int64) int64 {
	var l int64
	switch {
	case v >= 0 && v <= 127:
		l = 1
	case v >= -4096 && v <= 4095:
		l = 2
	case v >= -32768 && v <= 32767:
		l = 3
	case v >= -8388608 && v <= 8388607:
		l = 4
	case v >= -2147483648 && v <= 2147483647:
		l = 5
	default:
		l = 9
	}
	return l + lpBacklen(l)
}

// lpStrElem is the size of a string element; a string that is an integer
// in canonical form is stored as one (lpStringToInt64).
func lpStrElem(s []byte) int64 {
	if v, ok := lpInt(s); ok {
		return lpIntElem(v)
	}
	n := int64(len(s))
	var l int64
	switch {
	case n < 64:
		l = 1 + n
	case n < 4096:
		l = 2 + n
	default:
		l = 5 + n
	}
	return l + lpBacklen(l)
}

// lpInt reports whether s is an int64 in canonical decimal form, as
// lpStringToInt64 accepts it (Redis's string2ll rule).
func lpInt(s []byte) (int64, bool) { return redisint.ParseInt64(s) }

// lpMasterBytes is the size of an empty node's listpack with this master
// (header and end byte; master field count, names and terminator), less
// the count and deleted fields, which lpSize adds.
func lpMasterBytes(names [][]byte) int64 {
	b := int64(6+1) + lpIntElem(int64(len(names))) + lpIntElem(0)
	for _, f := range names {
		b += lpStrElem(f)
	}
	return b
}

// lpEntryBytes is the size of a live entry: flags, ms and seq deltas,
// [field count, names,] values and lp-count.
func lpEntryBytes(key, id ID, fields [][]byte, same bool) int64 {
	var b int64
	for i, f := range fields {
		if i%2 == 1 || !same {
			b += lpStrElem(f)
		}
	}
	return b + lpEntryFixed(key, id, len(fields), same)
}

// lpEntryFixed is lpEntryBytes less the strings, for an entry of items
// fields and values.
func lpEntryFixed(key, id ID, items int, same bool) int64 {
	nf := int64(items / 2)
	b := lpIntElem(2) + lpIntElem(int64(id.Ms-key.Ms)) + lpIntElem(int64(id.Seq-key.Seq))
	count := nf + 3
	if !same {
		b += lpIntElem(nf)
		count += nf + 1
	}
	return b + lpIntElem(count)
}

// lpTombstoneBytes is what a deleted entry counts: its flags and ID and a
// small lp-count. Redis still counts its fields, but a snapshot does not
// keep them, and every replica must size nodes alike.
func lpTombstoneBytes(key, id ID) int64 {
	return lpIntElem(1) + lpIntElem(int64(id.Ms-key.Ms)) + lpIntElem(int64(id.Seq-key.Seq)) + lpIntElem(3)
}

// lpSize is the node's listpack size as Redis's lpBytes gives it.
func (n *node) lpSize() int64 {
	return n.lpBytes + lpIntElem(int64(n.live)) + lpIntElem(int64(n.count-n.live))
}

// entryLen is the sum of the lengths of fields (streamAppendItem's
// totelelen).
func entryLen(fields [][]byte) int64 {
	var t int64
	for _, f := range fields {
		t += int64(len(f))
	}
	return t
}
