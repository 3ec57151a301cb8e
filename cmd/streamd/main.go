// Command streamd is a Redis-protocol server for Redis Streams.
//
//	streamd [config-file] [--port 6379] [--bind 127.0.0.1] [--dir ./data] [--requirepass PASS]
//	        [--appendfsync always|everysec] [--log-store wal|bolt] [--metrics-addr 127.0.0.1:9121]
//	        [--shards 1] [--node-id ID --raft-addr HOST:PORT [--bootstrap | --join HOST:PORT | --peers ID=HOST:PORT,...]]
//	        [--cluster-enabled yes|no] [--raft-heartbeat-timeout 1s] [--raft-election-timeout 1s]
//	        [--raft-lease-timeout 500ms] [--quorum-timeout 5s] [--balance-leaders yes|no]
//
// The config file uses redis.conf syntax and Redis's directive names; flags
// override it. The data (Raft log, snapshots, LOCK) lives in dir; if it
// cannot be loaded the process says which file is wrong and exits 1, never
// starting empty. Prometheus metrics, /healthz and /readyz are served over
// HTTP on metrics-addr ("" turns them off). SIGINT, SIGTERM or SHUTDOWN stop
// accepting, answer or fail what is in flight, snapshot (not after SHUTDOWN
// NOSAVE) and exit 0.
//
// Without --node-id the server is a single node (no network besides the
// client port). With --node-id and --raft-addr it is a member of a Raft
// cluster: --bootstrap starts a new cluster, --join asks a member (its client
// port) to add this node, --peers bootstraps every node with a static list;
// a restarted member needs none of them. The raft port is trusted (internal
// commands skip AUTH): never expose it outside the cluster's network.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"streamd/replication"
	"streamd/server"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "streamd:", err)
		os.Exit(1)
	}
}

// parseArgs builds the configuration: defaults, then the optional config
// file (first positional argument), then the flags that were given.
func parseArgs(args []string) (server.Config, error) {
	cfg := server.DefaultConfig()
	fs := flag.NewFlagSet("streamd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	port := fs.Int("port", cfg.Port, "TCP port")
	bind := fs.String("bind", cfg.Bind, "addresses to listen on (space-separated)")
	dir := fs.String("dir", cfg.Dir, "working directory")
	pass := fs.String("requirepass", "", "password of the default user")
	fsync := fs.String("appendfsync", cfg.AppendFsync, "always (fsync before each reply) or everysec")
	logStore := fs.String("log-store", cfg.LogStore, "wal or bolt (default: what dir holds, else wal)")
	metricsAddr := fs.String("metrics-addr", cfg.MetricsAddr, "HTTP address for /metrics, /healthz, /readyz (\"\" = off)")
	// Cluster flags are named after their directives and parsed by
	// Config.Set, so the file and the command line accept the same values.
	directives := map[string]*string{}
	for _, d := range clusterFlags {
		directives[d.name] = new(string)
		if d.bool {
			fs.Var(yesNoFlag{directives[d.name]}, d.name, d.usage)
		} else {
			fs.StringVar(directives[d.name], d.name, "", d.usage)
		}
	}
	// Go's flag package stops at the first positional argument; allow the
	// config file first, as "streamd redis.conf --port 7000".
	var file string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, args = args[0], args[1:]
	}
	if err := fs.Parse(joinYesNo(args)); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if file != "" {
		if err := server.LoadConfigFile(file, &cfg); err != nil {
			return cfg, err
		}
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "port":
			cfg.Port = *port
		case "bind":
			cfg.Bind = *bind
		case "dir":
			cfg.Dir = *dir
		case "requirepass":
			cfg.RequirePass = *pass
		case "appendfsync":
			cfg.AppendFsync = *fsync
		case "log-store":
			cfg.LogStore = *logStore
		case "metrics-addr":
			cfg.MetricsAddr = strings.TrimSpace(*metricsAddr)
		default:
			if v, ok := directives[f.Name]; ok && err == nil {
				err = cfg.Set(f.Name, *v)
			}
		}
	})
	if err != nil {
		return cfg, err
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return cfg, fmt.Errorf("port %d out of range", cfg.Port)
	}
	if err := cfg.CheckCluster(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// clusterFlags are the cluster directives offered as flags.
var clusterFlags = []struct {
	name, usage string
	bool        bool // --name alone means yes
}{
	{"node-id", "this node's Raft ID (empty: single node, no cluster)", false},
	{"raft-addr", "host:port of the Raft port (listen and advertise; trusted, keep it private)", false},
	{"bootstrap", "start a new cluster with this node as the only voter", true},
	{"join", "client host:port of a member to join through (RAFT ADD)", false},
	{"peers", "static members id=host:port,... (raft addresses, this node included)", false},
	{"shards", "number of Raft groups the 16384 slots are split into (default 1)", false},
	{"cluster-enabled", "yes: answer MOVED and serve CLUSTER SLOTS/SHARDS/NODES (no: forward to the leader)", true},
	{"raft-heartbeat-timeout", "Raft heartbeat timeout (default 1s)", false},
	{"raft-election-timeout", "Raft election timeout (default 1s)", false},
	{"raft-lease-timeout", "Raft leader lease (default 500ms)", false},
	{"quorum-timeout", "how long a write waits for a majority before 'outcome unknown' (default 5s)", false},
	{"balance-leaders", "spread shard leadership over the voters (default yes)", true},
}

// yesNoFlag is a flag that may stand alone (--bootstrap = yes) or take
// yes/no (joinYesNo turns "--bootstrap no" into "--bootstrap=no").
type yesNoFlag struct{ v *string }

func (f yesNoFlag) String() string {
	if f.v == nil {
		return ""
	}
	return *f.v
}

func (f yesNoFlag) Set(s string) error {
	switch strings.ToLower(s) {
	case "true", "yes", "1":
		*f.v = "yes"
	case "false", "no", "0":
		*f.v = "no"
	default:
		return fmt.Errorf("want yes or no, not %q", s)
	}
	return nil
}

func (f yesNoFlag) IsBoolFlag() bool { return true }

// joinYesNo rewrites "--flag yes" / "--flag no" for the yes/no flags into
// "--flag=yes", Redis's command-line style, which Go's flag package would
// otherwise read as a bare flag followed by a stray argument.
func joinYesNo(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		if strings.HasPrefix(a, "-") && !strings.Contains(name, "=") && i+1 < len(args) {
			for _, d := range clusterFlags {
				next := strings.ToLower(args[i+1])
				if d.bool && d.name == name && (next == "yes" || next == "no") {
					a = a + "=" + next
					i++
					break
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// slogLevel maps Redis's loglevel names.
func slogLevel(l string) slog.Level {
	switch l {
	case "debug", "verbose":
		return slog.LevelDebug
	case "warning":
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// listen binds every address of cfg.Bind; an address with a leading "-" is
// optional, as in Redis.
func listen(cfg server.Config, log *slog.Logger) ([]net.Listener, error) {
	var lns []net.Listener
	for _, a := range strings.Fields(cfg.Bind) {
		optional := strings.HasPrefix(a, "-")
		a = strings.TrimPrefix(a, "-")
		if a == "*" {
			a = ""
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(a, strconv.Itoa(cfg.Port)))
		if err != nil {
			if optional {
				log.Warn("skipping optional bind address", "addr", a, "err", err)
				continue
			}
			for _, l := range lns {
				l.Close()
			}
			return nil, err
		}
		lns = append(lns, ln)
	}
	if len(lns) == 0 {
		return nil, errors.New("no address to listen on")
	}
	return lns, nil
}

func run(args []string, logOut io.Writer) error {
	cfg, err := parseArgs(args)
	if err != nil {
		return err
	}
	fsync, err := cfg.FsyncPolicy()
	if err != nil {
		return fmt.Errorf("appendfsync %q: %v", cfg.AppendFsync, err)
	}
	log := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slogLevel(cfg.LogLevel)}))
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("dir: %w", err)
	}
	start := time.Now()
	if cfg.LogStore != "" {
		if _, err := replication.ParseLogStore(cfg.LogStore); err != nil {
			return fmt.Errorf("log-store: %v", err)
		}
	}
	opts, err := nodeOptions(cfg, fsync, log)
	if err != nil {
		return err
	}
	node, err := replication.OpenNode(opts)
	if err != nil {
		// The error names the file and what is wrong with it; starting
		// empty instead would silently lose acknowledged writes.
		log.Error("can't load the data directory, exiting", "dir", cfg.Dir, "err", err)
		return err
	}
	logStore := node.Shard(0).LogStore()
	log.Info(fmt.Sprintf("DB loaded from disk: %.3f seconds", time.Since(start).Seconds()),
		"dir", cfg.Dir, "appendfsync", cfg.AppendFsync, "log-store", logStore, "shards", node.NumShards())
	cfg.LogStore = logStore
	lns, err := listen(cfg, log)
	if err != nil {
		node.Close(false)
		return err
	}
	srv := server.NewNode(cfg, node, log)
	metrics, err := startMetrics(cfg.MetricsAddr, srv, log)
	if err != nil {
		for _, ln := range lns {
			ln.Close()
		}
		node.Close(false)
		return fmt.Errorf("metrics-addr: %w", err)
	}
	errc := make(chan error, len(lns))
	for _, ln := range lns {
		log.Info("Ready to accept connections", "addr", ln.Addr().String())
		go func() { errc <- srv.Serve(ln) }()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	// A clustered node joins (when asked to) and reports its role per shard
	// once every shard has a leader; the server answers meanwhile (keys of
	// a shard without a leader get CLUSTERDOWN).
	joined := make(chan error, 1)
	stopJoin := make(chan struct{})
	defer close(stopJoin)
	if node.Clustered() {
		go func() { joined <- startCluster(cfg, node, log, stopJoin) }()
	}
	save, serveErr := true, error(nil)
	for done := false; !done; {
		select {
		case s := <-sig:
			log.Info("Received " + s.String() + ", scheduling shutdown...")
			done = true
		case <-srv.Done():
			save = srv.ShutdownSave()
			done = true
		case serveErr = <-errc:
			log.Error("accept failed, shutting down", "err", serveErr)
			done = true
		case err := <-joined:
			if err != nil {
				log.Error("joining the cluster failed, shutting down", "join", cfg.Join, "err", err)
				serveErr, done = err, true
			}
		}
	}
	stopMetrics(metrics, log)
	return shutdown(log, srv, node, save, serveErr)
}

// nodeOptions maps the configuration onto replication.NodeOptions: a
// single node (no network) without node-id, else a cluster member whose
// client address is the first bind address (the raft address's host when
// that is a wildcard) and port.
func nodeOptions(cfg server.Config, fsync replication.FsyncPolicy, log *slog.Logger) (replication.NodeOptions, error) {
	o := replication.NodeOptions{
		Dir: cfg.Dir, Shards: cfg.Shards, Fsync: fsync, LogStore: cfg.LogStore, Logger: log,
	}
	if cfg.NodeID == "" {
		return o, nil
	}
	if cfg.Port == 0 {
		return o, errors.New("a cluster node needs a fixed port (it is advertised to clients and members)")
	}
	o.NodeID, o.RaftAddr = cfg.NodeID, cfg.RaftAddr
	o.ClientAddr = clientAddr(cfg)
	o.Bootstrap = cfg.Bootstrap
	peers, err := server.ParsePeers(cfg.Peers)
	if err != nil {
		return o, fmt.Errorf("peers: %v", err)
	}
	for _, p := range peers {
		o.Peers = append(o.Peers, replication.Member{ID: p.ID, RaftAddr: p.RaftAddr, Voter: true})
	}
	o.Timing = replication.Timing{
		Heartbeat: cfg.RaftHeartbeatTimeout, Election: cfg.RaftElectionTimeout, LeaderLease: cfg.RaftLeaseTimeout,
	}
	o.QuorumTimeout = cfg.QuorumTimeout
	o.Balance = cfg.BalanceLeaders
	return o, nil
}

// clientAddr is the client host:port this node advertises (MOVED, CLUSTER
// SLOTS): the first bind address, or the raft address's host when that is
// a wildcard (*, 0.0.0.0, ::).
func clientAddr(cfg server.Config) string {
	host := ""
	if f := strings.Fields(cfg.Bind); len(f) > 0 {
		host = strings.TrimPrefix(f[0], "-")
	}
	if host == "" || host == "*" || host == "0.0.0.0" || host == "::" || host == "::*" {
		host, _, _ = net.SplitHostPort(cfg.RaftAddr)
	}
	return net.JoinHostPort(host, strconv.Itoa(cfg.Port))
}

// metricsShutdownGrace bounds how long a scrape in progress may take to
// finish at shutdown.
const metricsShutdownGrace = 2 * time.Second

// startMetrics serves srv.MetricsHandler on addr (nil, nil when addr is
// empty). The address is bound before it returns, so a bad or busy address
// fails the start-up.
func startMetrics(addr string, srv *server.Server, log *slog.Logger) (*http.Server, error) {
	if addr == "" {
		log.Info("Metrics endpoint off (metrics-addr is empty)")
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: srv.MetricsHandler(), ReadHeaderTimeout: 10 * time.Second}
	log.Info("Serving metrics", "addr", ln.Addr().String(), "endpoints", "/metrics /healthz /readyz")
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server failed", "err", err)
		}
	}()
	return hs, nil
}

// stopMetrics shuts the metrics server down (a no-op for nil), letting a
// scrape in progress finish for at most metricsShutdownGrace.
func stopMetrics(hs *http.Server, log *slog.Logger) {
	if hs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), metricsShutdownGrace)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		log.Warn("metrics server shutdown", "err", err)
		hs.Close()
	}
}

// shutdown stops the server (no new connections or commands; what is in
// flight is answered or failed), then closes the node's shards,
// snapshotting them first when save is set.
func shutdown(log *slog.Logger, srv *server.Server, node *replication.Node, save bool, serveErr error) error {
	srv.Close()
	if save {
		log.Info("Saving the final snapshot before exiting.")
	}
	if err := node.Close(save); err != nil {
		log.Error("closing the data directory failed", "err", err)
		return errors.Join(serveErr, err)
	}
	if save {
		log.Info("DB saved on disk")
	}
	log.Info("streamd is now ready to exit, bye bye...")
	return serveErr
}
