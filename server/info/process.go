package info

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// RunID is INFO's run_id: 40 random hex characters per process, as Redis.
var RunID = func() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

// Uname is INFO's os field: "sysname release machine" from uname(2), or
// runtime.GOOS when that fails.
func Uname() string {
	var uts syscall.Utsname
	if syscall.Uname(&uts) != nil {
		return runtime.GOOS
	}
	return utsString(uts.Sysname[:]) + " " + utsString(uts.Release[:]) + " " + utsString(uts.Machine[:])
}

// utsString converts a NUL-terminated utsname field.
func utsString[T int8 | uint8](f []T) string {
	var sb strings.Builder
	for _, ch := range f {
		if ch == 0 {
			break
		}
		sb.WriteByte(byte(ch))
	}
	return sb.String()
}

// ReadMemory reads INFO memory's process figures: the Go heap's
// (runtime/metrics, no stop-the-world), the resident set size from
// /proc/self/statm and /proc/meminfo's MemTotal. The accounting fields and
// Peak are the server's to fill.
func ReadMemory() Memory {
	h := ReadHeap()
	return Memory{RSS: readRSS(), TotalSystem: readMemTotal(), Allocated: h.Allocated, Active: h.Active, Resident: h.Resident}
}

// Heap is the Go heap's figures, as Redis reports its allocator's.
type Heap struct {
	Allocated uint64 // bytes in objects, live or not yet swept (HeapAlloc)
	Active    uint64 // bytes in spans in use (HeapInuse)
	Resident  uint64 // bytes held from the OS, in use or free (HeapSys − HeapReleased)
}

// heapSamples are the runtime/metrics ReadHeap reads.
var heapSamples = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
}
var heapMu sync.Mutex

// ReadHeap reads the Go heap's figures (runtime/metrics: no stop-the-world).
func ReadHeap() Heap {
	heapMu.Lock()
	defer heapMu.Unlock()
	metrics.Read(heapSamples)
	var v [3]uint64
	for i, s := range heapSamples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	return Heap{Allocated: v[0], Active: v[0] + v[1], Resident: v[0] + v[1] + v[2]}
}

// peak is the greatest used_memory NotePeak was given.
var peak atomic.Uint64

// NotePeak raises used_memory_peak to used and returns the peak; the
// server calls it from its 100 ms sampler and whenever it reads
// used_memory, as Redis's cron and INFO update used_memory_peak.
func NotePeak(used uint64) uint64 {
	for {
		p := peak.Load()
		if used <= p || peak.CompareAndSwap(p, used) {
			return max(p, used)
		}
	}
}

// readRSS is the resident set size: /proc/self/statm's second field times
// the page size (0 where there is no /proc).
func readRSS() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// readMemTotal is /proc/meminfo's MemTotal in bytes (0 if unknown).
func readMemTotal() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, err := strconv.ParseUint(f[0], 10, 64)
				if err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}

// ReadCPU reads the process's system and user CPU time (getrusage); OK is
// false when that fails.
func ReadCPU() CPU {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return CPU{}
	}
	return CPU{
		OK:   true,
		Sys:  Timeval{int64(ru.Stime.Sec), int64(ru.Stime.Usec)},
		User: Timeval{int64(ru.Utime.Sec), int64(ru.Utime.Usec)},
	}
}
