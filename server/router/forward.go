package router

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"streamd/replication"
	"streamd/server/resp"
)

// Forwarding (plain mode): a command for a shard led by another node is
// sent, as the client sent it, over an upstream connection from this
// client to that node's server (Node.DialRESP over the raft port, an
// internal connection there: authenticated, never forwarded again), and the
// leader's reply bytes are relayed verbatim. Each client has at most one
// upstream per remote node, dialled lazily; it mirrors the client's
// protocol (HELLO) and selected database (SELECT) before a request, and is
// closed with the client. A WATCH of a remote key and the whole MULTI/EXEC
// of a remote shard go over the same upstream, so EXEC there sees the WATCH.

// Client is what forwarding needs from the server's client it forwards
// for. Only the client's connection goroutine calls the router with it.
type Client interface {
	// Proto is the client's protocol (2 or 3), mirrored with HELLO.
	Proto() int
	// DB is the client's selected database, mirrored with SELECT.
	DB() int
	// Upstreams are the client's upstream connections.
	Upstreams() *Upstreams
	// UpstreamDropped is told that the client's upstream to the node at
	// addr broke and was closed: the WATCHes made there, and what was
	// known of the last write sent there, died with it.
	UpstreamDropped(addr string)
	// User is the client's ACL user, named to the upstream (AuthAsCommand)
	// so that the leader runs the client's commands as that user.
	User() string
}

// AuthAsCommand is the internal command naming the ACL user an upstream's
// requests run as (the server answers it on internal connections only).
const AuthAsCommand = "STREAMD.AUTHAS"

// Upstreams are one client's connections to other nodes' servers, by raft
// address. The zero value has none.
type Upstreams struct {
	m map[string]*Upstream
}

// Has reports whether there is an upstream to addr.
func (u *Upstreams) Has(addr string) bool { return u.m[addr] != nil }

// Get returns the upstream to addr, nil when there is none (or it was
// dropped).
func (u *Upstreams) Get(addr string) *Upstream { return u.m[addr] }

// Close closes every upstream (the client is going away).
func (u *Upstreams) Close() {
	for _, up := range u.m {
		up.conn.Close()
	}
	u.m = nil
}

// Upstream is one client's connection to another node's server.
type Upstream struct {
	addr  string
	conn  net.Conn
	r     *resp.ReplyReader
	w     *bufio.Writer
	proto int
	db    int
	// user is the ACL user named on the connection ("" before the first).
	user string
}

// Addr is the raft address of the node the upstream goes to.
func (up *Upstream) Addr() string { return up.addr }

// Close closes the upstream's connection (a blocked read on it ends).
func (up *Upstream) Close() error { return up.conn.Close() }

// Drop closes and forgets cl's upstream up, and tells cl.
func Drop(cl Client, up *Upstream) {
	up.conn.Close()
	if u := cl.Upstreams(); u.m[up.addr] == up {
		delete(u.m, up.addr)
	}
	cl.UpstreamDropped(up.addr)
}

// Raw is a reply relayed from an upstream: its exact RESP bytes.
type Raw []byte

// FwdKind says how a broken upstream is reported.
type FwdKind uint8

const (
	// FwdRead: nothing changed; the caller may retry.
	FwdRead FwdKind = iota
	// FwdWrite: the write may or may not have been applied.
	FwdWrite
	// FwdBlocking: a blocked read; the client is told it was unblocked.
	FwdBlocking
)

// ErrFailoverUnblocked is Redis's text to a client blocked on a master
// that became a replica; a forwarded blocking read whose upstream broke
// gets it too.
const ErrFailoverUnblocked = resp.ErrorReply("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)")

// errLostUpstream is the cause of an unknown outcome on a broken upstream.
var errLostUpstream = errors.New("lost the connection to the shard leader")

// Upstream returns cl's upstream to the node at addr, dialling it.
func (r *Cluster) Upstream(cl Client, addr string) (*Upstream, error) {
	u := cl.Upstreams()
	if up := u.m[addr]; up != nil {
		if !peerClosed(up.conn) {
			return up, nil
		}
		// The node closed it (it restarted, or died: the dial below
		// then fails and the caller waits for a new leader).
		Drop(cl, up)
	}
	nc, err := r.node.DialRESP(addr)
	if err != nil {
		return nil, err
	}
	up := &Upstream{addr: addr, conn: nc, r: resp.NewReplyReader(bufio.NewReaderSize(nc, 16<<10)),
		w: bufio.NewWriterSize(nc, 16<<10), proto: 2}
	if u.m == nil {
		u.m = make(map[string]*Upstream)
	}
	u.m[addr] = up
	return up, nil
}

// Send writes requests on up after mirroring the client's protocol and
// database, and reads the mirroring replies. The caller then reads one
// reply per request.
func (up *Upstream) Send(cl Client, reqs ...[][]byte) error {
	var buf []byte
	prefix := 0
	// The user first: the connection has no rights before it.
	if u := cl.User(); u != up.user {
		buf = resp.AppendCommand(buf, []byte(AuthAsCommand), []byte(u))
		prefix++
		up.user = u
	}
	if p := cl.Proto(); p != up.proto {
		buf = resp.AppendCommand(buf, []byte("HELLO"), []byte(strconv.Itoa(p)))
		prefix++
		up.proto = p
	}
	if db := cl.DB(); db != up.db {
		buf = resp.AppendCommand(buf, []byte("SELECT"), []byte(strconv.Itoa(db)))
		prefix++
		up.db = db
	}
	for _, args := range reqs {
		buf = resp.AppendCommand(buf, args...)
	}
	if _, err := up.w.Write(buf); err != nil {
		return err
	}
	if err := up.w.Flush(); err != nil {
		return err
	}
	for range prefix {
		rep, err := up.ReadResult(nil)
		if err != nil {
			return err
		}
		if len(rep) > 0 && (rep[0] == '-' || rep[0] == '!') {
			return fmt.Errorf("upstream refused the connection set-up: %s", bytes.TrimSpace(rep))
		}
	}
	return nil
}

// ReadResult reads one reply, skipping RESP3 pushes (an upstream never
// enables tracking, but a push is never a command's reply).
func (up *Upstream) ReadResult(dst []byte) ([]byte, error) {
	for {
		rep, err := up.r.ReadRaw(dst[:0])
		if err != nil || rep[0] != '>' {
			return rep, err
		}
	}
}

// Relayed turns an upstream's reply bytes into a reply: a simple error
// becomes a resp.ErrorReply (the same bytes, and counted in errorstats),
// the rest is relayed as is (Raw).
func Relayed(b []byte) resp.Reply {
	if len(b) > 2 && b[0] == '-' {
		return resp.ErrorReply(b[1 : len(b)-2])
	}
	return Raw(b)
}

// BrokenReply is the answer when an upstream broke during a request.
func BrokenReply(kind FwdKind) resp.ErrorReply {
	switch kind {
	case FwdWrite:
		return resp.ErrorReply((&replication.OutcomeUnknownError{Cause: errLostUpstream}).Error())
	case FwdBlocking:
		return ErrFailoverUnblocked
	}
	return resp.ErrorReply("TRYAGAIN " + errLostUpstream.Error() + "; the command was not run")
}

// dialFailedPrefix starts DialFailedReply's text.
const dialFailedPrefix = "TRYAGAIN cannot reach the shard leader at "

// DialFailedReply is the answer when the leader cannot be reached at all:
// nothing was sent.
func DialFailedReply(addr string, err error) resp.ErrorReply {
	return resp.ErrorReply(dialFailedPrefix + addr + ": " + err.Error() + "; the command was not run")
}

// DialFailed reports a DialFailedReply: the leader could not be reached and
// the request was not sent (RouteAfterDialFailure waits for a new one).
func DialFailed(r resp.Reply) bool {
	e, ok := r.(resp.ErrorReply)
	return ok && strings.HasPrefix(string(e), dialFailedPrefix)
}

// Forward sends one non-blocking request to the node at addr and returns
// its reply, bounded by ForwardTimeout. kind says what a broken connection
// means; retry reports a read whose upstream broke (the caller may route
// it again).
func (r *Cluster) Forward(cl Client, addr string, args [][]byte, kind FwdKind) (reply resp.Reply, retry bool) {
	up, err := r.Upstream(cl, addr)
	if err != nil {
		return DialFailedReply(addr, err), false
	}
	// The leader answers a write within its quorum timeout and a read
	// within its read barrier's; a leader that does not answer at all
	// (paused, cut off) must not hold the client forever.
	up.conn.SetDeadline(time.Now().Add(r.ForwardTimeout()))
	defer up.conn.SetDeadline(time.Time{})
	if err := up.Send(cl, args); err != nil {
		Drop(cl, up)
		return BrokenReply(kind), kind == FwdRead
	}
	rep, err := up.ReadResult(nil)
	if err != nil {
		Drop(cl, up)
		return BrokenReply(kind), kind == FwdRead
	}
	return Relayed(rep), false
}

// SendBlocking starts a forwarded blocking read on up: the request (and
// the HELLO/SELECT set-up) is sent within ForwardTimeout; the blocked read
// of its reply (ReadResult) that follows is not bounded. A failure drops
// the upstream.
func (r *Cluster) SendBlocking(cl Client, up *Upstream, args [][]byte) error {
	up.conn.SetDeadline(time.Now().Add(r.ForwardTimeout()))
	err := up.Send(cl, args)
	up.conn.SetDeadline(time.Time{})
	if err != nil {
		Drop(cl, up)
	}
	return err
}

// ForwardTx runs a queued transaction at the node at addr: MULTI, the
// queued requests and EXEC go over the client's upstream (where its WATCH
// went), and EXEC's reply is relayed; ran reports that EXEC's reply came.
// A broken upstream is an unknown outcome (the EXEC may have run). The
// upstream's database is unknown afterwards (a queued SELECT moved it).
func (r *Cluster) ForwardTx(cl Client, addr string, queue [][][]byte) (reply resp.Reply, ran bool) {
	up, err := r.Upstream(cl, addr)
	if err != nil {
		return DialFailedReply(addr, err), false
	}
	reqs := make([][][]byte, 0, len(queue)+2)
	reqs = append(reqs, [][]byte{[]byte("MULTI")})
	reqs = append(reqs, queue...)
	reqs = append(reqs, [][]byte{[]byte("EXEC")})
	up.conn.SetDeadline(time.Now().Add(r.ForwardTimeout()))
	defer up.conn.SetDeadline(time.Time{})
	if err := up.Send(cl, reqs...); err != nil {
		Drop(cl, up)
		return BrokenReply(FwdWrite), false
	}
	var rep []byte
	for range reqs {
		if rep, err = up.ReadResult(nil); err != nil {
			Drop(cl, up)
			return BrokenReply(FwdWrite), false
		}
	}
	up.db = -1
	return Relayed(rep), true
}

// ForwardSimple sends a request that must reach the upstream at addr if
// the client has one (UNWATCH after a remote WATCH), ignoring the reply.
func (r *Cluster) ForwardSimple(cl Client, addr string, args ...[]byte) {
	up := cl.Upstreams().m[addr]
	if up == nil {
		return
	}
	up.conn.SetDeadline(time.Now().Add(r.ForwardTimeout()))
	defer up.conn.SetDeadline(time.Time{})
	if err := up.Send(cl, args); err != nil {
		Drop(cl, up)
		return
	}
	if _, err := up.ReadResult(nil); err != nil {
		Drop(cl, up)
	}
}

// MaxForwardAttempts bounds the re-routes of one forwarded request;
// ForwardRetryPause is the pause before re-routing a refused one.
const (
	MaxForwardAttempts = 3
	ForwardRetryPause  = 50 * time.Millisecond
)

// RefusedUnrun reports whether a relayed reply is a TRYAGAIN error: the
// leader refused the request before running it (every TRYAGAIN streamd
// sends says so).
func RefusedUnrun(r resp.Reply) bool {
	e, ok := r.(resp.ErrorReply)
	return ok && strings.HasPrefix(string(e), "TRYAGAIN ")
}

// BlockingArgs reports whether an XREAD/XREADGROUP request has BLOCK.
func BlockingArgs(args [][]byte) bool {
	for _, a := range args[1:] {
		if resp.IsOpt(a, "STREAMS") {
			return false
		}
		if resp.IsOpt(a, "BLOCK") {
			return true
		}
	}
	return false
}
