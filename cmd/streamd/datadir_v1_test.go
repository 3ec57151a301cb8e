package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

var (
	fixtureBin     = flag.String("fixture.bin", "", "TestDataDirV1Fixture: run this binary instead of the one built from the tree (to record expected.txt with the release that wrote the fixture)")
	fixtureRewrite = flag.Bool("fixture.rewrite", false, "TestDataDirV1Fixture: write expected.txt from the replies instead of comparing")
)

// TestDataDirV1Fixture opens the data directory of testdata/datadir-v1
// (written by the release whose snapshots are version 1: a snapshot and log
// entries after it; see make.sh there) and requires the replies to
// queries.txt that the release itself gave (expected.txt): a version 1
// snapshot restores and the log replays on top of it. After a SAVE (a
// version 2 snapshot) and a restart from it, the replies are the same again.
func TestDataDirV1Fixture(t *testing.T) {
	fixture := filepath.Join("..", "..", "testdata", "datadir-v1")
	queries, err := os.ReadFile(filepath.Join(fixture, "queries.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(testutil.Untar(t, filepath.Join(fixture, "datadir.tar.gz")), "data")
	port := pickPort(t)
	var s *proc
	if *fixtureBin != "" {
		s = launch(t, *fixtureBin, []string{"--port", strconv.Itoa(port), "--dir", dir, "--metrics-addr", ""}, port, dir)
		s.waitReady(60 * time.Second)
	} else {
		s = startReady(t, port, dir)
	}
	got := fixtureReplies(t, port, string(queries))
	path := filepath.Join(fixture, "expected.txt")
	if *fixtureRewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("replies of the v1 data directory differ from expected.txt:\n%s", lineDiff(string(want), got))
	}
	// Saved again (version 2) and restarted from that snapshot alone.
	c := newClient(t, port, 0)
	do(t, c, "SAVE")
	s.terminate()
	startReady(t, port, dir)
	if again := fixtureReplies(t, port, string(queries)); again != string(want) {
		t.Fatalf("replies after SAVE and restart differ from expected.txt:\n%s", lineDiff(string(want), again))
	}
}

// fixtureReplies runs the queries and renders each command and its reply.
func fixtureReplies(t *testing.T, port int, queries string) string {
	t.Helper()
	var b strings.Builder
	db := 0
	c := newClient(t, port, db)
	for _, line := range strings.Split(queries, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		words := strings.Fields(line)
		if words[0] == "db" {
			db, _ = strconv.Atoi(words[1])
			c = newClient(t, port, db)
			fmt.Fprintf(&b, "db %d\n", db)
			continue
		}
		args := make([]any, len(words))
		for i, w := range words {
			args[i] = w
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		v, err := c.Do(ctx, args...).Result()
		cancel()
		fmt.Fprintf(&b, "> %s\n", line)
		switch {
		case errors.Is(err, redis.Nil):
			b.WriteString("(nil)\n")
		case err != nil:
			fmt.Fprintf(&b, "(error) %s\n", err)
		default:
			b.WriteString(renderReply(v, line) + "\n")
		}
	}
	return dropRedis8Defaults(b.String())
}

// dropRedis8Defaults removes from rendered replies the XINFO fields Redis 8
// added after the fixture's release recorded them (IDMP's six fields of a
// stream that never used IDMP, a group's nacked-count 0): data written
// before those features reads as "none of it".
func dropRedis8Defaults(s string) string {
	s = strings.ReplaceAll(s, `"idmp-duration" 100 "idmp-maxsize" 100 "pids-tracked" 0 "iids-tracked" 0 "iids-added" 0 "iids-duplicates" 0 `, "")
	return strings.ReplaceAll(s, `"nacked-count" 0 `, "")
}

// renderReply renders a RESP2 reply to the command line cmd; strings over
// 64 bytes as their length and SHA-256. ACL LIST's lines are sorted.
func renderReply(v any, cmd string) string {
	switch v := v.(type) {
	case string:
		if len(v) > 64 {
			return fmt.Sprintf("<%d bytes sha256 %x>", len(v), sha256.Sum256([]byte(v)))
		}
		return strconv.Quote(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = renderReply(x, "")
		}
		if strings.EqualFold(cmd, "ACL LIST") {
			sort.Strings(parts)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case nil:
		return "(nil)"
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

// lineDiff lists the lines that differ between want and got.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d\n  want %s\n  got  %s\n", i+1, a, c)
		}
	}
	return b.String()
}
