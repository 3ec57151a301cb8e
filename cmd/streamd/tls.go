package main

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"streamd/config"
	"streamd/internal/tlsconf"
)

// loadTLS loads the TLS certificates when TLS is in use (tls-port or
// tls-cluster): nil when it is not. A bad file stops the start-up with
// what is wrong with which file.
func loadTLS(cfg config.Config) (*tlsconf.Loader, error) {
	if !cfg.TLSEnabled() {
		return nil, nil
	}
	l, err := tlsconf.NewLoader(cfg.TLSFiles())
	if err != nil {
		return nil, fmt.Errorf("TLS configuration: %w", err)
	}
	return l, nil
}

// clientListeners binds the client ports on every bind address: port
// (plain TCP) and tls-port. As in Redis, port 0 with a tls-port means no
// plain TCP port; without a tls-port, port 0 is any free port (tests).
func clientListeners(cfg config.Config, log *slog.Logger) (plain, secure []net.Listener, err error) {
	if cfg.Port != 0 || cfg.TLSPort == 0 {
		if plain, err = listen(cfg, log); err != nil {
			return nil, nil, portError("port", strconv.Itoa(cfg.Port), err)
		}
	}
	if cfg.TLSPort != 0 {
		c := cfg
		c.Port = cfg.TLSPort
		if secure, err = listen(c, log); err != nil {
			for _, ln := range plain {
				ln.Close()
			}
			return nil, nil, portError("tls-port", strconv.Itoa(cfg.TLSPort), err)
		}
	}
	return plain, secure, nil
}

// clientPort is the client port this node advertises: port, or tls-port
// when plain TCP is off.
func clientPort(cfg config.Config) int {
	if cfg.Port == 0 {
		return cfg.TLSPort
	}
	return cfg.Port
}
