package server

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/testutil"
	"streamd/replication"
)

// startTestServer runs an in-process server over an in-memory shard on
// 127.0.0.1:0 and returns it and its address; server and shard are closed
// when the test ends.
func startTestServer(t testing.TB, mod func(*config.Config)) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startTestServerOn(t, ln, mod)
}

// startTestServerOn is startTestServer serving ln.
func startTestServerOn(t testing.TB, ln net.Listener, mod func(*config.Config)) (*Server, string) {
	t.Helper()
	cfg := config.Default()
	cfg.Dir = t.TempDir()
	if mod != nil {
		mod(&cfg)
	}
	shard := replication.NewShard()
	srv := New(cfg, shard, slog.New(slog.NewTextHandler(io.Discard, nil)))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return after Close")
		}
		shard.Close(false)
	})
	return srv, ln.Addr().String()
}

func dial(t *testing.T, addr string) *respConn {
	t.Helper()
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// step is one command and the expected reply rendered by Value.String.
type step struct {
	args []string
	want string
}

func runSteps(t *testing.T, c *respConn, steps []step) {
	t.Helper()
	for _, s := range steps {
		v, err := c.Do(s.args...)
		if err != nil {
			t.Fatalf("%q: %v", s.args, err)
		}
		if got := v.String(); got != s.want {
			t.Errorf("%q:\n got %s\nwant %s", s.args, got, s.want)
		}
	}
}

func TestConnectionCommands(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"PING"}, "+PONG"},
		{[]string{"ping", "hi"}, `"hi"`},
		{[]string{"PING", "a", "b"}, "(error) ERR wrong number of arguments for 'ping' command"},
		{[]string{"ECHO", "x y"}, `"x y"`},
		{[]string{"ECHO"}, "(error) ERR wrong number of arguments for 'echo' command"},
		{[]string{"FOO", "a", "b"}, "(error) ERR unknown command 'FOO', with args beginning with: 'a' 'b' "},
		{[]string{"CLIENT", "FOO"}, "(error) ERR unknown subcommand 'FOO'. Try CLIENT HELP."},
		{[]string{"client", "setname"}, "(error) ERR wrong number of arguments for 'client|setname' command"},
		{[]string{"AUTH", "x"}, "(error) ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"},
		{[]string{"AUTH", "default", "x"}, "+OK"},
		{[]string{"AUTH", "bob", "x"}, "(error) WRONGPASS invalid username-password pair or user is disabled."},
		{[]string{"SELECT", "16"}, "(error) ERR DB index is out of range"},
		{[]string{"SELECT", "x"}, "(error) ERR value is not an integer or out of range"},
		{[]string{"SELECT", "3"}, "+OK"},
		{[]string{"CLIENT", "SETNAME", "a b"}, "(error) ERR Client names cannot contain spaces, newlines or special characters."},
		{[]string{"CLIENT", "GETNAME"}, "(nil bulk)"},
		{[]string{"CLIENT", "SETNAME", "worker"}, "+OK"},
		{[]string{"CLIENT", "GETNAME"}, `"worker"`},
		{[]string{"CLIENT", "SETINFO", "lib-name", "go-redis"}, "+OK"},
		{[]string{"CLIENT", "SETINFO", "foo", "x"}, "(error) ERR Unrecognized option 'foo'"},
		{[]string{"CLIENT", "NO-EVICT", "on"}, "+OK"},
		{[]string{"CLIENT", "NO-EVICT", "maybe"}, "(error) ERR syntax error"},
		{[]string{"CLIENT", "ID"}, "(integer) 1"},
		{[]string{"CLIENT", "UNBLOCK", "1", "bad"}, "(error) ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"},
		{[]string{"CLIENT", "UNBLOCK", "1"}, "(integer) 0"},
		{[]string{"CLIENT", "KILL", "ID", "x"}, "(error) ERR client-id should be greater than 0"},
		{[]string{"CLIENT", "KILL", "1.2.3.4:5"}, "(error) ERR No such client"},
		{[]string{"CLIENT", "LIST", "TYPE", "foo"}, "(error) ERR Unknown client type 'foo'"},
		{[]string{"CLUSTER", "INFO"}, "(error) ERR This instance has cluster support disabled"},
		{[]string{"WAIT", "0", "0"}, "(integer) 0"},
		{[]string{"WAIT", "1", "-1"}, "(error) ERR timeout is negative"},
		{[]string{"HELLO", "4"}, "(error) NOPROTO unsupported protocol version"},
		{[]string{"HELLO", "3", "FOO"}, "(error) ERR Syntax error in HELLO option 'FOO'"},
	})
	v, _ := c.Do("CLIENT", "INFO")
	for _, want := range []string{"id=1 ", " name=worker ", " db=3 ", " flags=e ", " cmd=client|info ", " resp=2 ", " lib-name=go-redis "} {
		if !strings.Contains(v.Str, want) {
			t.Errorf("CLIENT INFO %q lacks %q", v.Str, want)
		}
	}
	v, _ = c.Do("HELLO", "3")
	if v.Kind != '%' || v.String() != `map{"server": "redis", "version": "7.2.4", "proto": (integer) 3, "id": (integer) 1, "mode": "standalone", "role": "master", "modules": []}` {
		t.Errorf("HELLO 3 = %s", v)
	}
	v, _ = c.Do("CLIENT", "INFO")
	if v.Kind != '=' || !strings.Contains(v.Str, " resp=3 ") {
		t.Errorf("RESP3 CLIENT INFO = %s", v)
	}
	runSteps(t, c, []step{
		{[]string{"RESET"}, "+RESET"},
		{[]string{"CLIENT", "GETNAME"}, "(nil bulk)"},
		{[]string{"QUIT"}, "+OK"},
	})
	if _, err := c.Receive(2 * time.Second); err != io.EOF {
		t.Errorf("after QUIT: %v, want EOF", err)
	}
}

func TestAuthRequired(t *testing.T) {
	_, addr := startTestServer(t, func(c *config.Config) { c.RequirePass = "secret" })
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"PING"}, "(error) NOAUTH Authentication required."},
		{[]string{"HELLO", "3"}, "(error) NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"},
		{[]string{"AUTH", "nope"}, "(error) WRONGPASS invalid username-password pair or user is disabled."},
		{[]string{"HELLO", "2", "AUTH", "default", "secret", "SETNAME", "n"}, `["server", "redis", "version", "7.2.4", "proto", (integer) 2, "id", (integer) 1, "mode", "standalone", "role", "master", "modules", []]`},
		{[]string{"PING"}, "+PONG"},
		{[]string{"RESET"}, "+RESET"},
		{[]string{"PING"}, "(error) NOAUTH Authentication required."},
		{[]string{"AUTH", "secret"}, "+OK"},
		{[]string{"PING"}, "+PONG"},
	})
	// Before authenticating, Redis refuses large requests.
	c2 := dial(t, addr)
	c2.SendRaw([]byte("*20\r\n"))
	v, _ := c2.Receive(5 * time.Second)
	if v.String() != "(error) ERR Protocol error: unauthenticated multibulk length" {
		t.Errorf("got %s", v)
	}
}

func TestInlineAndProtocolErrors(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	c.SendRaw([]byte("PING\r\nECHO \"a b\"\n\r\n*1\r\n$4\r\nPING\r\n"))
	for _, want := range []string{"+PONG", `"a b"`, "+PONG"} {
		v, err := c.Receive(5 * time.Second)
		if err != nil || v.String() != want {
			t.Fatalf("got %s %v, want %s", v, err, want)
		}
	}
	tests := []struct{ raw, want string }{
		{"*1\r\n$-5\r\n", "(error) ERR Protocol error: invalid bulk length"},
		{"*a\r\n", "(error) ERR Protocol error: invalid multibulk length"},
		{"*1\r\n:1\r\n", "(error) ERR Protocol error: expected '$', got ':'"},
		{"ECHO \"x\r\n", "(error) ERR Protocol error: unbalanced quotes in request"},
		{"*1\r\n$600000000\r\n", "(error) ERR Protocol error: invalid bulk length"},
	}
	for _, tt := range tests {
		c := dial(t, addr)
		c.SendRaw([]byte("PING\r\n" + tt.raw))
		if v, _ := c.Receive(5 * time.Second); v.String() != "+PONG" {
			t.Fatalf("%q: first reply %s", tt.raw, v)
		}
		v, err := c.Receive(5 * time.Second)
		if err != nil || v.String() != tt.want {
			t.Errorf("%q: got %s %v, want %s", tt.raw, v, err, tt.want)
		}
		if _, err := c.Receive(5 * time.Second); err != io.EOF {
			t.Errorf("%q: connection not closed: %v", tt.raw, err)
		}
	}
}

func TestMaxClients(t *testing.T) {
	_, addr := startTestServer(t, func(c *config.Config) { c.MaxClients = 1 })
	c := dial(t, addr)
	runSteps(t, c, []step{{[]string{"PING"}, "+PONG"}})
	c2 := dial(t, addr)
	v, err := c2.Receive(5 * time.Second)
	if err != nil || v.String() != "(error) ERR max number of clients reached" {
		t.Fatalf("got %s %v", v, err)
	}
	if _, err := c2.Receive(5 * time.Second); err != io.EOF {
		t.Fatalf("refused connection not closed: %v", err)
	}
}

// TestMaxClientsSparesInternal: connections from other nodes (the raft
// port's forwarded commands) do not use up maxclients for real clients.
func TestMaxClientsSparesInternal(t *testing.T) {
	srv, addr := startTestServer(t, func(c *config.Config) { c.MaxClients = 1 })
	for range 3 {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close() })
		go srv.ServeInternal(b)
	}
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if srv.internalClients != 3 {
			return fmt.Errorf("%d internal clients", srv.internalClients)
		}
		return nil
	})
	c := dial(t, addr)
	runSteps(t, c, []step{{[]string{"PING"}, "+PONG"}})
	c2 := dial(t, addr)
	if v, err := c2.Receive(5 * time.Second); err != nil || v.String() != "(error) ERR max number of clients reached" {
		t.Fatalf("second real client: %s %v", v, err)
	}
}

func TestConfigCommands(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"CONFIG", "GET", "save"}, `["save", ""]`},
		{[]string{"CONFIG", "GET", "append*"}, `["appendfsync", "always", "appendonly", "yes"]`},
		{[]string{"CONFIG", "GET", "MAXCLIENTS", "databases"}, `["databases", "16", "maxclients", "10000"]`},
		{[]string{"CONFIG", "SET", "foo", "bar"}, "(error) ERR Unknown option or number of arguments for CONFIG SET - 'foo'"},
		{[]string{"CONFIG", "SET", "maxclients", "abc"}, "(error) ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer"},
		{[]string{"CONFIG", "SET", "databases", "3"}, "(error) ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"},
		{[]string{"CONFIG", "SET", "maxclients", "10", "maxclients", "20"}, "(error) ERR CONFIG SET failed (possibly related to argument 'maxclients') - duplicate parameter"},
		{[]string{"CONFIG", "SET", "proto-max-bulk-len", "1"}, "(error) ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive"},
		{[]string{"CONFIG", "SET", "maxclients", "50", "proto-max-bulk-len", "5mb"}, "+OK"},
		{[]string{"CONFIG", "GET", "maxclients", "proto-max-bulk-len"}, `["maxclients", "50", "proto-max-bulk-len", "5242880"]`},
		{[]string{"CONFIG", "SET", "stream-node-max-entries", "7"}, "+OK"},
		{[]string{"CONFIG", "GET", "stream-node-max-entries"}, `["stream-node-max-entries", "7"]`},
		{[]string{"CONFIG", "SET", "maxclients"}, "(error) ERR wrong number of arguments for 'config|set' command"},
		{[]string{"CONFIG", "RESETSTAT"}, "+OK"},
	})
	c.Do("HELLO", "3")
	v, _ := c.Do("CONFIG", "GET", "port")
	if v.Kind != '%' {
		t.Errorf("RESP3 CONFIG GET = %s, want a map", v)
	}
}

func TestInfoAndStats(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	c.Do("PING")
	c.Do("NOPE")
	c.Do("ECHO")
	v, _ := c.Do("INFO")
	for _, want := range []string{"# Server\r\nredis_version:7.2.4\r\n", "redis_mode:standalone", "\r\n\r\n# Clients\r\nconnected_clients:1\r\n",
		"blocked_clients:0", "# Memory\r\nused_memory:", "aof_enabled:1", "total_commands_processed:1\r\n",
		"total_error_replies:2\r\n", "role:master", "# Keyspace\r\n", "errorstat_ERR:count=2"} {
		if !strings.Contains(v.Str, want) {
			t.Errorf("INFO lacks %q", want)
		}
	}
	if strings.Contains(v.Str, "cmdstat_") {
		t.Error("default INFO must not include commandstats")
	}
	v, _ = c.Do("INFO", "commandstats")
	if !strings.HasPrefix(v.Str, "# Commandstats\r\n") || !strings.Contains(v.Str, "cmdstat_info:calls=1,") ||
		!strings.Contains(v.Str, "cmdstat_echo:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0") {
		t.Errorf("commandstats = %q", v.Str)
	}
	v, _ = c.Do("INFO", "nosuch")
	if v.Kind != '$' || v.Str != "" {
		t.Errorf("INFO nosuch = %s", v)
	}
	c.Do("HELLO", "3")
	v, _ = c.Do("INFO", "server")
	if v.Kind != '=' {
		t.Errorf("RESP3 INFO = kind %q, want verbatim", v.Kind)
	}
}

func TestCommandCommand(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"COMMAND", "INFO", "echo", "nosuch"}, `[["echo", (integer) 2, [+loading, +stale, +fast], (integer) 0, (integer) 0, (integer) 0, [+@fast, +@connection], [], [], []], (nil bulk)]`},
		{[]string{"COMMAND", "DOCS", "echo"}, `["echo", ["summary", "Echo the given string", "since", "1.0.0", "group", "connection", "complexity", "O(1)", "arguments", [["name", "message", "type", "string"]]]]`},
		{[]string{"COMMAND", "DOCS", "nosuch"}, `[]`},
		{[]string{"COMMAND", "LIST", "FILTERBY", "PATTERN", "client|s*"}, `["client|setinfo", "client|setname"]`},
		{[]string{"COMMAND", "LIST", "FILTERBY", "bad", "x"}, "(error) ERR syntax error"},
	})
	count, _ := c.Do("COMMAND", "COUNT")
	all, _ := c.Do("COMMAND")
	list, _ := c.Do("COMMAND", "LIST")
	if count.Int == 0 || int(count.Int) != len(all.Elems) || len(list.Elems) != len(all.Elems) {
		t.Errorf("COUNT %d, COMMAND %d, LIST %d", count.Int, len(all.Elems), len(list.Elems))
	}
}

// TestBlockedClient covers WaitBlocked through WAIT: INFO and CLIENT LIST
// see it blocked, CLIENT UNBLOCK releases it (TIMEOUT and ERROR), and a
// client that disconnects while blocked is dropped.
func TestBlockedClient(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	admin := dial(t, addr)
	b := dial(t, addr)
	id, _ := b.Do("CLIENT", "ID")
	waitBlocked := func(n int64) {
		testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
			if got := srv.stats.BlockedClients.Load(); got != n {
				return fmt.Errorf("blocked_clients = %d, want %d", got, n)
			}
			return nil
		})
	}
	for _, tt := range []struct{ how, want string }{{"TIMEOUT", "(integer) 0"}, {"ERROR", "(error) UNBLOCKED client unblocked via CLIENT UNBLOCK"}} {
		b.Send("WAIT", "1", "0")
		waitBlocked(1)
		v, _ := admin.Do("CLIENT", "LIST", "ID", fmt.Sprint(id.Int))
		if !strings.Contains(v.Str, " flags=b ") {
			t.Errorf("CLIENT LIST = %q, want flags=b", v.Str)
		}
		v, _ = admin.Do("INFO", "clients")
		if !strings.Contains(v.Str, "blocked_clients:1") {
			t.Errorf("INFO clients = %q", v.Str)
		}
		if v, _ := admin.Do("CLIENT", "UNBLOCK", fmt.Sprint(id.Int), tt.how); v.Int != 1 {
			t.Fatalf("CLIENT UNBLOCK = %s", v)
		}
		if v, err := b.Receive(5 * time.Second); err != nil || v.String() != tt.want {
			t.Errorf("%s: blocked client got %s %v, want %s", tt.how, v, err, tt.want)
		}
		waitBlocked(0)
	}
	b.Send("WAIT", "1", "0")
	waitBlocked(1)
	b.Close()
	waitBlocked(0)
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := len(srv.clientList()); n != 1 {
			return fmt.Errorf("%d clients", n)
		}
		return nil
	})
}

func TestClientKill(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	a := dial(t, addr)
	b := dial(t, addr)
	bid, _ := b.Do("CLIENT", "ID")
	if v, _ := a.Do("CLIENT", "KILL", "ID", fmt.Sprint(bid.Int)); v.Int != 1 {
		t.Fatalf("CLIENT KILL ID = %s", v)
	}
	if _, err := b.Receive(5 * time.Second); err != io.EOF {
		t.Errorf("killed client: %v, want EOF", err)
	}
	// The killed connection's goroutine unregisters it a moment later.
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := len(srv.clientList()); n != 1 {
			return fmt.Errorf("%d clients", n)
		}
		return nil
	})
	if v, _ := a.Do("CLIENT", "KILL", "SKIPME", "yes"); v.Int != 0 {
		t.Errorf("SKIPME yes killed %s", v)
	}
	if v, _ := a.Do("CLIENT", "KILL", "SKIPME", "no"); v.Int != 1 {
		t.Errorf("SKIPME no killed %s", v)
	}
	if _, err := a.Receive(5 * time.Second); err != io.EOF {
		t.Errorf("self-killed client: %v, want EOF", err)
	}
}
