package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	stamped := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.modified", Value: "true"},
		}}, true
	}
	in := read("", "", stamped)
	if in.Commit != "0123456789abcdef0123456789abcdef01234567" || !in.Dirty || in.SHA1() != "01234567" || in.DirtyFlag() != "1" {
		t.Fatalf("stamped: %+v", in)
	}
	if got, want := in.String(), "streamd "+Release+" (redis 7.2.4 compatible) git 0123456789abcdef0123456789abcdef01234567-dirty go1.26.8"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	if len(in.BuildID) != 16 {
		t.Fatalf("BuildID %q", in.BuildID)
	}
	// -ldflags win over the stamp.
	ld := read("fedcba9876543210fedcba9876543210fedcba98", "false", stamped)
	if ld.Commit != "fedcba9876543210fedcba9876543210fedcba98" || ld.Dirty || ld.DirtyFlag() != "0" {
		t.Fatalf("ldflags: %+v", ld)
	}
	if ld.BuildID == in.BuildID {
		t.Fatal("two commits, one build id")
	}
	// Nothing known: Redis's 00000000 and "git unknown".
	none := read("", "", func() (*debug.BuildInfo, bool) { return nil, false })
	if none.SHA1() != "00000000" || none.BuildID != "" || !strings.Contains(none.String(), " git unknown go") {
		t.Fatalf("unknown: %+v %q", none, none.String())
	}
}
