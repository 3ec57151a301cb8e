package mux

// The raft port's handshake, run on every connection before its kind is
// acted on (inside TLS when tls-cluster is on):
//
//	dialer → acceptor  hello:  Magic, Version, dialer's Mode, Nc (32 random bytes)
//	acceptor → dialer  reply:  status 0, acceptor's Mode, Ns (32 random bytes),
//	                           HMAC(K, "streamd-acceptor" | hello | status | mode | Ns)
//	dialer → acceptor  finish: kind, shard (uint32), HMAC(K, "streamd-dialer" | hello | reply's first 34 bytes | kind | shard)
//
// K is derived from cluster-secret (or requirepass) with a label, so the
// credential never crosses the wire; both sides contribute a fresh nonce,
// so no captured message is any use in another session; the two proofs
// carry different labels, so one side's cannot be replayed as the other's.
// The dialer checks the acceptor's proof before it says anything more (a
// fake node learns nothing but a nonce), the acceptor checks the dialer's
// (hmac.Equal) before the connection reaches any handler. When the modes
// differ the acceptor answers status 1 and its mode instead, and both ends
// log that the peer's mode differs. A wrong proof costs the peer its
// connection, closed without a reason.

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Magic opens every connection to the raft port, followed by Version.
const Magic = "SDR1"

// Version is the handshake's version, the byte after Magic. (streamd
// before the handshake sent a kind, 1 to 3, there.)
const Version = 0x10

// Sizes of the handshake's parts.
const (
	nonceLen  = 32
	macLen    = 32
	helloLen  = len(Magic) + 1 + 1 + nonceLen
	replyHead = 1 + 1 + nonceLen // status, mode, Ns
	finishLen = 1 + 4 + macLen
)

// Reply statuses.
const (
	statusOK   byte = 0
	statusMode byte = 1 // the modes differ; the acceptor's mode follows
)

// tlsRecordHandshake is the first byte of a TLS ClientHello.
const tlsRecordHandshake = 0x16

// handshakeTimeout is the default of Auth.HandshakeTimeout (tests lower
// it with SetHandshakeTimeoutForTest).
var handshakeTimeout = DefaultHandshakeTimeout

// ModeMismatchError is a handshake refused because the two nodes prove
// membership in different ways (one has a cluster-secret, the other not).
type ModeMismatchError struct {
	Addr       string
	Mine, Peer Mode
}

// Error says what differs and what to do.
func (e *ModeMismatchError) Error() string {
	return fmt.Sprintf("raft port handshake with %s: the peer's mode differs (it uses %s, this node %s): "+
		"give every node the same cluster-secret, tls-cluster and requirepass settings", e.Addr, e.Peer, e.Mine)
}

// errBadProof is the acceptor's proof failing the dialer's check.
var errBadProof = errors.New("the node could not prove it holds the cluster key " +
	"(a different cluster-secret or requirepass, or not a member)")

// Dial opens a connection to the raft port at addr for kind and shard,
// proving this node's membership and checking the acceptor's (TLS first
// with tls-cluster). connect and handshake together take at most timeout
// (and at most the handshake timeout once connected). A failed handshake is
// logged (rate-limited) and returned.
func (m *Mux) Dial(addr string, kind Kind, shard int, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	conn, err := m.keys.dial(c, addr, kind, shard, min(timeout, m.keys.timeout))
	if err != nil {
		c.Close()
		m.dialWarn.warn(m.log, "raft port: handshake with a node failed", "addr", addr, "err", err)
		return nil, err
	}
	return conn, nil
}

// dial runs the dialer's side of the handshake on c within timeout and
// returns the connection to use (c, or TLS over it).
func (k *keys) dial(c net.Conn, addr string, kind Kind, shard int, timeout time.Duration) (net.Conn, error) {
	if shard < 0 || shard >= MaxShard {
		return nil, fmt.Errorf("shard %d out of range", shard)
	}
	c.SetDeadline(time.Now().Add(timeout))
	conn := c
	if k.clientTLS != nil {
		tc := tls.Client(c, k.clientTLS)
		if err := tc.Handshake(); err != nil {
			return nil, fmt.Errorf("tls-cluster handshake with %s: %w (does it use tls-cluster with the same CA?)", addr, err)
		}
		conn = tc
	}
	hello := make([]byte, 0, helloLen)
	hello = append(hello, Magic...)
	hello = append(hello, Version, byte(k.mode))
	hello = append(hello, nonce()...)
	if _, err := conn.Write(hello); err != nil {
		return nil, fmt.Errorf("raft port handshake with %s: %w", addr, err)
	}
	reply := make([]byte, replyHead+macLen)
	if _, err := io.ReadFull(conn, reply[:2]); err != nil {
		return nil, fmt.Errorf("raft port handshake with %s: no answer: %w", addr, err)
	}
	switch reply[0] {
	case statusOK:
	case statusMode:
		return nil, &ModeMismatchError{Addr: addr, Mine: k.mode, Peer: Mode(reply[1])}
	default:
		return nil, fmt.Errorf("raft port handshake with %s: refused", addr)
	}
	if _, err := io.ReadFull(conn, reply[2:]); err != nil {
		return nil, fmt.Errorf("raft port handshake with %s: %w", addr, err)
	}
	if Mode(reply[1]) != k.mode {
		return nil, &ModeMismatchError{Addr: addr, Mine: k.mode, Peer: Mode(reply[1])}
	}
	if !hmac.Equal(reply[replyHead:], k.mac(labelAcceptor, hello, reply[:replyHead])) {
		return nil, fmt.Errorf("raft port handshake with %s: %w", addr, errBadProof)
	}
	finish := make([]byte, 0, finishLen)
	finish = append(finish, byte(kind))
	finish = binary.BigEndian.AppendUint32(finish, uint32(shard))
	finish = append(finish, k.mac(labelDialer, hello, reply[:replyHead], finish[:5])...)
	if _, err := conn.Write(finish); err != nil {
		return nil, fmt.Errorf("raft port handshake with %s: %w", addr, err)
	}
	c.SetDeadline(time.Time{})
	return conn, nil
}

// nonce returns 32 fresh random bytes.
func nonce() []byte {
	b := make([]byte, nonceLen)
	rand.Read(b) // never fails (crypto/rand crashes the program instead)
	return b
}

// refusal is why the acceptor closed a connection in its handshake: the
// text of its rate-limited WARN, or quiet for a connection that sent
// nothing at all (a port probe), logged at DEBUG.
type refusal struct {
	msg   string
	args  []any
	quiet bool
}

// accept runs the acceptor's side of the handshake on c within the
// handshake timeout: the connection to hand on (TLS over c, reading
// whatever was buffered first), its kind and shard; or why it was refused.
func (k *keys) accept(c net.Conn) (net.Conn, Kind, int, *refusal) {
	c.SetDeadline(time.Now().Add(k.timeout))
	br := bufio.NewReaderSize(c, 64)
	first, err := br.Peek(1)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, 0, 0, &refusal{msg: "raft port: connection closed before the handshake", quiet: true}
		}
		return nil, 0, 0, &refusal{msg: "raft port: handshake failed", args: []any{"err", err}}
	}
	var conn net.Conn = &bufferedConn{Conn: c, r: br}
	switch {
	case k.serverTLS != nil && first[0] != tlsRecordHandshake:
		if first[0] == Magic[0] {
			return nil, 0, 0, &refusal{msg: "raft port: the peer's mode differs: it does not use tls-cluster, this node does"}
		}
		return nil, 0, 0, &refusal{msg: "raft port: not a TLS handshake (tls-cluster is on)"}
	case k.serverTLS == nil && first[0] == tlsRecordHandshake:
		return nil, 0, 0, &refusal{msg: "raft port: the peer's mode differs: it uses tls-cluster, this node does not"}
	case k.serverTLS != nil:
		tc := tls.Server(conn, k.serverTLS)
		if err := tc.Handshake(); err != nil {
			return nil, 0, 0, &refusal{msg: "raft port: tls-cluster handshake failed", args: []any{"err", err}}
		}
		conn = tc
		br = bufio.NewReaderSize(tc, 64)
	}
	hello := make([]byte, helloLen)
	if _, err := io.ReadFull(br, hello); err != nil {
		return nil, 0, 0, &refusal{msg: "raft port: handshake failed", args: []any{"err", err}}
	}
	if string(hello[:len(Magic)]) != Magic {
		return nil, 0, 0, &refusal{msg: "raft port: not a streamd node (bad magic)"}
	}
	switch v := hello[len(Magic)]; {
	case v >= 1 && v <= 3:
		return nil, 0, 0, &refusal{msg: "raft port: the peer runs an older streamd without the raft port handshake; upgrade it"}
	case v != Version:
		return nil, 0, 0, &refusal{msg: "raft port: unsupported handshake version", args: []any{"version", v}}
	}
	if peer := Mode(hello[len(Magic)+1]); peer != k.mode {
		conn.Write([]byte{statusMode, byte(k.mode)})
		return nil, 0, 0, &refusal{msg: "raft port: the peer's mode differs: give every node the same " +
			"cluster-secret, tls-cluster and requirepass settings", args: []any{"peer_mode", peer.String(), "mode", k.mode.String()}}
	}
	reply := make([]byte, 0, replyHead+macLen)
	reply = append(reply, statusOK, byte(k.mode))
	reply = append(reply, nonce()...)
	reply = append(reply, k.mac(labelAcceptor, hello, reply)...)
	if _, err := conn.Write(reply); err != nil {
		return nil, 0, 0, &refusal{msg: "raft port: handshake failed", args: []any{"err", err}}
	}
	finish := make([]byte, finishLen)
	if _, err := io.ReadFull(br, finish); err != nil {
		return nil, 0, 0, &refusal{msg: "raft port: handshake failed: the peer did not prove it holds the cluster key", args: []any{"err", err}}
	}
	if !hmac.Equal(finish[5:], k.mac(labelDialer, hello, reply[:replyHead], finish[:5])) {
		return nil, 0, 0, &refusal{msg: "raft port: wrong proof, the peer does not hold the cluster key (a different cluster-secret or requirepass, or not a member)"}
	}
	shard := binary.BigEndian.Uint32(finish[1:5])
	if shard >= MaxShard {
		return nil, 0, 0, &refusal{msg: "raft port: shard out of range", args: []any{"shard", shard}}
	}
	c.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		conn = &bufferedConn{Conn: conn, r: br}
	} else if bc, ok := conn.(*bufferedConn); ok {
		conn = bc.Conn
	}
	return conn, Kind(finish[0]), int(shard), nil
}

// MaxShard bounds the shard number a handshake may name.
const MaxShard = 1 << 16

// bufferedConn is a connection whose first bytes were read into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

// Read reads what r buffered, then the connection.
func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// SetHandshakeTimeoutForTest sets the handshake timeout used when
// Auth.HandshakeTimeout is 0 (5s) for muxes made from now on, and returns
// the function restoring it.
func SetHandshakeTimeoutForTest(d time.Duration) (restore func()) {
	old := handshakeTimeout
	handshakeTimeout = d
	return func() { handshakeTimeout = old }
}
