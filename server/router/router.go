// Package router owns cluster routing for the server: which shard (Raft
// group) a request's keys belong to and where it runs — here, at the
// shard's leader over a forwarded upstream, or answered with MOVED,
// CROSSSLOT, CLUSTERDOWN or the not-leader error — the per-client upstream
// connections that forward requests and relay the leader's reply bytes,
// the fan-out helpers that need no server (SCAN's cursor over the shards),
// and the data behind the CLUSTER and RAFT views (topology, members, shard
// lines).
//
// The server holds one Router, chosen at start-up: Single for the embedded
// single node (one shard, not clustered, cluster mode off), which always
// says "run it here", and Cluster otherwise. What only the server has (the
// client's protocol and database, what a dropped upstream means for its
// transaction) reaches the router through the small Client interface.
// This package must not import package server.
package router

import (
	"errors"

	"streamd/replication"
	"streamd/replication/wire"
	"streamd/server/resp"
)

// Routing replies, with Redis Cluster's texts.
const (
	// ErrCrossSlot refuses keys in several shards (cluster mode: slots).
	ErrCrossSlot = resp.ErrorReply("CROSSSLOT Keys in request don't hash to the same slot")
	// ErrClusterDown answers a request for a shard with no leader.
	ErrClusterDown = resp.ErrorReply("CLUSTERDOWN The cluster is down: the shard has no leader")
)

// Kind says where a request runs.
type Kind uint8

const (
	// Local: run here (on the route's shard, or keyless).
	Local Kind = iota
	// Forward: send to the shard's leader at Addr and relay its reply.
	Forward
	// Refuse: answer Reply (CROSSSLOT, MOVED, CLUSTERDOWN, not leader).
	Refuse
)

// Route is where a request's keys send it.
type Route struct {
	Kind  Kind
	Shard int // -1: no keys
	Slot  int // the first key's slot (MOVED's); -1 when unknown
	Addr  string
	Reply resp.ErrorReply
}

// Router is what the server's dispatcher asks about routing. internal
// marks a request from another node's upstream: it is never forwarded
// again (no loops) nor answered MOVED.
type Router interface {
	// Route decides where a request naming keys runs (Local with shard -1
	// when there are none).
	Route(keys [][]byte, internal bool) Route
	// RouteShard decides where a request for shard runs; slot is its
	// first key's (-1 when unknown).
	RouteShard(shard, slot int, internal bool) Route
	// ShardOf is the shard op runs on: its first key's, 0 without keys.
	ShardOf(op wire.Op) int
	// Spread reports whether keyless commands over the whole keyspace
	// (DBSIZE, KEYS, SCAN, FLUSH*) must visit every shard.
	Spread() bool
	// ClusterMode reports Redis Cluster mode (cluster-enabled at start):
	// MOVED instead of forwarding, and slots checked for CROSSSLOT.
	ClusterMode() bool
	// Leads reports whether this node leads shard and has applied
	// everything committed (always, unless clustered).
	Leads(shard int) bool
	// Leader is shard's leader: its id and raft address ("" when unknown
	// or not clustered).
	Leader(shard int) (id, raftAddr string)
	// ReadBarrier waits for shard's linearizable read point (nil at once
	// when not clustered).
	ReadBarrier(shard int) error
	// Moved is Redis Cluster's redirection to the node at raftAddr.
	Moved(slot int, raftAddr string) resp.ErrorReply
}

// Single is the router of the embedded single node: one shard, led here,
// no cluster mode. Everything runs here on shard 0.
type Single struct{}

// Route runs every request here, on shard 0 (-1 without keys).
func (Single) Route(keys [][]byte, internal bool) Route {
	if len(keys) == 0 {
		return Route{Kind: Local, Shard: -1}
	}
	return Route{Kind: Local, Slot: -1}
}

// RouteShard runs every request here.
func (Single) RouteShard(shard, slot int, internal bool) Route {
	return Route{Kind: Local, Shard: shard, Slot: slot}
}

// ShardOf is always shard 0.
func (Single) ShardOf(op wire.Op) int { return 0 }

// Spread is false: there is one shard.
func (Single) Spread() bool { return false }

// ClusterMode is false.
func (Single) ClusterMode() bool { return false }

// Leads is true: this node leads its only shard.
func (Single) Leads(shard int) bool { return true }

// Leader is unknown: a single node has no Raft network.
func (Single) Leader(shard int) (id, raftAddr string) { return "", "" }

// ReadBarrier has nothing to wait for.
func (Single) ReadBarrier(shard int) error { return nil }

// Moved is never needed on a single node; it answers CLUSTERDOWN.
func (Single) Moved(slot int, raftAddr string) resp.ErrorReply { return ErrClusterDown }

// NotLeaderReply is the reply of an internal connection asking a node that
// does not lead the shard (the NotLeaderError text).
func NotLeaderReply(id, addr string) resp.ErrorReply {
	return resp.ErrorReply((&replication.NotLeaderError{LeaderID: id, LeaderAddr: addr}).Error())
}

// IsNotLeader reports whether err says the shard is led elsewhere (the
// leadership moved after the request was routed here).
func IsNotLeader(err error) bool {
	var nle *replication.NotLeaderError
	return errors.As(err, &nle)
}

// KeySlot is the hash slot of a key given as bytes.
func KeySlot(k []byte) int { return replication.KeySlot(string(k)) }
