package xargs

import (
	"streamd/replication/wire"
	"streamd/server/resp"
)

// XCFGSET's retention options (issue #15): MAXLEN n, MAXAGE ms, NONE,
// RETENTION-POLICY KEEPREF|ACKED, GROUP-IDLE-EXPIRE ms|NONE.

// Errors of the retention options.
var (
	ErrRetMaxLen      = resp.ErrorReply("ERR MAXLEN must be >= 0")
	ErrRetMaxAge      = resp.ErrorReply("ERR MAXAGE must be > 0 milliseconds")
	ErrRetIdle        = resp.ErrorReply("ERR GROUP-IDLE-EXPIRE must be > 0 milliseconds or NONE")
	ErrRetPolicy      = resp.ErrorReply("ERR RETENTION-POLICY must be KEEPREF or ACKED")
	ErrRetNoneWith    = resp.ErrorReply("ERR NONE cannot be combined with MAXLEN or MAXAGE")
	ErrRetMaxLenTwice = resp.ErrorReply("ERR MAXLEN specified multiple times")
	ErrRetMaxAgeTwice = resp.ErrorReply("ERR MAXAGE specified multiple times")
	ErrRetNoneTwice   = resp.ErrorReply("ERR NONE specified multiple times")
	ErrRetPolicyTwice = resp.ErrorReply("ERR RETENTION-POLICY specified multiple times")
	ErrRetIdleTwice   = resp.ErrorReply("ERR GROUP-IDLE-EXPIRE specified multiple times")
)

// retentionOption parses the retention option at args[0] into s and
// returns how many arguments it took; n is 0 when args[0] is not a
// retention option.
func retentionOption(s *wire.RetentionSet, args [][]byte) (n int, r resp.Reply) {
	none := s.SetMaxLen && s.MaxLen == -1
	switch opt := args[0]; {
	case isOpt(opt, "NONE"):
		switch {
		case none:
			return 1, ErrRetNoneTwice
		case s.SetMaxLen || s.SetMaxAge:
			return 1, ErrRetNoneWith
		}
		s.SetMaxLen, s.MaxLen, s.SetMaxAge, s.MaxAgeMs = true, -1, true, 0
		return 1, nil
	case isOpt(opt, "MAXLEN"), isOpt(opt, "MAXAGE"), isOpt(opt, "RETENTION-POLICY"), isOpt(opt, "GROUP-IDLE-EXPIRE"):
	default:
		return 0, nil
	}
	if len(args) < 2 {
		return 1, resp.ErrSyntax
	}
	opt, val := args[0], args[1]
	switch {
	case isOpt(opt, "MAXLEN"):
		switch {
		case none:
			return 2, ErrRetNoneWith
		case s.SetMaxLen:
			return 2, ErrRetMaxLenTwice
		}
		v, r := Int(val)
		if r != nil {
			return 2, r
		}
		if v < 0 {
			return 2, ErrRetMaxLen
		}
		s.SetMaxLen, s.MaxLen = true, v
	case isOpt(opt, "MAXAGE"):
		switch {
		case none:
			return 2, ErrRetNoneWith
		case s.SetMaxAge:
			return 2, ErrRetMaxAgeTwice
		}
		v, r := Int(val)
		if r != nil {
			return 2, r
		}
		if v <= 0 {
			return 2, ErrRetMaxAge
		}
		s.SetMaxAge, s.MaxAgeMs = true, v
	case isOpt(opt, "RETENTION-POLICY"):
		if s.SetPolicy {
			return 2, ErrRetPolicyTwice
		}
		switch {
		case isOpt(val, "ACKED"):
			s.Policy = wire.PolicyAcked
		case isOpt(val, "KEEPREF"):
			s.Policy = wire.PolicyKeepRef
		default:
			return 2, ErrRetPolicy
		}
		s.SetPolicy = true
	default: // GROUP-IDLE-EXPIRE
		if s.SetIdleExpire {
			return 2, ErrRetIdleTwice
		}
		if isOpt(val, "NONE") {
			s.SetIdleExpire, s.IdleExpireMs = true, 0
			return 2, nil
		}
		v, r := Int(val)
		if r != nil || v <= 0 {
			return 2, ErrRetIdle
		}
		s.SetIdleExpire, s.IdleExpireMs = true, v
	}
	return 2, nil
}
