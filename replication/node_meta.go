package replication

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clusterFile is the small text file in a data directory that pins what the
// directory holds: the node id its raft state belongs to and the number of
// shards its keys are split into. Opening the directory as another node or
// with another shard count would misroute keys or start raft under a foreign
// identity, so OpenNode refuses it.
const clusterFile = "CLUSTER"

// nodeMeta is the content of the CLUSTER file.
type nodeMeta struct {
	NodeID string // "" for the embedded single node
	Shards int
}

// shardDir is shard i's data directory: dir itself for shard 0 (the layout
// of a single-shard server), dir/shard-<i> for the others.
func shardDir(dir string, i int) string {
	if dir == "" || i == 0 {
		return dir
	}
	return filepath.Join(dir, fmt.Sprintf("shard-%d", i))
}

// checkNodeMeta compares the directory's CLUSTER file with want, and writes
// the file when there is none. A directory holding data from before the file
// existed (a single-node server) counts as {NodeID: "", Shards: 1}.
func checkNodeMeta(dir string, want nodeMeta) error {
	path := filepath.Join(dir, clusterFile)
	have, err := readNodeMeta(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if hasShardData(dir) {
			have = nodeMeta{NodeID: "", Shards: 1}
		} else {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			return writeNodeMeta(path, want)
		}
	case err != nil:
		return err
	}
	if have.NodeID != want.NodeID {
		return fmt.Errorf("%s: the data directory belongs to %s, not %s; start with the node-id it was created with, or use another directory",
			path, describeNodeID(have.NodeID), describeNodeID(want.NodeID))
	}
	if have.Shards != want.Shards {
		return fmt.Errorf("%s: the data directory holds %d shard(s), not %d; the shard count cannot change (keys would move between shards)",
			path, have.Shards, want.Shards)
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		// Old single-node data: pin it now.
		return writeNodeMeta(path, want)
	}
	return nil
}

func describeNodeID(id string) string {
	if id == "" {
		return "a single (non-cluster) node"
	}
	return "node-id " + strconv.Quote(id)
}

// hasShardData reports whether dir already holds a shard's log or snapshots.
func hasShardData(dir string) bool {
	for _, name := range []string{"raft.db", "wal", "snapshots"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// readNodeMeta parses a CLUSTER file: "node-id <id>" and "shards <n>" lines;
// blank lines and lines starting with '#' are ignored.
func readNodeMeta(path string) (nodeMeta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nodeMeta{}, err
	}
	defer f.Close()
	var m nodeMeta
	seenShards := false
	sc := bufio.NewScanner(f)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		key, val, _ := strings.Cut(line, " ")
		val = strings.TrimSpace(val)
		switch key {
		case "node-id":
			m.NodeID = val
		case "shards":
			v, err := strconv.Atoi(val)
			if err != nil || v < 1 {
				return m, fmt.Errorf("%s:%d: bad shard count %q", path, ln, val)
			}
			m.Shards, seenShards = v, true
		default:
			return m, fmt.Errorf("%s:%d: unknown setting %q", path, ln, key)
		}
	}
	if err := sc.Err(); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	if !seenShards {
		return m, fmt.Errorf("%s: no shards line", path)
	}
	return m, nil
}

// writeNodeMeta writes a CLUSTER file atomically (writeFileAtomic).
func writeNodeMeta(path string, m nodeMeta) error {
	var b strings.Builder
	b.WriteString("# streamd: what this data directory holds; do not edit\n")
	if m.NodeID != "" {
		fmt.Fprintf(&b, "node-id %s\n", m.NodeID)
	}
	fmt.Fprintf(&b, "shards %d\n", m.Shards)
	return writeFileAtomic(path, b.String())
}

// writeFileAtomic writes a small file atomically and durably (temporary
// file, fsync, rename, fsync of the directory).
func writeFileAtomic(path, content string) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}
