package resp

import "testing"

// TestErrorText pins the one rule for error codes, including the texts on
// which server's two former copies of it disagreed (a single upper-case
// word; a first word with digits or punctuation).
func TestErrorText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"MISCONF Errors writing to the log", "MISCONF Errors writing to the log"},
		{"TRYAGAIN this node does not lead the shard", "TRYAGAIN this node does not lead the shard"},
		{"CLUSTERDOWN The cluster is down", "CLUSTERDOWN The cluster is down"},
		{"ERR already an error", "ERR already an error"},
		{"NOGROUP No such key", "NOGROUP No such key"},
		{"snapshot failed", "ERR snapshot failed"},
		{"raft: not the leader", "ERR raft: not the leader"},
		{"Raft is shut down", "ERR Raft is shut down"},
		{"", "ERR "},
		{" leading space", "ERR  leading space"},
		{"EOF", "ERR EOF"},             // no space: no code (Redis counts it as ERR)
		{"X1 digits", "ERR X1 digits"}, // codes are letters only
		{"RAFT-ADD failed", "ERR RAFT-ADD failed"},
		{"ERR: colon", "ERR ERR: colon"},
		{"ÉCHEC accented", "ERR ÉCHEC accented"},
	}
	for _, tt := range tests {
		if got := ErrorText(tt.in); got != tt.want {
			t.Errorf("ErrorText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
