package server

import (
	"errors"
	"reflect"
	"testing"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/streams"
)

const (
	xgroupNoKey = "ERR The XGROUP subcommand requires the key to exist. " +
		"Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
	createSyntax = "ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP."
	setidSyntax  = "ERR unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP."
)

func TestStreamCmdXGROUPPlans(t *testing.T) {
	base := wire.Base{DB: 3, Key: "s"}
	tests := []struct {
		line string
		want wire.Op
	}{
		{"XGROUP CREATE s g $", wire.XGroupCreate{Base: base, Group: "g", Dollar: true, EntriesRead: -1}},
		{"XGROUP create s g 5 mkstream", wire.XGroupCreate{Base: base, Group: "g", ID: streams.ID{Ms: 5}, MkStream: true, EntriesRead: -1}},
		{"XGROUP CREATE s g 1-2 ENTRIESREAD 7 MKSTREAM",
			wire.XGroupCreate{Base: base, Group: "g", ID: streams.ID{Ms: 1, Seq: 2}, MkStream: true, EntriesRead: 7}},
		{"XGROUP CREATE s g 1-2 ENTRIESREAD -1",
			wire.XGroupCreate{Base: base, Group: "g", ID: streams.ID{Ms: 1, Seq: 2}, EntriesRead: -1}},
		{"XGROUP CREATE s g 0 ENTRIESREAD 0", wire.XGroupCreate{Base: base, Group: "g", EntriesRead: 0}},
		{"XGROUP SETID s g $", wire.XGroupSetID{Base: base, Group: "g", Dollar: true, EntriesRead: -1}},
		{"XGROUP SETID s g -", wire.XGroupSetID{Base: base, Group: "g", EntriesRead: -1}},
		{"XGROUP SETID s g +", wire.XGroupSetID{Base: base, Group: "g", ID: streams.MaxID, EntriesRead: -1}},
		{"XGROUP SETID s g 7 entriesread 3", wire.XGroupSetID{Base: base, Group: "g", ID: streams.ID{Ms: 7}, EntriesRead: 3}},
		{"XGROUP DESTROY s g", wire.XGroupDestroy{Base: base, Group: "g"}},
		{"XGROUP CREATECONSUMER s g c", wire.XGroupCreateConsumer{Base: base, Group: "g", Consumer: "c"}},
		{"XGROUP DELCONSUMER s g c", wire.XGroupDelConsumer{Base: base, Group: "g", Consumer: "c"}},
	}
	for _, tt := range tests {
		p := mustPlan(t, tt.line)
		if !reflect.DeepEqual(p.Op, tt.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", tt.line, p.Op, tt.want)
		}
	}
	// Replies: OK for CREATE/SETID, integers for the others, engine errors
	// as they are.
	if r := mustPlan(t, "XGROUP CREATE s g $").Format(nil, nil); r != OK {
		t.Errorf("create: %#v", r)
	}
	busy := errors.New("BUSYGROUP Consumer Group name already exists")
	if r := mustPlan(t, "XGROUP CREATE s g $").Format(nil, busy); r != ErrorReply(busy.Error()) {
		t.Errorf("create busy: %#v", r)
	}
	if r := mustPlan(t, "XGROUP SETID s g $").Format(nil, nil); r != OK {
		t.Errorf("setid: %#v", r)
	}
	if r := mustPlan(t, "XGROUP DELCONSUMER s g c").Format(int64(2), nil); r != Int(2) {
		t.Errorf("delconsumer: %#v", r)
	}
}

// Argument errors Redis reports only after its key (and group) checks.
func TestStreamCmdXGROUPStateFirst(t *testing.T) {
	groups := []state.GroupInfo{{Name: "g"}}
	tests := []struct {
		line     string
		byGroups bool   // the plan reads XINFO GROUPS (else TYPE)
		noKey    string // reply when the key is missing
		noGroup  string // reply when the group is missing (byGroups)
		argErr   string // reply when both exist
	}{
		{"XGROUP CREATE s g bad", false, xgroupNoKey, "", "ERR Invalid stream ID specified as stream command argument"},
		{"XGROUP CREATE s g - ", false, xgroupNoKey, "", "ERR Invalid stream ID specified as stream command argument"},
		{"XGROUP CREATE s g (1", false, xgroupNoKey, "", "ERR Invalid stream ID specified as stream command argument"},
		{"XGROUP CREATE s g 5 ENTRIESREAD 1 ENTRIESREAD 2", false, xgroupNoKey, "", createSyntax},
		{"XGROUP SETID s g bad", true, xgroupNoKey, "NOGROUP No such consumer group 'g' for key name 's'",
			"ERR Invalid stream ID specified as stream command argument"},
		{"XGROUP SETID s g (1", true, xgroupNoKey, "NOGROUP No such consumer group 'g' for key name 's'",
			"ERR Invalid stream ID specified as stream command argument"},
		{"XGROUP SETID s g 1 ENTRIESREAD 1 ENTRIESREAD 2", true, xgroupNoKey,
			"NOGROUP No such consumer group 'g' for key name 's'", setidSyntax},
	}
	for _, tt := range tests {
		p := mustPlan(t, tt.line)
		if tt.byGroups {
			if _, ok := p.Op.(wire.XInfoGroups); !ok {
				t.Fatalf("%q: op %#v", tt.line, p.Op)
			}
			if r := p.Format(nil, errors.New("ERR no such key")); r != ErrorReply(tt.noKey) {
				t.Errorf("%q no key: %#v", tt.line, r)
			}
			if r := p.Format([]state.GroupInfo{{Name: "other"}}, nil); r != ErrorReply(tt.noGroup) {
				t.Errorf("%q no group: %#v", tt.line, r)
			}
			if r := p.Format(groups, nil); r != ErrorReply(tt.argErr) {
				t.Errorf("%q: %#v", tt.line, r)
			}
			continue
		}
		if _, ok := p.Op.(wire.Type); !ok {
			t.Fatalf("%q: op %#v", tt.line, p.Op)
		}
		if r := p.Format("none", nil); r != ErrorReply(tt.noKey) {
			t.Errorf("%q no key: %#v", tt.line, r)
		}
		if r := p.Format("stream", nil); r != ErrorReply(tt.argErr) {
			t.Errorf("%q: %#v", tt.line, r)
		}
	}
}

func TestStreamCmdXGROUPHelp(t *testing.T) {
	help := streamCmd(t, "xgroup|help").Handler(&Client{}, xArgs("XGROUP HELP"))
	got := render(help, 2)
	want := "*19\r\n+XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n" +
		"+CREATE <key> <groupname> <id|$> [option]\r\n"
	if len(got) < len(want) || got[:len(want)] != want {
		t.Fatalf("help starts %q", got)
	}
	arr := help.(Array)
	if arr[len(arr)-2] != SimpleString("HELP") || arr[len(arr)-1] != SimpleString("    Prints this help.") {
		t.Errorf("help ends %v", arr[len(arr)-2:])
	}
	info := streamCmd(t, "xinfo|help").Handler(&Client{}, xArgs("XINFO HELP")).(Array)
	if len(info) != 9 || info[5] != SimpleString("STREAM <key> [FULL [COUNT <count>]") {
		t.Errorf("xinfo help %v", info)
	}
}
