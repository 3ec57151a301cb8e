package server

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"syscall"
	"testing"
)

// fakeRlimit is an open-file limit: raising the hard limit needs
// privilege, and even then stops at nrOpen.
type fakeRlimit struct {
	cur, hard, nrOpen uint64
	privileged        bool
	getErr            error
	sets              int
}

func (f *fakeRlimit) get() (uint64, uint64, error) { return f.cur, f.hard, f.getErr }

func (f *fakeRlimit) set(cur, max uint64) error {
	f.sets++
	if cur > max || max > f.nrOpen || (max > f.hard && !f.privileged) {
		return syscall.EPERM
	}
	f.cur, f.hard = cur, max
	return nil
}

func (f *fakeRlimit) ceiling() uint64 { return f.nrOpen }

// redisLimit is Redis's adjustOpenFilesLimit loop as written (every step),
// for comparison.
func redisLimit(want uint64, f *fakeRlimit) uint64 {
	old := f.cur
	best := want
	for best > old {
		if f.cur >= best || (best <= f.nrOpen && (best <= f.hard || f.privileged)) {
			break
		}
		if best < 16 {
			best = old
			break
		}
		best -= 16
	}
	return max(best, old)
}

func TestAdjustOpenFiles(t *testing.T) {
	tests := []struct {
		name           string
		maxclients     int
		lim            fakeRlimit
		wantMaxClients int
		wantLimit      uint64
	}{
		{"enough already", 10000, fakeRlimit{cur: 20000, hard: 20000, nrOpen: 1 << 20}, 10000, 20000},
		{"raised within the hard limit", 10000, fakeRlimit{cur: 1024, hard: 65536, nrOpen: 1 << 20}, 10000, 10032},
		{"hard limit too low", 10000, fakeRlimit{cur: 256, hard: 256, nrOpen: 1 << 20}, 224, 256},
		{"up to the hard limit", 10000, fakeRlimit{cur: 256, hard: 4096, nrOpen: 1 << 20}, 4064, 4096},
		{"hard limit off the steps", 10000, fakeRlimit{cur: 250, hard: 250, nrOpen: 1 << 20}, 218, 250},
		{"steps below the hard limit", 10000, fakeRlimit{cur: 100, hard: 4010, nrOpen: 1 << 20}, 3968, 4000},
		{"privileged raises the hard limit", 10000, fakeRlimit{cur: 256, hard: 256, nrOpen: 1 << 20, privileged: true}, 10000, 10032},
		{"privileged stops at nr_open", 2000000, fakeRlimit{cur: 256, hard: 256, nrOpen: 1 << 20, privileged: true}, 1048544, 1048576},
		{"nothing to spare", 10000, fakeRlimit{cur: 32, hard: 32, nrOpen: 1 << 20}, 0, 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.lim
			ref := tt.lim
			a := adjustOpenFiles(tt.maxclients, &f)
			if a.maxClients != tt.wantMaxClients || a.limit != tt.wantLimit {
				t.Fatalf("maxclients %d, limit %d; want %d, %d", a.maxClients, a.limit, tt.wantMaxClients, tt.wantLimit)
			}
			if f.cur != a.limit {
				t.Errorf("the limit set is %d, reported %d", f.cur, a.limit)
			}
			if r := redisLimit(a.want, &ref); r != a.limit {
				t.Errorf("Redis's loop ends at %d, this at %d", r, a.limit)
			}
			if f.sets > 4 {
				t.Errorf("%d setrlimit calls", f.sets)
			}
			if !f.privileged && f.hard != tt.lim.hard {
				t.Errorf("hard limit changed from %d to %d", tt.lim.hard, f.hard)
			}
			if (a.maxClients == 0) != a.fatal {
				t.Errorf("fatal = %v with maxclients %d", a.fatal, a.maxClients)
			}
		})
	}
	f := fakeRlimit{getErr: syscall.EINVAL}
	if a := adjustOpenFiles(10000, &f); a.maxClients != 992 {
		t.Errorf("limit unknown: maxclients %d, want 992 (1024-32, as Redis)", a.maxClients)
	}
}

// TestAdjustOpenFilesLog: Redis's three lines when maxclients is lowered,
// its notice when the limit is raised.
func TestAdjustOpenFilesLog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	f := fakeRlimit{cur: 256, hard: 256, nrOpen: 1 << 20}
	adjustOpenFiles(10000, &f).logTo(log)
	for _, want := range []string{
		`msg="You requested maxclients of 10000 requiring at least 10032 max file descriptors."`,
		`msg="Server can't set maximum open files to 10032 because of OS error: Operation not permitted."`,
		`msg="Current maximum open files is 256. maxclients has been reduced to 224 to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'."`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, buf.String())
		}
	}
	buf.Reset()
	f = fakeRlimit{cur: 1024, hard: 65536, nrOpen: 1 << 20}
	adjustOpenFiles(10000, &f).logTo(log)
	if want := `msg="Increased maximum number of open files to 10032 (it was originally set to 1024)."`; !strings.Contains(buf.String(), want) {
		t.Errorf("log lacks %s:\n%s", want, buf.String())
	}
	buf.Reset()
	f = fakeRlimit{getErr: errors.New("no")}
	adjustOpenFiles(10000, &f).logTo(log)
	if !strings.Contains(buf.String(), "Unable to obtain the current NOFILE limit (no), assuming 1024") {
		t.Errorf("log: %s", buf.String())
	}
}
