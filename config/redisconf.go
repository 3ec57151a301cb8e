package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// refusedRedisDirectives are the Redis directives streamd refuses rather
// than ignores, because ignoring them would change who may do what or which
// data a client sees: the reason says what to do instead.
var refusedRedisDirectives = map[string]string{
	"include":        "streamd does not read included files: copy their directives into this file",
	"rename-command": "streamd cannot rename or hide commands",
	"loadmodule":     "streamd does not load Redis modules",
	"replicaof":      "streamd replicates through Raft, not replicaof: see node-id, join and peers",
	"slaveof":        "streamd replicates through Raft, not slaveof: see node-id, join and peers",
	"sentinel":       "streamd is not a Redis Sentinel",
}

// IsRedisDirective reports whether name (any case) is one of Redis 7.2's
// directives.
func IsRedisDirective(name string) bool {
	name = strings.ToLower(name)
	i := sort.SearchStrings(redisDirectives, name)
	return i < len(redisDirectives) && redisDirectives[i] == name
}

// ignoredRedisDirective returns, for a name that is not a streamd
// directive, the warning with which a file line or flag of it is accepted
// (ok), or the error refusing it (a refused Redis directive, or an unknown
// word, with the nearest directive name as a suggestion).
func ignoredRedisDirective(name string) (warning string, err error) {
	name = strings.ToLower(name)
	if why, refused := refusedRedisDirectives[name]; refused {
		return "", fmt.Errorf("Redis directive '%s' is not supported: %s", name, why)
	}
	if IsRedisDirective(name) {
		return fmt.Sprintf("ignoring Redis directive '%s' (streamd does not use it)", name), nil
	}
	return "", errUnknown
}

// errUnknown: the name is neither a streamd nor a Redis directive.
var errUnknown = errors.New("unknown directive")

// FixedValueError is a fixed directive's answer to a value it cannot
// honour (maxmemory 2gb, appendonly no): CONFIG SET refuses the value with
// this text; a config file, flag or environment variable is accepted with a
// warning (Config.Warnings) and the fixed value stays.
type FixedValueError struct {
	Name, Value, Fixed, Why string
}

// Error is the refusal's reason, for CONFIG SET's "ERR CONFIG SET failed
// (possibly related to argument 'name') - …".
func (e *FixedValueError) Error() string {
	return fmt.Sprintf("streamd supports only '%s' (%s)", e.Fixed, e.Why)
}

// warning is the start-up warning for the ignored value.
func (e *FixedValueError) warning() string {
	return fmt.Sprintf("ignoring '%s %s': %v", e.Name, e.Value, e)
}

// setOrWarn sets p to value in c; a value a fixed directive cannot honour
// becomes a warning on c instead of an error.
func (c *Config) setOrWarn(p *Directive, value string) error {
	err := p.set(c, value)
	var fe *FixedValueError
	if errors.As(err, &fe) {
		c.Warnings = append(c.Warnings, fe.warning())
		return nil
	}
	return err
}

// Suggest returns the directive name nearest to the mistyped word (Damerau–
// Levenshtein distance, at most a third of its length, and at least 1), or
// "" if none is near. Redis's names are candidates when redis is set (a
// config file may use them).
func Suggest(word string, redis bool) string {
	word = strings.ToLower(word)
	limit := max(1, min(3, len(word)/3))
	best, bestD := "", limit+1
	try := func(name string) {
		if d := editDistance(word, name); d < bestD {
			best, bestD = name, d
		}
	}
	for _, p := range directives {
		try(p.name)
	}
	if redis {
		for _, n := range redisDirectives {
			if _, refused := refusedRedisDirectives[n]; !refused {
				try(n)
			}
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent bytes.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
