package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Directive is one row of the directive table: how to read the value, how
// to parse it, and how CONFIG SET may change it. The table is fixed at
// start-up; a Directive is never modified.
type Directive struct {
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
	// help is what the directive changes (streamd --help, README table).
	help string
	// defText, if set, is the default shown by --help instead of the
	// value Default holds (for defaults that depend on the data).
	defText string
	// yesNo marks a yes/no directive: its flag may stand alone (--name
	// means yes).
	yesNo bool
	// quoted values are strings CONFIG REWRITE always writes quoted, as
	// Redis writes its string directives (others only when they must be).
	quoted bool
	// memory values are sizes CONFIG REWRITE writes with Redis's units
	// (1gb, 8mb, 4kb).
	memory bool
}

// Name returns the directive's name, in lower case (the config file's, the
// flag's, CONFIG GET's).
func (p *Directive) Name() string { return p.name }

// Get returns the directive's value in cfg as CONFIG GET reports it.
func (p *Directive) Get(cfg *Config) string { return p.get(cfg) }

// Set parses value into cfg as a config file line would. Its error is
// Redis's reason text alone ("argument couldn't be parsed into an
// integer"), for the caller to frame.
func (p *Directive) Set(cfg *Config, value string) error { return p.set(cfg, value) }

// Immutable reports whether the directive is read at start-up only (the
// file, flags and environment): CONFIG SET refuses it.
func (p *Directive) Immutable() bool { return p.immutable }

// Replicated reports whether the directive changes what the replicated
// state machine does (stream-node-max-entries/bytes): its value lives in
// the replicated state, and CONFIG SET proposes it through the log (DESIGN
// §3) instead of setting it on one node.
func (p *Directive) Replicated() bool { return p.engine }

// doc sets p's help text and returns p (for the table's rows built by
// the helper constructors).
func (p *Directive) doc(help string) *Directive {
	p.help = help
	return p
}

// settable lets CONFIG SET change p (a helper constructor made it
// immutable), and returns p.
func (p *Directive) settable() *Directive {
	p.immutable = false
	return p
}

// quote marks p's value as a string CONFIG REWRITE writes quoted, and
// returns p.
func (p *Directive) quote() *Directive {
	p.quoted = true
	return p
}

// constParam is a directive streamd answers with a fixed value because the
// choice it offers in Redis does not exist here (no RDB save points: the
// shard snapshots by log size; the log is always on, so appendonly is
// yes): CONFIG GET reports the truth; a file or flag with another value is
// accepted with a warning, CONFIG SET refuses it (FixedValueError, with
// why) or, immutable, refuses any.
func constParam(name, value, why string) *Directive {
	p := fixedParam(name, value, why, nil)
	p.immutable = true
	return p
}

func intParam(name string, min, max int64, field func(*Config) *int, immutable bool) *Directive {
	return &Directive{
		name: name,
		get:  func(c *Config) string { return strconv.Itoa(*field(c)) },
		set: func(c *Config, v string) error {
			n, err := parseInt(v, min, max, false)
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
func boolParam(name string, field func(*Config) *bool) *Directive {
	return &Directive{
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
func addrParam(name string, field func(*Config) *string) *Directive {
	return &Directive{
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
		quoted:    true,
	}
}

// durationParam is an immutable positive duration: Go syntax ("1s",
// "500ms") or a bare number of milliseconds.
func durationParam(name string, field func(*Config) *time.Duration) *Directive {
	return &Directive{
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

// Values that mirror replication's (cmd/streamd's TestConfigMatchesReplication
// keeps them equal; config does not import replication).
const (
	// maxShards is replication.SlotCount: a shard holds at least one slot.
	maxShards = 16384
	// defaultLogStore is replication.DefaultLogStore, the store of a new
	// data directory.
	defaultLogStore = "wal"
)

// directives is every directive, sorted by name (CONFIG GET answers in
// this order; Redis's own order is its dict's, which no client relies on).
var directives = func() []*Directive {
	ps := []*Directive{
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
			doc("client TCP port (0 = off when a tls-port is set, else any free port; a cluster node needs a fixed one)"),
		{name: "dir", get: func(c *Config) string { return absPath(c.Dir) },
			set: func(c *Config, v string) error { c.Dir = v; return nil }, immutable: true, quoted: true,
			defText: Default().Dir, // get reports it absolute
			help:    "data directory: Raft log, snapshots, LOCK (shard N > 0 in dir/shard-N)"},
		{name: "requirepass", get: func(c *Config) string { return c.RequirePass },
			set: func(c *Config, v string) error { c.RequirePass = v; return nil }, quoted: true,
			help: `password of the default user ("" = no AUTH needed)`},
		intParam("maxclients", 1, math.MaxUint32, func(c *Config) *int { return &c.MaxClients }, false).
			doc("most client connections at once (more are refused; lowered at start-up to fit the open-file limit)"),
		boolParam("protected-mode", func(c *Config) *bool { return &c.ProtectedMode }).settable().
			doc("yes: with no password for the default user, refuse clients not on loopback (Redis's DENIED)"),
		{name: "maxmemory", get: func(c *Config) string { return strconv.FormatInt(c.MaxMemory, 10) },
			set: func(c *Config, v string) error {
				n, err := parseInt(v, 0, math.MaxInt64, true)
				if err != nil {
					return err
				}
				c.MaxMemory = n
				return nil
			}, memory: true,
			help: "memory limit in bytes (units: 1gb, 100mb...; 0 = none): over it (INFO used_memory), commands that add data " +
				"(XADD, XGROUP CREATE...) answer OOM, deletes and reads still run; the Go runtime's soft limit is set " +
				"to it plus 25% (at least 32mb)"},
		{name: "proto-max-bulk-len", get: func(c *Config) string { return strconv.FormatInt(c.ProtoMaxBulkLen, 10) },
			set: func(c *Config, v string) error {
				n, err := parseInt(v, 1<<20, math.MaxInt64, true)
				if err != nil {
					return err
				}
				c.ProtoMaxBulkLen = n
				return nil
			}, memory: true,
			help: "largest bulk string a client may send, in bytes (units: 1kb, 512mb...)"},
		{name: "stream-node-max-entries", get: func(c *Config) string { return strconv.Itoa(c.StreamNodeMaxEntries) },
			set: func(c *Config, v string) error {
				n, err := parseInt(v, 0, math.MaxInt64, false)
				if err != nil {
					return err
				}
				c.StreamNodeMaxEntries = int(n)
				return nil
			}, engine: true,
			help: "entries per stream node, which XADD/XTRIM's ~ trimming works in (0 = no limit)"},
		{name: "stream-node-max-bytes", get: func(c *Config) string { return strconv.Itoa(c.StreamNodeMaxBytes) },
			set: func(c *Config, v string) error {
				n, err := parseInt(v, 0, math.MaxInt64, true)
				if err != nil {
					return err
				}
				c.StreamNodeMaxBytes = int(n)
				return nil
			}, engine: true, memory: true,
			help: "bytes per stream node (0 = no limit)"},
		{name: "stream-idmp-duration", get: func(c *Config) string { return strconv.Itoa(c.StreamIDMPDuration) },
			set: func(c *Config, v string) error {
				n, err := parseInt(v, 1, 86400, false)
				if err != nil {
					return err
				}
				c.StreamIDMPDuration = int(n)
				return nil
			}, engine: true,
			help: "seconds a new stream remembers an XADD IDMP/IDMPAUTO idempotent ID (XCFGSET changes one stream's)"},
		{name: "stream-idmp-maxsize", get: func(c *Config) string { return strconv.Itoa(c.StreamIDMPMaxSize) },
			set: func(c *Config, v string) error {
				n, err := parseInt(v, 1, 10000, false)
				if err != nil {
					return err
				}
				c.StreamIDMPMaxSize = int(n)
				return nil
			}, engine: true,
			help: "idempotent IDs a new stream remembers per producer, oldest evicted first (XCFGSET changes one stream's)"},
		{name: "stream-default-acklevel", get: func(c *Config) string { return c.StreamDefaultAckLevel },
			set: func(c *Config, v string) error {
				switch l := strings.ToLower(v); l {
				case "quorum", "leader":
					c.StreamDefaultAckLevel = l
					return nil
				}
				return errors.New("argument(s) must be one of the following: quorum, leader")
			},
			help: "when an XADD to a stream without XCFGSET ACKLEVEL is answered: quorum (on a majority) or leader (durable in the leader's log)"},
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
		constParam("databases", "16", "16 logical databases").doc("fixed: 16 logical databases (SELECT 0-15)"),
		constParam("save", "", "snapshots are taken by log size, not save points").settable().quote().doc(`fixed: "" (snapshots are taken by log size, not save points)`),
		constParam("appendonly", "yes", "the Raft log is always on").settable().doc("fixed: yes (the Raft log is always on)"),
		{name: "appendfsync", get: func(c *Config) string { return c.AppendFsync },
			set: func(c *Config, v string) error {
				// "" reads as always (server.FsyncPolicy turns the value
				// into the shard's policy).
				switch l := strings.ToLower(v); l {
				case "always", "everysec", "":
					c.AppendFsync = l
					return nil
				}
				return errors.New("argument(s) must be one of the following: always, everysec")
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
			}, immutable: true, quoted: true,
			help: `this node's Raft ID ("" = single node, no cluster)`},
		addrParam("raft-addr", func(c *Config) *string { return &c.RaftAddr }).
			doc("host:port of the Raft port, listened on and advertised (only members get in: see cluster-secret, tls-cluster)"),
		{name: "cluster-secret", get: func(c *Config) string { return c.ClusterSecret },
			set: func(c *Config, v string) error { c.ClusterSecret = v; return nil }, immutable: true, quoted: true,
			help: `shared secret nodes prove on the raft port, never sent ("" = requirepass's, unless tls-cluster)`},
		{name: "cluster-secret-file", get: func(c *Config) string { return c.ClusterSecretFile },
			set: func(c *Config, v string) error { c.ClusterSecretFile = v; return nil }, immutable: true, quoted: true,
			help: "file whose content (trimmed) is cluster-secret; it must be readable and not empty"},
		boolParam("bootstrap", func(c *Config) *bool { return &c.Bootstrap }).
			doc("start a new cluster with this node as every shard's only voter"),
		addrParam("join", func(c *Config) *string { return &c.Join }).
			doc("client host:port of a member to join the cluster through (RAFT ADD); ignored once a member"),
		boolParam("join-tls", func(c *Config) *bool { return &c.JoinTLS }).
			doc("join is a TLS client port (tls-port): connect with tls-cert-file, verify it against the CA"),
		{name: "peers", get: func(c *Config) string { return c.Peers },
			set: func(c *Config, v string) error {
				if _, err := ParsePeers(v); err != nil {
					return err
				}
				c.Peers = strings.TrimSpace(v)
				return nil
			}, immutable: true, quoted: true,
			help: "static members id=host:port,... (Raft addresses, this node included) to bootstrap with"},
		intParam("shards", 1, maxShards, func(c *Config) *int { return &c.Shards }, true).
			doc("Raft groups the 16384 slots are split into (a data directory keeps its count)"),
		durationParam("raft-heartbeat-timeout", func(c *Config) *time.Duration { return &c.RaftHeartbeatTimeout }).
			doc("Raft heartbeat timeout (500ms, 2s; a bare number is milliseconds)"),
		durationParam("raft-election-timeout", func(c *Config) *time.Duration { return &c.RaftElectionTimeout }).
			doc("Raft election timeout"),
		durationParam("raft-lease-timeout", func(c *Config) *time.Duration { return &c.RaftLeaseTimeout }).
			doc("Raft leader lease"),
		durationParam("quorum-timeout", func(c *Config) *time.Duration { return &c.QuorumTimeout }).
			doc(`how long a write waits for a majority before "ERR outcome unknown"`),
		{name: "transfer-hold-timeout", get: func(c *Config) string { return c.TransferHoldTimeout.String() },
			set: func(c *Config, v string) error {
				if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n == 0 {
					c.TransferHoldTimeout = 0
					return nil
				}
				d, err := parseDuration(v)
				if err != nil {
					return errors.New("argument must be a duration such as 500ms or 2s (a bare number is milliseconds; 0 = no hold)")
				}
				c.TransferHoldTimeout = d
				return nil
			},
			help: `how long a write made during a leadership transfer waits for the new leader before "TRYAGAIN" (0 = no wait)`},
		boolParam("balance-leaders", func(c *Config) *bool { return &c.BalanceLeaders }).
			doc("spread shard leadership over the voters"),
		{name: "log-store", get: func(c *Config) string { return c.LogStore },
			set: func(c *Config, v string) error {
				// As replication.ParseLogStore: "" is the default store.
				switch ls := strings.ToLower(v); ls {
				case "":
					c.LogStore = defaultLogStore
					return nil
				case "wal", "bolt":
					c.LogStore = ls
					return nil
				}
				return errors.New("argument(s) must be one of the following: wal, bolt")
			},
			immutable: true, defText: "what dir holds, else wal",
			help: "log store: wal (dir/wal/, one fsync per write) or bolt (dir/raft.db, two)"},
		{name: "snapshot-log-size", get: func(c *Config) string { return strconv.FormatInt(c.SnapshotLogSize, 10) },
			set: func(c *Config, v string) error {
				n, err := parseInt(v, 0, math.MaxInt64, true)
				if err != nil {
					return err
				}
				c.SnapshotLogSize = n
				return nil
			}, immutable: true, memory: true,
			help: "snapshot a shard once this many bytes were logged since its last snapshot (0 = by entry count only; units: 64mb)"},
		{name: "metrics-addr", get: func(c *Config) string { return c.MetricsAddr },
			set:       func(c *Config, v string) error { c.MetricsAddr = strings.TrimSpace(v); return nil },
			immutable: true, quoted: true,
			help: `HTTP address of /metrics, /healthz and /readyz ("" = off); the default, if taken, is skipped with a warning`},
		intParam("metrics-max-streams", 0, math.MaxInt32, func(c *Config) *int { return &c.MetricsMaxStreams }, false).
			doc("how many streams (the longest) /metrics reports per-stream series for"),
		{name: "slowlog-log-slower-than", get: func(c *Config) string { return strconv.FormatInt(c.SlowlogLogSlowerThan, 10) },
			set: func(c *Config, v string) error {
				n, err := parseInt(v, -1, math.MaxInt64, false)
				if err != nil {
					return err
				}
				c.SlowlogLogSlowerThan = n
				return nil
			},
			help: "SLOWLOG commands taking at least this many microseconds (0 = all, -1 = none)"},
		intParam("slowlog-max-len", 0, math.MaxInt64, func(c *Config) *int { return &c.SlowlogMaxLen }, false).
			doc("entries the SLOWLOG keeps"),
		boolParam("event-loop", func(c *Config) *bool { return &c.EventLoop }).
			doc("serve plain TCP clients from one epoll event loop while their commands cannot block (Linux): a single node's writes, a cluster node's forwarded writes; others get a goroutine each"),
		boolParam("latency-tracking", func(c *Config) *bool { return &c.LatencyTracking }).settable().
			doc("keep per-command latency histograms for INFO latencystats"),
		{name: "latency-tracking-info-percentiles", get: func(c *Config) string { return c.LatencyTrackingInfoPercentiles },
			set: func(c *Config, v string) error {
				ps, err := parsePercentiles(v)
				if err != nil {
					return err
				}
				c.LatencyTrackingInfoPercentiles = formatPercentiles(ps)
				return nil
			},
			help: `the percentiles INFO latencystats reports, space-separated ("" = none)`},
		{name: "latency-monitor-threshold", get: func(c *Config) string { return strconv.FormatInt(c.LatencyMonitorThreshold, 10) },
			set: func(c *Config, v string) error {
				n, err := parseInt(v, 0, math.MaxInt64, false)
				if err != nil {
					return err
				}
				c.LatencyMonitorThreshold = n
				return nil
			},
			help: "LATENCY records commands taking at least this many milliseconds (0 = off)"},
		{name: "aclfile", get: func(c *Config) string { return c.ACLFile },
			set: func(c *Config, v string) error { c.ACLFile = v; return nil }, immutable: true, quoted: true,
			help: `file of ACL users (ACL LOAD/SAVE; loaded at start-up; not with "user" lines)`},
		intParam("acllog-max-len", 0, math.MaxInt64, func(c *Config) *int { return &c.ACLLogMaxLen }, false).
			doc("entries ACL LOG keeps"),
	}
	ps = append(ps, tlsDirectives()...)
	ps = append(ps, fixedDirectives()...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].name < ps[j].name })
	return ps
}()

// Directives returns every directive, sorted by name (the order of CONFIG
// GET's reply, --help and the README's table).
func Directives() []*Directive { return slices.Clone(directives) }

// Lookup finds a directive by its (case-insensitive) name; nil if there is
// none.
func Lookup(name string) *Directive {
	name = strings.ToLower(name)
	i := sort.Search(len(directives), func(i int) bool { return directives[i].name >= name })
	if i < len(directives) && directives[i].name == name {
		return directives[i]
	}
	return nil
}

// parseInt parses a numeric directive the way Redis's config.c does:
// an integer, or with memory units (1k = 1000, 1kb = 1024, m/mb, g/gb) when
// memory is set, checked against [min, max] with Redis's messages.
func parseInt(v string, min, max int64, memory bool) (int64, error) {
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

// parsePercentiles reads latency-tracking-info-percentiles as Redis does:
// space-separated numbers between 0 and 100 (none is allowed).
func parsePercentiles(v string) ([]float64, error) {
	ps := []float64{}
	for _, f := range strings.Fields(v) {
		p, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(p) {
			return nil, errors.New("Invalid latency-tracking-info-percentiles parameters")
		}
		if p < 0 || p > 100 {
			return nil, errors.New("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// LatencyPercentiles are latency-tracking-info-percentiles' numbers.
func (c *Config) LatencyPercentiles() []float64 {
	ps, _ := parsePercentiles(c.LatencyTrackingInfoPercentiles)
	return ps
}

// formatPercentiles writes percentiles as Redis's CONFIG GET does ("%f"
// without trailing zeros, space-separated).
func formatPercentiles(ps []float64) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		s := strings.TrimRight(strconv.FormatFloat(p, 'f', 6, 64), "0")
		out[i] = strings.TrimSuffix(s, ".")
	}
	return strings.Join(out, " ")
}
