package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadConfigFile(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		check   func(Config) bool
		wantErr string
	}{
		{"defaults kept", "# nothing\n\n", func(c Config) bool { return c == DefaultConfig() }, ""},
		{"port and bind", "port 7000\nbind 127.0.0.1 -::1\n",
			func(c Config) bool { return c.Port == 7000 && c.Bind == "127.0.0.1 -::1" }, ""},
		{"quoted password", `requirepass "p a\x41ss"` + "\n", func(c Config) bool { return c.RequirePass == "p aAss" }, ""},
		{"single quotes", "dir '/tmp/x y'\n", func(c Config) bool { return c.Dir == "/tmp/x y" }, ""},
		{"memory units", "proto-max-bulk-len 1gb\nstream-node-max-bytes 4kb\n",
			func(c Config) bool { return c.ProtoMaxBulkLen == 1<<30 && c.StreamNodeMaxBytes == 4096 }, ""},
		{"names case-insensitive", "MAXCLIENTS 50\nStream-Node-Max-Entries 7\n",
			func(c Config) bool { return c.MaxClients == 50 && c.StreamNodeMaxEntries == 7 }, ""},
		{"inert directives at their only value", "save \"\"\nappendonly yes\ndatabases 16\n",
			func(c Config) bool { return true }, ""},
		{"unknown directive", "foo bar\n", nil, "Bad directive"},
		{"wrong arg count", "port 1 2\n", nil, "Bad directive"},
		{"bad integer", "maxclients many\n", nil, "couldn't be parsed into an integer"},
		{"out of range", "proto-max-bulk-len 10\n", nil, "between 1048576"},
		{"unbalanced quotes", "dir \"abc\n", nil, "unbalanced quotes"},
		{"unsupported value", "appendonly no\n", nil, "supports only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "streamd.conf")
			if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := DefaultConfig()
			err := LoadConfigFile(path, &cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), ":1:") {
					t.Fatalf("err %v does not name line 1", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(cfg) {
				t.Fatalf("unexpected config %+v", cfg)
			}
		})
	}
}

func TestParseMemory(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"100", 100, true}, {"1k", 1000, true}, {"1KB", 1024, true}, {"2m", 2e6, true},
		{"2mb", 2 << 20, true}, {"1g", 1e9, true}, {"512mb", 512 << 20, true}, {"7b", 7, true},
		{"x", 0, false}, {"-1", 0, false}, {"99999999999gb", 0, false},
	}
	for _, tt := range tests {
		got, err := parseMemory(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseMemory(%q) = %d, %v; want %d ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
