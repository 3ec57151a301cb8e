package resp

// Small requests' arguments are carved from chunks instead of allocated
// one request at a time: a pipeline of XADDs then costs the collector one
// allocation per few dozen requests rather than two per request. A carved
// slice is capped at its length, so appending to it reallocates instead of
// reaching its neighbour. A chunk lives as long as any argument in it is
// referenced; chunks are small, so an argument kept for long (a blocked
// client's request) pins a few KiB at most.

// Chunk sizes, and the largest piece carved from a chunk (larger requests
// get an allocation of their own).
const (
	argChunkLen  = 256 // slice headers: 6 KiB
	byteChunkLen = 4 << 10
	argCarveMax  = 64
	byteCarveMax = 1 << 10
)

// takeArgs returns n zeroed argument slots.
func (rr *RequestReader) takeArgs(n int) [][]byte {
	if n > argCarveMax {
		return make([][]byte, n)
	}
	if len(rr.argChunk) < n {
		rr.argChunk = make([][]byte, argChunkLen)
	}
	a := rr.argChunk[:n:n]
	rr.argChunk = rr.argChunk[n:]
	return a
}

// noBytes is where a request whose arguments are all empty carves them
// from: empty but not nil, like every other argument.
var noBytes = make([]byte, 0)

// takeBytes returns n bytes to copy arguments into.
func (rr *RequestReader) takeBytes(n int) []byte {
	if n == 0 {
		return noBytes
	}
	if n > byteCarveMax {
		return make([]byte, n)
	}
	if len(rr.byteChunk) < n {
		rr.byteChunk = make([]byte, byteChunkLen)
	}
	b := rr.byteChunk[:n:n]
	rr.byteChunk = rr.byteChunk[n:]
	return b
}
