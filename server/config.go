package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"streamd/replication"
)

// Config is the server's configuration. Each field is the Redis directive
// named in its comment, with Redis's default (see DefaultConfig); the same
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
	// MaxClients is "maxclients".
	MaxClients int
	// ProtoMaxBulkLen is "proto-max-bulk-len": the largest bulk a client may send.
	ProtoMaxBulkLen int64
	// StreamNodeMaxEntries is "stream-node-max-entries".
	StreamNodeMaxEntries int
	// StreamNodeMaxBytes is "stream-node-max-bytes".
	StreamNodeMaxBytes int
	// Timeout is "timeout": close a client idle this many seconds (0 = never;
	// blocked clients are exempt, as in Redis).
	Timeout int
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
	// LogFormat is "log-format": "text" (the default, log/slog's key=value
	// lines) or "json" (one JSON object a line). Read from the file or the
	// command line only.
	LogFormat string
	// ConfigFile is the path of the config file the server was started
	// with ("" = none; CONFIG REWRITE writes there). It is not a directive.
	ConfigFile string
	// LogLevelVar, if set, is the live level of the process's logger
	// (main makes it): CONFIG SET loglevel sets it. It is not a directive.
	LogLevelVar *slog.LevelVar

	// Cluster settings (issue 4). All are read from the file or the command
	// line only: CONFIG SET refuses them. With NodeID empty the server is
	// the embedded single node of earlier releases (no network, data in dir).

	// NodeID is "node-id": this node's Raft server ID ("" = single node).
	NodeID string
	// RaftAddr is "raft-addr": host:port of the one Raft TCP port (all
	// shards, the internal RPCs and forwarded client commands). It is
	// trusted: never expose it outside the cluster's network.
	RaftAddr string
	// Bootstrap is "bootstrap" (yes/no): start a new cluster with this node
	// as every shard's only voter.
	Bootstrap bool
	// Join is "join": a member's client host:port; at start-up the node
	// asks it (RAFT ADD) to add this node to every shard.
	Join string
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
	// BalanceLeaders is "balance-leaders" (yes/no, default yes): spread
	// shard leadership over the voters.
	BalanceLeaders bool
}

// Cluster defaults (DefaultConfig).
const (
	DefaultRaftHeartbeatTimeout = time.Second
	DefaultRaftElectionTimeout  = time.Second
	DefaultRaftLeaseTimeout     = 500 * time.Millisecond
	DefaultQuorumTimeout        = 5 * time.Second
)

// DefaultConfig returns Redis's defaults: 127.0.0.1:6379, dir ./data,
// maxclients 10000, proto-max-bulk-len 512mb, stream nodes of 100 entries
// or 4096 bytes; and streamd's own: metrics on 127.0.0.1:9121, one shard,
// Raft heartbeat/election 1s, lease 500ms, quorum timeout 5s, leaders
// balanced.
func DefaultConfig() Config {
	return Config{
		Bind:                 "127.0.0.1",
		Port:                 6379,
		Dir:                  "./data",
		MaxClients:           10000,
		ProtoMaxBulkLen:      512 << 20,
		StreamNodeMaxEntries: 100,
		StreamNodeMaxBytes:   4096,
		TCPKeepAlive:         300,
		LogLevel:             "notice",
		AppendFsync:          "always",
		MetricsAddr:          "127.0.0.1:9121",
		MetricsMaxStreams:    100,
		SlowlogLogSlowerThan: 10000,
		SlowlogMaxLen:        128,
		LogFormat:            "text",
		Shards:               1,
		RaftHeartbeatTimeout: DefaultRaftHeartbeatTimeout,
		RaftElectionTimeout:  DefaultRaftElectionTimeout,
		RaftLeaseTimeout:     DefaultRaftLeaseTimeout,
		QuorumTimeout:        DefaultQuorumTimeout,
		BalanceLeaders:       true,
	}
}

// FsyncPolicy returns the shard's fsync policy for cfg's appendfsync.
func (c Config) FsyncPolicy() (replication.FsyncPolicy, error) {
	switch strings.ToLower(c.AppendFsync) {
	case "always", "":
		return replication.FsyncAlways, nil
	case "everysec":
		return replication.FsyncEverySec, nil
	}
	return 0, errors.New("argument(s) must be one of the following: always, everysec")
}

// configParam is one directive: how to read it, how to set it, and where a
// change goes.
type configParam struct {
	name string
	get  func(*Config) string
	// set parses value into cfg; its error is Redis's reason text
	// ("argument couldn't be parsed into an integer").
	set func(cfg *Config, value string) error
	// immutable params are read from the file only (CONFIG SET refuses).
	immutable bool
	// engine params change what the state machine's Apply does, so CONFIG
	// SET sends them through Shard.Propose as a wire.ConfigSet (DESIGN §3).
	engine bool
	// local, if set, applies a change to this node's shard outside the log
	// (a durability policy such as appendfsync is each node's own choice).
	local func(sh *replication.Shard, cfg *Config) error
	// help is what the directive changes (streamd --help, README table).
	help string
	// defText, if set, is the default shown by --help instead of the
	// value DefaultConfig holds (for defaults that depend on the data).
	defText string
	// yesNo marks a yes/no directive: its flag may stand alone (--name
	// means yes).
	yesNo bool
}

// doc sets p's help text and returns p (for the table's rows built by
// the helper constructors).
func (p *configParam) doc(help string) *configParam {
	p.help = help
	return p
}

// constParam is a directive streamd answers with a fixed value because the
// choice it offers in Redis does not exist here (no RDB save points: the
// shard snapshots by log size; the log is always on, so appendonly is
// yes): CONFIG GET reports the truth, and a file may set it only to that
// value.
func constParam(name, value string) *configParam {
	return &configParam{
		name: name,
		get:  func(*Config) string { return value },
		set: func(_ *Config, v string) error {
			if !strings.EqualFold(v, value) {
				return fmt.Errorf("streamd supports only %q", value)
			}
			return nil
		},
		immutable: true,
	}
}

func intParam(name string, min, max int64, field func(*Config) *int, immutable bool) *configParam {
	return &configParam{
		name: name,
		get:  func(c *Config) string { return strconv.Itoa(*field(c)) },
		set: func(c *Config, v string) error {
			n, err := parseConfigInt(v, min, max, false)
			if err != nil {
				return err
			}
			*field(c) = int(n)
			return nil
		},
		immutable: immutable,
	}
}

// boolParam is an immutable yes/no directive.
func boolParam(name string, field func(*Config) *bool) *configParam {
	return &configParam{
		name: name,
		get: func(c *Config) string {
			if *field(c) {
				return "yes"
			}
			return "no"
		},
		yesNo: true,
		set: func(c *Config, v string) error {
			switch strings.ToLower(v) {
			case "yes":
				*field(c) = true
			case "no":
				*field(c) = false
			default:
				return errors.New("argument must be 'yes' or 'no'")
			}
			return nil
		},
		immutable: true,
	}
}

// addrParam is an immutable host:port directive ("" = unset).
func addrParam(name string, field func(*Config) *string) *configParam {
	return &configParam{
		name: name,
		get:  func(c *Config) string { return *field(c) },
		set: func(c *Config, v string) error {
			v = strings.TrimSpace(v)
			if v != "" {
				if err := checkHostPort(v); err != nil {
					return err
				}
			}
			*field(c) = v
			return nil
		},
		immutable: true,
	}
}

// durationParam is an immutable positive duration: Go syntax ("1s",
// "500ms") or a bare number of milliseconds.
func durationParam(name string, field func(*Config) *time.Duration) *configParam {
	return &configParam{
		name: name,
		get:  func(c *Config) string { return field(c).String() },
		set: func(c *Config, v string) error {
			d, err := parseDuration(v)
			if err != nil {
				return err
			}
			*field(c) = d
			return nil
		},
		immutable: true,
	}
}

// parseDuration reads a positive duration: "1s", "250ms", or a bare
// integer meaning milliseconds.
func parseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 || n > math.MaxInt64/int64(time.Millisecond) {
			return 0, errors.New("argument must be a positive duration")
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, errors.New("argument must be a duration such as 500ms or 2s (a bare number is milliseconds)")
	}
	if d <= 0 {
		return 0, errors.New("argument must be a positive duration")
	}
	return d, nil
}

// checkHostPort validates a host:port address with a numeric port.
func checkHostPort(v string) error {
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" {
		return fmt.Errorf("%q is not a host:port address", v)
	}
	if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		return fmt.Errorf("%q has no valid port", v)
	}
	return nil
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

// configParams is every directive, sorted by name (CONFIG GET answers in
// this order; Redis's own order is its dict's, which no client relies on).
var configParams = func() []*configParam {
	ps := []*configParam{
		{name: "bind", get: func(c *Config) string { return c.Bind },
			set: func(c *Config, v string) error {
				if strings.TrimSpace(v) == "" {
					return errors.New("bind needs at least one address")
				}
				c.Bind = strings.Join(strings.Fields(v), " ")
				return nil
			}, immutable: true,
			help: `client addresses to listen on, space-separated ("-addr" = skip if it cannot be bound, "*" = all)`},
		intParam("port", 0, 65535, func(c *Config) *int { return &c.Port }, true).
			doc("client TCP port (0 = any free port; a cluster node needs a fixed one)"),
		{name: "dir", get: func(c *Config) string { return c.Dir },
			set: func(c *Config, v string) error { c.Dir = v; return nil }, immutable: true,
			help: "data directory: Raft log, snapshots, LOCK (shard N > 0 in dir/shard-N)"},
		{name: "requirepass", get: func(c *Config) string { return c.RequirePass },
			set:  func(c *Config, v string) error { c.RequirePass = v; return nil },
			help: `password of the default user ("" = no AUTH needed)`},
		intParam("maxclients", 1, math.MaxUint32, func(c *Config) *int { return &c.MaxClients }, false).
			doc("most client connections at once (more are refused)"),
		{name: "proto-max-bulk-len", get: func(c *Config) string { return strconv.FormatInt(c.ProtoMaxBulkLen, 10) },
			set: func(c *Config, v string) error {
				n, err := parseConfigInt(v, 1<<20, math.MaxInt64, true)
				if err != nil {
					return err
				}
				c.ProtoMaxBulkLen = n
				return nil
			},
			help: "largest bulk string a client may send, in bytes (units: 1kb, 512mb...)"},
		{name: "stream-node-max-entries", get: func(c *Config) string { return strconv.Itoa(c.StreamNodeMaxEntries) },
			set: func(c *Config, v string) error {
				n, err := parseConfigInt(v, 0, math.MaxInt64, false)
				if err != nil {
					return err
				}
				c.StreamNodeMaxEntries = int(n)
				return nil
			}, engine: true,
			help: "entries per stream node, which XADD/XTRIM's ~ trimming works in (0 = no limit)"},
		{name: "stream-node-max-bytes", get: func(c *Config) string { return strconv.Itoa(c.StreamNodeMaxBytes) },
			set: func(c *Config, v string) error {
				n, err := parseConfigInt(v, 0, math.MaxInt64, true)
				if err != nil {
					return err
				}
				c.StreamNodeMaxBytes = int(n)
				return nil
			}, engine: true,
			help: "bytes per stream node (0 = no limit)"},
		intParam("timeout", 0, math.MaxInt32, func(c *Config) *int { return &c.Timeout }, false).
			doc("close a client idle this many seconds (0 = never; blocked clients are exempt)"),
		intParam("tcp-keepalive", 0, math.MaxInt32, func(c *Config) *int { return &c.TCPKeepAlive }, false).
			doc("TCP keepalive period of client connections in seconds (0 = off)"),
		{name: "loglevel", get: func(c *Config) string { return c.LogLevel },
			set: func(c *Config, v string) error {
				switch l := strings.ToLower(v); l {
				case "debug", "verbose", "notice", "warning":
					c.LogLevel = l
					return nil
				}
				return errors.New("argument(s) must be one of the following: debug, verbose, notice, warning")
			},
			local: func(_ *replication.Shard, c *Config) error {
				// Not a shard setting: CONFIG SET runs local hooks once
				// every value checked, which is when the live level of the
				// process's logger may change.
				if c.LogLevelVar != nil {
					c.LogLevelVar.Set(SlogLevel(c.LogLevel))
				}
				return nil
			},
			help: "log verbosity: debug, verbose (both slog DEBUG), notice (INFO) or warning (WARN)"},
		{name: "log-format", get: func(c *Config) string { return c.LogFormat },
			set: func(c *Config, v string) error {
				switch l := strings.ToLower(v); l {
				case "text", "json":
					c.LogFormat = l
					return nil
				}
				return errors.New("argument(s) must be one of the following: text, json")
			}, immutable: true,
			help: "log line format on stderr: text (key=value) or json (one object a line)"},
		constParam("databases", "16").doc("fixed: 16 logical databases (SELECT 0-15)"),
		constParam("save", "").doc(`fixed: "" (snapshots are taken by log size, not save points)`),
		constParam("appendonly", "yes").doc("fixed: yes (the Raft log is always on)"),
		{name: "appendfsync", get: func(c *Config) string { return c.AppendFsync },
			set: func(c *Config, v string) error {
				next := *c
				next.AppendFsync = strings.ToLower(v)
				if _, err := next.FsyncPolicy(); err != nil {
					return err
				}
				*c = next
				return nil
			},
			local: func(sh *replication.Shard, c *Config) error {
				p, err := c.FsyncPolicy()
				if err != nil {
					return err
				}
				return sh.SetFsync(p)
			},
			help: "always: fsync the log before each reply; everysec: once a second (a crash may lose the last second)"},
		boolParam("cluster-enabled", func(c *Config) *bool { return &c.ClusterEnabled }).
			doc("yes: answer MOVED and serve CLUSTER SLOTS/SHARDS/NODES; no: forward to the leader"),
		{name: "node-id", get: func(c *Config) string { return c.NodeID },
			set: func(c *Config, v string) error {
				if strings.ContainsAny(v, " \t\r\n,=") {
					return errors.New("node-id cannot contain spaces, commas or '='")
				}
				c.NodeID = v
				return nil
			}, immutable: true,
			help: `this node's Raft ID ("" = single node, no cluster)`},
		addrParam("raft-addr", func(c *Config) *string { return &c.RaftAddr }).
			doc("host:port of the Raft port, listened on and advertised (trusted: keep it private)"),
		boolParam("bootstrap", func(c *Config) *bool { return &c.Bootstrap }).
			doc("start a new cluster with this node as every shard's only voter"),
		addrParam("join", func(c *Config) *string { return &c.Join }).
			doc("client host:port of a member to join the cluster through (RAFT ADD)"),
		{name: "peers", get: func(c *Config) string { return c.Peers },
			set: func(c *Config, v string) error {
				if _, err := ParsePeers(v); err != nil {
					return err
				}
				c.Peers = strings.TrimSpace(v)
				return nil
			}, immutable: true,
			help: "static members id=host:port,... (Raft addresses, this node included) to bootstrap with"},
		intParam("shards", 1, replication.SlotCount, func(c *Config) *int { return &c.Shards }, true).
			doc("Raft groups the 16384 slots are split into (a data directory keeps its count)"),
		durationParam("raft-heartbeat-timeout", func(c *Config) *time.Duration { return &c.RaftHeartbeatTimeout }).
			doc("Raft heartbeat timeout (500ms, 2s; a bare number is milliseconds)"),
		durationParam("raft-election-timeout", func(c *Config) *time.Duration { return &c.RaftElectionTimeout }).
			doc("Raft election timeout"),
		durationParam("raft-lease-timeout", func(c *Config) *time.Duration { return &c.RaftLeaseTimeout }).
			doc("Raft leader lease"),
		durationParam("quorum-timeout", func(c *Config) *time.Duration { return &c.QuorumTimeout }).
			doc(`how long a write waits for a majority before "ERR outcome unknown"`),
		boolParam("balance-leaders", func(c *Config) *bool { return &c.BalanceLeaders }).
			doc("spread shard leadership over the voters"),
		{name: "log-store", get: func(c *Config) string { return c.LogStore },
			set: func(c *Config, v string) error {
				ls, err := replication.ParseLogStore(strings.ToLower(v))
				if err != nil {
					return errors.New("argument(s) must be one of the following: wal, bolt")
				}
				c.LogStore = ls
				return nil
			},
			immutable: true, defText: "what dir holds, else wal",
			help: "log store: wal (dir/wal/, one fsync per write) or bolt (dir/raft.db, two)"},
		{name: "metrics-addr", get: func(c *Config) string { return c.MetricsAddr },
			set:       func(c *Config, v string) error { c.MetricsAddr = strings.TrimSpace(v); return nil },
			immutable: true,
			help:      `HTTP address of /metrics, /healthz and /readyz ("" = off)`},
		intParam("metrics-max-streams", 0, math.MaxInt32, func(c *Config) *int { return &c.MetricsMaxStreams }, false).
			doc("how many streams (the longest) /metrics reports per-stream series for"),
		{name: "slowlog-log-slower-than", get: func(c *Config) string { return strconv.FormatInt(c.SlowlogLogSlowerThan, 10) },
			set: func(c *Config, v string) error {
				n, err := parseConfigInt(v, -1, math.MaxInt64, false)
				if err != nil {
					return err
				}
				c.SlowlogLogSlowerThan = n
				return nil
			},
			help: "SLOWLOG commands taking at least this many microseconds (0 = all, -1 = none)"},
		intParam("slowlog-max-len", 0, math.MaxInt64, func(c *Config) *int { return &c.SlowlogMaxLen }, false).
			doc("entries the SLOWLOG keeps"),
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].name < ps[j].name })
	return ps
}()

// lookupConfigParam finds a directive by its (case-insensitive) name.
func lookupConfigParam(name string) *configParam {
	name = strings.ToLower(name)
	i := sort.Search(len(configParams), func(i int) bool { return configParams[i].name >= name })
	if i < len(configParams) && configParams[i].name == name {
		return configParams[i]
	}
	return nil
}

// parseConfigInt parses a numeric directive the way Redis's config.c does:
// an integer, or with memory units (1k = 1000, 1kb = 1024, m/mb, g/gb) when
// memory is set, checked against [min, max] with Redis's messages.
func parseConfigInt(v string, min, max int64, memory bool) (int64, error) {
	var n int64
	var err error
	if memory {
		n, err = parseMemory(v)
	} else {
		n, err = strconv.ParseInt(v, 10, 64)
	}
	if err != nil {
		if memory {
			return 0, errors.New("argument must be a memory value")
		}
		return 0, errors.New("argument couldn't be parsed into an integer")
	}
	if n < min || n > max {
		return 0, fmt.Errorf("argument must be between %d and %d inclusive", min, max)
	}
	return n, nil
}

// parseMemory is Redis's memtoull: a number with an optional unit.
func parseMemory(v string) (int64, error) {
	s := strings.ToLower(v)
	mul := int64(1)
	for _, u := range []struct {
		suffix string
		mul    int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"b", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mul = strings.TrimSuffix(s, u.suffix), u.mul
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("invalid memory value")
	}
	if n > math.MaxInt64/mul {
		return 0, errors.New("memory value overflows")
	}
	return n * mul, nil
}

// LoadConfigFile reads a redis.conf-style file into cfg: one "name value"
// directive a line, "#" comments, arguments split like Redis's sdssplitargs
// (double quotes with \n \xHH escapes, single quotes). As in Redis, an
// unknown directive or a bad value is an error naming the line.
func LoadConfigFile(path string, cfg *Config) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		args, ok := splitArgs([]byte(line))
		if !ok {
			return fmt.Errorf("%s:%d: %q: unbalanced quotes in configuration line", path, lineNo, line)
		}
		if len(args) == 0 {
			continue
		}
		name := strings.ToLower(string(args[0]))
		p := lookupConfigParam(name)
		if p == nil {
			return fmt.Errorf("%s:%d: %q: Bad directive or wrong number of arguments", path, lineNo, line)
		}
		vals := make([]string, len(args)-1)
		for i, a := range args[1:] {
			vals[i] = string(a)
		}
		// "bind" takes several addresses; "save" may be given as
		// `save ""` or several "seconds changes" pairs; the rest take one.
		var value string
		switch {
		case name == "bind" || name == "save":
			value = strings.Join(vals, " ")
		case len(vals) == 1:
			value = vals[0]
		default:
			return fmt.Errorf("%s:%d: %q: Bad directive or wrong number of arguments", path, lineNo, line)
		}
		if err := p.set(cfg, value); err != nil {
			return fmt.Errorf("%s:%d: %q: %v", path, lineNo, line, err)
		}
	}
	return sc.Err()
}

// Set sets the directive name to value as a config file line would (the
// command line uses it for the flags named after directives). An unknown
// name or a bad value is an error naming the directive.
func (c *Config) Set(name, value string) error {
	p := lookupConfigParam(name)
	if p == nil {
		return fmt.Errorf("unknown directive %q", name)
	}
	if err := p.set(c, value); err != nil {
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

// ConfigDoc describes one directive: its name (the config file's, the
// flag's, CONFIG GET's), the default as text, what it changes, and whether
// it is a yes/no directive whose flag may stand alone.
type ConfigDoc struct {
	Name, Default, Help string
	YesNo               bool
}

// ConfigDocs describes every directive, sorted by name: the one table
// --help prints and the README's Configuration table mirrors.
func ConfigDocs() []ConfigDoc {
	def := DefaultConfig()
	out := make([]ConfigDoc, len(configParams))
	for i, p := range configParams {
		d := p.defText
		if d == "" {
			d = p.get(&def)
		}
		if d == "" {
			d = `""`
		}
		out[i] = ConfigDoc{Name: p.name, Default: d, Help: p.help, YesNo: p.yesNo}
	}
	return out
}

// EnvName is the environment variable that sets directive name:
// STREAMD_ and the name in upper case with "-" as "_" (STREAMD_METRICS_ADDR).
func EnvName(name string) string {
	return "STREAMD_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// LoadEnv sets every directive whose environment variable (EnvName) lookup
// finds, as a config file line would; an empty value counts (it clears
// metrics-addr, for one). A bad value is an error naming the variable.
func LoadEnv(cfg *Config, lookup func(string) (string, bool)) error {
	for _, p := range configParams {
		env := EnvName(p.name)
		v, ok := lookup(env)
		if !ok {
			continue
		}
		if err := p.set(cfg, v); err != nil {
			return fmt.Errorf("%s=%q: %v", env, v, err)
		}
	}
	return nil
}
