package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"syscall"

	"streamd/config"
	"streamd/replication"
)

// bindPorts binds every port the node serves before anything is created on
// disk: the client ports (port, tls-port), metrics-addr and, for a cluster
// member, raft-addr (handed to OpenNode in opts.RaftListener). A busy or
// bad address stops the start-up with an error naming the setting
// ("port 7000 is in use"), except metrics-addr left at its default: when
// 127.0.0.1:9121 is taken (another node on this host has it) the node logs
// a warning and serves without metrics. metricsLn is nil when metrics are
// off. On error nothing stays bound.
func bindPorts(cfg config.Config, opts *replication.NodeOptions, log *slog.Logger) (lns, tlsLns []net.Listener, metricsLn net.Listener, err error) {
	if lns, tlsLns, err = clientListeners(cfg, log); err != nil {
		return nil, nil, nil, err
	}
	closeAll := func() {
		for _, ln := range append(lns, tlsLns...) {
			ln.Close()
		}
		if metricsLn != nil {
			metricsLn.Close()
		}
	}
	if metricsLn, err = metricsListener(cfg.MetricsAddr, log); err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	if cfg.NodeID != "" && cfg.RaftAddr != "" {
		rl, err := net.Listen("tcp", cfg.RaftAddr)
		if err != nil {
			closeAll()
			return nil, nil, nil, portError("raft-addr", cfg.RaftAddr, err)
		}
		opts.RaftListener = rl
	}
	return lns, tlsLns, metricsLn, nil
}

// metricsListener binds metrics-addr (nil, nil when it is ""). A busy
// default address is a warning, not an error (see bindPorts).
func metricsListener(addr string, log *slog.Logger) (net.Listener, error) {
	if addr == "" {
		log.Info("Metrics endpoint off (metrics-addr is empty)")
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	if addr == config.Default().MetricsAddr && errors.Is(err, syscall.EADDRINUSE) {
		log.Warn("metrics-addr "+addr+" (the default) is in use, probably by another node on this host: "+
			"serving without /metrics, /healthz and /readyz; give each node its own metrics-addr to have them",
			"err", err)
		return nil, nil
	}
	return nil, portError("metrics-addr", addr, err)
}

// portError names the setting whose address could not be bound: "port 7000
// is in use (…)" for a busy one, "port 7000: …" otherwise.
func portError(setting, value string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s %s is in use (%w)", setting, value, err)
	}
	return fmt.Errorf("%s %s: %w", setting, value, err)
}
