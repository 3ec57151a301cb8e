package server

import (
	"io"
	"net"
	"testing"
	"time"

	"streamd/config"
)

func TestIsLocalAddr(t *testing.T) {
	tests := []struct {
		addr net.Addr
		want bool
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1")}, true},
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, true}, // Redis 7.2: "127." prefix
		{&net.TCPAddr{IP: net.ParseIP("::1")}, true},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1")}, true},
		{&net.TCPAddr{IP: net.ParseIP("10.0.0.1")}, false},
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.2")}, false},
		{&net.TCPAddr{IP: net.ParseIP("fe80::1")}, false},
		{&net.TCPAddr{IP: net.ParseIP("::")}, false},
		{&net.UnixAddr{Name: "/tmp/s.sock", Net: "unix"}, true},
	}
	for _, tt := range tests {
		if got := isLocalAddr(tt.addr); got != tt.want {
			t.Errorf("isLocalAddr(%v) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	remote := &net.TCPAddr{IP: net.ParseIP("10.0.0.1")}
	cfg := config.Default()
	if !protectedModeRefuses(&cfg, true, remote) {
		t.Errorf("default configuration serves 10.0.0.1 with no password")
	}
	if protectedModeRefuses(&cfg, false, remote) {
		t.Errorf("refused 10.0.0.1 with a password set")
	}
	cfg.ProtectedMode = false
	if protectedModeRefuses(&cfg, true, remote) {
		t.Errorf("refused 10.0.0.1 with protected-mode no")
	}
}

// remoteConn is one end of a net.Pipe that says it comes from another
// host.
type remoteConn struct {
	net.Conn
	remote net.Addr
}

func (c remoteConn) RemoteAddr() net.Addr { return c.remote }

// acceptFrom hands the server a connection from ip and returns the
// client's end.
func acceptFrom(srv *Server, ip string) net.Conn {
	server, client := net.Pipe()
	srv.accept(remoteConn{server, &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}}, nil)
	return client
}

// readAll reads what the server writes until it closes the connection.
func readAllFrom(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read: %v (got %q)", err, b)
	}
	return string(b)
}

// TestProtectedModeFromAnotherHost: a client from 10.0.0.1 gets Redis's
// DENIED text and the connection closes, counted in rejected_connections;
// CONFIG SET protected-mode no (or a password) lets it in.
func TestProtectedModeFromAnotherHost(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	local := dial(t, addr)
	runSteps(t, local, []step{{[]string{"CONFIG", "GET", "protected-mode"}, `["protected-mode", "yes"]`}})

	c := acceptFrom(srv, "10.0.0.1")
	if got := readAllFrom(t, c); got != deniedProtectedMode {
		t.Fatalf("client from 10.0.0.1 got %q", got)
	}
	if n := srv.stats.RejectedConnections.Load(); n != 1 {
		t.Errorf("rejected_connections = %d, want 1", n)
	}

	serves := func(ip, want string) {
		t.Helper()
		c := acceptFrom(srv, ip)
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			t.Fatalf("%s: write: %v", ip, err)
		}
		buf := make([]byte, 256)
		n, err := c.Read(buf)
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("%s: PING answered %q %v, want %q", ip, buf[:n], err, want)
		}
	}
	serves("127.0.0.5", "+PONG\r\n")
	runSteps(t, local, []step{
		{[]string{"CONFIG", "SET", "protected-mode", "maybe"},
			"(error) ERR CONFIG SET failed (possibly related to argument 'protected-mode') - argument must be 'yes' or 'no'"},
		{[]string{"CONFIG", "SET", "protected-mode", "no"}, "+OK"},
	})
	serves("10.0.0.1", "+PONG\r\n")
	runSteps(t, local, []step{
		{[]string{"CONFIG", "SET", "protected-mode", "yes", "requirepass", "pw"}, "+OK"},
	})
	serves("10.0.0.1", "-NOAUTH Authentication required.\r\n")
}

// nonLoopbackIPv4 returns an IPv4 address of this machine that is not
// loopback, or "" if it has none.
func nonLoopbackIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// TestProtectedModeVsRedis listens on a non-loopback address of this
// machine (skipped without one) and connects from it, as a client on
// another host would: streamd and redis-server answer the same bytes.
func TestProtectedModeVsRedis(t *testing.T) {
	ip := nonLoopbackIPv4()
	if ip == "" {
		t.Skip("no non-loopback IPv4 address on this machine (TestProtectedModeFromAnotherHost covers the logic)")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Skipf("listen on %s: %v", ip, err)
	}
	_, addr := startTestServerOn(t, ln, nil)
	exchange := func(addr string) (string, bool) {
		return rawExchange(t, addr, "PING\r\n")
	}
	got, closed := exchange(addr)
	if got != deniedProtectedMode || !closed {
		t.Fatalf("streamd on %s answered %q (closed %v)", ip, got, closed)
	}
	if !haveRedis(t) {
		return
	}
	raddr := startRedisOn(t, ip)
	want, rclosed := exchange(raddr)
	if got != want || closed != rclosed {
		t.Errorf("streamd: %q closed=%v\nredis:   %q closed=%v", got, closed, want, rclosed)
	}
}
