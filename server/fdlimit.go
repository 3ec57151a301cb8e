package server

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sysRlimit is the process's RLIMIT_NOFILE.
type sysRlimit struct{}

func (sysRlimit) get() (cur, max uint64, err error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, 0, err
	}
	return uint64(l.Cur), uint64(l.Max), nil
}

func (sysRlimit) set(cur, max uint64) error {
	l := syscall.Rlimit{Cur: cur, Max: max}
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
}

// ceiling reads Linux's fs.nr_open (0 elsewhere).
func (sysRlimit) ceiling() uint64 {
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
