package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	"streamd/config"
	"streamd/internal/mux"
	"streamd/internal/tlsconf"
)

// errNoClusterCredentials is the start-up refusal of a cluster node whose
// raft port is reachable from other hosts and has nothing to prove
// membership with.
const errNoClusterCredentials = "the raft port has no credentials: anyone who can reach it could " +
	"join the cluster, run commands and read the password; set cluster-secret (or cluster-secret-file), " +
	"tls-cluster yes (with tls-cert-file, tls-key-file and tls-ca-cert-file), or requirepass"

// clusterCredentials reads the cluster secret (cluster-secret, or the
// trimmed content of cluster-secret-file, which must be readable and not
// empty) and checks the start-up rule: a cluster node whose raft address
// is not loopback needs a secret, tls-cluster or requirepass. On loopback
// without any, warn is set instead (the caller logs it).
func clusterCredentials(cfg config.Config) (secret, warn string, err error) {
	if cfg.NodeID == "" {
		return "", "", nil
	}
	secret = cfg.ClusterSecret
	if cfg.ClusterSecretFile != "" {
		if secret != "" {
			return "", "", errors.New("set only one of cluster-secret and cluster-secret-file")
		}
		b, err := os.ReadFile(cfg.ClusterSecretFile)
		if err != nil {
			return "", "", fmt.Errorf("cluster-secret-file: %w", err)
		}
		if secret = strings.TrimSpace(string(b)); secret == "" {
			return "", "", fmt.Errorf("cluster-secret-file %s is empty", cfg.ClusterSecretFile)
		}
	}
	if cfg.TLSCluster && cfg.TLSCACertFile == "" && cfg.TLSCACertDir == "" {
		return "", "", errors.New("tls-cluster needs tls-ca-cert-file or tls-ca-cert-dir: the CA the other nodes' certificates must chain to")
	}
	if secret != "" || cfg.TLSCluster || cfg.RequirePass != "" {
		return secret, "", nil
	}
	if !loopbackAddr(cfg.RaftAddr) {
		return "", "", fmt.Errorf("raft-addr %s is not a loopback address and %s", cfg.RaftAddr, errNoClusterCredentials)
	}
	return "", "raft-addr is a loopback address and " + errNoClusterCredentials, nil
}

// loopbackAddr reports whether host:port's host is a loopback address (or
// "localhost").
func loopbackAddr(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// raftAuth is the raft port's mux.Auth for cfg: the cluster secret (see
// clusterCredentials), requirepass as it is at start-up (used only when
// neither a secret nor tls-cluster is set), and with tls-cluster the
// loader's cluster configurations (mutual TLS, chains to the CA, no host
// names). loader is the node's TLS loader, or nil to load one here. It
// logs the warning of a loopback port without credentials.
func raftAuth(cfg config.Config, log *slog.Logger, loader *tlsconf.Loader) (mux.Auth, error) {
	secret, warn, err := clusterCredentials(cfg)
	if err != nil || cfg.NodeID == "" {
		return mux.Auth{}, err
	}
	if warn != "" {
		log.Warn(warn)
	}
	a := mux.Auth{Secret: secret, Password: cfg.RequirePass}
	if cfg.TLSCluster {
		if loader, err = loaderFor(cfg, loader); err != nil {
			return mux.Auth{}, err
		}
		a.ServerTLS, a.ClientTLS = loader.ClusterServerConfig(), loader.ClusterClientConfig()
	}
	return a, nil
}

// loaderFor returns loader, or when it is nil loads the tls-* files of
// cfg (tls-cluster or join-tls without a tls-port).
func loaderFor(cfg config.Config, loader *tlsconf.Loader) (*tlsconf.Loader, error) {
	if loader != nil {
		return loader, nil
	}
	l, err := tlsconf.NewLoader(cfg.TLSFiles())
	if err != nil {
		return nil, fmt.Errorf("TLS configuration: %w", err)
	}
	return l, nil
}
