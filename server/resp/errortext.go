package resp

// The one rule for error codes. Every error reply starts with a code: the
// first word, up to the first space ("ERR", "WRONGTYPE", "NOGROUP",
// "MOVED", "TRYAGAIN", "CLUSTERDOWN", "MISCONF", ...). Redis's own C code
// says explicitly which texts carry one (addReplyError prepends "-ERR "
// unless the text starts with "-"); where streamd gets a text from
// elsewhere (an error of the replication layer), HasErrorCode decides.
//
// A text carries a code when its first word is followed by a space and is
// made of upper-case ASCII letters only, as every Redis error code is. So
// "MISCONF Errors writing to the log" is sent as it is, while
// "raft: not the leader" and "snapshot failed" get "ERR " in front, and so
// does a text that is a single word ("EOF": Redis's errorstats and its
// scripting layer count a text without a space as ERR) or whose first word
// has digits or punctuation ("X1 ...", "RAFT-ADD ...").

// HasErrorCode reports whether msg starts with a Redis error code: an
// upper-case word (A-Z only) followed by a space.
func HasErrorCode(msg string) bool {
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == ' ' {
			return i > 0
		}
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return false
}

// ErrorText returns msg as an error reply's text: msg itself when it starts
// with an error code (HasErrorCode), else "ERR " and msg.
func ErrorText(msg string) string {
	if HasErrorCode(msg) {
		return msg
	}
	return "ERR " + msg
}
