package acl

import (
	"fmt"
	"reflect"
	"testing"
)

func entry(reason, object string) LogEntry {
	return LogEntry{Reason: reason, Context: "toplevel", Object: object, Username: "u", ClientInfo: "id=1"}
}

func summary(l *Log) string {
	s := ""
	for _, e := range l.Entries(-1) {
		s += fmt.Sprintf("[%d %s %s %d %d-%d]", e.EntryID, e.Reason, e.Object, e.Count, e.CreatedMs, e.UpdatedMs)
	}
	return s
}

func TestLogGrouping(t *testing.T) {
	l := NewLog(128)
	l.Add(entry("command", "set"), 1000)
	l.Add(entry("command", "set"), 2000)
	l.Add(entry("key", "k"), 3000)
	l.Add(entry("command", "set"), 4000) // groups into entry 0, moves it to the front
	if got, want := summary(l), "[0 command set 3 1000-4000][1 key k 1 3000-3000]"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	// 60 s after the last update still groups; one more millisecond does not.
	l.Add(entry("command", "set"), 64000)
	l.Add(entry("command", "set"), 124001)
	if got, want := summary(l), "[2 command set 1 124001-124001][0 command set 4 1000-64000][1 key k 1 3000-3000]"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	// Any difference in context, username or object starts a new entry.
	e := entry("command", "set")
	e.Context = "multi"
	l.Add(e, 124002)
	e = entry("command", "set")
	e.Username = "v"
	l.Add(e, 124003)
	l.Add(entry("command", "get"), 124004)
	if l.Len() != 6 {
		t.Fatalf("Len %d: %s", l.Len(), summary(l))
	}
	// The client info of a grouped entry is the latest one.
	e = entry("command", "get")
	e.ClientInfo = "id=2"
	l.Add(e, 124005)
	if got := l.Entries(1)[0]; got.ClientInfo != "id=2" || got.Count != 2 || got.EntryID != 5 {
		t.Fatalf("grouped entry %+v", got)
	}
}

func TestLogScansTenEntries(t *testing.T) {
	l := NewLog(128)
	l.Add(entry("key", "old"), 0)
	for i := 0; i < 10; i++ {
		l.Add(entry("key", fmt.Sprint(i)), int64(i))
	}
	// "old" is the 11th newest: Redis does not look that far.
	l.Add(entry("key", "old"), 20)
	if got := l.Entries(1)[0]; got.Object != "old" || got.Count != 1 || got.EntryID != 11 {
		t.Fatalf("%+v", got)
	}
	// "1" is now the 10th newest: it groups.
	l.Add(entry("key", "1"), 21)
	if got := l.Entries(1)[0]; got.Object != "1" || got.Count != 2 {
		t.Fatalf("%+v", got)
	}
}

func TestLogLimitAndReset(t *testing.T) {
	l := NewLog(3)
	for i := 0; i < 5; i++ {
		l.Add(entry("key", fmt.Sprint(i)), int64(i))
	}
	if got, want := summary(l), "[4 key 4 1 4-4][3 key 3 1 3-3][2 key 2 1 2-2]"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	if got := l.Entries(2); len(got) != 2 || got[0].Object != "4" {
		t.Fatalf("Entries(2) %+v", got)
	}
	if got := l.Entries(0); len(got) != 0 {
		t.Fatalf("Entries(0) %+v", got)
	}
	// A lower limit applies at the next Add, as in Redis.
	l.SetMaxLen(1)
	if l.Len() != 3 {
		t.Fatal("SetMaxLen trimmed at once")
	}
	l.Add(entry("key", "x"), 10)
	if got, want := summary(l), "[5 key x 1 10-10]"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	// RESET empties the log; entry IDs keep counting.
	l.Reset()
	if l.Len() != 0 || len(l.Entries(-1)) != 0 {
		t.Fatal("Reset")
	}
	l.Add(entry("key", "y"), 11)
	if l.Entries(1)[0].EntryID != 6 {
		t.Fatalf("entry id after reset %+v", l.Entries(1))
	}
}

func TestLogEntryFields(t *testing.T) {
	e := LogEntry{Count: 2, Reason: "key", Context: "multi", Object: "k", Username: "u",
		CreatedMs: 1000, UpdatedMs: 2500, ClientInfo: "id=7", EntryID: 3}
	want := []Field{
		{"count", int64(2)}, {"reason", "key"}, {"context", "multi"}, {"object", "k"}, {"username", "u"},
		{"age-seconds", 1.5}, {"client-info", "id=7"}, {"entry-id", int64(3)},
		{"timestamp-created", int64(1000)}, {"timestamp-last-updated", int64(2500)},
	}
	if got := e.Fields(4000); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestGenPass(t *testing.T) {
	rnd := []byte{0xde, 0xad, 0xbe, 0xef, 0x01}
	for _, tc := range []struct {
		bits  int
		bytes int
		want  string
	}{
		{1, 1, "d"}, {4, 1, "d"}, {5, 1, "de"}, {8, 1, "de"}, {9, 2, "dea"}, {32, 4, "deadbeef"}, {33, 5, "deadbeef0"},
	} {
		if GenPassBytes(tc.bits) != tc.bytes {
			t.Errorf("GenPassBytes(%d) = %d", tc.bits, GenPassBytes(tc.bits))
		}
		if got, err := GenPass(tc.bits, rnd); err != nil || got != tc.want {
			t.Errorf("GenPass(%d) = %q, %v", tc.bits, got, err)
		}
	}
	if got, err := GenPass(GenPassDefaultBits, make([]byte, 32)); err != nil || len(got) != 64 {
		t.Errorf("default: %q %v", got, err)
	}
	if got, err := GenPass(4096, make([]byte, 512)); err != nil || len(got) != 1024 {
		t.Errorf("4096: %d %v", len(got), err)
	}
	const msg = "ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096"
	for _, bits := range []int{0, -5, 4097} {
		if _, err := GenPass(bits, make([]byte, 1024)); err == nil || err.Error() != msg {
			t.Errorf("GenPass(%d): %v", bits, err)
		}
	}
	if _, err := GenPass(64, make([]byte, 7)); err == nil {
		t.Error("GenPass with too few random bytes")
	}
}
