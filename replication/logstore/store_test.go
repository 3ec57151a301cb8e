package logstore

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
)

// openT opens the log in dir as kind, failing the test on an error.
func openT(t *testing.T, dir, kind string) Store {
	t.Helper()
	s, err := Open(dir, Options{Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// storeOne stores one command entry at index 1, term 1.
func storeOne(t *testing.T, s Store) {
	t.Helper()
	if err := s.StoreLog(&raft.Log{Index: 1, Term: 1, Type: raft.LogCommand, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
}

func TestChooseLogStore(t *testing.T) {
	bolt := t.TempDir()
	s := openT(t, bolt, Bolt)
	storeOne(t, s)
	s.Close()
	wdir := t.TempDir()
	s = openT(t, wdir, WAL)
	storeOne(t, s)
	s.Close()
	for _, c := range []struct {
		dir, want, got, err string
	}{
		{bolt, "", Bolt, ""},
		{bolt, "bolt", Bolt, ""},
		{bolt, "wal", "", "holds a bolt log"},
		{wdir, "", WAL, ""},
		{wdir, "bolt", "", "holds a wal log"},
		{t.TempDir(), "", Default, ""},
		{t.TempDir(), "rocks", "", "invalid log store"},
	} {
		got, err := chooseLogStore(c.dir, c.want, nil)
		if got != c.got || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("chooseLogStore(%q) = %q, %v; want %q, %q", c.want, got, err, c.got, c.err)
		}
	}
	if _, err := Open(bolt, Options{Kind: WAL}); err == nil || !strings.Contains(err.Error(), "holds a bolt log") {
		t.Fatalf("Open wal on a bolt dir: %v", err)
	}
	// No log beside a snapshot: refused when the kind was not named.
	empty := t.TempDir()
	snap := func() string { return "1-2-3" }
	if _, err := Open(empty, Options{NewestSnapshot: snap}); err == nil || !strings.Contains(err.Error(), "snapshot 1-2-3 exists") {
		t.Fatalf("Open with a snapshot and no log: %v", err)
	}
}

// TestOpenLocksDir checks that Open holds the directory's lock until Close,
// and releases it when it fails.
func TestOpenLocksDir(t *testing.T) {
	for _, kind := range []string{WAL, Bolt} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			s := openT(t, dir, kind)
			if _, err := Open(dir, Options{Kind: kind}); err == nil || !strings.Contains(err.Error(), "is in use by another process") {
				t.Fatalf("second Open: %v", err)
			}
			if s.Kind() != kind || !strings.HasPrefix(s.Path(), dir) {
				t.Fatalf("Kind %q Path %q", s.Kind(), s.Path())
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			other := map[string]string{WAL: Bolt, Bolt: WAL}[kind]
			if _, err := Open(dir, Options{Kind: other}); err == nil {
				t.Fatal("opened the other store")
			}
			openT(t, dir, kind).Close() // the failed Open released the lock
		})
	}
}

// TestVerify checks the continuity and decode checks of both stores.
func TestVerify(t *testing.T) {
	for _, kind := range []string{WAL, Bolt} {
		t.Run(kind, func(t *testing.T) {
			s := openT(t, t.TempDir(), kind)
			defer s.Close()
			var logs []*raft.Log
			for i := uint64(1); i <= 5; i++ {
				logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte{byte(i)}})
			}
			if err := s.StoreLogs(logs); err != nil {
				t.Fatal(err)
			}
			ok := func([]byte) error { return nil }
			if err := s.Verify(0, ok); err != nil {
				t.Fatal(err)
			}
			bad := func(b []byte) error {
				if bytes.Equal(b, []byte{4}) {
					return errBad
				}
				return nil
			}
			if err := s.Verify(0, bad); err == nil || !strings.Contains(err.Error(), "log entry 4 does not decode: bad") ||
				!strings.HasPrefix(err.Error(), s.Path()) {
				t.Fatalf("Verify with entry 4 bad: %v", err)
			}
			if err := s.Verify(4, bad); err != nil {
				t.Fatalf("Verify after a snapshot at 4: %v", err)
			}
			if err := s.DeleteRange(1, 2); err != nil {
				t.Fatal(err)
			}
			if err := s.Verify(1, ok); err == nil || !strings.Contains(err.Error(), "entries missing") {
				t.Fatalf("Verify with a gap after the snapshot: %v", err)
			}
		})
	}
}

// errBad is the test decoder's error.
var errBad = errors.New("bad")

// TestVerifyEmptyLogTerm: an empty wal log beside raft's term 0 (written at
// every start, also by a node waiting to be added) is no raft state; beside
// a term above 0 it is a lost log and refused.
func TestVerifyEmptyLogTerm(t *testing.T) {
	s := openT(t, t.TempDir(), WAL)
	defer s.Close()
	ok := func([]byte) error { return nil }
	if err := s.SetUint64(keyCurrentTerm, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(0, ok); err != nil {
		t.Fatalf("empty log, term 0: %v", err)
	}
	if err := s.SetUint64(keyCurrentTerm, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(0, ok); err == nil || !strings.Contains(err.Error(), "log is empty but raft state exists (term 3)") {
		t.Fatalf("empty log, term 3: %v", err)
	}
}
