package server

import (
	"os"
	"runtime"
	"sync"
	"time"

	"streamd/internal/version"
	"streamd/replication"
	"streamd/replication/state"
	"streamd/server/info"
	"streamd/server/metrics"
)

// cmdINFO is INFO [section ...]: a bulk string in RESP2, a verbatim string
// in RESP3, rendered by server/info from the data gathered here for the
// sections asked for (info.Select: default, all, everything, names).
func (s *Server) cmdINFO(c *Client, args [][]byte) Reply {
	names := make([]string, 0, len(args)-1)
	for _, a := range args[1:] {
		names = append(names, string(a))
	}
	sections := info.Select(names)
	var d info.Data
	for _, sec := range sections {
		s.gatherInfo(sec, &d)
	}
	return Verbatim(info.Render(sections, &d))
}

// gatherInfo fills d's part for one INFO section.
func (s *Server) gatherInfo(section string, d *info.Data) {
	switch section {
	case "server":
		cfg := s.config()
		exe, _ := os.Executable()
		bi := version.Get()
		d.Server = info.Server{Version: serverVersion, GitSHA1: bi.SHA1(), GitDirty: bi.DirtyFlag(), BuildID: bi.BuildID,
			StreamdVersion: version.Release, StreamdGitSHA1: bi.Commit, ClusterEnabled: cfg.ClusterEnabled, OS: info.Uname(),
			GoVersion: runtime.Version(), ProcessID: os.Getpid(), RunID: info.RunID, TCPPort: tcpPort(cfg),
			Uptime: time.Since(s.startTime), ServerTimeUsec: time.Now().UnixMicro(), Executable: exe}
	case "clients":
		s.mu.Lock()
		n, internal := len(s.clients)-s.internalClients, s.internalClients
		s.mu.Unlock()
		d.Clients = info.Clients{Connected: n, ClusterConnections: internal, MaxClients: s.config().MaxClients,
			BlockedClients: s.stats.BlockedClients.Load()}
	case "memory":
		d.Memory = s.infoMemory()
	case "persistence":
		d.Persistence = s.infoPersistence()
	case "stats":
		st := s.stats
		in, out := st.NetKbps()
		d.Stats = info.Stats{ConnectionsReceived: st.ConnectionsReceived.Load(), CommandsProcessed: st.CommandsProcessed.Load(),
			OpsPerSec: st.OpsPerSec(), RejectedConnections: st.RejectedConnections.Load(), ErrorReplies: st.ErrorReplies.Load(),
			NetInput: st.NetInput.Load(), NetOutput: st.NetOutput.Load(), InputKbps: in, OutputKbps: out}
		ks := s.keyspaceCounts()
		d.Stats.KeyspaceHits, d.Stats.KeyspaceMisses, d.Stats.ExpiredKeys = ks.hits, ks.misses, ks.expired
	case "replication":
		d.Replication = s.infoReplication()
	case "cpu":
		d.CPU = info.ReadCPU()
	case "commandstats":
		for _, cs := range s.stats.CommandStats() {
			d.CommandStats = append(d.CommandStats, info.CommandStat{Name: cs.Name, Calls: cs.Calls, Usec: cs.Usec, Rejected: cs.Rejected, Failed: cs.Failed})
		}
	case "latencystats":
		cfg := s.config()
		ps := cfg.LatencyPercentiles()
		names := make([]string, len(ps))
		for i, p := range ps {
			names[i] = metrics.FormatPercentile(p)
		}
		for _, l := range s.stats.LatencyStats(ps) {
			d.LatencyStats = append(d.LatencyStats, info.LatencyStat{Name: l.Name, Percentiles: names, Usec: l.Usec})
		}
	case "errorstats":
		for _, e := range s.stats.ErrorStats() {
			d.ErrorStats = append(d.ErrorStats, info.ErrorStat{Name: e.Name, Count: e.Count})
		}
	case "cluster":
		d.Cluster = info.Cluster{Enabled: s.config().ClusterEnabled, Clustered: s.node.Clustered()}
		if d.Cluster.Clustered {
			d.Cluster.NodeID = s.nodeID()
		}
	case "keyspace":
		// streamd does not track average TTLs (avg_ttl is 0).
		if res, err := s.keyspaceInfo(); err == nil {
			dbs, _ := res.([]state.DBInfo)
			for _, db := range dbs {
				d.Keyspace = append(d.Keyspace, info.DB{Keys: db.Keys, Expires: db.Expires})
			}
		}
	}
}

// localStats sums the persistence state over this node's shards: counts
// add up, a save in progress or a failure anywhere shows, the last save
// time is the oldest shard's (every shard has saved since then), and the
// single-valued indexes are shard 0's (per-shard figures are in INFO
// replication's shard<i> lines).
func (s *Server) localStats() replication.Stats {
	st := s.node.Shard(0).Stats()
	for i := 1; i < s.node.NumShards(); i++ {
		o := s.node.Shard(i).Stats()
		st.ChangesSinceSave += o.ChangesSinceSave
		st.Saves += o.Saves
		st.SaveInProgress = st.SaveInProgress || o.SaveInProgress
		st.LastSaveOK = st.LastSaveOK && o.LastSaveOK
		if st.LastSaveErr == "" {
			st.LastSaveErr = o.LastSaveErr
		}
		if st.LastWriteErr == "" {
			st.LastWriteErr = o.LastWriteErr
		}
		st.WriteErrors += o.WriteErrors
		st.LastSaveUnix = min(st.LastSaveUnix, o.LastSaveUnix)
		st.Batches += o.Batches
		st.Proposals += o.Proposals
	}
	return st
}

// infoPersistence is INFO persistence's data: with several shards the
// figures are summed over this node's shards (localStats); the last save
// time is the start time until a snapshot is written.
func (s *Server) infoPersistence() info.Persistence {
	st := s.localStats()
	bgRunning, bgCurrent, bgOK, bgLast := s.persist.bgsaveInfo()
	lastSave := st.LastSaveUnix
	if lastSave <= 0 {
		lastSave = s.startTime.Unix()
	}
	return info.Persistence{
		ChangesSinceSave: st.ChangesSinceSave, BgsaveInProgress: bgRunning || st.SaveInProgress,
		LastSaveTime: lastSave, LastBgsaveOK: bgOK && st.LastSaveOK,
		LastBgsaveTimeSec: bgLast, CurrentBgsaveTimeSec: bgCurrent, Saves: st.Saves,
		LastWriteOK: st.LastWriteErr == "", AppendFsync: s.config().AppendFsync,
		AppliedIndex:        int64(st.AppliedIndex),
		GroupCommitBatches:  s.persist.batches.Load(),
		GroupCommitCommands: s.persist.batchedCmd.Load(),
		GroupCommitMaxBatch: s.persist.maxBatch.Load(),
	}
}

// infoReplication maps the shards' Raft roles onto Redis's fields. The node
// is "master" when it leads shard 0 (with one shard: when it leads); its
// other voters are its "slaves" (online when they answer). Otherwise it is
// a "slave" of shard 0's leader (that node's client address; the link is up
// while a leader is known and reachable). The offset is shard 0's applied
// index; the shard lines are router.View.ShardLines.
func (s *Server) infoReplication() info.Replication {
	r := info.Replication{Offset: int64(s.node.Shard(0).Info().AppliedIndex)}
	if s.node.Shard(0).IsLeader() {
		r.Master = true
		if ms, err := s.node.Shard(0).Members(); err == nil {
			for _, m := range ms {
				if m.Voter && m.ID != s.nodeID() {
					sm := s.member(nil, m.ID, m.RaftAddr)
					r.Slaves = append(r.Slaves, info.Slave{ID: sm.ID, Host: sm.Host, Port: sm.Port, Online: sm.OK})
				}
			}
		}
	} else if id, addr := s.node.Leader(0); id != "" {
		m := s.member(nil, id, addr)
		r.MasterHost, r.MasterPort, r.MasterLinkUp, r.MasterID = m.Host, m.Port, m.OK, id
	}
	for _, f := range s.view.ShardLines() {
		r.Shards = append(r.Shards, info.Field{Name: f.Name, Value: f.Value})
	}
	return r
}

// keyspaceCounts are keyspace_hits, keyspace_misses and expired_keys.
type keyspaceCounts struct {
	mu                    sync.Mutex
	hits, misses, expired int64
}

// shardCounts sums this node's shards' counters (state.Counters).
func (s *Server) shardCounts() (hits, misses, expired int64) {
	for i := 0; i < s.node.NumShards(); i++ {
		c := s.node.Shard(i).KeyspaceCounters()
		hits += c.Hits.Load()
		misses += c.Misses.Load()
		expired += c.Expired.Load()
	}
	return
}

// keyspaceCounts are the shards' counters since the last CONFIG RESETSTAT.
func (s *Server) keyspaceCounts() *keyspaceCounts {
	h, m, e := s.shardCounts()
	s.ksBase.mu.Lock()
	defer s.ksBase.mu.Unlock()
	return &keyspaceCounts{hits: h - s.ksBase.hits, misses: m - s.ksBase.misses, expired: e - s.ksBase.expired}
}

// resetKeyspaceCounts is CONFIG RESETSTAT's part for the shards' counters.
func (s *Server) resetKeyspaceCounts() {
	h, m, e := s.shardCounts()
	s.ksBase.mu.Lock()
	s.ksBase.hits, s.ksBase.misses, s.ksBase.expired = h, m, e
	s.ksBase.mu.Unlock()
}
