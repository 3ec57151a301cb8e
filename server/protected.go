package server

import (
	"crypto/tls"
	"net"
	"time"

	"streamd/config"
)

// deniedProtectedMode is what Redis writes to a client protected mode
// refuses (networking.c, clientAcceptHandler), byte for byte as the
// reference redis-server sends it, before it closes the connection.
const deniedProtectedMode = "-DENIED Redis is running in protected mode because protected mode is enabled " +
	"and no password is set for the default user. In this mode connections are only accepted from the " +
	"loopback interface. If you want to connect from external computers to Redis you may adopt one of the " +
	"following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' " +
	"from the loopback interface by connecting to Redis from the same host the server is running, however " +
	"MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this " +
	"change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis " +
	"configuration file, and setting the protected mode option to 'no', and then restarting the server. " +
	"3) If you started the server manually just for testing, restart it with the '--protected-mode no' " +
	"option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of " +
	"the above things in order for the server to start accepting connections from the outside.\r\n"

// protectedModeRefuses reports whether protected mode refuses a client
// connecting from remote, as Redis 7 decides: protected-mode is yes, the
// default user has no password, and the client is not local — whatever
// "bind" says (Redis 7 dropped the "no bind address" condition of Redis 6,
// whose default bind was none).
func protectedModeRefuses(cfg *config.Config, defaultNoPass bool, remote net.Addr) bool {
	return cfg.ProtectedMode && defaultNoPass && !isLocalAddr(remote)
}

// isLocalAddr is Redis 7.2's connIsLocal: a unix socket, or a TCP peer
// whose address reads "127.…" or "::1" (an IPv4 peer on a dual-stack
// listener, ::ffff:127.x.y.z, reads 127.x.y.z in Go as in Redis's log).
func isLocalAddr(a net.Addr) bool {
	switch a := a.(type) {
	case *net.UnixAddr:
		return true
	case *net.TCPAddr:
		if ip4 := a.IP.To4(); ip4 != nil {
			return ip4[0] == 127
		}
		return a.IP.Equal(net.IPv6loopback)
	}
	return false
}

// refuse writes a refusal (maxclients, protected mode) to a connection
// that will not be served, and closes it; counted in rejected_connections
// as Redis counts both. The write gets a second at most (a fresh
// connection's send buffer takes it at once).
func (s *Server) refuse(nc net.Conn, text string) {
	s.stats.RejectedConnections.Add(1)
	if tc, ok := nc.(*tls.Conn); ok {
		go s.rejectTLS(tc, text) // the handshake must not stall accepting
		return
	}
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	nc.Write([]byte(text))
	nc.Close()
}
