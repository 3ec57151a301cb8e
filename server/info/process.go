package info

import (
	"crypto/rand"
	"encoding/hex"
	"runtime"
	"strings"
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

// ReadMemory reads the Go runtime's memory figures (runtime.ReadMemStats).
func ReadMemory() Memory {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return Memory{HeapAlloc: m.HeapAlloc, Sys: m.Sys, HeapSys: m.HeapSys}
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
