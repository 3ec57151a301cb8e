package server

import (
	"streamd/server/resp"
)

// Handlers return reply values of package resp (see resp.Reply); the
// connection renders them in the client's protocol with resp.AppendReply.
// The names below are the same types under the names handlers use.

// Reply is a value a handler returns (resp.Reply).
type Reply = resp.Reply

// SimpleString is a status reply.
type SimpleString = resp.SimpleString

// ErrorReply is an error reply; the text starts with its code.
type ErrorReply = resp.ErrorReply

// Int is an integer reply.
type Int = resp.Int

// Bulk is a bulk string; nil is the null bulk string.
type Bulk = resp.Bulk

// Array is an array reply; nil is the null array.
type Array = resp.Array

// Map is a RESP3 map, flattened to an array in RESP2.
type Map = resp.Map

// KV is one key/value of a Map.
type KV = resp.KV

// Set is a RESP3 set, an array in RESP2.
type Set = resp.Set

// Double is a RESP3 double, a bulk string in RESP2.
type Double = resp.Double

// Null is the null reply (RESP2 null bulk).
type Null = resp.Null

// NullArray is the null reply that RESP2 sends as *-1.
type NullArray = resp.NullArray

// Verbatim is a RESP3 verbatim string ("txt"), a bulk string in RESP2.
type Verbatim = resp.Verbatim

// Push is a RESP3 push (e.g. tracking's invalidate), an array in RESP2.
type Push = resp.Push

// OK is the +OK reply.
const OK = resp.OK

// BulkString returns s as a Bulk.
func BulkString(s string) Bulk { return resp.BulkString(s) }

// splitArgs is Redis's sdssplitargs (resp.SplitArgs), for config lines.
func splitArgs(line []byte) ([][]byte, bool) { return resp.SplitArgs(line) }
