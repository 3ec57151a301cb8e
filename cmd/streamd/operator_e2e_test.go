package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"streamd/internal/version"
)

// TestVersionFlag: --version and -v print one line (release, Redis
// release, commit, Go) and exit 0; a binary built with make build's
// -ldflags names the commit, which INFO server reports too.
func TestVersionFlag(t *testing.T) {
	re := regexp.MustCompile(`^streamd ` + regexp.QuoteMeta(version.Release) + ` \(redis ` + regexp.QuoteMeta(version.Redis) +
		` compatible\) git (unknown|[0-9a-f]{40}(-dirty)?) go1\.\d+\S*\n$`)
	for _, a := range []string{"--version", "-v"} {
		out, err := exec.Command(streamdBinary(t), a).Output()
		if err != nil || !re.Match(out) {
			t.Fatalf("streamd %s: %q %v", a, out, err)
		}
	}
	commit, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("no git commit to stamp: %v", err)
	}
	sha := strings.TrimSpace(string(commit))
	bin := filepath.Join(t.TempDir(), "streamd")
	if out, err := exec.Command("go", "build", "-ldflags", "-X streamd/internal/version.commit="+sha+
		" -X streamd/internal/version.dirty=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.Contains(string(out), " git "+sha+"-dirty go") {
		t.Fatalf("stamped --version: %q %v", out, err)
	}
}

// TestUnknownFlag: a mistyped flag is refused (exit 1) with the nearest
// directive and a pointer to --help, before anything is created on disk.
func TestUnknownFlag(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(streamdBinary(t), "--dir", dir, "--prot", "7000")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v", err)
	}
	if want := "streamd: unknown flag --prot (did you mean --port?); see streamd --help\n"; string(out) != want {
		t.Fatalf("output %q, want %q", out, want)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dir created: %v", err)
	}
}

// TestRedisConfStarts: Debian's redis.conf (the machine's, copied, else
// the checked-in copy of its directives) starts streamd, with port and dir
// given on the command line (flags win over the file): one warning line per
// Redis directive it ignores, appendfsync everysec from the file honoured,
// CONFIG GET dir absolute. A file with a misspelt directive is refused
// naming the line and the nearest name.
func TestRedisConfStarts(t *testing.T) {
	src := "/etc/redis/redis.conf"
	b, err := os.ReadFile(src)
	if err != nil {
		t.Logf("%v: using the checked-in copy", err)
		if b, err = os.ReadFile(filepath.Join("..", "..", "config", "testdata", "redis-debian.conf")); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(t.TempDir(), "redis.conf")
	if err := os.WriteFile(conf, b, 0o600); err != nil {
		t.Fatal(err)
	}
	port := pickPort(t)
	dir := t.TempDir()
	s := startReady(t, port, dir, conf)
	c := newClient(t, port, 0)
	do(t, c, "XADD", "s", "*", "f", "v")
	if got := asList(t, "CONFIG GET", do(t, c, "CONFIG", "GET", "appendfsync")); got[1] != "everysec" {
		t.Errorf("appendfsync %v, want the file's everysec", got)
	}
	if got := asList(t, "CONFIG GET", do(t, c, "CONFIG", "GET", "dir")); got[1] != dir {
		t.Errorf("dir %v, want %s", got, dir)
	}
	logs := s.stderr.String()
	for _, name := range []string{"tcp-backlog", "daemonize", "supervised", "pidfile", "logfile", "rdbcompression",
		"lazyfree-lazy-eviction", "client-output-buffer-limit"} {
		if name == "supervised" && !strings.Contains(string(b), "\nsupervised ") {
			continue // commented out in this copy
		}
		if n := strings.Count(logs, "ignoring Redis directive '"+name+"' (streamd does not use it)"); n != 1 {
			t.Errorf("%d warning lines for %s", n, name)
		}
	}
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "ignoring 'appendonly no'") {
		t.Errorf("no appendonly warning:\n%s", logs)
	}
	s.terminate()

	bad := filepath.Join(t.TempDir(), "bad.conf")
	if err := os.WriteFile(bad, []byte("# a typo\nprot 7000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(streamdBinary(t), bad, "--dir", filepath.Join(t.TempDir(), "d")).CombinedOutput()
	want := "streamd: " + bad + `:2: "prot 7000": Bad directive or wrong number of arguments (did you mean 'port'?)` + "\n"
	if err == nil || string(out) != want {
		t.Fatalf("bad file: %v %q, want %q", err, out, want)
	}
}
