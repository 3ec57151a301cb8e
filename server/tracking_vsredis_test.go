package server

import (
	"strings"
	"testing"
)

// These tests depend on hooks called from files owned by others:
// trackingAfterCommand (dispatch.go, after every command),
// invalidateFlushBy(c) (plan.go notify) and releaseAfterReply (pipeline.go
// drain, after each batched write's effects).

// TestTrackingCachingNextCommandVsRedis checks that CLIENT CACHING's answer
// applies to the next command only, whatever it is (a CLIENT subcommand
// keeps it, MULTI keeps it for the whole transaction), by comparing which
// keys end up tracked with redis-server.
func TestTrackingCachingNextCommandVsRedis(t *testing.T) {
	raddr := startRedis(t)
	_, saddr := startTestServer(t, nil)
	scripts := []struct {
		name string
		mode string
		cmds [][]string
	}{
		{"optin ping between", "OPTIN", [][]string{{"CLIENT", "CACHING", "yes"}, {"PING"}, {"XLEN", "a"}}},
		{"optin unknown command between", "OPTIN", [][]string{{"CLIENT", "CACHING", "yes"}, {"NOSUCHCMD"}, {"XLEN", "a"}}},
		{"optin client getname between", "OPTIN", [][]string{{"CLIENT", "CACHING", "yes"}, {"CLIENT", "GETNAME"}, {"XLEN", "a"}}},
		{"optin next only", "OPTIN", [][]string{{"CLIENT", "CACHING", "yes"}, {"XLEN", "a"}, {"XLEN", "b"}}},
		{"optin multi", "OPTIN", [][]string{{"CLIENT", "CACHING", "yes"}, {"MULTI"}, {"XLEN", "a"}, {"XLEN", "b"}, {"EXEC"}, {"XLEN", "c"}}},
		{"optout ping between", "OPTOUT", [][]string{{"CLIENT", "CACHING", "no"}, {"PING"}, {"XLEN", "a"}, {"XLEN", "b"}}},
		{"optout next only", "OPTOUT", [][]string{{"CLIENT", "CACHING", "no"}, {"XLEN", "a"}, {"XLEN", "b"}}},
	}
	for _, sc := range scripts {
		var got [2][]string
		for i, addr := range []string{raddr, saddr} {
			c, o := dial(t, addr), dial(t, addr)
			mustDo(t, o, "FLUSHALL")
			mustDo(t, c, "HELLO", "3")
			mustDo(t, c, "CLIENT", "TRACKING", "on", sc.mode)
			out := sendOrdered(t, c, sc.cmds)
			for _, k := range []string{"a", "b", "c"} {
				mustDo(t, o, "XADD", k, "*", "f", "v")
			}
			out = append(out, "--")
			out = append(out, sendOrdered(t, c, nil)...)
			got[i] = out
			c.Close()
			o.Close()
		}
		if strings.Join(got[1], " | ") != strings.Join(got[0], " | ") {
			t.Errorf("%s:\n streamd %q\n redis   %q", sc.name, got[1], got[0])
		}
	}
}

// TestTrackingOwnPushOrderWiredVsRedis checks the orders that need the
// wiring above: a FLUSHALL inside EXEC is answered before its [invalidate,
// null], and a pipeline's own-write invalidations each follow their reply
// right away, as in Redis.
func TestTrackingOwnPushOrderWiredVsRedis(t *testing.T) {
	raddr := startRedis(t)
	_, saddr := startTestServer(t, nil)
	for _, sc := range []struct {
		name      string
		pipelined bool
		cmds      [][]string
		reads     int
	}{
		{"exec flushall", false, [][]string{{"MULTI"}, {"FLUSHALL"}, {"EXEC"}}, 0},
		{"pipeline", true, [][]string{{"XADD", "k", "2-1", "f", "v"}, {"XLEN", "k"}, {"XADD", "k", "3-1", "f", "v"}, {"PING"}}, 6},
	} {
		var got [2][]string
		for i, addr := range []string{raddr, saddr} {
			c := trackingClient(t, addr)
			if sc.pipelined {
				var raw strings.Builder
				for _, cmd := range sc.cmds {
					raw.WriteString(respCommand(cmd))
				}
				if err := c.SendRaw([]byte(raw.String())); err != nil {
					t.Fatal(err)
				}
				got[i] = readN(t, c, sc.reads)
			} else {
				got[i] = sendOrdered(t, c, sc.cmds)
			}
			c.Close()
		}
		if strings.Join(got[1], " | ") != strings.Join(got[0], " | ") {
			t.Errorf("%s:\n streamd %q\n redis   %q", sc.name, got[1], got[0])
		}
	}
}
