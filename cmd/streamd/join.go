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
	if cfg.Join != "" {
		log.Info("Joining the cluster", "via", cfg.Join, "node-id", cfg.NodeID, "raft-addr", cfg.RaftAddr)
		tc, err := joinTLSConfig(cfg)
		if err != nil {
			return err
		}
		if err := joinCluster(cfg.Join, tc, cfg.RequirePass, cfg.NodeID, cfg.RaftAddr, joinTimeout, stop); err != nil {
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
// raftAddr, retried every half second until it answers OK or timeout
// passes (the last error is returned) or stop is closed.
func joinCluster(addr string, tc *tls.Config, pass, id, raftAddr string, timeout time.Duration, stop <-chan struct{}) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		err := raftAdd(addr, tc, pass, id, raftAddr, time.Until(deadline))
		if err == nil {
			return nil
		}
		last = err
		var perm permanentError
		if errors.As(err, &perm) || time.Now().After(deadline) {
			return fmt.Errorf("RAFT ADD via %s: %w", addr, last)
		}
		select {
		case <-stop:
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// permanentError is a reply that retrying cannot change (a wrong password,
// a member that does not know RAFT).
type permanentError struct{ msg string }

func (e permanentError) Error() string { return e.msg }

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
	err = respCall(conn, r, "RAFT", "ADD", id, raftAddr)
	if err != nil && (strings.HasPrefix(err.Error(), "ERR unknown command") || credentialsDiffer(err.Error())) {
		return permanentError{err.Error()}
	}
	return err
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
		return errors.New(line[1:])
	}
	return fmt.Errorf("unexpected reply %q", line)
}
