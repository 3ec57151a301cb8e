// Package mux is the raft port: one TCP listener carrying everything nodes
// say to each other — every shard's raft traffic, the node RPCs
// (replication) and internal RESP connections (a node's server forwarding a
// client's command to the shard's leader). Each connection opens with a
// header — Magic, one Kind byte, the shard as a uvarint — and is then handed
// to the shard's raft transport (Layer) or to the handler registered for its
// kind by whoever owns those connections (replication registers the RPCs;
// cmd/streamd registers the server's RESP handler), so that the packages
// plugged into the port never call into each other. The port is trusted:
// internal RESP connections skip AUTH, so it must never be exposed beyond
// the cluster's own network.
package mux

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"streamd/internal/lograte"
)

// Magic opens every connection to the raft port.
const Magic = "SDR1"

// Kind is a connection's kind, the header's byte after Magic.
type Kind byte

// Connection kinds.
const (
	// KindRaft is a raft NetworkTransport stream for the header's shard.
	KindRaft Kind = 1
	// KindRESP is an internal RESP client connection.
	KindRESP Kind = 2
	// KindRPC is one node RPC.
	KindRPC Kind = 3
)

// headerTimeout bounds how long a new connection may take to send its
// header, so a stray client cannot hold a goroutine.
var headerTimeout = 5 * time.Second

// errClosed is returned by Accept on a closed layer.
var errClosed = errors.New("raft port closed")

// handler is what a kind of connection is handed to.
type handler struct {
	fn       func(c net.Conn, shard int)
	detached bool
}

// Mux serves one listener and routes connections by their header. It is
// safe for concurrent use.
type Mux struct {
	ln     net.Listener
	addr   string // advertised host:port (every shard's raft ServerAddress)
	log    *slog.Logger
	layers []*layer

	mu       sync.Mutex
	handlers map[Kind]handler
	conns    map[net.Conn]struct{} // accepted raft and tracked connections, closed by Close
	closed   bool
	wg       sync.WaitGroup
}

// New wraps a listener; addr is the address advertised to peers. It has a
// raft layer per shard and does not accept until Serve.
func New(ln net.Listener, addr string, shards int, log *slog.Logger) *Mux {
	m := &Mux{ln: ln, addr: addr, log: log, handlers: map[Kind]handler{}, conns: map[net.Conn]struct{}{}}
	for i := 0; i < shards; i++ {
		m.layers = append(m.layers, &layer{m: m, shard: i, ch: make(chan net.Conn), done: make(chan struct{})})
	}
	return m
}

// Handle registers h for the connections of kind (not KindRaft, which goes
// to the shards' layers). h runs on the connection's routing goroutine with
// the header's shard; the connection is tracked: Close cuts it and waits for
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

// route reads a connection's header and hands the connection on.
func (m *Mux) route(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(headerTimeout))
	br := bufio.NewReaderSize(c, 64)
	kind, shard, err := ReadHeader(br)
	if err != nil {
		m.log.Debug("raft port: bad connection header", "remote", c.RemoteAddr().String(), "err", err)
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	// The header is at most 4+1+10 bytes; anything the peer sent after it
	// may already sit in br, so hand on a conn that reads br first.
	var conn net.Conn = c
	if br.Buffered() > 0 {
		conn = &bufferedConn{Conn: c, r: br}
	}
	switch kind {
	case KindRaft:
		if shard >= len(m.layers) {
			m.log.Warn("raft port: connection for an unknown shard", "shard", shard, "remote", c.RemoteAddr().String())
			c.Close()
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
		m.log.Debug("raft port: unknown connection kind", "kind", uint8(kind), "remote", c.RemoteAddr().String())
		c.Close()
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

// Dial opens a connection to a node's raft port and sends the header.
func Dial(addr string, kind Kind, shard int, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	hdr := AppendHeader(make([]byte, 0, 16), kind, shard)
	c.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := c.Write(hdr); err != nil {
		c.Close()
		return nil, err
	}
	c.SetWriteDeadline(time.Time{})
	return c, nil
}

// AppendHeader appends a connection header: Magic, kind, shard (uvarint).
func AppendHeader(b []byte, kind Kind, shard int) []byte {
	b = append(b, Magic...)
	b = append(b, byte(kind))
	return binary.AppendUvarint(b, uint64(shard))
}

// MaxShard bounds the shard number a header may name.
const MaxShard = 1 << 16

// ReadHeader reads and checks a connection header.
func ReadHeader(r *bufio.Reader) (kind Kind, shard int, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, 0, err
	}
	if string(hdr[:4]) != Magic {
		return 0, 0, fmt.Errorf("bad magic %q", hdr[:4])
	}
	s, err := binary.ReadUvarint(r)
	if err != nil {
		return 0, 0, fmt.Errorf("shard: %w", err)
	}
	if s >= MaxShard {
		return 0, 0, fmt.Errorf("shard %d out of range", s)
	}
	return Kind(hdr[4]), int(s), nil
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

// bufferedConn is a connection whose first bytes were read into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

// Read reads what r buffered, then the connection.
func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// layer is one shard's raft.StreamLayer over the shared port: Accept
// returns the raft connections whose header names the shard, Dial opens a
// connection with that header.
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
	return Dial(string(address), KindRaft, l.shard, timeout)
}

// netAddr is an advertised host:port as a net.Addr.
type netAddr string

// Network returns "tcp".
func (a netAddr) Network() string { return "tcp" }

// String returns the address.
func (a netAddr) String() string { return string(a) }

// SetHeaderTimeoutForTest sets how long a new connection may take to send
// its header (5s) and returns the function restoring it.
func SetHeaderTimeoutForTest(d time.Duration) (restore func()) {
	old := headerTimeout
	headerTimeout = d
	return func() { headerTimeout = old }
}
