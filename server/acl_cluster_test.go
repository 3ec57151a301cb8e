package server

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/testutil"
)

// TestClusterACLUsers: a user created on one node (a follower: the write
// goes to shard 0's leader and through the log) can authenticate on every
// node; its commands forwarded from a follower run at the leader as that
// user; an internal connection to the leader has no rights until it names
// a user and never more than that user's; STREAMD.AUTHAS is unknown on
// the client port; deleting the user reaches every node.
func TestClusterACLUsers(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	lead := leaderOf(nodes, 0)
	fs := followersOf(nodes, 0)
	a := dial(t, fs[0].addr)
	runSteps(t, a, []step{
		{[]string{"ACL", "SETUSER", "app", "on", ">pw", "~orders*", "+@stream", "+@connection", "-xdel"}, "+OK"},
		// The change is in force on this node as soon as it answered.
		{[]string{"ACL", "DRYRUN", "app", "xdel", "orders", "1-1"}, `"User app has no permissions to run the 'xdel' command"`},
	})
	for _, cn := range nodes {
		c := dial(t, cn.addr)
		testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
			v, err := c.Do("AUTH", "app", "pw")
			if err != nil {
				return err
			}
			if v.String() != "+OK" {
				return fmt.Errorf("%s: AUTH app = %s", cn.id, v)
			}
			return nil
		})
	}
	b := dial(t, fs[1].addr)
	runSteps(t, b, []step{
		{[]string{"AUTH", "app", "pw"}, "+OK"},
		{[]string{"XADD", "orders", "1-1", "f", "v"}, `"1-1"`},
		{[]string{"XLEN", "orders"}, "(integer) 1"},
		{[]string{"XADD", "audit", "1-1", "f", "v"}, "(error) NOPERM No permissions to access a key"},
		{[]string{"STREAMD.AUTHAS", "default"}, "(error) ERR unknown command 'STREAMD.AUTHAS', with args beginning with: 'default' "},
	})

	// The leader enforces the user a forwarding node names: an internal
	// connection (what a follower's upstream is) runs nothing before
	// STREAMD.AUTHAS, and then exactly what the user may.
	nc, err := fs[0].node.DialRESP(lead.node.RaftAddr())
	if err != nil {
		t.Fatal(err)
	}
	in := &respConn{nc: nc, r: bufio.NewReader(nc)}
	t.Cleanup(func() { in.Close() })
	runSteps(t, in, []step{
		{[]string{"XLEN", "orders"}, "(error) " + string(errNoUserNamed)},
		{[]string{"CONFIG", "GET", "requirepass"}, "(error) " + string(errNoUserNamed)},
		{[]string{"STREAMD.AUTHAS", "ghost"}, "(error) ERR User 'ghost' not found"},
		{[]string{"XLEN", "orders"}, "(error) " + string(errNoUserNamed)},
		{[]string{"STREAMD.AUTHAS", "app"}, "+OK"},
		{[]string{"XLEN", "orders"}, "(integer) 1"},
		{[]string{"XDEL", "orders", "1-1"}, "(error) NOPERM User app has no permissions to run the 'xdel' command"},
		{[]string{"STREAMD.ONSHARD", "0", "CONFIG", "SET", "stream-node-max-entries", "5"}, "(error) NOPERM User app has no permissions to run the 'config|set' command"},
		{[]string{"SHUTDOWN", "NOSAVE"}, "(error) NOPERM User app has no permissions to run the 'shutdown' command"},
		{[]string{"RESET"}, "+RESET"},
		{[]string{"XLEN", "orders"}, "(error) " + string(errNoUserNamed)},
	})
	v, _ := dial(t, lead.addr).Do("ACL", "LOG")
	if s := v.String(); !strings.Contains(s, `"object", "xdel", "username", "app"`) {
		t.Errorf("the leader's ACL LOG lacks the denied XDEL: %s", s)
	}

	// A command forwarded from a follower is checked again at the leader,
	// as the user the follower's upstream named: hold the follower's view
	// at the old rules (its rebuild waits on the lock) while the leader
	// takes XADD away; the follower lets XADD through, the leader refuses
	// it and records it in its ACL LOG.
	runSteps(t, b, []step{{[]string{"XADD", "orders", "2-1", "f", "v"}, `"2-1"`}})
	fs[1].srv.acl.mu.Lock()
	runSteps(t, dial(t, lead.addr), []step{{[]string{"ACL", "SETUSER", "app", "-xadd"}, "+OK"}})
	runSteps(t, b, []step{{[]string{"XADD", "orders", "3-1", "f", "v"}, "(error) NOPERM User app has no permissions to run the 'xadd' command"}})
	fs[1].srv.acl.mu.Unlock()
	v, _ = dial(t, lead.addr).Do("ACL", "LOG", "1")
	if s := v.String(); !strings.Contains(s, `"object", "xadd", "username", "app"`) {
		t.Errorf("the leader's ACL LOG lacks the forwarded XADD it refused: %s", s)
	}
	runSteps(t, b, []step{{[]string{"XLEN", "orders"}, "(integer) 2"}})

	// Deleting the user closes its connections on every node, a blocked
	// XREADGROUP forwarded from a follower included.
	runSteps(t, b, []step{{[]string{"XGROUP", "CREATE", "orders", "g2", "$"}, "+OK"}})
	blk := dial(t, fs[1].addr)
	runSteps(t, blk, []step{{[]string{"AUTH", "app", "pw"}, "+OK"}})
	if err := blk.Send("XREADGROUP", "GROUP", "g2", "c", "BLOCK", "0", "STREAMS", "orders", ">"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := lead.srv.stats.BlockedClients.Load(); n != 1 {
			return fmt.Errorf("%d clients blocked on the leader", n)
		}
		return nil
	})
	runSteps(t, a, []step{{[]string{"ACL", "DELUSER", "app"}, "(integer) 1"}})
	if v, err := blk.Receive(10 * time.Second); err == nil {
		t.Fatalf("the deleted user's blocked XREADGROUP got %s, want its connection closed", v)
	}
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := lead.srv.stats.BlockedClients.Load(); n != 0 {
			return fmt.Errorf("%d clients still blocked on the leader", n)
		}
		return nil
	})
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		if _, err := b.Do("PING"); err == nil {
			return fmt.Errorf("%s: the deleted user's connection is open", fs[1].id)
		}
		return nil
	})
}

// TestClusterRequirePass: requirepass configured on one node only (the
// first, which bootstraps and leads shard 0) becomes the default user's
// password on every node through the log; a node whose own configuration
// sets requirepass is protected from the start, before the state reaches
// it.
func TestClusterRequirePass(t *testing.T) {
	nodes := startClusterWith(t, 3, 1, false, func(i int, cfg *config.Config) {
		if i == 0 || i == 2 {
			cfg.RequirePass = "s3cret"
		}
	})
	for _, cn := range nodes {
		c := dial(t, cn.addr)
		testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
			v, err := c.Do("PING")
			if err != nil {
				return err
			}
			if v.String() != "(error) NOAUTH Authentication required." {
				return fmt.Errorf("%s: PING without AUTH = %s", cn.id, v)
			}
			return nil
		})
		runSteps(t, c, []step{
			{[]string{"AUTH", "wrong"}, "(error) WRONGPASS invalid username-password pair or user is disabled."},
			{[]string{"AUTH", "s3cret"}, "+OK"},
			{[]string{"XLEN", "s"}, "(integer) 0"},
		})
	}
}

// TestClusterACLLoad: ACL LOAD on a follower reads that node's aclfile and
// replaces the users on every node (through shard 0's leader); ACL SAVE
// writes the node's users to its own file.
func TestClusterACLLoad(t *testing.T) {
	dir := t.TempDir()
	file := func(i int) string { return filepath.Join(dir, fmt.Sprintf("n%d.acl", i+1)) }
	for i := range 3 {
		os.WriteFile(file(i), nil, 0o600)
	}
	nodes := startClusterWith(t, 3, 1, false, func(i int, cfg *config.Config) { cfg.ACLFile = file(i) })
	f := followersOf(nodes, 0)[0]
	fi := 0
	for i, cn := range nodes {
		if cn == f {
			fi = i
		}
	}
	os.WriteFile(file(fi), []byte("user loaded on >lp ~* +@read\n"), 0o600)
	c := dial(t, f.addr)
	runSteps(t, c, []step{
		{[]string{"ACL", "LOAD"}, "+OK"},
		{[]string{"ACL", "USERS"}, `["default", "loaded"]`},
		{[]string{"ACL", "SAVE"}, "+OK"},
	})
	for _, cn := range nodes {
		d := dial(t, cn.addr)
		testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
			v, err := d.Do("AUTH", "loaded", "lp")
			if err != nil {
				return err
			}
			if v.String() != "+OK" {
				return fmt.Errorf("%s: AUTH loaded = %s", cn.id, v)
			}
			return nil
		})
	}
	saved, _ := os.ReadFile(file(fi))
	if !strings.Contains(string(saved), "user loaded on sanitize-payload #") {
		t.Errorf("ACL SAVE wrote:\n%s", saved)
	}
}
