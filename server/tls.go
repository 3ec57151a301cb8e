package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"time"

	"streamd/config"
	"streamd/internal/tlsconf"
)

// tlsHandshakeTimeout bounds a client's TLS handshake: a peer that
// connects and sends nothing (or stalls half-way) is dropped then. A
// variable for tests only.
var tlsHandshakeTimeout = 10 * time.Second

// SetTLS gives the server the TLS certificates of its client port
// (tls-port): ServeTLS hands out l's ServerConfig, and CONFIG SET tls-*
// reloads l. Call it before ServeTLS. The same Loader may serve the raft
// port (tls-cluster), so that one CONFIG SET reloads both.
func (s *Server) SetTLS(l *tlsconf.Loader) { s.tls.Store(l) }

// TLS returns the Loader SetTLS gave (nil: no TLS).
func (s *Server) TLS() *tlsconf.Loader { return s.tls.Load() }

// ServeTLS is Serve for the TLS port: every connection accepted on ln
// (a plain TCP listener) is a TLS server connection with the Loader's
// current certificates and client-certificate policy (tls-auth-clients).
// The handshake runs on the connection's goroutine with a deadline, so a
// slow or bad peer never holds up the accept loop.
func (s *Server) ServeTLS(ln net.Listener) error {
	l := s.tls.Load()
	if l == nil {
		ln.Close()
		return errNoTLS
	}
	return s.serve(ln, l.ServerConfig())
}

// errNoTLS is ServeTLS's error without SetTLS.
var errNoTLS = errors.New("ServeTLS: no TLS certificates (SetTLS)")

// wrapTLS makes nc a TLS server connection (no handshake yet) and counts
// it.
func (s *Server) wrapTLS(nc net.Conn, cfg *tls.Config) net.Conn {
	s.stats.TLSConnectionsReceived.Add(1)
	return tls.Server(nc, cfg)
}

// handshake completes a client's TLS handshake, on the connection's reader
// goroutine, within tlsHandshakeTimeout (or until the connection is
// closed). It reports whether the connection may go on; a failure is
// logged at debug level (as Redis logs it at verbose) and counted. Plain
// connections, and other nodes' (already authenticated by the raft port),
// pass at once.
func (s *Server) handshake(c *Client) bool {
	tc, ok := c.nc.(*tls.Conn)
	if !ok || c.internal {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), tlsHandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		s.stats.TLSHandshakeFailures.Add(1)
		s.log.Debug("Error accepting a client connection", "addr", c.addr, "err", err)
		return false
	}
	return true
}

// rejectTLS refuses a TLS connection (maxclients, protected mode) with
// text: after the handshake (bounded by tlsHandshakeTimeout), so that the
// client can read Redis's error, as a plain connection does.
func (s *Server) rejectTLS(tc *tls.Conn, text string) {
	defer tc.Close()
	tc.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	if tc.Handshake() != nil {
		return
	}
	tc.Write([]byte(text))
}

// rawConn is the TCP connection under a TLS one (nc itself otherwise):
// for the file descriptor CLIENT LIST shows and for the half-close of a
// graceful shutdown.
func rawConn(nc net.Conn) net.Conn {
	if tc, ok := nc.(*tls.Conn); ok {
		return tc.NetConn()
	}
	return nc
}

// Redis's CONFIG SET reasons when new TLS settings do not load or the new
// tls-port cannot be bound (the log says why).
const (
	errTLSReload = "Unable to update TLS configuration. Check server logs."
	errTLSListen = "Unable to listen on this port. Check server logs."
)

// SetListen gives the server the way to bind the client addresses (bind)
// at a port, for CONFIG SET tls-port (cmd/streamd passes the function it
// binds the start-up ports with).
func (s *Server) SetListen(listen func(port int) ([]net.Listener, error)) {
	s.mu.Lock()
	s.listen = listen
	s.mu.Unlock()
}

// applyTLS applies a CONFIG SET of TLS settings, before the new values are
// stored: tls-* files and options are loaded and checked and swapped in
// for new connections when TLS is in use; a new tls-port is bound (its
// certificates loaded first if TLS was off), then the old TLS listeners
// closed (connections on them go on). On failure nothing changes and the
// reason is logged; it returns the directive to blame and Redis's reason.
func (s *Server) applyTLS(next *config.Config, names []string) (name, reason string, failed bool) {
	first, portSet := "", false
	for _, n := range names {
		if config.IsTLSDirective(n) && first == "" {
			first = n
		}
		portSet = portSet || n == "tls-port"
	}
	cur := s.config()
	l := s.tls.Load()
	reloaded := false
	if first != "" && l != nil {
		if err := l.Reload(next.TLSFiles()); err != nil {
			s.log.Warn("Failed applying new configuration. Possibly related to new "+first+" setting. Restoring previous settings.", "err", err)
			return first, errTLSReload, true
		}
		reloaded = true
		s.log.Info("TLS configuration reloaded", "setting", first, "tls-cert-file", next.TLSCertFile)
	}
	if !portSet || next.TLSPort == cur.TLSPort {
		return "", "", false
	}
	restore := func() {
		if reloaded {
			l.Reload(cur.TLSFiles()) // they loaded before
		}
	}
	if next.TLSPort != 0 && l == nil {
		nl, err := tlsconf.NewLoader(next.TLSFiles())
		if err != nil {
			s.log.Warn("Failed applying new configuration. Possibly related to new tls-port setting. Restoring previous settings.", "err", err)
			return "tls-port", errTLSReload, true
		}
		l = nl
		s.tls.Store(l)
		restore = func() { s.tls.Store(nil) } // TLS was off
	}
	if err := s.changeTLSPort(next.TLSPort, l); err != nil {
		s.log.Warn("Failed applying new configuration. Possibly related to new tls-port setting. Restoring previous settings.", "tls-port", next.TLSPort, "err", err)
		restore()
		return "tls-port", errTLSListen, true
	}
	return "", "", false
}

// changeTLSPort binds the client addresses at port (0: none) for TLS,
// serves them, and closes the TLS listeners it replaces, as Redis's
// changeListener.
func (s *Server) changeTLSPort(port int, l *tlsconf.Loader) error {
	s.mu.Lock()
	listen := s.listen
	s.mu.Unlock()
	var lns []net.Listener
	if port != 0 {
		if listen == nil {
			return errors.New("the server was given no way to bind addresses (SetListen)")
		}
		var err error
		if lns, err = listen(port); err != nil {
			return err
		}
	}
	s.mu.Lock()
	for ln := range s.tlsListeners {
		delete(s.tlsListeners, ln)
		delete(s.listeners, ln) // its serve loop ends quietly
		ln.Close()
	}
	s.mu.Unlock()
	cfg := l.ServerConfig()
	for _, ln := range lns {
		// Registered now, so that the next CONFIG SET tls-port finds it.
		if !s.register(ln, true) {
			continue // the server is closing
		}
		s.log.Info("Ready to accept TLS connections", "addr", ln.Addr().String())
		go func() {
			if err := s.acceptLoop(ln, cfg); err != nil {
				s.log.Error("TLS accept failed; the TLS port is closed", "addr", ln.Addr().String(), "err", err)
			}
		}()
	}
	return nil
}

// tcpPort is INFO's tcp_port: port, or tls-port when plain TCP is off (as
// Redis reports it).
func tcpPort(cfg config.Config) int {
	if cfg.Port == 0 {
		return cfg.TLSPort
	}
	return cfg.Port
}
