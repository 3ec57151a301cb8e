package server

import (
	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/resp"
	"streamd/server/xreply"
)

// What the stream commands' planners share beyond their arguments, which
// package xargs parses.

// keyBase is the wire Base of a command naming key in the client's database.
func keyBase(c *Client, key []byte) wire.Base {
	return wire.Base{DB: c.DB(), Key: string(key)}
}

// Some Redis commands look the key (or the key and group) up before they
// parse the rest of their arguments, so a bad argument on a missing key
// answers as the missing key does (XDEL nokey bad → 0). A planner cannot see
// the keyspace, so it plans a read that decides between the two answers:
// the state check first, then the argument error, as Redis orders them.

// keyFirst plans a TYPE read of key: missing is the reply when the key does
// not exist, otherwise argErr.
func keyFirst(c *Client, key []byte, missing, argErr Reply) (Plan, Reply) {
	return Plan{
		Op: wire.Type{Base: keyBase(c, key)},
		Format: func(res any, err error) Reply {
			if err != nil {
				return xreply.Error(err)
			}
			if t, _ := res.(string); t == "none" {
				return missing
			}
			return argErr
		},
	}, nil
}

// groupFirst plans an XINFO GROUPS read of key: noKey is the reply when the
// key does not exist, noGroup when it has no group named group, otherwise
// argErr.
func groupFirst(c *Client, key, group []byte, noKey, noGroup, argErr Reply) (Plan, Reply) {
	return Plan{
		Op: wire.XInfoGroups{Base: keyBase(c, key)},
		Format: func(res any, err error) Reply {
			if err != nil {
				// The only error XINFO GROUPS has on a stream-only
				// keyspace is "no such key".
				return noKey
			}
			groups, _ := res.([]state.GroupInfo)
			for _, g := range groups {
				if g.Name == string(group) {
					return argErr
				}
			}
			return noGroup
		},
	}, nil
}

// isOpt is resp.IsOpt: arg equals the upper-case option name in any ASCII
// case.
func isOpt(arg []byte, name string) bool { return resp.IsOpt(arg, name) }
