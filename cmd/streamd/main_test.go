package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseArgs(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "s.conf")
	if err := os.WriteFile(conf, []byte("port 7000\nrequirepass filepass\nmaxclients 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		args            []string
		port            int
		bind, dir, pass string
		maxClients      int
		wantErr         bool
	}{
		{"defaults", nil, 6379, "127.0.0.1", "./data", "", 10000, false},
		{"flags", []string{"--port", "7001", "--bind", "0.0.0.0", "--dir", "/tmp/d", "--requirepass", "p"}, 7001, "0.0.0.0", "/tmp/d", "p", 10000, false},
		{"file", []string{conf}, 7000, "127.0.0.1", "./data", "filepass", 5, false},
		{"flags override file", []string{conf, "--port", "7002", "--requirepass", "flagpass"}, 7002, "127.0.0.1", "./data", "flagpass", 5, false},
		{"missing file", []string{filepath.Join(dir, "nope.conf")}, 0, "", "", "", 0, true},
		{"unknown flag", []string{"--nope"}, 0, "", "", "", 0, true},
		{"extra argument", []string{conf, "--port", "1", "extra"}, 0, "", "", "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseArgs(tt.args)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %+v", cfg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Port != tt.port || cfg.Bind != tt.bind || cfg.Dir != tt.dir || cfg.RequirePass != tt.pass || cfg.MaxClients != tt.maxClients {
				t.Fatalf("got %+v", cfg)
			}
		})
	}
}
