package server

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamd/internal/testutil"
)

// TestInternalConnsHidden: other nodes' connections (ServeInternal) do not
// show in CLIENT LIST, cannot be killed or unblocked by ID, and count in
// INFO clients as cluster_connections, not connected_clients.
func TestInternalConnsHidden(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close() })
	go srv.ServeInternal(b)
	var internalID int64
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		for id, c := range srv.clients {
			if c.internal {
				internalID = id
				return nil
			}
		}
		return fmt.Errorf("no internal client")
	})
	c := dial(t, addr)
	v, err := c.Do("CLIENT", "LIST")
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(v.Str), "\n"); len(lines) != 1 || strings.Contains(v.Str, "id="+strconv.FormatInt(internalID, 10)+" ") {
		t.Fatalf("CLIENT LIST shows the internal connection:\n%s", v.Str)
	}
	id := strconv.FormatInt(internalID, 10)
	runSteps(t, c, []step{
		{[]string{"CLIENT", "LIST", "ID", id}, `""`},
		{[]string{"CLIENT", "KILL", "ID", id}, "(integer) 0"},
		{[]string{"CLIENT", "UNBLOCK", id}, "(integer) 0"},
	})
	v, err = c.Do("INFO", "clients")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v.Str, "connected_clients:1\r\n") || !strings.Contains(v.Str, "cluster_connections:1\r\n") {
		t.Fatalf("INFO clients:\n%s", v.Str)
	}
	// The internal connection is still served (as the user the forwarding
	// node names first: it starts with no rights).
	a.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(a, "STREAMD.AUTHAS default\r\nPING\r\n")
	want := "+OK\r\n+PONG\r\n"
	buf := make([]byte, len(want))
	if n, err := io.ReadFull(a, buf); err != nil || string(buf[:n]) != want {
		t.Fatalf("internal AUTHAS + PING: %q %v", buf[:n], err)
	}
}
