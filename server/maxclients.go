package server

import (
	"fmt"
	"log/slog"
)

// minReservedFDs is Redis's CONFIG_MIN_RESERVED_FDS: the file descriptors
// kept for everything but clients (the log and snapshot files, listeners,
// the raft port and its peers).
const minReservedFDs = 32

// rlimitStep is how far Redis lowers its attempt each time the open-file
// limit it asks for is refused.
const rlimitStep = 16

// maxSetrlimitTries bounds the attempts to raise the open-file limit.
const maxSetrlimitTries = 64

// rlimiter reads and sets the process's open-file limit (RLIMIT_NOFILE);
// fdlimit_unix.go has the system's, tests a fake.
type rlimiter interface {
	// get returns the soft and hard limits.
	get() (cur, max uint64, err error)
	// set sets them.
	set(cur, max uint64) error
	// ceiling is the highest limit a privileged process could set
	// (fs.nr_open), 0 if unknown.
	ceiling() uint64
}

// fdAdjustment is what adjustOpenFiles did for a maxclients value.
type fdAdjustment struct {
	asked      int    // maxclients asked for
	maxClients int    // maxclients to run with: asked, or lowered to fit
	want       uint64 // asked + minReservedFDs
	old, limit uint64 // the soft limit before and after
	getErr     error  // the limit could not be read (1024 assumed)
	setErr     error  // why it could not be raised to want
	fatal      bool   // the limit leaves no descriptor for a client
}

// adjustOpenFiles is Redis's adjustOpenFilesLimit: when the soft open-file
// limit is below maxclients + 32 it tries to raise it to that, then to
// lower values 16 at a time (as Redis; this goes straight to the
// highest step the hard limit, or fs.nr_open for a privileged process,
// allows instead of trying every step above it), never below the current
// limit; if it could not get maxclients + 32, maxclients is lowered to
// the limit minus 32. The hard limit is raised only as far as the soft one
// needs (Redis sets both to the same value).
func adjustOpenFiles(maxclients int, rl rlimiter) fdAdjustment {
	a := fdAdjustment{asked: maxclients, maxClients: maxclients, want: uint64(maxclients) + minReservedFDs}
	cur, hard, err := rl.get()
	if err != nil {
		a.getErr = err
		a.maxClients = 1024 - minReservedFDs
		return a
	}
	a.old, a.limit = cur, cur
	if cur >= a.want {
		return a
	}
	try := func(b uint64) bool {
		if err := rl.set(b, max(b, hard)); err != nil {
			a.setErr = err
			return false
		}
		return true
	}
	// Redis tries want, want-16, want-32, ... while above the current
	// limit. The steps above the highest limit a privileged process may
	// set (fs.nr_open), then above the hard limit, would fail, so they are
	// skipped; if one below them fails too (setrlimit refused outright),
	// maxSetrlimitTries bounds the rest.
	ceilings := []uint64{rl.ceiling(), hard}
	best, ok := a.want, false
	for tries := 0; best > cur && tries < maxSetrlimitTries; tries++ {
		if ok = try(best); ok || best < rlimitStep {
			break
		}
		next := best - rlimitStep
		for _, c := range ceilings {
			if c < best {
				if c <= cur {
					next = cur // nothing above the current limit can be set
				} else {
					next = min(next, best-(best-c+rlimitStep-1)/rlimitStep*rlimitStep)
				}
				break
			}
		}
		best = next
	}
	if !ok {
		best = cur
	}
	a.limit = best
	if best < a.want {
		if best <= minReservedFDs {
			a.fatal = true
			a.maxClients = 0
			return a
		}
		a.maxClients = int(best - minReservedFDs)
	}
	return a
}

// logTo logs what Redis logs for the adjustment, in its words.
func (a fdAdjustment) logTo(log *slog.Logger) {
	switch {
	case a.getErr != nil:
		log.Warn(fmt.Sprintf("Unable to obtain the current NOFILE limit (%s), assuming 1024 and setting the max clients configuration accordingly.",
			strerror(a.getErr)))
	case a.fatal:
		log.Error(fmt.Sprintf("Your current 'ulimit -n' of %d is not enough for the server to start. Please increase your open file limit to at least %d. Exiting.",
			a.old, a.want))
	case a.maxClients < a.asked:
		log.Warn(fmt.Sprintf("You requested maxclients of %d requiring at least %d max file descriptors.", a.asked, a.want))
		log.Warn(fmt.Sprintf("Server can't set maximum open files to %d because of OS error: %s.", a.want, strerror(a.setErr)))
		log.Warn(fmt.Sprintf("Current maximum open files is %d. maxclients has been reduced to %d to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
			a.limit, a.maxClients))
	case a.limit > a.old:
		log.Info(fmt.Sprintf("Increased maximum number of open files to %d (it was originally set to %d).", a.limit, a.old))
	}
}

// FitMaxClients is what Redis does at start-up with maxclients: it raises
// the process's open-file limit to maxclients + 32 if it can (up to the
// hard limit; further for a privileged process) and otherwise returns
// maxclients lowered to the limit minus 32, logging Redis's lines either
// way. It fails, as Redis exits, when the limit is 32 or less.
func FitMaxClients(maxclients int, log *slog.Logger) (int, error) {
	a := adjustOpenFiles(maxclients, sysRlimit{})
	a.logTo(log)
	if a.fatal {
		return 0, fmt.Errorf("open-file limit %d is not enough for the server to start: increase it to at least %d ('ulimit -n')", a.old, a.want)
	}
	return a.maxClients, nil
}

// setMaxClients is the part of CONFIG SET maxclients that Redis's
// updateMaxclients does: raise the open-file limit for the new value, or
// refuse it with Redis's reason when the limit cannot be raised enough.
func (s *Server) setMaxClients(n int) error {
	a := adjustOpenFiles(n, sysRlimit{})
	a.logTo(s.log)
	if a.maxClients != n {
		s.log.Warn("Failed applying new configuration. Possibly related to new maxclients setting. Restoring previous settings.")
		return fmt.Errorf("The operating system is not able to handle the specified number of clients, try with %d", a.maxClients)
	}
	return nil
}
