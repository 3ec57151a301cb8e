package server

import (
	"strconv"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/resp"
	"streamd/server/xreply"
)

// XGROUP CONFIG (issue #15): per-group MAXDELIVERIES / DEADLETTER and
// VISIBILITY. The engine applies them (replication/state/groupconfig_ops.go).

// XGROUP CONFIG's argument errors (README "Delivery guarantees").
const (
	errGroupConfigMaxDeliveries = ErrorReply("ERR MAXDELIVERIES must be a positive integer or NONE")
	errGroupConfigVisibility    = ErrorReply("ERR VISIBILITY must be a positive integer (milliseconds) or NONE")
	errGroupConfigSelf          = ErrorReply("ERR DEADLETTER key must be different from the stream key")
)

// xgroupConfigHelp are XGROUP HELP's lines for CONFIG.
var xgroupConfigHelp = []string{
	"CONFIG <key> <groupname> [MAXDELIVERIES <n>|NONE] [DEADLETTER <key>|NONE] [VISIBILITY <ms>|NONE]",
	"    Set the group's delivery settings; without options, return them.",
}

// xgroupConfigKeys are XGROUP CONFIG's keys: the stream and the
// DEADLETTER stream, if one is named (so cluster mode answers CROSSSLOT
// when they hash to different slots, and ACLs check both).
func xgroupConfigKeys(args [][]byte) [][]byte {
	if len(args) < 3 {
		return nil
	}
	keys := [][]byte{args[2]}
	for i := 4; i+1 < len(args); i += 2 {
		if isOpt(args[i], "DEADLETTER") && !isOpt(args[i+1], "NONE") {
			keys = append(keys, args[i+1])
		}
	}
	return keys
}

// parseGroupConfig reads XGROUP CONFIG's options (args[4:]).
func parseGroupConfig(op *wire.XGroupConfig, opts [][]byte) Reply {
	if len(opts)%2 != 0 {
		return errSyntax
	}
	positive := func(v []byte, bad Reply) (int64, Reply) {
		if isOpt(v, "NONE") {
			return 0, nil
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil || n < 1 {
			return 0, bad
		}
		return n, nil
	}
	for i := 0; i < len(opts); i += 2 {
		o, v := opts[i], opts[i+1]
		var r Reply
		switch {
		case isOpt(o, "MAXDELIVERIES"):
			op.SetMaxDeliveries = true
			op.MaxDeliveries, r = positive(v, errGroupConfigMaxDeliveries)
		case isOpt(o, "VISIBILITY"):
			op.SetVisibility = true
			op.VisibilityMs, r = positive(v, errGroupConfigVisibility)
		case isOpt(o, "DEADLETTER"):
			op.SetDeadLetter = true
			op.DeadLetter = string(v)
			if isOpt(v, "NONE") {
				op.DeadLetter = ""
			} else if op.DeadLetter == op.Key {
				r = errGroupConfigSelf
			}
		default:
			r = errSyntax
		}
		if r != nil {
			return r
		}
	}
	return nil
}

// cmdXGROUPCONFIG plans XGROUP CONFIG key group [option value …]: with
// options it sets them (OK); without, it answers the settings as a map. An
// argument error waits for the key and group checks, as XGROUP SETID's.
func cmdXGROUPCONFIG(c *Client, args [][]byte) (Plan, Reply) {
	b := keyBase(c, args[2])
	if len(args) == 4 {
		return Plan{Op: wire.XGroupConfigGet{Base: b, Group: string(args[3])}, Format: groupConfigResult}, nil
	}
	op := wire.XGroupConfig{Base: b, Group: string(args[3])}
	if r := parseGroupConfig(&op, args[4:]); r != nil {
		return groupFirst(c, args[2], args[3], errXGroupNoKey, errXGroupNoGroup(args[2], args[3]), r)
	}
	return Plan{Op: op, Format: xreply.OK}, nil
}

// groupConfigResult renders XGROUP CONFIG's read form: max-deliveries and
// visibility (0: NONE), dead-letter-key (null: NONE).
func groupConfigResult(res any, err error) Reply {
	if err != nil {
		return xreply.Error(err)
	}
	gc, _ := res.(state.GroupConfigInfo)
	dlq := resp.Reply(resp.Null{})
	if gc.DeadLetterKey != "" {
		dlq = resp.Bulk(gc.DeadLetterKey)
	}
	return resp.Map{
		{K: resp.Bulk("max-deliveries"), V: resp.Int(gc.MaxDeliveries)},
		{K: resp.Bulk("dead-letter-key"), V: dlq},
		{K: resp.Bulk("visibility"), V: resp.Int(gc.VisibilityMs)},
	}
}

// xgroupConfigCommand is XGROUP CONFIG's row: its keys move with
// DEADLETTER (KeysFrom).
func xgroupConfigCommand(flags, acl []string) *Command {
	cmd := groupCommand("xgroup|config", -4, append(flags[:len(flags):len(flags)], "movablekeys"), acl,
		"Set or get a consumer group's delivery settings (max deliveries, dead-letter stream, visibility timeout).",
		"8.99.0", cmdXGROUPCONFIG)
	cmd.KeysFrom = xgroupConfigKeys
	return cmd
}
