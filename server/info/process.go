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

// ReadMemory reads INFO memory's figures: the Go heap in use
// (runtime/metrics, no stop-the-world), the resident set size from
// /proc/self/statm, the peak (SamplePeak, updated here too) and
// /proc/meminfo's MemTotal.
func ReadMemory() Memory {
	used := SamplePeak()
	return Memory{Used: used, RSS: readRSS(), Peak: peak.Load(), TotalSystem: readMemTotal()}
}

// peak is the greatest heap-in-use figure seen by SamplePeak.
var peak atomic.Uint64

// heapSample reads the Go heap's bytes in objects (HeapAlloc's figure).
var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
var heapMu sync.Mutex

// SamplePeak reads the heap in use, raises the peak to it and returns it;
// the server calls it from its 100 ms sampler, as Redis's cron updates
// used_memory_peak.
func SamplePeak() uint64 {
	heapMu.Lock()
	metrics.Read(heapSample)
	v := heapSample[0].Value
	heapMu.Unlock()
	var used uint64
	if v.Kind() == metrics.KindUint64 {
		used = v.Uint64()
	}
	for {
		p := peak.Load()
		if used <= p || peak.CompareAndSwap(p, used) {
			return used
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
