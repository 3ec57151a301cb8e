package acl

import (
	"reflect"
	"testing"
)

// TestParseFileErrors: ACL LOAD's replies from redis-server (without
// "ERR "), with the file name replaced.
func TestParseFileErrors(t *testing.T) {
	const tail = "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	for _, tc := range []struct{ text, want string }{
		{"user bob on +nope\nuser x bogus\n",
			"users.acl:1: Error in applying operation '+nope': Unknown command or category name in ACL. users.acl:2: Syntax error. " + tail},
		{"\n\nfoo bar\n  user c \"unbal\nuser\n",
			"users.acl:3 should start with user keyword followed by the username. users.acl:4: Syntax error. users.acl:5 should start with user keyword followed by the username. " + tail},
		{"user a on\nuser a off",
			"WARNING: Duplicate user 'a' found on line 2. " + tail},
		{"user a (+get\nuser b (+nope) x",
			"users.acl:1: Unmatched parenthesis in selector definition.users.acl:2: Error in applying operation '(+nope)': Unknown command or category name in ACL. users.acl:2: Syntax error. " + tail},
		{"  user   z   on  \t  +get\t  \r\nuser y\ton\n",
			"users.acl:1: Syntax error. 'users.acl:2: username 'y\ton' contains invalid characters. " + tail},
		{"user a on bogus +nope bogus2 #zz\n",
			"users.acl:1: Syntax error. users.acl:1: Error in applying operation '+nope': Unknown command or category name in ACL. " + tail},
		{"user a on\x00junk\nuser b\n", "users.acl:1: Syntax error. " + tail},
		{"USER a on\n", "users.acl:1 should start with user keyword followed by the username. " + tail},
	} {
		us, err := ParseFileNamed(testCatalog(), "users.acl", tc.text)
		if us != nil || err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %q", tc.text, err, tc.want)
		}
	}
	if _, err := ParseFile(testCatalog(), "x"); err == nil || err.Error() != "aclfile:1 should start with user keyword followed by the username. "+tail {
		t.Errorf("ParseFile: %v", err)
	}
}

func TestParseFile(t *testing.T) {
	cat := testCatalog()
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"", []string{"user default on nopass sanitize-payload ~* &* +@all"}},
		{"user a on ~x (+get ~y*) ( +set ) (~a +get )\r\nuser b\r\n", []string{
			"user a on sanitize-payload ~x resetchannels -@all (~y* resetchannels -@all +get) (resetchannels -@all +set) (~a resetchannels -@all +get)",
			"user b off sanitize-payload resetchannels -@all",
			"user default on nopass sanitize-payload ~* &* +@all",
		}},
		{"user default off resetpass ~k +get\n\n\n", []string{"user default off sanitize-payload ~k resetchannels -@all +get"}},
		// A NUL cuts the rest of its line, newline included.
		{"user a on\x00junk\n\nuser b\n", []string{
			"user a on sanitize-payload resetchannels -@all",
			"user b off sanitize-payload resetchannels -@all",
			"user default on nopass sanitize-payload ~* &* +@all",
		}},
		{"user a \t+get\t ~k\n", []string{
			"user a off sanitize-payload ~k resetchannels -@all +get",
			"user default on nopass sanitize-payload ~* &* +@all",
		}},
	} {
		us, err := ParseFile(cat, tc.text)
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		if got := us.List(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q:\n got %q\nwant %q", tc.text, got, tc.want)
		}
		// What ACL SAVE writes reads back as the same users.
		back, err := ParseFile(cat, us.FileText())
		if err != nil || !reflect.DeepEqual(back.List(), us.List()) {
			t.Errorf("%q: FileText does not read back: %v %q", tc.text, err, us.FileText())
		}
	}
	// A saved user with every kind of rule survives the round trip.
	us := NewUsers(cat)
	setUser(t, us, "full", "on", ">a", ">b", "skip-sanitize-payload", "%R~r*", "%W~w*", "~k", "&c",
		"+@all", "-@hash", "+hget", "-xinfo|help", "+select|0", "(+get ~x)", "(%R~y &* -@all +@stream)")
	back, err := ParseFile(cat, us.FileText())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.List(), us.List()) || !sameUser(back.Get("full"), us.Get("full")) {
		t.Errorf("round trip:\n got %q\nwant %q", back.List(), us.List())
	}
}
