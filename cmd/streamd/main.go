// Command streamd is a Redis-protocol server for Redis Streams.
//
//	streamd [config-file] [--name value ...]
//	streamd --help
//	streamd --version
//
// Every directive (config.Docs; --help prints them with their
// defaults) is a config file line, a flag of the same name and a
// STREAMD_<NAME> environment variable; a flag wins over the environment,
// which wins over the file, which wins over the default.
//
// The config file uses redis.conf syntax and Redis's directive names. The
// data (Raft log, snapshots, LOCK) lives in dir; if it cannot be loaded the
// process says which file is wrong and exits 1, never starting empty. Prometheus metrics, /healthz and /readyz are served over
// HTTP on metrics-addr ("" turns them off; the default address, when taken,
// is skipped with a warning). SIGINT, SIGTERM or SHUTDOWN stop
// accepting, answer or fail what is in flight, snapshot (not after SHUTDOWN
// NOSAVE) and exit 0.
//
// Without --node-id the server is a single node (no network besides the
// client port). With --node-id and --raft-addr it is a member of a Raft
// cluster: --bootstrap starts a new cluster, --join asks a member (its client
// port) to add this node, --peers bootstraps every node with a static list;
// a restarted member needs none of them. Every connection to the raft port
// proves it comes from a member (tls-cluster, cluster-secret, or
// requirepass: see clusterauth.go and package mux); a node whose raft
// address is not loopback refuses to start without any of them.
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
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"streamd/config"
	"streamd/internal/mux"
	"streamd/replication"
	"streamd/server"
)

func main() {
	err := run(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		if err := writeHelp(os.Stdout); err != nil {
			os.Exit(1)
		}
		return
	}
	if errors.Is(err, config.ErrVersion) {
		fmt.Println(versionLine())
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "streamd:", err)
		os.Exit(1)
	}
}

// parseArgs builds the configuration from args and the process's
// environment (config.Load: defaults, config file, STREAMD_* variables,
// flags). -h/--help returns flag.ErrHelp, -v/--version config.ErrVersion.
func parseArgs(args []string) (config.Config, error) { return config.Load(args, os.LookupEnv) }

// listen binds every address of cfg.Bind; an address with a leading "-" is
// optional, as in Redis.
func listen(cfg config.Config, log *slog.Logger) ([]net.Listener, error) {
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
	fsync, err := server.FsyncPolicy(cfg.AppendFsync)
	if err != nil {
		return fmt.Errorf("appendfsync %q: %v", cfg.AppendFsync, err)
	}
	level := new(slog.LevelVar)
	cfg.LogLevelVar = level
	log := config.NewLogger(cfg, logOut, level)
	log.Info("streamd starting", "pid", os.Getpid(), "config-file", cfg.ConfigFile,
		"loglevel", cfg.LogLevel, "log-format", cfg.LogFormat)
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	// As Redis at start-up: raise the open-file limit for maxclients, or
	// lower maxclients to fit it (CONFIG GET then shows the lower value).
	if cfg.MaxClients, err = server.FitMaxClients(cfg.MaxClients, log); err != nil {
		return err
	}
	if cfg.LogStore != "" {
		if _, err := replication.ParseLogStore(cfg.LogStore); err != nil {
			return fmt.Errorf("log-store: %v", err)
		}
	}
	tlsLoader, err := loadTLS(cfg)
	if err != nil {
		return err
	}
	opts, err := nodeOptions(cfg, fsync, log)
	if err != nil {
		return err
	}
	if opts.RaftAuth, err = raftAuth(cfg, log, tlsLoader); err != nil {
		return err
	}
	// Every port is bound before anything is created on disk: a busy port
	// stops the start-up naming the setting, leaving no data directory.
	lns, tlsLns, metricsLn, err := bindPorts(cfg, &opts, log)
	if err != nil {
		return err
	}
	closeListeners := func() {
		for _, ln := range append(lns, tlsLns...) {
			ln.Close()
		}
		if metricsLn != nil {
			metricsLn.Close()
		}
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		closeListeners()
		if opts.RaftListener != nil {
			opts.RaftListener.Close()
		}
		return fmt.Errorf("dir: %w", err)
	}
	start := time.Now()
	logStartup(log, cfg)
	node, err := replication.OpenNode(opts)
	if err != nil {
		closeListeners()
		// The error names the file and what is wrong with it; starting
		// empty instead would silently lose acknowledged writes.
		log.Error("can't load the data directory, exiting", "dir", cfg.Dir, "err", err)
		return err
	}
	logStore := node.Shard(0).LogStore()
	log.Info(fmt.Sprintf("DB loaded from disk: %.3f seconds", time.Since(start).Seconds()),
		"dir", cfg.Dir, "appendfsync", cfg.AppendFsync, "log-store", logStore, "shards", node.NumShards())
	logShards(log, node)
	if node.Clustered() {
		log.Info("Raft port listening", "raft-addr", node.RaftAddr(), "node-id", node.ID(),
			"advertised-client-addr", node.ClientAddr(), "auth", node.Mux().Mode().String())
	}
	cfg.LogStore = logStore
	srv := server.NewNode(cfg, node, log)
	srv.SetTLS(tlsLoader)
	srv.SetListen(func(port int) ([]net.Listener, error) {
		c := cfg
		c.Port = port
		return listen(c, log)
	})
	if err := srv.CheckACLConfig(); err != nil {
		// A bad "user" line or aclfile: Redis refuses to start too.
		log.Error("bad ACL configuration, exiting", "err", err)
		srv.Close()
		closeListeners()
		node.Close(false)
		return err
	}
	if m := node.Mux(); m != nil {
		// Commands other nodes forward to this one arrive on the raft port.
		m.HandleDetached(mux.KindRESP, srv.ServeInternal)
	}
	// Signals are caught before anything is served: a SIGTERM sent as
	// soon as PING answers shuts down gracefully, it does not kill.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	metrics := startMetrics(metricsLn, srv, log)
	errc := make(chan error, len(lns)+len(tlsLns))
	for _, ln := range lns {
		go func() { errc <- srv.Serve(ln) }()
	}
	for _, ln := range tlsLns {
		go func() { errc <- srv.ServeTLS(ln) }()
	}
	// "Ready to accept connections" means the node serves: at once for a
	// single node; for a cluster member once it has joined (when asked to)
	// and every shard has a leader (until then keys answer CLUSTERDOWN).
	ready := func() {
		for _, ln := range lns {
			log.Info("Ready to accept connections", "addr", ln.Addr().String())
		}
		for _, ln := range tlsLns {
			log.Info("Ready to accept TLS connections", "addr", ln.Addr().String(), "tls-auth-clients", cfg.TLSAuthClients)
		}
	}
	// A clustered node joins (when asked to) and reports its role per shard
	// once every shard has a leader; the server answers meanwhile (keys of
	// a shard without a leader get CLUSTERDOWN).
	joined := make(chan error, 1)
	stopJoin := make(chan struct{})
	if node.Clustered() {
		for _, ln := range append(lns, tlsLns...) {
			log.Info("Accepting connections; the node is not ready until it is in the cluster and every shard has a leader",
				"addr", ln.Addr().String())
		}
		go func() { joined <- startCluster(cfg, node, log, stopJoin) }()
	} else {
		ready()
		log.Info("Single node ready", "node-id", node.ID(), "roles", shardRoles(node))
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
			if serveErr == nil {
				continue // a TLS port closed by CONFIG SET tls-port
			}
			log.Error("accept failed, shutting down", "err", serveErr)
			done = true
		case err := <-joined:
			joined = nil // returned: nothing to wait for at shutdown
			if err != nil {
				log.Error("joining the cluster failed, shutting down", "join", cfg.Join, "err", err)
				serveErr, done = err, true
			} else {
				ready()
			}
		}
	}
	close(stopJoin) // before the node closes under the join's feet
	if node.Clustered() && joined != nil {
		<-joined // it logs nothing after the bye-bye line
	}
	stopMetrics(metrics, log)
	return shutdown(log, srv, node, save, serveErr)
}

// logStartup says, before the data directory is opened (which may take a
// while: see the replay progress lines), where the data lives and how it is
// kept: the directory, the log store asked for, the fsync policy, the shard
// count, and for a cluster member its id and raft address.
func logStartup(log *slog.Logger, cfg config.Config) {
	dir := cfg.Dir
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	store := cfg.LogStore
	if store == "" {
		store = "auto (what dir holds, else " + replication.DefaultLogStore + ")"
	}
	args := []any{"dir", dir, "log-store", store, "appendfsync", cfg.AppendFsync, "shards", cfg.Shards}
	if cfg.NodeID != "" {
		args = append(args, "node-id", cfg.NodeID, "raft-addr", cfg.RaftAddr)
	}
	log.Info("Opening the data directory", args...)
}

// logShards says where each shard keeps its log and snapshots (one line a
// shard, or for many shards the first and the layout of the rest).
func logShards(log *slog.Logger, node *replication.Node) {
	const each = 8
	for i := range node.NumShards() {
		if i == each {
			log.Info("Shard data", "shards", fmt.Sprintf("%d-%d", each, node.NumShards()-1),
				"dir", filepath.Join(node.Shard(0).Dir(), "shard-<i>"))
			break
		}
		sh := node.Shard(i)
		log.Info("Shard data", "shard", i, "dir", sh.Dir(), "log", sh.StorePath(),
			"snapshots", filepath.Join(sh.Dir(), "snapshots"))
	}
}

// shardRoles is this node's Raft role per shard, "shard0=leader
// shard1=follower(leader n2) ...".
func shardRoles(node *replication.Node) string {
	roles := make([]string, node.NumShards())
	for i := range roles {
		id, _ := node.Leader(i)
		if id == node.ID() {
			roles[i] = "shard" + strconv.Itoa(i) + "=leader"
		} else {
			roles[i] = "shard" + strconv.Itoa(i) + "=follower(leader " + id + ")"
		}
	}
	return strings.Join(roles, " ")
}

// nodeOptions maps the configuration onto replication.NodeOptions: a
// single node (no network) without node-id, else a cluster member whose
// client address is the first bind address (the raft address's host when
// that is a wildcard) and port.
func nodeOptions(cfg config.Config, fsync replication.FsyncPolicy, log *slog.Logger) (replication.NodeOptions, error) {
	o := replication.NodeOptions{
		Dir: cfg.Dir, Shards: cfg.Shards, Fsync: fsync, LogStore: cfg.LogStore, Logger: log,
		SnapshotLogSize: cfg.SnapshotLogSize,
	}
	if o.SnapshotLogSize == 0 {
		o.SnapshotLogSize = -1 // snapshot-log-size 0: by entry count only
	}
	if cfg.NodeID == "" {
		return o, nil
	}
	if clientPort(cfg) == 0 {
		return o, errors.New("a cluster node needs a fixed port (it is advertised to clients and members)")
	}
	o.NodeID, o.RaftAddr = cfg.NodeID, cfg.RaftAddr
	o.ClientAddr = clientAddr(cfg)
	o.Bootstrap = cfg.Bootstrap
	peers, err := config.ParsePeers(cfg.Peers)
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
func clientAddr(cfg config.Config) string {
	host := ""
	if f := strings.Fields(cfg.Bind); len(f) > 0 {
		host = strings.TrimPrefix(f[0], "-")
	}
	if host == "" || host == "*" || host == "0.0.0.0" || host == "::" || host == "::*" {
		host, _, _ = net.SplitHostPort(cfg.RaftAddr)
	}
	return net.JoinHostPort(host, strconv.Itoa(clientPort(cfg)))
}

// metricsShutdownGrace bounds how long a scrape in progress may take to
// finish at shutdown.
const metricsShutdownGrace = 2 * time.Second

// startMetrics serves srv.MetricsHandler on ln (bound by bindPorts; nil
// when metrics are off: it returns nil).
func startMetrics(ln net.Listener, srv *server.Server, log *slog.Logger) *http.Server {
	if ln == nil {
		return nil
	}
	hs := &http.Server{Handler: srv.MetricsHandler(), ReadHeaderTimeout: 10 * time.Second}
	log.Info("Serving metrics", "addr", ln.Addr().String(), "endpoints", "/metrics /healthz /readyz")
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server failed", "err", err)
		}
	}()
	return hs
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
