// Package config owns streamd's configuration: the directive table (each
// setting's name, default, parser, help text, and whether CONFIG SET may
// change it or must replicate it), loading the configuration from a
// redis.conf-style file, the STREAMD_* environment variables and the
// command-line flags, validation (each value alone, and the cluster settings
// together), the --help/README table (Docs), and the pure part of CONFIG
// REWRITE: the new file's text from the old file and the current values,
// written to disk atomically.
//
// Values are kept as plain Go types (strings, integers, durations).
// Turning them into what other packages take (an fsync policy, Raft
// timings, listeners) and applying a change to a running server belong to
// cmd/streamd and server. The package imports no other streamd package but
// the protocol leaf server/resp (Redis's sdssplitargs and sdscatrepr quoting), so
// adding a directive touches this package and the code that uses its value.
package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
)

// Config is the server's configuration. Each field is the Redis directive
// named in its comment, with Redis's default (see Default); the same
// names work in the config file, on CONFIG GET and on CONFIG SET.
type Config struct {
	// Bind is "bind": space-separated addresses to listen on. A leading "-"
	// marks an address as optional (skipped if it cannot be bound), as Redis.
	Bind string
	// Port is "port".
	Port int
	// Dir is "dir": the working directory (data lives here from issue 3 on).
	Dir string
	// RequirePass is "requirepass": the default user's password ("" = none).
	RequirePass string
	// MaxClients is "maxclients". At start-up cmd/streamd lowers it to what
	// the open-file limit allows, as Redis does (server.FitMaxClients).
	MaxClients int
	// ProtectedMode is "protected-mode" (default yes): with no password for
	// the default user, only loopback clients are served; others get
	// Redis's DENIED text and are disconnected.
	ProtectedMode bool
	// ACLFile is "aclfile": the file of ACL users ACL LOAD reads and ACL
	// SAVE writes, loaded at start-up ("" = none; users come from "user"
	// lines and ACL SETUSER). Read from the file or the command line only.
	ACLFile string
	// Users are the config file's "user" lines, one a line: the user's
	// name and its ACL SETUSER rules, each quoted as Redis's sdscatrepr
	// (see UserLines). Redis refuses them together with an aclfile.
	Users string
	// ACLLogMaxLen is "acllog-max-len": how many entries ACL LOG keeps.
	ACLLogMaxLen int
	// MaxMemory is "maxmemory": the used memory (INFO used_memory) above
	// which commands flagged denyoom are refused with OOM (policy
	// noeviction); 0 = no limit. It also sets the Go runtime's soft memory
	// limit (server.GoMemoryLimit).
	MaxMemory int64
	// ProtoMaxBulkLen is "proto-max-bulk-len": the largest bulk a client may send.
	ProtoMaxBulkLen int64
	// StreamNodeMaxEntries is "stream-node-max-entries".
	StreamNodeMaxEntries int
	// StreamNodeMaxBytes is "stream-node-max-bytes".
	StreamNodeMaxBytes int
	// StreamIDMPDuration is "stream-idmp-duration": how many seconds a new
	// stream keeps an XADD IDMP iid (Redis 8.6).
	StreamIDMPDuration int
	// StreamIDMPMaxSize is "stream-idmp-maxsize": how many iids per
	// producer a new stream keeps (Redis 8.6).
	StreamIDMPMaxSize int
	// StreamDefaultAckLevel is "stream-default-acklevel": "quorum" or
	// "leader", the ACKLEVEL of a stream that XCFGSET never gave one.
	StreamDefaultAckLevel string
	// Timeout is "timeout": close a client idle this many seconds (0 = never;
	// blocked clients are exempt, as in Redis).
	Timeout int
	// EventLoop is "event-loop": serve plain TCP clients from one epoll
	// event loop while they send commands it runs without blocking (a
	// single node's writes, a cluster node's forwarded writes;
	// server/loop_linux.go; Linux only).
	EventLoop bool
	// TCPKeepAlive is "tcp-keepalive": the TCP keepalive period in seconds (0 = off).
	TCPKeepAlive int
	// LogLevel is "loglevel": debug, verbose, notice or warning.
	LogLevel string
	// AppendFsync is "appendfsync": "always" (the default: a write is
	// acknowledged once its log entry is fsynced) or "everysec" (the log
	// is fsynced once a second; a machine crash may lose the last second).
	AppendFsync string
	// LogStore is "log-store": where the log lives, "wal" (hashicorp/raft-wal
	// segments in dir/wal/, one fsync per append) or "bolt" (dir/raft.db,
	// two fsyncs per append). Empty means the store the data directory
	// already holds, or the default for a new one; after start it holds the
	// store in use. Read from the file or the command line only.
	LogStore string
	// SnapshotLogSize is "snapshot-log-size": a shard snapshots once this
	// many bytes of log entries were applied since its last snapshot
	// (besides every 8192 entries); 0 snapshots by entry count only. Read
	// from the file or the command line only.
	SnapshotLogSize int64
	// MetricsAddr is "metrics-addr": the HTTP address of the Prometheus
	// /metrics, /healthz and /readyz endpoints (see Server.MetricsHandler);
	// "" turns them off. Read from the file or the command line only.
	MetricsAddr string
	// MetricsMaxStreams is "metrics-max-streams": how many streams /metrics
	// reports per-stream series for (the longest ones; default 100).
	MetricsMaxStreams int
	// SlowlogLogSlowerThan is "slowlog-log-slower-than": commands taking at
	// least this many microseconds are logged in the SLOWLOG (default 10000;
	// 0 logs every command, a negative value none), as in Redis.
	SlowlogLogSlowerThan int64
	// SlowlogMaxLen is "slowlog-max-len": how many entries the SLOWLOG
	// keeps (default 128).
	SlowlogMaxLen int
	// LatencyTracking is "latency-tracking": whether commands' latencies go
	// into INFO latencystats' histograms (default yes), as in Redis 7.
	LatencyTracking bool
	// LatencyTrackingInfoPercentiles is "latency-tracking-info-percentiles":
	// the percentiles INFO latencystats reports (default "50 99 99.9"; kept
	// as CONFIG GET writes it, LatencyPercentiles parses it).
	LatencyTrackingInfoPercentiles string
	// LatencyMonitorThreshold is "latency-monitor-threshold": commands
	// taking at least this many milliseconds are recorded by the latency
	// monitor (LATENCY); 0 (the default) records nothing, as in Redis.
	LatencyMonitorThreshold int64
	// LogFormat is "log-format": "text" (the default, log/slog's key=value
	// lines) or "json" (one JSON object a line). Read from the file or the
	// command line only.
	LogFormat string
	// ConfigFile is the path of the config file the server was started
	// with ("" = none; CONFIG REWRITE writes there). It is not a directive.
	ConfigFile string
	// Warnings are the start-up warnings of loading the configuration: one
	// line per Redis directive streamd ignores and per fixed directive given
	// another value (main logs them). They are not a directive.
	Warnings []string
	// LogLevelVar, if set, is the live level of the process's logger
	// (main makes it): CONFIG SET loglevel sets it. It is not a directive.
	LogLevelVar *slog.LevelVar

	// Cluster settings (issue 4). All are read from the file or the command
	// line only: CONFIG SET refuses them. With NodeID empty the server is
	// the embedded single node of earlier releases (no network, data in dir).

	// NodeID is "node-id": this node's Raft server ID ("" = single node).
	NodeID string
	// RaftAddr is "raft-addr": host:port of the one Raft TCP port (all
	// shards, the internal RPCs and forwarded client commands). Every
	// connection on it proves it comes from a member (tls-cluster,
	// cluster-secret or requirepass) before anything else.
	RaftAddr string
	// ClusterSecret is "cluster-secret": the shared secret members prove
	// they know on the raft port (challenge–response; never sent).
	ClusterSecret string
	// ClusterSecretFile is "cluster-secret-file": a file whose content,
	// trimmed, is the cluster secret (instead of ClusterSecret).
	ClusterSecretFile string
	// Bootstrap is "bootstrap" (yes/no): start a new cluster with this node
	// as every shard's only voter.
	Bootstrap bool
	// Join is "join": a member's client host:port; at start-up the node
	// asks it (RAFT ADD) to add this node to every shard.
	Join string
	// JoinTLS is "join-tls" (yes/no): Join is a TLS client port (tls-port);
	// the node connects with its tls-cert-file and checks the member's
	// certificate against the CA and Join's host.
	JoinTLS bool
	// Peers is "peers": a static member list "id=host:port,..." (raft
	// addresses, self included) every node bootstraps with.
	Peers string
	// Shards is "shards": how many Raft groups the 16384 slots are split
	// into (default 1). A data directory keeps the count it was created with.
	Shards int
	// ClusterEnabled is "cluster-enabled" (Redis's name): answer MOVED for
	// keys of shards led elsewhere and serve CLUSTER SLOTS/SHARDS/NODES, so
	// cluster clients route themselves. Off (the default), any node
	// forwards such commands to the leader and relays the reply.
	ClusterEnabled bool
	// RaftHeartbeatTimeout is "raft-heartbeat-timeout" (default 1s).
	RaftHeartbeatTimeout time.Duration
	// RaftElectionTimeout is "raft-election-timeout" (default 1s).
	RaftElectionTimeout time.Duration
	// RaftLeaseTimeout is "raft-lease-timeout" (default 500ms).
	RaftLeaseTimeout time.Duration
	// QuorumTimeout is "quorum-timeout": how long a write may wait for a
	// majority before it fails with "ERR outcome unknown" (default 5s).
	QuorumTimeout time.Duration
	// TransferHoldTimeout is "transfer-hold-timeout": how long a write
	// made during a planned leadership transfer is held for the new leader
	// before it fails as not applied (default 2s; 0 = fail at once with
	// TRYAGAIN).
	TransferHoldTimeout time.Duration
	// BalanceLeaders is "balance-leaders" (yes/no, default yes): spread
	// shard leadership over the voters.
	BalanceLeaders bool

	// TLS settings (Redis's names; config/tls.go). The paths, protocols and
	// ciphers are kept as given; tlsconf loads and checks them (TLSFiles).

	// TLSPort is "tls-port": the client TLS port on the bind addresses
	// (0 = off). With a TLSPort, Port 0 means no plain TCP port, as Redis.
	TLSPort int
	// TLSCertFile is "tls-cert-file".
	TLSCertFile string
	// TLSKeyFile is "tls-key-file".
	TLSKeyFile string
	// TLSKeyFilePass is "tls-key-file-pass".
	TLSKeyFilePass string
	// TLSCACertFile is "tls-ca-cert-file".
	TLSCACertFile string
	// TLSCACertDir is "tls-ca-cert-dir".
	TLSCACertDir string
	// TLSAuthClients is "tls-auth-clients": yes (default), no or optional.
	TLSAuthClients string
	// TLSProtocols is "tls-protocols" ("" = TLSv1.2 and TLSv1.3).
	TLSProtocols string
	// TLSCiphersuites is "tls-ciphersuites" (TLS 1.3; "" = all).
	TLSCiphersuites string
	// TLSCiphers is "tls-ciphers" (TLS 1.2; "" = Go's defaults).
	TLSCiphers string
	// TLSPreferServerCiphers is "tls-prefer-server-ciphers".
	TLSPreferServerCiphers bool
	// TLSCluster is "tls-cluster": mutual TLS on the raft port (start-up only).
	TLSCluster bool
}

// Cluster defaults (Default).
const (
	DefaultRaftHeartbeatTimeout = time.Second
	DefaultRaftElectionTimeout  = time.Second
	DefaultRaftLeaseTimeout     = 500 * time.Millisecond
	DefaultQuorumTimeout        = 5 * time.Second
	DefaultTransferHoldTimeout  = 2 * time.Second
)

// Default returns Redis's defaults: 127.0.0.1:6379, dir ./data,
// maxclients 10000, proto-max-bulk-len 512mb, stream nodes of 100 entries
// or 4096 bytes; and streamd's own: metrics on 127.0.0.1:9121, one shard,
// Raft heartbeat/election 1s, lease 500ms, quorum timeout 5s, leaders
// balanced.
func Default() Config {
	return Config{
		Bind:                  "127.0.0.1",
		Port:                  6379,
		Dir:                   "./data",
		MaxClients:            10000,
		ProtectedMode:         true,
		ProtoMaxBulkLen:       512 << 20,
		StreamNodeMaxEntries:  100,
		StreamNodeMaxBytes:    4096,
		StreamIDMPDuration:    100,
		StreamIDMPMaxSize:     100,
		StreamDefaultAckLevel: "quorum",
		TCPKeepAlive:          300,
		LogLevel:              "notice",
		AppendFsync:           "always",
		MetricsAddr:           "127.0.0.1:9121",
		MetricsMaxStreams:     100,
		SlowlogLogSlowerThan:  10000,
		SlowlogMaxLen:         128,
		ACLLogMaxLen:          128,
		LogFormat:             "text",
		Shards:                1,
		RaftHeartbeatTimeout:  DefaultRaftHeartbeatTimeout,
		RaftElectionTimeout:   DefaultRaftElectionTimeout,
		RaftLeaseTimeout:      DefaultRaftLeaseTimeout,
		QuorumTimeout:         DefaultQuorumTimeout,
		TransferHoldTimeout:   DefaultTransferHoldTimeout,
		BalanceLeaders:        true,
		EventLoop:             true,
		TLSAuthClients:        "yes",
		SnapshotLogSize:       64 << 20,

		// Redis 7's latency tracking (INFO latencystats).
		LatencyTracking:                true,
		LatencyTrackingInfoPercentiles: "50 99 99.9",
	}
}

// Peer is one entry of the "peers" directive: a member's ID and Raft
// address.
type Peer struct {
	ID, RaftAddr string
}

// ParsePeers parses the "peers" directive: "id=host:port" entries
// separated by commas (or spaces). IDs and addresses must be unique; an
// empty list is nil.
func ParsePeers(v string) ([]Peer, error) {
	var out []Peer
	ids, addrs := map[string]bool{}, map[string]bool{}
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		id, addr, ok := strings.Cut(f, "=")
		if !ok || id == "" {
			return nil, fmt.Errorf("peer %q is not id=host:port", f)
		}
		if err := checkHostPort(addr); err != nil {
			return nil, fmt.Errorf("peer %q: %v", f, err)
		}
		if ids[id] || addrs[addr] {
			return nil, fmt.Errorf("peer %q is listed twice", f)
		}
		ids[id], addrs[addr] = true, true
		out = append(out, Peer{ID: id, RaftAddr: addr})
	}
	return out, nil
}

// CheckCluster checks that the cluster settings fit together: raft-addr
// with node-id; at most one of bootstrap, join and peers; peers naming this
// node at its raft-addr; and a node-id for any of them.
func (c Config) CheckCluster() error {
	if c.NodeID == "" {
		if c.RaftAddr != "" || c.Bootstrap || c.Join != "" || c.Peers != "" {
			return errors.New("raft-addr, bootstrap, join and peers need node-id")
		}
		return nil
	}
	if c.RaftAddr == "" {
		return errors.New("node-id needs raft-addr (host:port of the Raft port)")
	}
	n := 0
	for _, set := range []bool{c.Bootstrap, c.Join != "", c.Peers != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return errors.New("use only one of bootstrap, join and peers")
	}
	if c.Peers != "" {
		peers, err := ParsePeers(c.Peers)
		if err != nil {
			return fmt.Errorf("peers: %v", err)
		}
		self := false
		for _, p := range peers {
			if p.ID == c.NodeID {
				if p.RaftAddr != c.RaftAddr {
					return fmt.Errorf("peers lists %s at %s but raft-addr is %s", p.ID, p.RaftAddr, c.RaftAddr)
				}
				self = true
			}
		}
		if !self {
			return fmt.Errorf("peers must include this node (%s=%s)", c.NodeID, c.RaftAddr)
		}
	}
	return nil
}

// Set sets the directive name to value as a config file line would (the
// command line uses it for the flags named after directives). A Redis
// directive streamd does not use, or a fixed directive's other value, is
// accepted with a warning (c.Warnings). An unknown name or a bad value is an
// error naming the directive.
func (c *Config) Set(name, value string) error {
	p := Lookup(name)
	if p == nil {
		warning, err := ignoredRedisDirective(name)
		if errors.Is(err, errUnknown) {
			return fmt.Errorf("unknown directive %q%s", name, didYouMean(Suggest(name, true), "", ""))
		}
		if err != nil {
			return err
		}
		c.Warnings = append(c.Warnings, warning)
		return nil
	}
	if err := c.setOrWarn(p, value); err != nil {
		return fmt.Errorf("%s %q: %v", p.name, value, err)
	}
	return nil
}

// SlogLevel maps Redis's loglevel names onto log/slog levels: debug and
// verbose are DEBUG, notice is INFO, warning is WARN (Redis's finer
// debug/verbose split has no use here: streamd logs nothing per command).
func SlogLevel(loglevel string) slog.Level {
	switch strings.ToLower(loglevel) {
	case "debug", "verbose":
		return slog.LevelDebug
	case "warning":
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// NewLogger returns the logger cfg asks for: log-format's handler (text or
// json) writing to w, its level held by level (set from loglevel here, and
// later by CONFIG SET loglevel when it is cfg.LogLevelVar).
func NewLogger(cfg Config, w io.Writer, level *slog.LevelVar) *slog.Logger {
	level.Set(SlogLevel(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if strings.EqualFold(cfg.LogFormat, "json") {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
