// Package resp owns the Redis protocol (RESP2 and RESP3) and nothing else:
//
//   - RequestReader reads client requests, multibulk and inline, with
//     Redis's limits (proto-max-bulk-len, the query-buffer and
//     unauthenticated limits) and its exact "Protocol error: ..." texts;
//     SplitArgs is Redis's sdssplitargs (inline requests, config lines).
//   - Reply and its concrete types are reply values; AppendReply renders
//     them in RESP2 or RESP3, the one place the protocols' shapes differ.
//     AppendCommand encodes a request.
//   - ReplyReader is the one reader of replies (RESP2 and RESP3, bounded by
//     ReplyLimits): as exact bytes for relaying (forwarding to a shard's
//     leader), or as a Value (cmd/streamd's --join, the server tests).
//   - ErrorText is the one rule for whether an error text carries a code
//     or gets "ERR " in front.
//
// It imports no other streamd package: connections, commands and their
// state live in package server.
package resp
