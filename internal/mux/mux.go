// Package mux is the raft port: one TCP listener carrying everything nodes
// say to each other — every shard's raft traffic, the node RPCs
// (replication) and internal RESP connections (a node's server forwarding a
// client's command to the shard's leader). Nothing on it is trusted: every
// connection, of every kind, first runs a handshake (handshake.go) in
// which both ends prove they belong to the cluster — mutual TLS
// (tls-cluster), a challenge–response over a key derived from
// cluster-secret or, when neither is set, from requirepass — and names its
// kind and shard. Only then is it handed to the shard's raft transport
// (Layer) or to the handler registered for its kind by whoever owns those
// connections (replication registers the RPCs; cmd/streamd registers the
// server's RESP handler), so that the packages plugged into the port never
// call into each other. Connections in their handshake have a deadline and
// are capped in number; a refused one reaches no handler. Outgoing
// connections (Mux.Dial, the layers' Dial) run the dialer's side and check
// the acceptor's proof before saying anything more.
package mux

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"streamd/internal/lograte"
)

// Kind is a connection's kind, named in the handshake's last message.
type Kind byte

// Connection kinds.
const (
	// KindRaft is a raft NetworkTransport stream for the named shard.
	KindRaft Kind = 1
	// KindRESP is an internal RESP client connection.
	KindRESP Kind = 2
	// KindRPC is one node RPC.
	KindRPC Kind = 3
)

// errClosed is returned by Accept on a closed layer.
var errClosed = errors.New("raft port closed")

// handler is what a kind of connection is handed to.
type handler struct {
	fn       func(c net.Conn, shard int)
	detached bool
}

// Mux serves one listener, authenticates every connection and routes it
// by the kind its handshake names. It is safe for concurrent use.
type Mux struct {
	ln     net.Listener
	addr   string // advertised host:port (every shard's raft ServerAddress)
	log    *slog.Logger
	layers []*layer
	keys   *keys

	pending  atomic.Int32 // accepted connections in their handshake
	warn     rateLog      // refused connections
	dialWarn rateLog      // failed outgoing handshakes

	mu       sync.Mutex
	handlers map[Kind]handler
	conns    map[net.Conn]struct{} // accepted raft and tracked connections, closed by Close
	closed   bool
	wg       sync.WaitGroup
}

// New wraps a listener; addr is the address advertised to peers, auth how
// this node and its peers prove they belong to the cluster (both when
// accepting and when dialing). It has a raft layer per shard and does not
// accept until Serve.
func New(ln net.Listener, addr string, shards int, log *slog.Logger, auth Auth) *Mux {
	m := &Mux{ln: ln, addr: addr, log: log, keys: newKeys(auth), handlers: map[Kind]handler{}, conns: map[net.Conn]struct{}{}}
	for i := 0; i < shards; i++ {
		m.layers = append(m.layers, &layer{m: m, shard: i, ch: make(chan net.Conn), done: make(chan struct{})})
	}
	return m
}

// Handle registers h for the connections of kind (not KindRaft, which goes
// to the shards' layers). h runs on the connection's routing goroutine with
// the shard its handshake named; the connection is tracked: Close cuts it and waits for
// h to return. Until a handler is registered, such connections are closed.
func (m *Mux) Handle(kind Kind, h func(c net.Conn, shard int)) {
	m.setHandler(kind, handler{fn: h})
}

// HandleDetached registers h for the connections of kind (not KindRaft),
// which h owns outright: it runs on a goroutine of its own, and Close
// neither cuts its connection nor waits for it. Until a handler is
// registered, such connections are closed.
func (m *Mux) HandleDetached(kind Kind, h func(c net.Conn)) {
	m.setHandler(kind, handler{fn: func(c net.Conn, _ int) { h(c) }, detached: true})
}

// setHandler registers h for kind.
func (m *Mux) setHandler(kind Kind, h handler) {
	if kind == KindRaft {
		panic("mux: raft connections go to the shards' layers")
	}
	m.mu.Lock()
	m.handlers[kind] = h
	m.mu.Unlock()
}

// Layer returns shard i's raft stream layer over the port.
func (m *Mux) Layer(i int) raft.StreamLayer { return m.layers[i] }

// Addr returns the advertised address.
func (m *Mux) Addr() string { return m.addr }

// Mode returns how this node proves its membership (and asks peers to).
func (m *Mux) Mode() Mode { return m.keys.mode }

// Serve accepts connections until the listener is closed.
func (m *Mux) Serve() {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		var delay time.Duration
		logLimit := lograte.New(time.Second)
		for {
			c, err := m.ln.Accept()
			if err != nil {
				m.mu.Lock()
				closed := m.closed
				m.mu.Unlock()
				if closed || errors.Is(err, net.ErrClosed) {
					return
				}
				// A transient accept error (for example too many open
				// files): back off and keep serving, logging at most
				// once a second.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				if ok, n := logLimit.Allow(); ok {
					m.log.Warn("raft port: accept failed", "err", err, "retry_in", delay, "suppressed", n)
				}
				time.Sleep(delay)
				continue
			}
			delay = 0
			m.wg.Add(1)
			go func() {
				defer m.wg.Done()
				m.route(c)
			}()
		}
	}()
}

// route runs a connection's handshake and hands the connection on to the
// layer or handler of its kind. Connections still in their handshake are
// capped (Auth.MaxPending; beyond it a new one is closed at once) and cut
// by Close; a refused one reaches nothing.
func (m *Mux) route(c net.Conn) {
	if conn, kind, shard, ok := m.handshake(c); ok {
		m.hand(conn, kind, shard)
	}
}

// handshake runs the acceptor's side of the handshake on c, counted
// among the pending ones and cut by Close meanwhile; a refused connection
// is closed and its refusal logged.
func (m *Mux) handshake(c net.Conn) (net.Conn, Kind, int, bool) {
	defer m.pending.Add(-1)
	if n := m.pending.Add(1); int(n) > m.keys.maxPending {
		m.warn.warn(m.log, "raft port: too many connections in their handshake, closing a new one",
			"remote", c.RemoteAddr().String(), "max", m.keys.maxPending)
		c.Close()
		return nil, 0, 0, false
	}
	if !m.track(c) {
		c.Close()
		return nil, 0, 0, false
	}
	conn, kind, shard, ref := m.keys.accept(c)
	m.untrack(c)
	if ref != nil {
		c.Close()
		args := append([]any{"remote", c.RemoteAddr().String()}, ref.args...)
		if ref.quiet {
			m.log.Debug(ref.msg, args...)
		} else {
			m.warn.warn(m.log, ref.msg, args...)
		}
		return nil, 0, 0, false
	}
	return conn, kind, shard, true
}

// hand passes an authenticated connection to its shard's layer or its
// kind's handler.
func (m *Mux) hand(conn net.Conn, kind Kind, shard int) {
	switch kind {
	case KindRaft:
		if shard >= len(m.layers) {
			m.log.Warn("raft port: connection for an unknown shard", "shard", shard, "remote", conn.RemoteAddr().String())
			conn.Close()
			return
		}
		tc := &trackedConn{Conn: conn, m: m}
		if !m.track(tc) {
			conn.Close()
			return
		}
		l := m.layers[shard]
		select {
		case l.ch <- tc:
		case <-l.done:
			tc.Close()
		}
	case KindRESP, KindRPC:
		m.mu.Lock()
		h, ok := m.handlers[kind]
		closed := m.closed
		m.mu.Unlock()
		if !ok || closed {
			conn.Close()
			return
		}
		if h.detached {
			// The handler owns the connection from here on (Close does
			// not wait for it).
			go h.fn(conn, shard)
			return
		}
		tc := &trackedConn{Conn: conn, m: m}
		if !m.track(tc) {
			conn.Close()
			return
		}
		h.fn(tc, shard)
	default:
		// A member (it passed the handshake) of another version.
		m.log.Warn("raft port: unknown connection kind", "kind", uint8(kind), "remote", conn.RemoteAddr().String())
		conn.Close()
	}
}

// track records an accepted raft or tracked connection so Close can cut it;
// false if the mux is already closed.
func (m *Mux) track(c net.Conn) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.conns[c] = struct{}{}
	return true
}

// untrack forgets a raft connection (closed by its owner).
func (m *Mux) untrack(c net.Conn) {
	m.mu.Lock()
	if m.conns != nil {
		delete(m.conns, c)
	}
	m.mu.Unlock()
}

// Close stops accepting, closes every layer and every accepted raft or
// tracked connection, and waits for the routing goroutines. Connections
// handed to a detached handler are its own to close.
func (m *Mux) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	conns := m.conns
	m.conns = nil
	m.mu.Unlock()
	err := m.ln.Close()
	for _, l := range m.layers {
		l.Close()
	}
	for c := range conns {
		c.Close()
	}
	m.wg.Wait()
	return err
}

// trackedConn is an accepted raft or tracked connection that leaves the
// mux's set when closed.
type trackedConn struct {
	net.Conn
	m    *Mux
	once sync.Once
}

// Close closes the connection and forgets it.
func (c *trackedConn) Close() error {
	c.once.Do(func() { c.m.untrack(c) })
	return c.Conn.Close()
}

// layer is one shard's raft.StreamLayer over the shared port: Accept
// returns the raft connections whose handshake names the shard, Dial opens
// an authenticated connection naming it.
type layer struct {
	m     *Mux
	shard int
	ch    chan net.Conn
	once  sync.Once
	done  chan struct{}
}

var _ raft.StreamLayer = (*layer)(nil)

// Accept waits for the next raft connection of the shard.
func (l *layer) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, errClosed
	}
}

// Close stops Accept (the raft transport calls it on shutdown); the mux
// keeps serving the other shards.
func (l *layer) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr returns the advertised raft address.
func (l *layer) Addr() net.Addr { return netAddr(l.m.addr) }

// Dial opens a raft connection to the same shard on another node.
func (l *layer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return l.m.Dial(string(address), KindRaft, l.shard, timeout)
}

// netAddr is an advertised host:port as a net.Addr.
type netAddr string

// Network returns "tcp".
func (a netAddr) Network() string { return "tcp" }

// String returns the address.
func (a netAddr) String() string { return string(a) }
