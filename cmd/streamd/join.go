package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"streamd/config"
	"streamd/replication"
	"streamd/server/resp"
)

// joinTimeout bounds how long --join keeps asking the member to add this
// node (the cluster may be electing a leader meanwhile).
const joinTimeout = 30 * time.Second

// readyLogEvery is how often a node still waiting for every shard to have
// a leader says so.
const readyLogEvery = 10 * time.Second

// startCluster runs a clustered node's start-up steps after the server
// serves: --join (RAFT ADD through a member's client port), then waiting
// for every shard to have a leader, then one log line with this node's role
// per shard. It returns an error only when the join failed; it returns
// early, with nil, when stop is closed.
func startCluster(cfg config.Config, node *replication.Node, log *slog.Logger, stop <-chan struct{}) error {
	switch {
	case node.WasMember():
		if ignored := clusterStartFlags(cfg); ignored != "" {
			log.Info("This node is already a member of its cluster (its data directory says so): ignoring "+ignored,
				"node-id", node.ID(), "dir", cfg.Dir)
		}
	case cfg.Join != "":
		log.Info("Joining the cluster", "via", cfg.Join, "node-id", cfg.NodeID, "raft-addr", cfg.RaftAddr)
		tc, err := joinTLSConfig(cfg)
		if err != nil {
			return err
		}
		if err := joinCluster(cfg.Join, tc, cfg.RequirePass, cfg.NodeID, cfg.RaftAddr, joinTimeout, log, stop); err != nil {
			return err
		}
		select {
		case <-stop:
			return nil // interrupted: not added
		default:
		}
		log.Info("Added to the cluster", "via", cfg.Join)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	lastLog := time.Now()
	for {
		reason := node.Ready()
		if reason == "" {
			break
		}
		if time.Since(lastLog) >= readyLogEvery {
			log.Warn("Waiting for every shard to have a leader", "reason", reason)
			lastLog = time.Now()
		}
		select {
		case <-stop:
			return nil
		case <-tick.C:
		}
	}
	log.Info("Cluster node ready", "node-id", node.ID(), "raft-addr", node.RaftAddr(),
		"client-addr", node.ClientAddr(), "roles", shardRoles(node))
	return nil
}

// clusterStartFlags names the start-up cluster settings given ("--join,
// --bootstrap"), which a node that already is a member ignores.
func clusterStartFlags(cfg config.Config) string {
	var given []string
	if cfg.Join != "" {
		given = append(given, "--join "+cfg.Join)
	}
	if cfg.Bootstrap {
		given = append(given, "--bootstrap")
	}
	if cfg.Peers != "" {
		given = append(given, "--peers")
	}
	return strings.Join(given, ", ")
}

// joinTLSConfig is the TLS configuration --join connects with (join-tls):
// this node's certificate if the member asks for one, the member's checked
// against the CA and the join address's host. nil without join-tls.
func joinTLSConfig(cfg config.Config) (*tls.Config, error) {
	if !cfg.JoinTLS {
		return nil, nil
	}
	host, _, err := net.SplitHostPort(cfg.Join)
	if err != nil {
		return nil, fmt.Errorf("join %q: %v", cfg.Join, err)
	}
	l, err := loaderFor(cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("join-tls: %w", err)
	}
	c := l.ClientConfig()
	c.ServerName = host
	return c, nil
}

// joinCluster asks the member at addr (a client host:port; over TLS when
// tc is set) to add this node: AUTH when pass is set, then RAFT ADD id
// raftAddr. Each attempt that fails is logged with its error; a transient
// error (the member unreachable or electing a leader: see transientJoin) is
// retried with a growing pause until it answers OK or timeout passes (the
// last error is returned), any other refusal ends it at once. It returns
// nil early when stop is closed.
func joinCluster(addr string, tc *tls.Config, pass, id, raftAddr string, timeout time.Duration, log *slog.Logger, stop <-chan struct{}) error {
	deadline := time.Now().Add(timeout)
	pause := joinRetryMin
	for attempt := 1; ; attempt++ {
		err := raftAdd(addr, tc, pass, id, raftAddr, time.Until(deadline))
		if err == nil {
			return nil
		}
		if !transientJoin(err) {
			log.Error("RAFT ADD refused: not retrying", "attempt", attempt, "via", addr, "err", err)
			return fmt.Errorf("RAFT ADD via %s: %w", addr, err)
		}
		if time.Now().After(deadline) {
			log.Warn("RAFT ADD failed", "attempt", attempt, "via", addr, "err", err)
			return fmt.Errorf("RAFT ADD via %s: giving up after %d attempts in %v: %w", addr, attempt, timeout, err)
		}
		log.Warn("RAFT ADD failed, retrying", "attempt", attempt, "via", addr, "err", err, "retry-in", pause.String())
		select {
		case <-stop:
			return nil
		case <-time.After(pause):
		}
		pause = min(2*pause, joinRetryMax)
	}
}

// The pause between two join attempts starts at joinRetryMin and doubles
// up to joinRetryMax.
const (
	joinRetryMin = 250 * time.Millisecond
	joinRetryMax = 4 * time.Second
)

// permanentError is a reply that retrying cannot change (a wrong password,
// a member that does not know RAFT).
type permanentError struct{ msg string }

func (e permanentError) Error() string { return e.msg }

// replyError is an error reply from the member (its text, code first).
type replyError struct{ msg string }

func (e replyError) Error() string { return e.msg }

// transientJoin reports whether a failed join attempt may succeed later:
// the member did not answer (refused, reset, timed out, closed), or it
// answered that the cluster is busy electing or loading (TRYAGAIN,
// CLUSTERDOWN, LOADING, BUSY, MASTERDOWN), or that it could not reach
// this node's raft port yet. Any other reply (ERR this node is not part
// of a cluster, a wrong password, NOPERM, another node at this address, a
// different shard count) is a refusal that retrying does not change.
func transientJoin(err error) bool {
	var perm permanentError
	if errors.As(err, &perm) {
		return false
	}
	var re replyError
	if !errors.As(err, &re) {
		return true // the connection failed: refused, reset, timeout, EOF
	}
	code, _, _ := strings.Cut(re.msg, " ")
	switch code {
	case "TRYAGAIN", "CLUSTERDOWN", "LOADING", "BUSY", "MASTERDOWN":
		return true
	case "ERR":
		// The member could not reach this node's raft port (to ask who it
		// is) or its shard's leader: a network condition, not a refusal.
		return !credentialsDiffer(re.msg) && (strings.Contains(re.msg, "connection refused") ||
			strings.Contains(re.msg, "i/o timeout") || strings.Contains(re.msg, "connection reset"))
	}
	return false
}

// raftAdd makes one attempt over a fresh connection (TLS with tc).
func raftAdd(addr string, tc *tls.Config, pass, id, raftAddr string, timeout time.Duration) error {
	if timeout < time.Second {
		timeout = time.Second
	}
	var conn net.Conn
	var err error
	if tc != nil {
		conn, err = tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, tc)
		var cv *tls.CertificateVerificationError
		if errors.As(err, &cv) {
			return permanentError{err.Error()}
		}
	} else {
		conn, err = net.DialTimeout("tcp", addr, 2*time.Second)
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(timeout))
	r := bufio.NewReader(conn)
	if pass != "" {
		if err := respCall(conn, r, "AUTH", pass); err != nil {
			if strings.HasPrefix(err.Error(), "WRONGPASS") || strings.HasPrefix(err.Error(), "ERR AUTH") {
				return permanentError{err.Error()}
			}
			return err
		}
	}
	return respCall(conn, r, "RAFT", "ADD", id, raftAddr)
}

// credentialsDiffer reports whether a RAFT ADD failed because the member
// and this node prove membership differently (mux's handshake refused the
// member's call to this node): retrying cannot help.
func credentialsDiffer(msg string) bool {
	return strings.Contains(msg, "the peer's mode differs") || strings.Contains(msg, "could not prove it holds the cluster key") ||
		strings.Contains(msg, "tls-cluster handshake with")
}

// respCall writes one command as a RESP array of bulk strings and reads
// one reply: "+..." is success, "-..." an error with that text.
func respCall(conn net.Conn, r *bufio.Reader, args ...string) error {
	bargs := make([][]byte, len(args))
	for i, a := range args {
		bargs[i] = []byte(a)
	}
	if _, err := conn.Write(resp.AppendCommand(nil, bargs...)); err != nil {
		return err
	}
	raw, err := resp.NewReplyReader(r).ReadRaw(nil)
	if err != nil {
		return err
	}
	line, _, _ := strings.Cut(string(raw), "\r\n")
	switch {
	case strings.HasPrefix(line, "+"):
		return nil
	case strings.HasPrefix(line, "-"):
		return replyError{line[1:]}
	}
	return permanentError{fmt.Sprintf("unexpected reply %q (is it a streamd client port?)", line)}
}
