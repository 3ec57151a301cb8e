package router

import (
	"errors"
	"testing"

	"streamd/server/resp"
)

// TestRelayedKeepsBytes checks a relayed reply is written as it came, in
// both protocols, and a simple error becomes an ErrorReply.
func TestRelayedKeepsBytes(t *testing.T) {
	if r, ok := Relayed([]byte("-MOVED 1 x:1\r\n")).(resp.ErrorReply); !ok || r != "MOVED 1 x:1" {
		t.Fatalf("relayed error = %#v", r)
	}
	raw := "%1\r\n+a\r\n#t\r\n"
	if r, ok := Relayed([]byte(raw)).(Raw); !ok || string(r) != raw {
		t.Fatalf("relayed map = %#v", r)
	}
}

// TestForwardReplies pins the texts of a broken or unreachable upstream.
func TestForwardReplies(t *testing.T) {
	for kind, want := range map[FwdKind]resp.ErrorReply{
		FwdRead:     "TRYAGAIN lost the connection to the shard leader; the command was not run",
		FwdWrite:    "ERR outcome unknown: lost the connection to the shard leader; the write may or may not have been applied",
		FwdBlocking: ErrFailoverUnblocked,
	} {
		if got := BrokenReply(kind); got != want {
			t.Errorf("BrokenReply(%d) = %q, want %q", kind, got, want)
		}
	}
	if got := DialFailedReply("h:1", errors.New("refused")); got != "TRYAGAIN cannot reach the shard leader at h:1: refused; the command was not run" {
		t.Errorf("DialFailedReply = %q", got)
	}
	if !DialFailed(DialFailedReply("h:1", errors.New("refused"))) || DialFailed(BrokenReply(FwdRead)) ||
		DialFailed(resp.ErrorReply("TRYAGAIN leadership of the shard is being transferred; the write was not applied")) {
		t.Error("DialFailed")
	}
	if !RefusedUnrun(resp.ErrorReply("TRYAGAIN x")) || RefusedUnrun(resp.ErrorReply("TRYAGAINx")) || RefusedUnrun(Raw("+OK\r\n")) {
		t.Error("RefusedUnrun")
	}
}

// TestBlockingArgs: BLOCK before STREAMS makes a blocking read, in any case.
func TestBlockingArgs(t *testing.T) {
	args := func(ss ...string) [][]byte {
		out := make([][]byte, len(ss))
		for i, s := range ss {
			out[i] = []byte(s)
		}
		return out
	}
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{[]string{"XREAD", "block", "0", "STREAMS", "s", "$"}, true},
		{[]string{"XREAD", "COUNT", "1", "STREAMS", "s", "0"}, false},
		{[]string{"XREAD", "STREAMS", "BLOCK", "0"}, false},
	} {
		if got := BlockingArgs(args(tt.args...)); got != tt.want {
			t.Errorf("BlockingArgs(%q) = %v", tt.args, got)
		}
	}
}
