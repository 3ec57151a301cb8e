package server

import (
	"sync"
	"sync/atomic"

	"streamd/internal/keywait"
	"streamd/server/tracking"
)

// keyspaceHub is the server-wide state of the keyspace side of the server:
// blocked readers (keywait), WATCHed keys and the tracking table.
type keyspaceHub struct {
	waits *keywait.Registry

	// writeMu orders writes against EXEC with WATCH. Every write holds it
	// shared from Propose until its keys are touched; an EXEC whose client
	// watches keys holds it exclusively from its dirty check through its
	// Propose. So a write applied before the EXEC has always marked the
	// watchers dirty by the time EXEC checks, as in single-threaded Redis.
	writeMu sync.RWMutex

	watchMu  sync.Mutex
	watchers map[keywait.Key]map[*txState]struct{}
	// watched is len(watchers), kept under watchMu and read without it: a
	// write with no key watched anywhere skips watchMu (dirtyWatchers).
	watched atomic.Int64

	track *tracking.Table
}

func newKeyspaceHub() *keyspaceHub {
	return &keyspaceHub{
		waits:    keywait.New(),
		watchers: make(map[keywait.Key]map[*txState]struct{}),
		track:    tracking.NewTable(),
	}
}

// hub returns the server's keyspace hub (created in New).
func (s *Server) hub() *keyspaceHub { return s.keyspace }

// closeHub stops the hub's unblocker once the server is closing; a blocked
// client still subscribed ends on its deadline or connection close.
func (s *Server) closeHub() { s.keyspace.waits.Close() }
