package server

import (
	"streamd/server/xargs"
	"streamd/server/xreply"
)

// cmdXADD plans XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold
// [LIMIT count]] *|ms-*|ms-seq field value [field value ...].
func cmdXADD(c *Client, args [][]byte) (Plan, Reply) {
	op, r := xargs.XAdd(args)
	if r != nil {
		return Plan{}, r
	}
	op.DB = c.DB()
	return Plan{Op: op, Format: xreply.Added, Added: true}, nil
}

// cmdXTRIM plans XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count].
// Redis 7.0 parses the arguments before it looks the key up, so argument
// errors win over a missing key.
func cmdXTRIM(c *Client, args [][]byte) (Plan, Reply) {
	op, r := xargs.XTrim(args)
	if r != nil {
		return Plan{}, r
	}
	op.DB = c.DB()
	return Plan{Op: op, Format: xreply.Int}, nil
}
