package state

import (
	"bytes"
	"reflect"
	"testing"

	"streamd/replication/wire"
)

func TestACLUsersApply(t *testing.T) {
	ks := New()
	if ks.ACLUsers() != nil {
		t.Fatal("a new keyspace holds users")
	}
	mustApply(t, ks, wire.ACLSetUser{Name: "bob", Rules: []string{"on", "~b*"}}, 1)
	mustApply(t, ks, wire.ACLSetUser{Name: "alice", Rules: []string{"+@all"}}, 1)
	mustApply(t, ks, wire.ACLSetUser{Name: "bob", Rules: []string{"+xadd"}}, 1)
	want := []wire.ACLUser{{Name: "alice", Rules: []string{"+@all"}}, {Name: "bob", Rules: []string{"on", "~b*", "+xadd"}}}
	if got := ks.ACLUsers(); !reflect.DeepEqual(got, want) {
		t.Fatalf("users %v, want %v", got, want)
	}
	mustApply(t, ks, wire.ACLSetUser{Name: "bob", Rules: []string{"off"}, Replace: true}, 1)
	if got := ks.ACLUsers()[1].Rules; !reflect.DeepEqual(got, []string{"off"}) {
		t.Fatalf("replaced rules %v", got)
	}
	if n := mustApply(t, ks, wire.ACLDelUser{Names: []string{"bob", "nobody", "bob"}}, 1); n != int64(1) {
		t.Fatalf("deleted %v, want 1", n)
	}
	mustApply(t, ks, wire.ACLLoad{Users: []wire.ACLUser{{Name: "x", Rules: []string{"on"}}, {Name: "default"}}}, 1)
	if got := ks.ACLUsers(); len(got) != 2 || got[0].Name != "default" || got[1].Name != "x" {
		t.Fatalf("after load %v", got)
	}
	// FLUSHALL leaves the users alone.
	mustApply(t, ks, wire.FlushAll{}, 1)
	if len(ks.ACLUsers()) != 2 {
		t.Fatal("FLUSHALL dropped the users")
	}
}

func TestACLUsersSnapshot(t *testing.T) {
	ks := smallState(t)
	before := snap(t, ks)
	mustApply(t, ks, wire.ACLSetUser{Name: "orders", Rules: []string{"on", "#0123", "~orders*", "+@stream"}}, 5)
	mustApply(t, ks, wire.ACLSetUser{Name: "default", Rules: []string{"resetpass", "#abcd"}}, 5)
	b := snap(t, ks)
	got := restoreSnap(t, b)
	if !reflect.DeepEqual(got.ACLUsers(), ks.ACLUsers()) {
		t.Fatalf("restored users %v, want %v", got.ACLUsers(), ks.ACLUsers())
	}
	if !bytes.Equal(snap(t, got), b) {
		t.Fatal("snapshot of the restored state differs")
	}
	if !reflect.DeepEqual(ks.Clone().ACLUsers(), ks.ACLUsers()) {
		t.Fatal("Clone lost the users")
	}
	// With no users the bytes are those of a state from before ACL
	// users existed, so older snapshots and newer ones of such states agree.
	mustApply(t, ks, wire.ACLLoad{}, 5)
	noUsers := ks.Clone()
	noUsers.acl = nil
	if !bytes.Equal(snap(t, ks), snap(t, noUsers)) {
		t.Fatal("an empty ACL LOAD left a users record")
	}
	if !bytes.Equal(snap(t, restoreSnap(t, before)), before) {
		t.Fatal("a snapshot without users does not round-trip")
	}
}
