package replication

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"streamd/internal/mux"
)

// Node RPCs travel over the raft port (package internal/mux) as JSON: the caller sends an
// rpcRequest, the callee answers an rpcResponse, and the connection stays
// open for the caller's next request (rpcPool). Errors travel as their Redis
// reply text; a *NotLeaderError keeps its type (its leader comes along) so
// that callers can follow the leader.

// RPC operations.
const (
	rpcInfo      = "info"      // → ID, ClientAddr, Shards
	rpcAdd       = "add"       // AddVoter(ID, Addr) on the shard (its leader)
	rpcRemove    = "remove"    // RemoveServer(ID) on the shard (its leader)
	rpcTransfer  = "transfer"  // TransferLeadership(ID) on the shard (its leader)
	rpcReadIndex = "readindex" // → Index = the shard's ReadIndex (its leader)
	rpcApplied   = "applied"   // → Index = the shard's applied index here
)

// RPC time bounds.
const (
	rpcShortTimeout = 2 * time.Second  // info, applied
	rpcAdminTimeout = 30 * time.Second // add, remove, transfer (they wait for raft)
)

// rpcRequest is one node RPC.
type rpcRequest struct {
	Op    string `json:"op"`
	Shard int    `json:"shard"`
	ID    string `json:"id,omitempty"`
	Addr  string `json:"addr,omitempty"`
	// Applied is the asking follower's applied index (readindex): below
	// the read index, the leader nudges its replicas (Shard.NudgeReplicas).
	Applied uint64 `json:"applied,omitempty"`
}

// rpcResponse is its answer.
type rpcResponse struct {
	Err        string `json:"err,omitempty"`
	NotLeader  bool   `json:"not_leader,omitempty"`
	LeaderID   string `json:"leader_id,omitempty"`
	LeaderAddr string `json:"leader_addr,omitempty"`
	ID         string `json:"id,omitempty"`
	ClientAddr string `json:"client_addr,omitempty"`
	Shards     int    `json:"shards,omitempty"`
	Index      uint64 `json:"index,omitempty"`
}

// errorOf turns a response's error back into an error.
func (r *rpcResponse) errorOf() error {
	switch {
	case r.NotLeader:
		return &NotLeaderError{LeaderID: r.LeaderID, LeaderAddr: r.LeaderAddr}
	case r.Err != "":
		return errors.New(r.Err)
	}
	return nil
}

// setError puts err in the response.
func (r *rpcResponse) setError(err error) {
	if err == nil {
		return
	}
	var nl *NotLeaderError
	if errors.As(err, &nl) {
		r.NotLeader, r.LeaderID, r.LeaderAddr = true, nl.LeaderID, nl.LeaderAddr
	}
	r.Err = err.Error()
}

// rpcUnreachableError is a node RPC that got no answer: the node could not
// be reached or the connection failed mid-call.
type rpcUnreachableError struct {
	addr string
	err  error
}

// Error returns "ERR node at <addr> unreachable: <cause>".
func (e *rpcUnreachableError) Error() string {
	return fmt.Sprintf("ERR node at %s unreachable: %v", e.addr, e.err)
}

// Unwrap returns the network error.
func (e *rpcUnreachableError) Unwrap() error { return e.err }

// isUnreachable reports whether err is a node RPC that got no answer.
func isUnreachable(err error) bool {
	var u *rpcUnreachableError
	return errors.As(err, &u)
}

// rpcConn is a connection to a node's RPC service; it carries one request
// at a time.
type rpcConn struct {
	c    net.Conn
	enc  *json.Encoder
	dec  *json.Decoder
	addr string
	used time.Time
}

// dialRPC opens an RPC connection through the raft port m.
func dialRPC(m *mux.Mux, addr string, timeout time.Duration) (*rpcConn, error) {
	if m == nil {
		return nil, errors.New("ERR this node is not part of a cluster (started without a node id)")
	}
	c, err := m.Dial(addr, mux.KindRPC, 0, min(timeout, rpcShortTimeout))
	if err != nil {
		return nil, &rpcUnreachableError{addr: addr, err: err}
	}
	return &rpcConn{c: c, enc: json.NewEncoder(c), dec: json.NewDecoder(c), addr: addr}, nil
}

// do sends req and reads the answer within timeout. An I/O failure is an
// *rpcUnreachableError (the connection is then unusable); the callee's error
// comes back as its text (or *NotLeaderError) with the response.
func (rc *rpcConn) do(req rpcRequest, timeout time.Duration) (*rpcResponse, error) {
	rc.c.SetDeadline(time.Now().Add(timeout))
	if err := rc.enc.Encode(req); err != nil {
		return nil, &rpcUnreachableError{addr: rc.addr, err: fmt.Errorf("send %s: %w", req.Op, err)}
	}
	var resp rpcResponse
	if err := rc.dec.Decode(&resp); err != nil {
		return nil, &rpcUnreachableError{addr: rc.addr, err: fmt.Errorf("no answer to %s: %w", req.Op, err)}
	}
	rc.c.SetDeadline(time.Time{})
	rc.used = time.Now()
	return &resp, resp.errorOf()
}

// rpcPool keeps idle RPC connections per node, for the frequent idempotent
// calls (info, applied, readindex).
type rpcPool struct {
	mux    *mux.Mux // the raft port, which dials (and authenticates) for the pool
	mu     sync.Mutex
	idle   map[string][]*rpcConn
	closed bool
}

// rpcMaxIdle is how many idle connections the pool keeps per node;
// rpcIdleTimeout how long a connection may stay idle (the callee closes it
// after rpcServeIdle, which is longer).
const (
	rpcMaxIdle     = 4
	rpcIdleTimeout = 20 * time.Second
	rpcServeIdle   = 60 * time.Second
)

// call runs an idempotent request on a pooled connection. A pooled
// connection that turns out dead (the callee restarted or closed it) is
// replaced by a fresh one for one more try.
func (p *rpcPool) call(addr string, req rpcRequest, timeout time.Duration) (*rpcResponse, error) {
	if rc := p.get(addr); rc != nil {
		resp, err := rc.do(req, timeout)
		if !isUnreachable(err) {
			p.put(rc)
			return resp, err
		}
		rc.c.Close()
	}
	rc, err := dialRPC(p.mux, addr, timeout)
	if err != nil {
		return nil, err
	}
	resp, err := rc.do(req, timeout)
	if isUnreachable(err) {
		rc.c.Close()
		return nil, err
	}
	p.put(rc)
	return resp, err
}

// callOnce runs a request on a connection of its own (admin calls: never
// retried behind the caller's back).
func (p *rpcPool) callOnce(addr string, req rpcRequest, timeout time.Duration) (*rpcResponse, error) {
	rc, err := dialRPC(p.mux, addr, timeout)
	if err != nil {
		return nil, err
	}
	defer rc.c.Close()
	return rc.do(req, timeout)
}

// get takes an idle connection to addr that has not been idle too long.
func (p *rpcPool) get(addr string) *rpcConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		conns := p.idle[addr]
		if len(conns) == 0 {
			return nil
		}
		rc := conns[len(conns)-1]
		p.idle[addr] = conns[:len(conns)-1]
		if time.Since(rc.used) < rpcIdleTimeout {
			return rc
		}
		rc.c.Close()
	}
}

// put returns a connection to the pool (or closes it).
func (p *rpcPool) put(rc *rpcConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle[rc.addr]) >= rpcMaxIdle {
		rc.c.Close()
		return
	}
	if p.idle == nil {
		p.idle = map[string][]*rpcConn{}
	}
	p.idle[rc.addr] = append(p.idle[rc.addr], rc)
}

// close closes every idle connection; later ones are closed on return.
func (p *rpcPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, conns := range p.idle {
		for _, rc := range conns {
			rc.c.Close()
		}
	}
	p.idle = nil
}

// serveRPC answers requests on an RPC connection until the caller closes
// it or leaves it idle for rpcServeIdle.
func (n *Node) serveRPC(c net.Conn, _ int) {
	defer c.Close()
	dec, enc := json.NewDecoder(c), json.NewEncoder(c)
	for {
		c.SetReadDeadline(time.Now().Add(rpcServeIdle))
		var req rpcRequest
		if err := dec.Decode(&req); err != nil {
			return
		}
		c.SetReadDeadline(time.Time{})
		resp := n.execRPC(req)
		c.SetWriteDeadline(time.Now().Add(rpcShortTimeout))
		if err := enc.Encode(resp); err != nil {
			return
		}
	}
}

// execRPC runs a request on this node.
func (n *Node) execRPC(req rpcRequest) *rpcResponse {
	resp := &rpcResponse{}
	if req.Op == rpcInfo {
		resp.ID, resp.ClientAddr, resp.Shards = n.ID(), n.ClientAddr(), len(n.shards)
		return resp
	}
	if req.Shard < 0 || req.Shard >= len(n.shards) {
		resp.Err = fmt.Sprintf("ERR no shard %d on node %s (it has %d)", req.Shard, n.ID(), len(n.shards))
		return resp
	}
	s := n.shards[req.Shard]
	switch req.Op {
	case rpcAdd:
		resp.setError(n.addVoterHere(s, req.ID, req.Addr))
	case rpcRemove:
		resp.setError(n.removeHere(s, req.ID))
	case rpcTransfer:
		resp.setError(n.transferHere(s, req.Shard, req.ID))
	case rpcReadIndex:
		idx, err := s.ReadIndex()
		resp.Index = idx
		resp.setError(err)
		if err == nil && idx > req.Applied {
			// The follower may not know that idx is committed until the
			// next append: send one now.
			n.NudgeReplicas(req.Shard)
		}
	case rpcApplied:
		resp.Index = s.raft.AppliedIndex() // cheap: WAIT polls it
	default:
		resp.Err = fmt.Sprintf("ERR unknown node RPC %q", req.Op)
	}
	return resp
}
