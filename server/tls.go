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

// rejectTLS refuses a TLS connection at maxclients: after the handshake
// (bounded by tlsHandshakeTimeout), so that the client can read Redis's
// error, as a plain connection does.
func (s *Server) rejectTLS(tc *tls.Conn) {
	defer tc.Close()
	tc.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	if tc.Handshake() != nil {
		return
	}
	tc.Write([]byte("-ERR max number of clients reached\r\n"))
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

// errTLSReload is Redis's CONFIG SET reason when new TLS settings do not
// load (the log says why).
const errTLSReload = "Unable to update TLS configuration. Check server logs."

// reloadTLS applies a CONFIG SET of tls-* settings: when TLS is in use,
// next's certificates, keys and settings are loaded and checked, and swapped
// in for new connections; on failure nothing changes and the reason is
// logged. It returns the name of the directive to blame (the first TLS one
// of names) and whether it failed.
func (s *Server) reloadTLS(next *config.Config, names []string) (string, bool) {
	first := ""
	for _, n := range names {
		if config.IsTLSDirective(n) {
			first = n
			break
		}
	}
	l := s.tls.Load()
	if first == "" || l == nil {
		return "", false
	}
	if err := l.Reload(next.TLSFiles()); err != nil {
		s.log.Warn("Failed applying new configuration. Possibly related to new "+first+" setting. Restoring previous settings.", "err", err)
		return first, true
	}
	s.log.Info("TLS configuration reloaded", "setting", first, "tls-cert-file", next.TLSCertFile)
	return "", false
}

// tcpPort is INFO's tcp_port: port, or tls-port when plain TCP is off (as
// Redis reports it).
func tcpPort(cfg config.Config) int {
	if cfg.Port == 0 {
		return cfg.TLSPort
	}
	return cfg.Port
}
