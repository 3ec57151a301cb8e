package observe

import (
	"strconv"
	"strings"
)

// Redact returns args as Redis shows them in the slow log and to MONITOR,
// for the command named name (a subcommand as "config|set"): AUTH's
// password (and user), HELLO's AUTH user and password, ACL SETUSER's
// user and rules, and CONFIG SET
// requirepass's value replaced by "(redacted)", where Redis's
// redactClientCommandArgument does it (only once the arguments parsed).
// args itself is never changed.
func Redact(name string, args [][]byte) [][]byte {
	var redact []int
	switch name {
	case "auth":
		if len(args) <= 3 {
			for j := 1; j < len(args); j++ {
				redact = append(redact, j)
			}
		}
	case "hello":
		if len(args) < 2 {
			break
		}
		v, err := strconv.ParseInt(string(args[1]), 10, 64)
		if err != nil || v < 2 || v > 3 {
			break
		}
		for j := 2; j < len(args); j++ {
			more := len(args) - 1 - j
			switch opt := string(args[j]); {
			case strings.EqualFold(opt, "auth") && more >= 2:
				redact = append(redact, j+1, j+2)
				j += 2
			case strings.EqualFold(opt, "setname") && more >= 1:
				j++
			default:
				j = len(args)
			}
		}
	case "acl|setuser":
		// Redis's aclCommand redacts every argument after SETUSER
		// (the user and its rules: passwords among them).
		for j := 2; j < len(args); j++ {
			redact = append(redact, j)
		}
	case "config|set":
		for j := 2; j+1 < len(args); j += 2 {
			if strings.EqualFold(string(args[j]), "requirepass") {
				redact = append(redact, j+1)
			}
		}
	}
	if len(redact) == 0 {
		return args
	}
	out := append([][]byte(nil), args...)
	for _, j := range redact {
		out[j] = redactedArg
	}
	return out
}

// redactedArg replaces a secret argument (Redis's shared.redacted).
var redactedArg = []byte("(redacted)")
