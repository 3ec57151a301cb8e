package cmdinfo

import "testing"

// TestRedis8JSONWellFormed checks the hand-written redis8.json: every
// argument has a name and one of Redis's argument types, a oneof or block
// has nested arguments and nothing else does, a pure-token has a token,
// and the key arguments carry key spec index 0.
func TestRedis8JSONWellFormed(t *testing.T) {
	types := map[string]bool{"string": true, "integer": true, "double": true, "key": true, "pattern": true,
		"unix-time": true, "pure-token": true, "oneof": true, "block": true}
	var check func(cmd string, args []redis8Arg)
	check = func(cmd string, args []redis8Arg) {
		for _, a := range args {
			if a.Name == "" || !types[a.Type] {
				t.Errorf("%s: argument %+v: bad name or type", cmd, a)
			}
			nested := a.Type == "oneof" || a.Type == "block"
			if nested != (len(a.Arguments) > 0) {
				t.Errorf("%s: %s: type %s with %d nested arguments", cmd, a.Name, a.Type, len(a.Arguments))
			}
			if a.Type == "pure-token" && a.Token == "" {
				t.Errorf("%s: %s: pure-token without a token", cmd, a.Name)
			}
			if (a.Type == "key") != (a.KeySpecIndex != nil) || a.KeySpecIndex != nil && *a.KeySpecIndex != 0 {
				t.Errorf("%s: %s: key_spec_index %v on a %s", cmd, a.Name, a.KeySpecIndex, a.Type)
			}
			check(cmd, a.Arguments)
		}
	}
	if len(redis8Docs) != 9 {
		t.Errorf("redis8.json has %d commands, want 9", len(redis8Docs))
	}
	for name, d := range redis8Docs {
		if len(d.Arguments) == 0 {
			t.Errorf("%s: no arguments", name)
		}
		if redisData[name] == nil && d.Complexity == "" {
			t.Errorf("%s: a command Redis 7 lacks needs a complexity", name)
		}
		for _, h := range d.History {
			if h[0] == "" || h[1] == "" {
				t.Errorf("%s: history entry %q", name, h)
			}
		}
		check(name, d.Arguments)
	}
}
