// Package version says which streamd this is: its release, the Redis
// release whose behaviour it follows, and the source it was built from (the
// git commit and whether the tree had uncommitted changes), for --version
// and INFO server. The commit comes from the -ldflags `make build` sets
// (-X streamd/internal/version.commit=… and .dirty=…) or else from the
// build information the go command stamps into a binary built inside a git
// checkout (vcs.revision, vcs.modified); a binary built without either
// (go test, -buildvcs=false) says it does not know. Leaf: stdlib only.
package version

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// Release is streamd's own version.
const Release = "0.12.0"

// Redis is the Redis release whose commands, replies and errors streamd
// follows (INFO's redis_version, HELLO's version).
const Redis = "7.2.4"

// Set by `make build` through -ldflags -X (strings: "" = not given).
var (
	commit string // full git commit hash
	dirty  string // "true" or "false"
)

// Info is what is known of this binary's build.
type Info struct {
	// Commit is the full git commit hash ("" = unknown).
	Commit string
	// Dirty reports uncommitted changes in the tree it was built from.
	Dirty bool
	// GoVersion is the Go release that built it (runtime.Version).
	GoVersion string
	// BuildID identifies the build: 16 hex digits of a SHA-256 over the
	// Go build information (module versions, build settings, commit), as
	// Redis's redis_build_id identifies its build.
	BuildID string
}

var (
	once   sync.Once
	cached Info
)

// Get returns this binary's build information (computed once).
func Get() Info {
	once.Do(func() { cached = read(commit, dirty, debug.ReadBuildInfo) })
	return cached
}

// read combines the -ldflags values with the stamped build information
// (readBuild is debug.ReadBuildInfo; a parameter for the tests).
func read(ldCommit, ldDirty string, readBuild func() (*debug.BuildInfo, bool)) Info {
	in := Info{GoVersion: runtime.Version(), Commit: ldCommit, Dirty: ldDirty == "true"}
	bi, ok := readBuild()
	if !ok {
		return in
	}
	if bi.GoVersion != "" {
		in.GoVersion = bi.GoVersion
	}
	if in.Commit == "" {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Commit = s.Value
			case "vcs.modified":
				in.Dirty = s.Value == "true"
			}
		}
	}
	sum := sha256.Sum256([]byte(bi.String() + "\x00" + in.Commit))
	in.BuildID = hex.EncodeToString(sum[:8])
	return in
}

// SHA1 is Redis's redis_git_sha1 for this build: the commit's first 8 hex
// digits, or "00000000" (what Redis reports) when the commit is unknown.
func (in Info) SHA1() string {
	if len(in.Commit) < 8 {
		return "00000000"
	}
	return in.Commit[:8]
}

// DirtyFlag is Redis's redis_git_dirty: "1" for a tree with uncommitted
// changes, else "0".
func (in Info) DirtyFlag() string {
	if in.Dirty {
		return "1"
	}
	return "0"
}

// String is the --version line: "streamd 0.12.0 (redis 7.2.4 compatible)
// git 1a2b3c4d5e6f… go1.26.8", with "-dirty" after a modified tree's commit
// and "git unknown" when the commit is not known.
func (in Info) String() string {
	c := in.Commit
	switch {
	case c == "":
		c = "unknown"
	case in.Dirty:
		c += "-dirty"
	}
	return fmt.Sprintf("streamd %s (redis %s compatible) git %s %s", Release, Redis, c, in.GoVersion)
}
