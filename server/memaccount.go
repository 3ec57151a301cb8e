package server

import (
	"streamd/replication/state"
	"streamd/server/info"
)

// memAccount is this node's memory accounting, Redis's redisMemOverhead
// (getMemoryOverheadData) over streamd's structures: what the keyspaces of
// the node's shards hold (state's running totals, kept as writes apply, read
// in O(databases) per shard), what clients hold, and the heap the process
// had allocated when the server started. It is what INFO used_memory,
// MEMORY STATS, the maxmemory check and streamd_used_memory_bytes report;
// the Go runtime's own figures (heap, RSS) are reported beside it, never
// mixed into it.
type memAccount struct {
	// startup is startup.allocated: the Go heap in use when the first
	// server of the process was made.
	startup uint64
	// clients is clients.normal: output queued for clients and not yet
	// written; links is cluster.links, the same for other nodes'
	// connections (forwarded commands).
	clients, links uint64
	// dbs are the per-database figures summed over the node's shards.
	dbs []state.DBMemory
}

// readMemAccount reads the accounting now.
func (s *Server) readMemAccount() memAccount {
	a := memAccount{startup: memStartup.Load(), dbs: make([]state.DBMemory, state.NumDatabases)}
	s.mu.Lock()
	conns := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.out.mu.Lock()
		n := uint64(c.out.pendingLocked() + c.out.heldBytes)
		c.out.mu.Unlock()
		if c.internal {
			a.links += n
		} else {
			a.clients += n
		}
	}
	if s.node == nil {
		return a
	}
	for i := range s.node.NumShards() {
		for j, d := range s.node.Shard(i).Memory() {
			if j < len(a.dbs) {
				t := &a.dbs[j]
				t.Keys += d.Keys
				t.Expires += d.Expires
				t.Overhead += d.Overhead
				t.ExpiresOverhead += d.ExpiresOverhead
				t.Bytes += d.Bytes
			}
		}
	}
	return a
}

// keys is keys.count: the keys of every database.
func (a memAccount) keys() uint64 {
	var n int64
	for _, d := range a.dbs {
		n += d.Keys
	}
	return uint64(n)
}

// overhead is overhead.total: startup, clients, links and the databases'
// key and deadline tables.
func (a memAccount) overhead() uint64 {
	n := a.startup + a.clients + a.links
	for _, d := range a.dbs {
		n += uint64(d.Overhead + d.ExpiresOverhead)
	}
	return n
}

// dataset is dataset.bytes (used_memory_dataset): what the keys hold
// beyond their tables' overhead.
func (a memAccount) dataset() uint64 {
	var n int64
	for _, d := range a.dbs {
		n += d.Bytes - d.Overhead - d.ExpiresOverhead
	}
	return uint64(max(n, 0))
}

// used is used_memory: the overhead plus the dataset.
func (a memAccount) used() uint64 { return a.overhead() + a.dataset() }

// infoMemory is INFO memory: the accounting, its peak, and the process's
// figures.
func (s *Server) infoMemory() info.Memory {
	a := s.readMemAccount()
	m := info.ReadMemory()
	m.Used, m.Overhead, m.Startup, m.Dataset = a.used(), a.overhead(), a.startup, a.dataset()
	m.ClientsNormal, m.ClusterLinks = a.clients, a.links
	m.Peak = info.NotePeak(m.Used)
	m.MaxMemory = uint64(s.stats.MaxMemory.Load())
	return m
}
