package server

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Redis 8 expectation scripts (testdata/redis8/*.txt): the spec's
// [test] blocks (redis8-streams.md) as commands and the replies streamd
// must give, since no Redis 8 server exists here to compare with. Each
// script runs in RESP2 and RESP3 against a fresh in-process server.
//
//	COMMAND args... ==> reply            Value.String rendering, both protocols
//	COMMAND args... ==> resp2 ||| resp3  when the protocols differ
//	reset                                FLUSHALL, stream-node-max-entries 100
//	# comment, blank lines ignored
//
// Arguments are split on white space (no quoting).

// redis8Step is one line of a script.
type redis8Step struct {
	line         int
	args         []string
	want2, want3 string
}

func loadRedis8Script(t *testing.T, path string) []redis8Step {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []redis8Step
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if line == "reset" {
			steps = append(steps, redis8Step{line: n})
			continue
		}
		cmd, want, ok := strings.Cut(line, " ==> ")
		if !ok {
			t.Fatalf("%s:%d: no ' ==> ' in %q", path, n, line)
		}
		w2, w3, two := strings.Cut(want, " ||| ")
		if !two {
			w3 = w2
		}
		steps = append(steps, redis8Step{line: n, args: strings.Fields(cmd), want2: w2, want3: w3})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return steps
}

func TestRedis8Scripts(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "redis8", "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, path := range paths {
		steps := loadRedis8Script(t, path)
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/resp%d", filepath.Base(path), proto), func(t *testing.T) {
				_, addr := startTestServer(t, nil)
				c := dial(t, addr)
				if proto == 3 {
					mustDo(t, c, "HELLO", "3")
				}
				for _, st := range steps {
					if st.args == nil {
						mustDo(t, c, "FLUSHALL")
						mustDo(t, c, "CONFIG", "SET", "stream-node-max-entries", "100")
						continue
					}
					v, err := c.Do(st.args...)
					if err != nil {
						t.Fatalf("%s:%d %q: %v", filepath.Base(path), st.line, st.args, err)
					}
					want := st.want2
					if proto == 3 {
						want = st.want3
					}
					if got := v.String(); got != want {
						t.Errorf("%s:%d %s:\n got %s\nwant %s", filepath.Base(path), st.line, strings.Join(st.args, " "), got, want)
					}
				}
			})
		}
	}
}
