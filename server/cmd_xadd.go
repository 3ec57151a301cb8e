package server

import (
	"streamd/server/xargs"
	"streamd/streams"
)

// cmdXADD plans XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold
// [LIMIT count]] *|ms-*|ms-seq field value [field value ...].
func cmdXADD(c *Client, args [][]byte) (*Plan, Reply) {
	op, r := xargs.XAdd(args)
	if r != nil {
		return nil, r
	}
	op.DB = c.DB()
	return &Plan{Op: op, Format: formatXADD}, nil
}

// formatXADD replies the new ID as a bulk string, or a null when NOMKSTREAM
// met a missing key.
func formatXADD(res any, err error) Reply {
	if err != nil {
		return errorFormat(err)
	}
	id, ok := res.(streams.ID)
	if !ok {
		return Null{}
	}
	return idReply(id)
}

// cmdXTRIM plans XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count].
// Redis 7.0 parses the arguments before it looks the key up, so argument
// errors win over a missing key.
func cmdXTRIM(c *Client, args [][]byte) (*Plan, Reply) {
	op, r := xargs.XTrim(args)
	if r != nil {
		return nil, r
	}
	op.DB = c.DB()
	return &Plan{Op: op, Format: formatInt}, nil
}
