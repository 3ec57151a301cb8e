package acl

import (
	"strings"
	"testing"
)

func r(k string) KeyRef  { return KeyRef{Key: []byte(k), Read: true} }
func w(k string) KeyRef  { return KeyRef{Key: []byte(k), Write: true} }
func rw(k string) KeyRef { return KeyRef{Key: []byte(k), Read: true, Write: true} }
func n(k string) KeyRef  { return KeyRef{Key: []byte(k)} }

func TestCheck(t *testing.T) {
	type probe struct {
		cmd, sub string
		keys     []KeyRef
		want     string // "" allowed, else DryRun("t")
	}
	denyCmd := func(c string) string { return "User t has no permissions to run the '" + c + "' command" }
	denyKey := func(k string) string { return "User t has no permissions to access the '" + k + "' key" }
	for _, tc := range []struct {
		rules  string
		probes []probe
	}{
		{"+@all ~*", []probe{
			{"xadd", "", []KeyRef{w("any")}, ""},
			{"notinthecatalog", "", nil, ""}, // +@all allows commands added later
		}},
		{"+@all -get ~*", []probe{
			{"get", "", []KeyRef{r("k")}, denyCmd("get")},
			{"notinthecatalog", "", nil, denyCmd("notinthecatalog")},
		}},
		{"-@all +@stream -xdel ~*", []probe{
			{"xadd", "", []KeyRef{w("k")}, ""},
			{"xdel", "", []KeyRef{w("k")}, denyCmd("xdel")},
			{"xinfo", "stream", []KeyRef{r("k")}, ""},
			{"xinfo", "STREAM", []KeyRef{r("k")}, ""},
			{"get", "", []KeyRef{r("k")}, denyCmd("get")},
		}},
		{"+xinfo|stream ~*", []probe{
			{"xinfo", "stream", []KeyRef{r("k")}, ""},
			{"xinfo", "groups", []KeyRef{r("k")}, denyCmd("xinfo|groups")},
			{"xinfo", "", nil, denyCmd("xinfo")},
			{"xinfo", "nosuch", nil, denyCmd("xinfo")},
		}},
		{"+xinfo -xinfo|help ~*", []probe{
			{"xinfo", "groups", []KeyRef{r("k")}, ""},
			{"xinfo", "help", nil, denyCmd("xinfo|help")},
		}},
		{"+select|0 +select|ABC", []probe{
			{"select", "0", nil, ""},
			{"select", "abc", nil, ""},
			{"select", "1", nil, denyCmd("select")},
			{"select", "", nil, denyCmd("select")},
		}},
		{"+select|0 -select", []probe{{"select", "0", nil, denyCmd("select")}}},
		{"-@all", []probe{{"auth", "", nil, ""}, {"AUTH", "", nil, ""}}},
		{"+@all %R~r* %W~w* ~rw", []probe{
			{"get", "", []KeyRef{r("r1")}, ""},
			{"get", "", []KeyRef{r("w1")}, denyKey("w1")},
			{"set", "", []KeyRef{w("w1")}, ""},
			{"set", "", []KeyRef{w("r1")}, denyKey("r1")},
			{"lmove", "", []KeyRef{rw("r1"), w("w1")}, denyKey("r1")},
			{"lmove", "", []KeyRef{rw("rw"), w("w1")}, ""},
			{"exists", "", []KeyRef{n("r1"), n("w1"), n("x")}, denyKey("x")},
			{"mget", "", []KeyRef{r("r1"), r("x"), r("y")}, denyKey("x")},
		}},
		{"+@all %R~r* %W~r*", []probe{{"lmove", "", []KeyRef{rw("r1"), w("r2")}, ""}}},
		{"+@all ~[a-c]?x ~\\*", []probe{
			{"get", "", []KeyRef{r("bzx")}, ""},
			{"get", "", []KeyRef{r("dzx")}, denyKey("dzx")},
			{"get", "", []KeyRef{r("*")}, ""},
			{"get", "", []KeyRef{r("a")}, denyKey("a")},
		}},
		// Selectors: allowed if any selector allows; otherwise the highest
		// reason (key over command) and, among keys, the last failing one.
		{"-@all +get %R~r* (+set ~w*) (+mget %R~x*)", []probe{
			{"get", "", []KeyRef{r("r1")}, ""},
			{"set", "", []KeyRef{w("w1")}, ""},
			{"set", "", []KeyRef{w("r1")}, denyKey("r1")},
			{"get", "", []KeyRef{r("w1")}, denyKey("w1")},
			{"mget", "", []KeyRef{r("x1"), r("x2")}, ""},
			{"mget", "", []KeyRef{r("x1"), r("r1")}, denyKey("r1")},
			{"xadd", "", []KeyRef{w("w1")}, denyCmd("xadd")},
		}},
		{"-@all +mget %R~a (+mget %R~b)", []probe{
			// root fails on key 1 ("b"), the selector on key 0 ("a"): the later key is reported.
			{"mget", "", []KeyRef{r("a"), r("b")}, denyKey("b")},
			{"mget", "", []KeyRef{r("b"), r("a")}, denyKey("a")},
		}},
		{"allcommands (-@all +get)", []probe{{"notinthecatalog", "", nil, ""}}},
	} {
		us := NewUsers(testCatalog())
		u := setUser(t, us, "t", strings.Fields(tc.rules)...)
		for _, p := range tc.probes {
			d := u.Check(p.cmd, p.sub, p.keys)
			got := ""
			if d != nil {
				got = d.DryRun("t")
			}
			if got != p.want {
				t.Errorf("%q: %s %s %v: %q, want %q", tc.rules, p.cmd, p.sub, p.keys, got, p.want)
			}
		}
	}
}

func TestDenialTexts(t *testing.T) {
	for _, tc := range []struct {
		d              Denial
		reason, noperm string
		dryrun         string
	}{
		{Denial{DeniedCommand, "xinfo|stream"}, "command", "NOPERM User alice has no permissions to run the 'xinfo|stream' command", "User alice has no permissions to run the 'xinfo|stream' command"},
		{Denial{DeniedKey, "k1"}, "key", "NOPERM No permissions to access a key", "User alice has no permissions to access the 'k1' key"},
		{Denial{DeniedChannel, "ch"}, "channel", "NOPERM No permissions to access a channel", "User alice has no permissions to access the 'ch' channel"},
		{Denial{DeniedAuth, "AUTH"}, "auth", "WRONGPASS invalid username-password pair or user is disabled.", "WRONGPASS invalid username-password pair or user is disabled."},
	} {
		if tc.d.Reason.String() != tc.reason || tc.d.NoPerm("alice") != tc.noperm || tc.d.DryRun("alice") != tc.dryrun {
			t.Errorf("%+v: %q %q %q", tc.d, tc.d.Reason, tc.d.NoPerm("alice"), tc.d.DryRun("alice"))
		}
	}
	if Reason(0).String() != "unknown" {
		t.Error("Reason(0)")
	}
}

func TestAllowsAll(t *testing.T) {
	for rules, want := range map[string]bool{
		"+@all ~*":                   true,
		"allcommands allkeys (+get)": true,
		"+@all -get +get ~*":         false, // a removal clears the flag, as in Redis (Check still allows)
		"+@all %RW~*":                false,
		"+@all":                      false,
		"~* +@read":                  false,
		"~* -@all +@all +@stream":    true,
	} {
		us := NewUsers(testCatalog())
		u := setUser(t, us, "t", strings.Fields(rules)...)
		if u.AllowsAll() != want {
			t.Errorf("%q: AllowsAll %v", rules, !want)
		}
		if want && u.Check("xadd", "", []KeyRef{rw("k")}) != nil {
			t.Errorf("%q: AllowsAll but Check denies", rules)
		}
	}
	if !NewUsers(testCatalog()).Get("default").AllowsAll() {
		t.Error("default user")
	}
}
