// Package server is streamd's Redis front end: connections, the RESP2/RESP3
// protocol, the command table and dispatch, every command handler, blocking
// reads, client-side caching (tracking) and MULTI/EXEC. Keyspace commands
// become wire operations sent to the replication.Shard.
package server

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"streamd/config"
	"streamd/internal/lograte"
	"streamd/internal/tlsconf"
	"streamd/replication"
	"streamd/replication/wire"
	"streamd/server/metrics"
	"streamd/server/observe"
	"streamd/server/router"
)

// Server accepts Redis clients and runs their commands against a Shard.
// Serve may be called once per listener; Close stops all of them. The
// server never closes the shard: its owner (cmd/streamd) does, after Close,
// with the snapshot choice ShutdownSave reports.
type Server struct {
	// node holds the shards; shard is node.Shard(0) (the only shard of a
	// single node), kept for the figures INFO reports per server. Keyspace
	// operations go to the shard of their keys (route.go).
	node  *replication.Node
	shard *replication.Shard

	// router decides where requests run (server/router): router.Single
	// on the embedded single node, a *router.Cluster (also in cluster) when
	// requests must be routed to shards (several shards, other nodes, or
	// cluster mode, which answers MOVED instead of forwarding).
	router  router.Router
	cluster *router.Cluster
	// view renders the shards for CLUSTER, RAFT and INFO.
	view *router.View
	// lostMu guards lost: per shard, a channel closed when this node stops
	// leading the shard (then replaced), which releases the clients
	// blocked on its keys with Redis's failover UNBLOCKED error.
	lostMu sync.Mutex
	lost   []chan struct{}
	log    *slog.Logger
	cmds   *commandTable

	// loop serves plain TCP clients of a single node (loop_linux.go),
	// started with its first client; loopBroken is set when it could not
	// be. Both guarded by mu.
	loop       *eventLoop
	loopBroken bool

	// configSetMu makes this node's CONFIG SETs one at a time, so the
	// stored configuration ends as the engine does (a forwarded,
	// shard-pinned CONFIG SET from another node does not take it).
	configSetMu sync.Mutex

	// proposeMany hands writes to shard i without waiting, in order,
	// out[k] receiving ops[k]'s pending write (the pipeline's group
	// commit); tests wrap it to observe the order of proposals and waits.
	// waiting says the caller waits on them next (an event loop's turn:
	// replication.Shard.QueueMany).
	proposeMany func(i int, ops []wire.Command, out []pendingWrite, waiting bool)

	// keyspace holds what writes touch beyond the shard: blocked readers,
	// WATCHers and tracking (plan.go).
	keyspace *keyspaceHub
	// access holds keys' last access times (OBJECT IDLETIME, access.go);
	// latency is the latency monitor (LATENCY, cmd_latency.go).
	access  *accessTimes
	latency *latencyMonitor

	cfgMu sync.RWMutex
	cfg   config.Config

	// done is closed by Close: background tasks (the expiry sweep, the ops
	// sampler) and blocked clients stop on it.
	done      chan struct{}
	closeOnce sync.Once

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	clients   map[int64]*Client
	// internalClients counts the connections from other nodes in clients
	// (ServeInternal): maxclients limits the others only.
	internalClients int
	wg              sync.WaitGroup

	nextClientID atomic.Int64
	startTime    time.Time
	tasksOnce    sync.Once
	stats        *metrics.Stats
	// oom is set while used memory is over maxmemory (maxmemory.go);
	// oomMu orders its updates (the sampler, CONFIG SET).
	oom   atomic.Bool
	oomMu sync.Mutex
	// gcNudge is the sampler's record of the collections it started
	// while over maxmemory (maxmemory.go).
	gcNudge gcNudge
	// idleRelease is the sampler's record for releaseIdleMemory.
	idleRelease idleRelease
	// ksBase is the shards' keyspace counters at the last CONFIG RESETSTAT
	// (INFO stats reports the counts since; cmd_info.go).
	ksBase keyspaceCounts

	// shutdownReq is closed by SHUTDOWN (see Done); shutdownNoSave is set
	// first when it said NOSAVE.
	shutdownReq    chan struct{}
	shutdownOnce   sync.Once
	shutdownNoSave atomic.Bool

	persist persistState

	// slowlog is SLOWLOG's log and monitors MONITOR's clients
	// (cmd_slowlog.go, cmd_monitor.go).
	slowlog  observe.SlowLog
	monitors observe.Monitors

	// tls holds the client port's TLS certificates (tls.go): set by
	// SetTLS before ServeTLS, reloaded by CONFIG SET tls-*.
	tls atomic.Pointer[tlsconf.Loader]
	// tlsListeners are the TLS port's listeners, listen binds a new one
	// (tls.go; both guarded by mu).
	tlsListeners map[net.Listener]struct{}
	listen       func(port int) ([]net.Listener, error)

	// acl is the ACL users' machinery (acl.go).
	acl aclState
}

// New returns a server for cfg that sends keyspace operations to shard and
// logs to log (nil: slog.Default()).
func New(cfg config.Config, shard *replication.Shard, log *slog.Logger) *Server {
	return NewNode(cfg, replication.SingleNode(shard), log)
}

// NewNode returns a server for cfg that sends keyspace operations to the
// node's shards and logs to log (nil: slog.Default()).
func NewNode(cfg config.Config, node *replication.Node, log *slog.Logger) *Server {
	shard := node.Shard(0)
	if log == nil {
		log = slog.Default()
	}
	s := &Server{
		node:      node,
		shard:     shard,
		log:       log,
		cfg:       cfg,
		done:      make(chan struct{}),
		listeners: make(map[net.Listener]struct{}),
		clients:   make(map[int64]*Client),
		startTime: time.Now(),
		stats:     metrics.NewStats(),
		keyspace:  newKeyspaceHub(),
		access:    newAccessTimes(),
		latency:   newLatencyMonitor(),

		shutdownReq: make(chan struct{}),
	}
	s.stats.LatencyTracking.Store(cfg.LatencyTracking)
	s.proposeMany = func(i int, ops []wire.Command, out []pendingWrite, waiting bool) {
		sh := node.Shard(i)
		var buf [32]*replication.Pending
		for len(ops) > 0 {
			n := min(len(ops), len(buf))
			if waiting {
				sh.QueueMany(ops[:n], buf[:n])
			} else {
				sh.ProposeAsyncMany(ops[:n], buf[:n])
			}
			for k, p := range buf[:n] {
				out[k] = p
			}
			ops, out = ops[n:], out[n:]
		}
	}
	s.router = router.Single{}
	s.view = router.NewView(node)
	if node.NumShards() > 1 || node.Clustered() || cfg.ClusterEnabled {
		s.cluster = router.NewCluster(node, cfg.ClusterEnabled, s.raftTimings, s.done)
		s.router = s.cluster
	}
	s.cmds = newCommandTable(s.allCommands())
	s.noteStartupMemory()
	if cfg.MaxMemory > 0 {
		if cfg.MaxMemory < 1<<20 {
			// Redis's start-up warning.
			log.Warn("maxmemory is less than 1MB: are you sure this is what you really want?", "maxmemory", cfg.MaxMemory)
		}
		s.setMaxMemory(cfg.MaxMemory)
	}
	s.initACL()
	for i := range node.NumShards() {
		if sh := node.Shard(i); sh != nil { // a test's node may have none
			sh.SetDefaultAckLevel(AckLevelOf(cfg.StreamDefaultAckLevel))
		}
	}
	s.lost = make([]chan struct{}, node.NumShards())
	for i := range s.lost {
		s.lost[i] = make(chan struct{})
	}
	if node.Clustered() {
		node.OnLeaderChange(s.leaderChanged)
		node.OnLeaderChange(func(i int, leader bool) {
			if leader {
				go s.untilApplied(i, func() bool { return s.engineFromConfig(i) })
			}
			if leader && i == 0 {
				go s.untilApplied(0, s.aclFromConfig)
			}
		})
	} else {
		for i := range node.NumShards() {
			s.engineFromConfig(i)
		}
		s.aclFromConfig()
	}
	return s
}

// leaderChanged is told when this node gains or loses the leadership of a
// shard: on a loss, the clients blocked on the shard's keys are released
// with Redis's failover UNBLOCKED error (the keys' writes now happen on
// another node, which would never wake them).
func (s *Server) leaderChanged(shard int, leader bool) {
	if leader || shard < 0 || shard >= len(s.lost) {
		return
	}
	s.lostMu.Lock()
	close(s.lost[shard])
	s.lost[shard] = make(chan struct{})
	s.lostMu.Unlock()
}

// lostChan returns the channel closed when this node next stops leading
// shard (nil, never closed, on an embedded single node).
func (s *Server) lostChan(shard int) <-chan struct{} {
	if !s.node.Clustered() || shard < 0 || shard >= len(s.lost) {
		return nil
	}
	s.lostMu.Lock()
	defer s.lostMu.Unlock()
	return s.lost[shard]
}

// raftTimings are the router's waits: the configured Raft timings, the
// defaults in place of zeros.
func (s *Server) raftTimings() router.Timings {
	cfg := s.config()
	t := router.Timings{Election: cfg.RaftElectionTimeout, Lease: cfg.RaftLeaseTimeout, Quorum: cfg.QuorumTimeout,
		Heartbeat: cfg.RaftHeartbeatTimeout}
	if t.Heartbeat <= 0 {
		t.Heartbeat = config.DefaultRaftHeartbeatTimeout
	}
	if t.Election <= 0 {
		t.Election = config.DefaultRaftElectionTimeout
	}
	if t.Lease <= 0 {
		t.Lease = config.DefaultRaftLeaseTimeout
	}
	if t.Quorum <= 0 {
		t.Quorum = config.DefaultQuorumTimeout
	}
	return t
}

// ServeInternal serves a RESP connection from another node (handed over by
// the raft port's mux, where cmd/streamd registers it for mux.KindRESP,
// once the peer has proven in the port's handshake that it is a member):
// never forwarded again nor answered MOVED. It starts with no ACL rights at
// all: the forwarding node names its client's user first (STREAMD.AUTHAS),
// and every command runs as that user. It is not counted against
// maxclients, does not show in CLIENT LIST (INFO counts it as a cluster
// connection) and ends with the server.
func (s *Server) ServeInternal(nc net.Conn) {
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		nc.Close()
		return
	default:
	}
	c := newClient(s, nc, s.nextClientID.Add(1), true)
	c.internal = true
	c.reqs, c.spare = make(chan []request, reqQueue), make(chan []request, 2)
	s.clients[c.id] = c
	s.internalClients++
	s.wg.Add(1)
	s.mu.Unlock()
	s.serveClient(c)
}

// Node returns the node whose shards the server uses.
func (s *Server) Node() *replication.Node { return s.node }

// Shard returns shard 0 of the node (the only shard of a single node).
func (s *Server) Shard() *replication.Shard { return s.shard }

// config returns a copy of the current configuration.
func (s *Server) config() config.Config {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg
}

// Serve accepts connections on ln until Close is called, then returns nil;
// it returns an accept error that is not due to Close.
func (s *Server) Serve(ln net.Listener) error { return s.serve(ln, nil) }

// serve is Serve, each connection wrapped in TLS with tlsCfg when it is
// not nil (ServeTLS).
func (s *Server) serve(ln net.Listener, tlsCfg *tls.Config) error {
	if !s.register(ln, tlsCfg != nil) {
		return nil
	}
	return s.acceptLoop(ln, tlsCfg)
}

// register adds ln to the listeners Close (and, for a TLS one, CONFIG SET
// tls-port) closes, and starts the background tasks with the first one.
// After Close it closes ln and returns false.
func (s *Server) register(ln net.Listener, isTLS bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		ln.Close()
		return false
	default:
	}
	s.listeners[ln] = struct{}{}
	if isTLS {
		if s.tlsListeners == nil {
			s.tlsListeners = make(map[net.Listener]struct{})
		}
		s.tlsListeners[ln] = struct{}{}
	}
	// Start the background tasks under s.mu, after the done check: Close
	// closes done under s.mu before it waits, so this wg.Add happens
	// before Close's wg.Wait (or does not happen at all).
	s.tasksOnce.Do(func() {
		s.startKeyspaceTasks()
		s.wg.Add(1)
		go s.sampleOps()
		startGCFloor()
	})
	return true
}

// acceptLoop accepts connections on a registered listener until it is
// closed.
func (s *Server) acceptLoop(ln net.Listener, tlsCfg *tls.Config) error {
	var backoff time.Duration
	logLimit := lograte.New(time.Second)
	for {
		nc, err := ln.Accept()
		if err != nil {
			select {
			case <-s.done:
				return nil
			default:
			}
			s.mu.Lock()
			_, live := s.listeners[ln]
			s.mu.Unlock()
			if !live { // closed by CONFIG SET tls-port
				return nil
			}
			if transientAccept(err) {
				// Out of file descriptors or memory, or a connection
				// aborted before it was accepted: back off as net/http
				// does instead of spinning or giving up, and log it at
				// most once a second.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				if ok, n := logLimit.Allow(); ok {
					s.log.Warn("accept failed", "err", err, "retry", backoff, "suppressed", n)
				}
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		s.accept(nc, tlsCfg)
	}
}

// transientAccept reports whether an accept error will pass by itself: a
// timeout, too many open files (process or system), no buffer space or
// memory, or a connection aborted by its peer before it was accepted. The
// server keeps listening through them (Redis logs and goes on too).
func transientAccept(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.EINTR} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// accept registers a new connection, or refuses it with Redis's error when
// maxclients is reached or protected mode refuses its address
// (protected.go), then closes it, as Redis does. With tlsCfg the connection
// is wrapped in TLS; its handshake runs on the connection's own goroutine
// (see handshake), never here.
func (s *Server) accept(nc net.Conn, tlsCfg *tls.Config) {
	s.stats.ConnectionsReceived.Add(1)
	cfg := s.config()
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		if cfg.TCPKeepAlive > 0 {
			tc.SetKeepAlive(true)
			tc.SetKeepAlivePeriod(time.Duration(cfg.TCPKeepAlive) * time.Second)
		}
	}
	if tlsCfg != nil {
		nc = s.wrapTLS(nc, tlsCfg)
	}
	s.mu.Lock()
	if len(s.clients)-s.internalClients >= cfg.MaxClients {
		s.mu.Unlock()
		s.refuse(nc, "-ERR max number of clients reached\r\n")
		return
	}
	if protectedModeRefuses(&cfg, s.aclNow().defaultNoPass, nc.RemoteAddr()) {
		s.mu.Unlock()
		go s.refuse(nc, deniedProtectedMode) // never stall accepting
		return
	}
	select {
	case <-s.done:
		s.mu.Unlock()
		nc.Close()
		return
	default:
	}
	c := s.loopAccept(nc, &cfg)
	inLoop := c != nil
	if !inLoop {
		c = newClient(s, nc, s.nextClientID.Add(1), s.defaultAuthed())
	}
	c.setUser("default")
	c.reqs, c.spare = make(chan []request, reqQueue), make(chan []request, 2)
	s.clients[c.id] = c
	s.wg.Add(1)
	s.mu.Unlock()
	if inLoop {
		s.loopStart(c)
		return
	}
	go s.serveClient(c)
}

// closeGrace bounds how long Close lets connections finish the requests
// they already read before it closes them.
const closeGrace = 5 * time.Second

// Close shuts the server down gracefully: it stops accepting, stops reading
// from every client (TCP half-close) and lets each connection answer the
// requests it already read — writes in flight are answered or failed, never
// abandoned half-way — for at most closeGrace, then closes every connection,
// stops background tasks (the expiry sweep, a BGSAVE is waited for) and
// waits for the connection goroutines to end. Blocked clients are released
// without a reply, as Redis closes them at shutdown.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		close(s.done)
		for ln := range s.listeners {
			ln.Close()
		}
		for _, c := range s.clients {
			// A TLS connection is half-closed underneath: its reader
			// sees the end of the stream, its replies still go out.
			if cr, ok := rawConn(c.nc).(interface{ CloseRead() error }); !ok || cr.CloseRead() != nil {
				c.nc.Close()
			}
		}
		s.mu.Unlock()
		s.waitClients(closeGrace)
		s.mu.Lock()
		for _, c := range s.clients {
			// The TCP connection itself: a TLS close_notify could wait
			// seconds on a peer that does not read, with s.mu held.
			rawConn(c.nc).Close()
		}
		s.mu.Unlock()
	})
	s.wg.Wait()
	s.releaseMemoryLimit()
	return nil
}

// waitClients waits until every connection has ended or d has passed.
func (s *Server) waitClients(d time.Duration) {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		s.mu.Lock()
		n := len(s.clients)
		s.mu.Unlock()
		if n == 0 {
			return
		}
		<-tick.C
	}
}

// Done returns a channel that is closed when a client asked the server to
// shut down (SHUTDOWN). The owner then calls Close and closes the shard,
// snapshotting it if ShutdownSave says so, and exits.
func (s *Server) Done() <-chan struct{} { return s.shutdownReq }

// ShutdownSave reports whether the shutdown SHUTDOWN asked for should
// snapshot the shard (false after SHUTDOWN NOSAVE).
func (s *Server) ShutdownSave() bool { return !s.shutdownNoSave.Load() }

// requestShutdown records a SHUTDOWN and closes Done's channel.
func (s *Server) requestShutdown(save bool) {
	s.shutdownOnce.Do(func() {
		s.shutdownNoSave.Store(!save)
		close(s.shutdownReq)
	})
}

// removeClient forgets a client whose connection ended.
func (s *Server) removeClient(c *Client) {
	s.mu.Lock()
	if _, ok := s.clients[c.id]; ok && c.internal {
		s.internalClients--
	}
	delete(s.clients, c.id)
	s.mu.Unlock()
}

// clientByID returns the connected client with that ID, or nil; nil for
// another node's connection (ServeInternal), which clients cannot see.
func (s *Server) clientByID(id int64) *Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.clients[id]; c != nil && !c.internal {
		return c
	}
	return nil
}

// clientList returns the connected clients in ID order (CLIENT LIST's and
// CLIENT KILL's), without other nodes' connections: those are the
// cluster's, counted apart (INFO's cluster_connections), and a client
// cannot list or kill them.
func (s *Server) clientList() []*Client {
	s.mu.Lock()
	list := make([]*Client, 0, len(s.clients)-s.internalClients)
	for _, c := range s.clients {
		if !c.internal {
			list = append(list, c)
		}
	}
	s.mu.Unlock()
	sortClients(list)
	return list
}

// keyspaceInfo asks the engine for INFO keyspace's per-database counts,
// summed over the shards (fanout.go).
func (s *Server) keyspaceInfo() (any, error) {
	return s.keyspaceInfoAll()
}
