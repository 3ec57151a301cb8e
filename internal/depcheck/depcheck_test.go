// Package depcheck holds a test that keeps the package graph as
// ARCHITECTURE.md draws it: imports go one way,
// cmd → server → server/router, server/metrics, server/xreply → replication →
// replication/state → groups → pel → streams, the leaves (config,
// replication/wire, replication/logstore, server/resp, server/observe,
// server/tracking, server/info, server/clients, server/xargs, server/cmdinfo, internal/mux,
// internal/keywait, internal/glob, internal/acl, internal/lograte) import no layer above them, config is
// imported only by cmd/streamd and server, and
// the engine packages stay pure (no clock, no
// randomness, no network/Raft/metrics libraries).
package depcheck

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "streamd"

// layers ranks the chain: a package may import only packages of a higher
// rank (further down the chain), and leaves.
var layers = map[string]int{
	"cmd/streamd":       0,
	"server":            1,
	"server/router":     2, // routing: server uses it; it never imports server
	"server/metrics":    2, // Prometheus exposition and stats: server uses it; it never imports server
	"server/xreply":     2, // the stream commands' reply shapes from replication/state results; never imports server
	"replication":       3,
	"replication/state": 4,
	"groups":            5,
	"pel":               6,
	"streams":           7,
}

// leaves may be imported from any layer; their own streamd imports are
// limited to the listed packages. replication/logstore sits below
// replication (its log stores know nothing of entries, snapshots or the
// state machine); internal/mux is the raft port that replication (raft
// streams, node RPCs) and the server (forwarded commands) both plug into,
// so neither calls back into the other.
var leaves = map[string][]string{
	"config":                   {"server/resp", "internal/tlsconf"},
	"replication/wire":         {"streams"},
	"replication/logstore":     nil,
	"server/resp":              {"internal/redisint"},                          // the protocol alone (and string2ll)
	"server/observe":           {"server/resp"},                                // SLOWLOG's log, MONITOR's lines and fan-out
	"server/tracking":          {"server/resp"},                                // client-side caching's tracking table
	"server/info":              nil,                                            // INFO's text from plain data
	"server/clients":           {"server/resp"},                                // CLIENT's info line, LIST/KILL filters, name checks, HELP
	"server/xargs":             {"server/resp", "replication/wire", "streams"}, // stream commands' arguments → wire ops
	"server/cmdinfo":           {"server/resp", "internal/glob"},               // COMMAND INFO/DOCS/LIST from plain descriptions
	"internal/mux":             {"internal/lograte"},
	"internal/lograte":         nil,               // a log line at most once a period
	"internal/memsize":         nil,               // allocation sizes for the memory accounting
	"internal/redisint":        nil,               // Redis's string2ll (resp's lengths, streams' listpack sizes)
	"internal/acl":             {"internal/glob"}, // ACL users: rules, checks, aclfile, ACL LOG
	"internal/tlsconf":         nil,               // the tls-* settings → crypto/tls configurations (stdlib only)
	"internal/tlsconf/tlstest": nil,               // throw-away CAs and certificates for tests
	"internal/keywait":         nil,
	"internal/glob":            nil,
	"internal/depcheck":        nil,
	"internal/testutil":        nil,
	"internal/metricstest":     nil,
	"internal/version":         nil, // --version and INFO server: release, git commit, build id (stdlib only)
	"bench/consume":            nil, // bench/memory_speed.sh's group-consume load (a redigo client)
	"bench/floor":              nil, // bench/writepath.sh MODE=floor: the least a Go server does for a durable XADD
}

// importedOnlyBy limits which packages may import a leaf: the
// configuration is read by main and the server, which hand the values on
// (replication takes options, not a config.Config).
var importedOnlyBy = map[string][]string{
	"config": {"cmd/streamd", "server"},
}

// engine packages replay the log on every replica: they must compute the
// same result from the same entries. internal/acl is held to the same
// purity (time and random bytes are passed in).
var engine = []string{"streams", "pel", "groups", "replication/state", "replication/wire", "internal/acl"}

// forbiddenInEngine are import paths an engine package must not depend on,
// even transitively (a path and everything under it).
var forbiddenInEngine = []string{
	"github.com/tidwall/redcon",
	"github.com/hashicorp/raft",
	"github.com/prometheus/",
	"github.com/redis/go-redis",
	"net",
	"os/exec",
}

// moduleRoot is the directory holding go.mod (two levels up from here).
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

// rel strips the module prefix ("streamd/pel" → "pel"); ok is false for
// packages outside the module.
func rel(path string) (string, bool) {
	if !strings.HasPrefix(path, module+"/") {
		return "", false
	}
	return strings.TrimPrefix(path, module+"/"), true
}

func TestImportsFollowTheChain(t *testing.T) {
	// One line per package: "pkg imp1 imp2 ..." (direct imports, tests excluded).
	for _, line := range goListLines(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		pkg, _ := rel(f[0])
		rank, layered := layers[pkg]
		allowed, leaf := leaves[pkg]
		if !layered && !leaf {
			t.Errorf("package %s is not in the chain: add it to internal/depcheck and ARCHITECTURE.md", pkg)
			continue
		}
		for _, imp := range f[1:] {
			dep, inModule := rel(imp)
			if !inModule {
				continue
			}
			if only, ok := importedOnlyBy[dep]; ok && !contains(only, pkg) {
				t.Errorf("%s imports %s; only %v may", pkg, dep, only)
			}
			if leaf {
				if !contains(allowed, dep) {
					t.Errorf("leaf %s imports %s; it may import only %v", pkg, dep, allowed)
				}
				continue
			}
			if _, isLeaf := leaves[dep]; isLeaf {
				continue
			}
			depRank, ok := layers[dep]
			if !ok {
				t.Errorf("%s imports %s, which is not in the chain", pkg, dep)
			} else if depRank <= rank {
				t.Errorf("%s imports %s: imports must go down the chain cmd → server → server/router, server/metrics, server/xreply → replication → replication/state → groups → pel → streams", pkg, dep)
			}
		}
	}
}

// goListLines runs `go list -e ARGS` from the module root and returns its
// output lines.
func goListLines(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-e"}, args...)...)
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.String())
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

func TestEngineDependencies(t *testing.T) {
	for _, pkg := range engine {
		if _, err := os.Stat(filepath.Join(moduleRoot(t), pkg)); err != nil {
			t.Errorf("engine package %s missing: %v", pkg, err)
			continue
		}
		for _, dep := range goListLines(t, "-deps", "-f", "{{.ImportPath}}", "./"+pkg) {
			for _, bad := range forbiddenInEngine {
				if dep == strings.TrimSuffix(bad, "/") || strings.HasPrefix(dep, strings.TrimSuffix(bad, "/")+"/") {
					t.Errorf("engine package %s depends on %s", pkg, dep)
				}
			}
		}
	}
}

// TestEngineReadsNoClockOrRandomness scans the engine's non-test sources:
// no time.Now (time enters only through the log entry's nowMs) and no
// math/rand or crypto/rand import.
func TestEngineReadsNoClockOrRandomness(t *testing.T) {
	root := moduleRoot(t)
	for _, pkg := range engine {
		files, _ := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				continue
			}
			name := filepath.Join(pkg, filepath.Base(path))
			timeName := ""
			for _, imp := range f.Imports {
				p := strings.Trim(imp.Path.Value, `"`)
				switch p {
				case "math/rand", "math/rand/v2", "crypto/rand":
					t.Errorf("%s imports %s: the engine must be deterministic", name, p)
				case "time":
					timeName = "time"
					if imp.Name != nil {
						timeName = imp.Name.Name
					}
				}
			}
			if timeName == "" {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == timeName {
					switch sel.Sel.Name {
					case "Now", "Since", "Until", "After", "Tick", "NewTimer", "NewTicker", "AfterFunc", "Sleep":
						t.Errorf("%s: time.%s at %s: the engine reads no clock (use the entry's nowMs)",
							name, sel.Sel.Name, fset.Position(sel.Pos()))
					}
				}
				return true
			})
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
