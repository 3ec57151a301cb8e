package replication

import (
	"sync"

	"github.com/hashicorp/raft"
)

// guardedTransport is a raft network transport whose heartbeat handler can
// be stopped. raft runs heartbeats on the transport's connection goroutine
// (its fast path), not on its own: one that passed raft's shutdown check
// can still be writing the current term when Shard.Close closes the log
// store, and raft panics on that write's error ("failed to save current
// term: … the log is closed"). Close stops the heartbeats first, waiting
// for any running one; later ones are answered with raft's transport
// shutdown error (the node is going away).
type guardedTransport struct {
	*raft.NetworkTransport
	mu      sync.RWMutex
	stopped bool
}

func newGuardedTransport(t *raft.NetworkTransport) *guardedTransport {
	return &guardedTransport{NetworkTransport: t}
}

// SetHeartbeatHandler installs raft's heartbeat handler behind the guard.
func (g *guardedTransport) SetHeartbeatHandler(cb func(rpc raft.RPC)) {
	if cb == nil {
		g.NetworkTransport.SetHeartbeatHandler(nil)
		return
	}
	g.NetworkTransport.SetHeartbeatHandler(func(rpc raft.RPC) {
		g.mu.RLock()
		defer g.mu.RUnlock()
		if g.stopped {
			rpc.Respond(nil, raft.ErrTransportShutdown)
			return
		}
		cb(rpc)
	})
}

// stopHeartbeats waits for a running heartbeat and drops the later ones.
func (g *guardedTransport) stopHeartbeats() {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
}

// heartbeatStopper is a transport whose heartbeats Shard.Close stops
// before it closes the log store.
type heartbeatStopper interface{ stopHeartbeats() }
