// Command streamd is a Redis-protocol server for Redis Streams.
//
//	streamd [config-file] [--port 6379] [--bind 127.0.0.1] [--dir ./data] [--requirepass PASS]
//	        [--appendfsync always|everysec] [--log-store wal|bolt] [--metrics-addr 127.0.0.1:9121]
//
// The config file uses redis.conf syntax and Redis's directive names; flags
// override it. The data (Raft log, snapshots, LOCK) lives in dir; if it
// cannot be loaded the process says which file is wrong and exits 1, never
// starting empty. Prometheus metrics, /healthz and /readyz are served over
// HTTP on metrics-addr ("" turns them off). SIGINT, SIGTERM or SHUTDOWN stop
// accepting, answer or fail what is in flight, snapshot (not after SHUTDOWN
// NOSAVE) and exit 0.
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
	// Go's flag package stops at the first positional argument; allow the
	// config file first, as "streamd redis.conf --port 7000".
	var file string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
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
		}
	})
	if cfg.Port < 0 || cfg.Port > 65535 {
		return cfg, fmt.Errorf("port %d out of range", cfg.Port)
	}
	return cfg, nil
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
	shard, err := replication.Open(replication.Options{Dir: cfg.Dir, Fsync: fsync, LogStore: cfg.LogStore, Logger: log})
	if err != nil {
		// The error names the file and what is wrong with it; starting
		// empty instead would silently lose acknowledged writes.
		log.Error("can't load the data directory, exiting", "dir", cfg.Dir, "err", err)
		return err
	}
	log.Info(fmt.Sprintf("DB loaded from disk: %.3f seconds", time.Since(start).Seconds()),
		"dir", cfg.Dir, "appendfsync", cfg.AppendFsync, "log-store", shard.LogStore())
	cfg.LogStore = shard.LogStore()
	lns, err := listen(cfg, log)
	if err != nil {
		shard.Close(false)
		return err
	}
	srv := server.New(cfg, shard, log)
	metrics, err := startMetrics(cfg.MetricsAddr, srv, log)
	if err != nil {
		for _, ln := range lns {
			ln.Close()
		}
		shard.Close(false)
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
	save, serveErr := true, error(nil)
	select {
	case s := <-sig:
		log.Info("Received " + s.String() + ", scheduling shutdown...")
	case <-srv.Done():
		save = srv.ShutdownSave()
	case serveErr = <-errc:
		log.Error("accept failed, shutting down", "err", serveErr)
	}
	stopMetrics(metrics, log)
	return shutdown(log, srv, shard, save, serveErr)
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
// flight is answered or failed), then closes the shard, snapshotting it
// first when save is set.
func shutdown(log *slog.Logger, srv *server.Server, shard *replication.Shard, save bool, serveErr error) error {
	srv.Close()
	if save {
		log.Info("Saving the final snapshot before exiting.")
	}
	if err := shard.Close(save); err != nil {
		log.Error("closing the data directory failed", "err", err)
		return errors.Join(serveErr, err)
	}
	if save {
		log.Info("DB saved on disk")
	}
	log.Info("streamd is now ready to exit, bye bye...")
	return serveErr
}
