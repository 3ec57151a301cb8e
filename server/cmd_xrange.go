package server

import (
	"streamd/replication/wire"
	"streamd/server/xargs"
	"streamd/server/xreply"
)

// cmdXRANGE plans XRANGE key start end [COUNT n].
func cmdXRANGE(c *Client, args [][]byte) (Plan, Reply) {
	return xrangeGeneric(c, args, false)
}

// cmdXREVRANGE plans XREVRANGE key end start [COUNT n].
func cmdXREVRANGE(c *Client, args [][]byte) (Plan, Reply) {
	return xrangeGeneric(c, args, true)
}

// xrangeGeneric plans xrangeGenericCommand (arguments: xargs.XRange). COUNT
// 0 replies a null array on an existing stream but the empty array on a
// missing key, because Redis looks the key up before it tests the count.
func xrangeGeneric(c *Client, args [][]byte, rev bool) (Plan, Reply) {
	op, r := xargs.XRange(args, rev)
	if r != nil {
		return Plan{}, r
	}
	if op.Count == 0 {
		return keyFirst(c, args[1], Array{}, NullArray{})
	}
	op.DB = c.DB()
	return Plan{Op: op, Format: xreply.EntriesResult}, nil
}

// cmdXLEN plans XLEN key.
func cmdXLEN(c *Client, args [][]byte) (Plan, Reply) {
	return Plan{Op: wire.XLen{Base: keyBase(c, args[1])}, Format: xreply.Int}, nil
}

// cmdXDEL plans XDEL key id [id ...]. Redis looks the key up before it
// parses the IDs (so it never deletes some and then fails), hence a bad ID on
// a missing key answers 0.
func cmdXDEL(c *Client, args [][]byte) (Plan, Reply) {
	ids, r := xargs.StrictIDs(args[2:])
	if r != nil {
		return keyFirst(c, args[1], Int(0), r)
	}
	return Plan{Op: wire.XDel{Base: keyBase(c, args[1]), IDs: ids}, Format: xreply.Int}, nil
}

// cmdXSETID plans XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id].
// Redis parses every argument (options repeatable, the last one wins) before
// it looks the key up; MAXDELETEDID above last-id is refused while parsing.
func cmdXSETID(c *Client, args [][]byte) (Plan, Reply) {
	op, r := xargs.XSetID(args)
	if r != nil {
		return Plan{}, r
	}
	op.DB = c.DB()
	return Plan{Op: op, Format: xreply.OK}, nil
}
