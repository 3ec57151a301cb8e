package replication

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
)

// The raft port carries everything nodes say to each other: every shard's
// raft traffic, the node RPCs (rpc.go) and internal RESP connections (a node
// forwarding a client's command to the shard's leader). Each connection
// opens with a header — muxMagic, one kind byte, the shard as a uvarint —
// and is then handed to the shard's raft transport, the RPC handler or the
// server's RESP handler. The port is trusted: internal RESP connections skip
// AUTH, so it must never be exposed beyond the cluster's own network.

// muxMagic opens every connection to the raft port.
const muxMagic = "SDR1"

// Connection kinds.
const (
	muxKindRaft byte = 1 // a raft NetworkTransport stream for the header's shard
	muxKindRESP byte = 2 // an internal RESP client connection
	muxKindRPC  byte = 3 // one node RPC (rpc.go)
)

// muxHeaderTimeout bounds how long a new connection may take to send its
// header, so a stray client cannot hold a goroutine.
var muxHeaderTimeout = 5 * time.Second

// errMuxClosed is returned by Accept on a closed layer.
var errMuxClosed = errors.New("raft port closed")

// mux serves one listener and routes connections by their header.
type mux struct {
	ln     net.Listener
	addr   string // advertised host:port (every shard's raft ServerAddress)
	log    *slog.Logger
	layers []*muxLayer
	resp   func(net.Conn) // nil until the server registers it
	rpc    func(net.Conn, int)

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // accepted raft and RPC connections, closed by close
	closed bool
	wg     sync.WaitGroup
}

// newMux wraps a listener; addr is the address advertised to peers. It has
// a layer per shard and does not accept until serve.
func newMux(ln net.Listener, addr string, shards int, log *slog.Logger) *mux {
	m := &mux{ln: ln, addr: addr, log: log, conns: map[net.Conn]struct{}{}}
	for i := 0; i < shards; i++ {
		m.layers = append(m.layers, &muxLayer{m: m, shard: i, ch: make(chan net.Conn), done: make(chan struct{})})
	}
	return m
}

// setRESP registers the handler of internal RESP connections.
func (m *mux) setRESP(f func(net.Conn)) {
	m.mu.Lock()
	m.resp = f
	m.mu.Unlock()
}

// serve accepts connections until the listener is closed.
func (m *mux) serve() {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		var delay time.Duration
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
				// files): back off and keep serving.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				m.log.Warn("raft port: accept failed", "err", err, "retry_in", delay)
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
func (m *mux) route(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(muxHeaderTimeout))
	br := bufio.NewReaderSize(c, 64)
	kind, shard, err := readMuxHeader(br)
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
	case muxKindRaft:
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
	case muxKindRESP:
		m.mu.Lock()
		h, closed := m.resp, m.closed
		m.mu.Unlock()
		if h == nil || closed {
			conn.Close()
			return
		}
		// The server owns the connection from here on (close does not
		// wait for it).
		go h(conn)
	case muxKindRPC:
		m.mu.Lock()
		h := m.rpc
		m.mu.Unlock()
		tc := &trackedConn{Conn: conn, m: m}
		if h == nil || !m.track(tc) {
			conn.Close()
			return
		}
		h(tc, shard)
	default:
		m.log.Debug("raft port: unknown connection kind", "kind", kind, "remote", c.RemoteAddr().String())
		c.Close()
	}
}

// track records an accepted raft or RPC connection so close can cut it; false if
// the mux is already closed.
func (m *mux) track(c net.Conn) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.conns[c] = struct{}{}
	return true
}

// untrack forgets a raft connection (closed by its owner).
func (m *mux) untrack(c net.Conn) {
	m.mu.Lock()
	if m.conns != nil {
		delete(m.conns, c)
	}
	m.mu.Unlock()
}

// close stops accepting, closes every layer and every accepted raft
// connection, and waits for the routing goroutines. RESP connections
// already handed to the server are the server's to close.
func (m *mux) close() error {
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

// dialMux opens a connection to a node's raft port and sends the header.
func dialMux(addr string, kind byte, shard int, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	hdr := appendMuxHeader(make([]byte, 0, 16), kind, shard)
	c.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := c.Write(hdr); err != nil {
		c.Close()
		return nil, err
	}
	c.SetWriteDeadline(time.Time{})
	return c, nil
}

// appendMuxHeader appends a connection header.
func appendMuxHeader(b []byte, kind byte, shard int) []byte {
	b = append(b, muxMagic...)
	b = append(b, kind)
	return binary.AppendUvarint(b, uint64(shard))
}

// maxMuxShard bounds the shard number a header may name.
const maxMuxShard = 1 << 16

// readMuxHeader reads and checks a connection header.
func readMuxHeader(r *bufio.Reader) (kind byte, shard int, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, 0, err
	}
	if string(hdr[:4]) != muxMagic {
		return 0, 0, fmt.Errorf("bad magic %q", hdr[:4])
	}
	s, err := binary.ReadUvarint(r)
	if err != nil {
		return 0, 0, fmt.Errorf("shard: %w", err)
	}
	if s >= maxMuxShard {
		return 0, 0, fmt.Errorf("shard %d out of range", s)
	}
	return hdr[4], int(s), nil
}

// trackedConn is an accepted raft or RPC connection that leaves the mux's set
// when closed.
type trackedConn struct {
	net.Conn
	m    *mux
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

// muxLayer is one shard's raft.StreamLayer over the shared port: Accept
// returns the raft connections whose header names the shard, Dial opens a
// connection with that header.
type muxLayer struct {
	m     *mux
	shard int
	ch    chan net.Conn
	once  sync.Once
	done  chan struct{}
}

var _ raft.StreamLayer = (*muxLayer)(nil)

// Accept waits for the next raft connection of the shard.
func (l *muxLayer) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, errMuxClosed
	}
}

// Close stops Accept (the raft transport calls it on shutdown); the mux
// keeps serving the other shards.
func (l *muxLayer) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr returns the advertised raft address.
func (l *muxLayer) Addr() net.Addr { return muxAddr(l.m.addr) }

// Dial opens a raft connection to the same shard on another node.
func (l *muxLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return dialMux(string(address), muxKindRaft, l.shard, timeout)
}

// muxAddr is an advertised host:port as a net.Addr.
type muxAddr string

// Network returns "tcp".
func (a muxAddr) Network() string { return "tcp" }

// String returns the address.
func (a muxAddr) String() string { return string(a) }
