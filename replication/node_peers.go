package replication

import (
	"errors"
	"fmt"
	"net"
	"time"

	"streamd/internal/mux"
)

// Other nodes: their client addresses and IDs (cached node RPCs), internal
// RESP connections to their servers, and the raft port.

// cachedInfo is a peer's answer to the info RPC.
type cachedInfo struct {
	id, clientAddr string
	at             time.Time
}

// infoTTL is how long a peer's info is trusted before asking again.
const infoTTL = 30 * time.Second

// isSelf reports whether raftAddr is this node's raft address (the only
// node there is for the embedded single node).
func (n *Node) isSelf(raftAddr string) bool {
	return n.mux == nil || raftAddr == n.opts.RaftAddr
}

// ClientAddrOf returns the client address of the member at raftAddr: this
// node's own, or what that node answers to the info RPC (cached).
func (n *Node) ClientAddrOf(raftAddr string) (string, error) {
	if n.isSelf(raftAddr) {
		return n.ClientAddr(), nil
	}
	ci, err := n.peerInfo(raftAddr)
	return ci.clientAddr, err
}

// NodeIDOf returns the node id of the member at raftAddr (see ClientAddrOf).
func (n *Node) NodeIDOf(raftAddr string) (string, error) {
	if n.isSelf(raftAddr) {
		return n.ID(), nil
	}
	ci, err := n.peerInfo(raftAddr)
	return ci.id, err
}

// peerInfo returns the cached info of the node at raftAddr. Without an
// entry it asks the node (and returns the error if it does not answer).
// An entry older than infoTTL is returned as it is while one background
// refresh asks the node again (at most one a second per node), so a lookup
// never waits on a node that is slow or gone once it was known.
func (n *Node) peerInfo(raftAddr string) (cachedInfo, error) {
	n.infoMu.Lock()
	ci, ok := n.info[raftAddr]
	if ok && time.Since(ci.at) >= infoTTL {
		next := ci
		next.at = time.Now().Add(time.Second - infoTTL) // no other refresh for a second
		n.info[raftAddr] = next
		go n.refreshPeer(raftAddr)
	}
	n.infoMu.Unlock()
	if ok {
		return ci, nil
	}
	return n.refreshPeer(raftAddr)
}

// refreshPeer asks the node at raftAddr for its info and caches the answer.
func (n *Node) refreshPeer(raftAddr string) (cachedInfo, error) {
	resp, err := n.rpcs.call(raftAddr, rpcRequest{Op: rpcInfo}, rpcShortTimeout)
	if err != nil {
		return cachedInfo{}, err
	}
	ci := cachedInfo{id: resp.ID, clientAddr: resp.ClientAddr, at: time.Now()}
	n.infoMu.Lock()
	n.info[raftAddr] = ci
	n.infoMu.Unlock()
	return ci, nil
}

// forgetPeer marks the cached info of the node at raftAddr stale (a call to
// it failed: it may come back with another client address), so the next
// lookup asks again; while it does not answer, the stale info is used.
func (n *Node) forgetPeer(raftAddr string) {
	n.infoMu.Lock()
	if ci, ok := n.info[raftAddr]; ok {
		ci.at = time.Time{}
		n.info[raftAddr] = ci
	}
	n.infoMu.Unlock()
}

// DialRESP opens an internal RESP connection to the server of the node at
// raftAddr (through its raft port, after the handshake that proves this
// node is a member). The caller owns the connection.
func (n *Node) DialRESP(raftAddr string) (net.Conn, error) {
	if !n.Clustered() {
		return nil, errors.New("ERR this node is not part of a cluster (started without a node id)")
	}
	c, err := n.mux.Dial(raftAddr, mux.KindRESP, 0, rpcShortTimeout)
	if err != nil {
		return nil, fmt.Errorf("ERR node at %s unreachable: %v", raftAddr, err)
	}
	return c, nil
}

// Mux returns the raft port (nil for the embedded single node), where the
// owners of the other kinds of connection register their handlers: the
// server's internal RESP connections (mux.KindRESP) are wired in by
// cmd/streamd. The node registers the RPCs itself.
func (n *Node) Mux() *mux.Mux { return n.mux }
