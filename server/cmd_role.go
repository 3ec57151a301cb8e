package server

import (
	"strconv"
	"sync"
)

// roleCommand is ROLE: Redis's replication role, from the same Raft view
// as INFO replication (infoReplication): a node leading shard 0 (a single
// node always) is a "master" with its replication offset (shard 0's applied
// index) and, per other voter, [host, port, offset]; any other node is a
// "slave" of shard 0's leader: [host, port, link state, offset].
func (s *Server) roleCommand() *Command {
	return &Command{Name: "role", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast"},
		ACL: []string{"@admin", "@fast", "@dangerous"}, Summary: "Return the role of the instance in the context of replication",
		Since: "2.8.12", Group: "server", Handler: s.cmdROLE}
}

func (s *Server) cmdROLE(c *Client, args [][]byte) Reply {
	r := s.infoReplication()
	if r.Master {
		replicas := Array{}
		if ms, err := s.node.Shard(0).Members(); err == nil {
			var wg sync.WaitGroup
			var mu sync.Mutex
			rows := map[string]Array{}
			for _, m := range ms {
				if !m.Voter || m.ID == s.nodeID() {
					continue
				}
				wg.Add(1)
				go func(id, raftAddr string) {
					defer wg.Done()
					sm := s.member(c, id, raftAddr)
					if sm.Host == "" {
						return // unreachable: not listed, as Redis lists connected replicas
					}
					ix, ok := s.node.AppliedIndexOf(0, raftAddr)
					if !ok {
						return
					}
					mu.Lock()
					rows[id] = Array{BulkString(sm.Host), BulkString(strconv.Itoa(sm.Port)),
						BulkString(strconv.FormatUint(ix, 10))}
					mu.Unlock()
				}(m.ID, m.RaftAddr)
			}
			wg.Wait()
			for _, m := range ms { // members' order, not the goroutines'
				if row, ok := rows[m.ID]; ok {
					replicas = append(replicas, row)
				}
			}
		}
		return Array{BulkString("master"), Int(r.Offset), replicas}
	}
	state := "connect"
	if r.MasterLinkUp {
		state = "connected"
	}
	return Array{BulkString("slave"), BulkString(r.MasterHost), Int(int64(r.MasterPort)), BulkString(state), Int(r.Offset)}
}
