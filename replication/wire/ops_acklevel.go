package wire

// AckLevel is a stream's ACKLEVEL (XCFGSET key ACKLEVEL QUORUM|LEADER):
// when the leader answers an XADD to it. It changes nothing Apply does,
// only when the proposer replies; the setting lives in the state so every
// node (and a new leader) knows it.
type AckLevel byte

// The ack levels. AckDefault is "not set": the node's
// stream-default-acklevel applies.
const (
	AckDefault AckLevel = 0
	// AckQuorum answers once the entry is on a majority and applied.
	AckQuorum AckLevel = 1
	// AckLeader answers once the entry is durable in the leader's own log.
	AckLeader AckLevel = 2
)

// String returns the level as XINFO STREAM shows it ("quorum", "leader";
// "" for AckDefault).
func (l AckLevel) String() string {
	switch l {
	case AckQuorum:
		return "quorum"
	case AckLeader:
		return "leader"
	}
	return ""
}

// ParseAckLevel parses "quorum" or "leader" (any case); ok is false for
// anything else.
func ParseAckLevel(s string) (AckLevel, bool) {
	switch {
	case len(s) == 6 && equalFold(s, "quorum"):
		return AckQuorum, true
	case len(s) == 6 && equalFold(s, "leader"):
		return AckLeader, true
	}
	return AckDefault, false
}

// equalFold compares ASCII case-insensitively (lower is lower case).
func equalFold(s, lower string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
