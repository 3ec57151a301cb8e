package resp

// Reply is a reply value; AppendReply renders it in the client's protocol
// (RESP2 or RESP3), so the RESP3 shapes live in the value, not in the code
// that builds it.
//
// Concrete reply types:
//
//	SimpleString  +OK
//	ErrorReply    -ERR ... (the text includes the code: "ERR ...", "NOGROUP ...")
//	Int           :1
//	Bulk          $3\r\nabc (nil Bulk is a null bulk: $-1 / _)
//	Array         *2 ... (nil Array is a null array: *-1 / _)
//	Map           RESP3 %N, RESP2 a flat array of 2N
//	Set           RESP3 ~N, RESP2 an array
//	Double        RESP3 ,1.5, RESP2 a bulk string
//	Null          RESP2 $-1, RESP3 _
//	NullArray     RESP2 *-1, RESP3 _
//	Verbatim      RESP3 =N txt:..., RESP2 a bulk string
//	Push          RESP3 >N (out-of-band), RESP2 an array
//	Appender      any other type that renders itself (AppendRESP)
//
// A nil Reply renders as a null bulk.
type Reply interface{}

// Appender is a Reply that renders itself: AppendRESP appends its RESP
// bytes in protocol proto (2 or 3) to b. Types outside this package use it
// for replies that are cheaper to write directly than to build from the
// values above (server's stream IDs and entries); they must write what an
// equivalent value would.
type Appender interface {
	AppendRESP(b []byte, proto int) []byte
}

// SimpleString is a status reply.
type SimpleString string

// ErrorReply is an error reply; the text starts with its code (see
// ErrorText for adding "ERR" to a text without one).
type ErrorReply string

// Int is an integer reply.
type Int int64

// Bulk is a bulk string; nil is the null bulk string.
type Bulk []byte

// Array is an array reply; nil is the null array.
type Array []Reply

// Map is a RESP3 map, flattened to an array in RESP2.
type Map []KV

// KV is one key/value of a Map.
type KV struct {
	K, V Reply
}

// Set is a RESP3 set, an array in RESP2.
type Set []Reply

// Double is a RESP3 double, a bulk string in RESP2.
type Double float64

// Null is the null reply (RESP2 null bulk).
type Null struct{}

// NullArray is the null reply that RESP2 sends as *-1.
type NullArray struct{}

// Verbatim is a RESP3 verbatim string ("txt"), a bulk string in RESP2.
type Verbatim string

// Push is a RESP3 push (e.g. tracking's invalidate), an array in RESP2.
type Push []Reply

// OK is the +OK reply.
const OK = SimpleString("OK")

// BulkString returns s as a Bulk.
func BulkString(s string) Bulk { return Bulk(s) }
