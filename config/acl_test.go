package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestUserLines: "user" lines repeat, keep their quoting, survive CONFIG
// REWRITE, and are refused with an aclfile, with Redis's text.
func TestUserLines(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "s.conf")
	text := "user default on nopass ~* +@all\nuser app on \">pass word\" ~orders* +@stream\nacllog-max-len 5\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load([]string{conf}, envMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"default", "on", "nopass", "~*", "+@all"}, {"app", "on", ">pass word", "~orders*", "+@stream"}}
	if got := cfg.UserLines(); !reflect.DeepEqual(got, want) {
		t.Fatalf("UserLines %q, want %q", got, want)
	}
	if cfg.ACLLogMaxLen != 5 {
		t.Errorf("acllog-max-len %d", cfg.ACLLogMaxLen)
	}
	out := string(Rewrite([]byte(text), cfg))
	if !strings.Contains(out, "user app on \">pass word\" ~orders* +@stream\n") || strings.Contains(out, "???") {
		t.Errorf("rewrite lost the user lines:\n%s", out)
	}
	_, err = Load([]string{conf, "--aclfile", filepath.Join(dir, "users.acl")}, envMap(nil))
	if err == nil || err.Error() != ErrACLFileAndUsers.Error() {
		t.Errorf("aclfile with user lines: err %v", err)
	}
	if p := Lookup("aclfile"); p == nil || !p.Immutable() {
		t.Error("aclfile must be immutable")
	}
	if p := Lookup("acllog-max-len"); p == nil || p.Immutable() {
		t.Error("acllog-max-len must be CONFIG SET-able")
	}
	bad := filepath.Join(dir, "bad.conf")
	os.WriteFile(bad, []byte("user\n"), 0o644)
	if _, err := Load([]string{bad}, envMap(nil)); err == nil {
		t.Error("a bare user line was accepted")
	}
}
