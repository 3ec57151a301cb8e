package config

import (
	"path/filepath"
	"strings"
)

// fixedDirectives are Redis directives that tools ask CONFIG GET about
// (redis_exporter, BullMQ's maxmemory-policy check, RedisInsight) whose
// value is fixed in streamd: CONFIG GET reports the value that is true
// here, CONFIG SET accepts that value and refuses any other with the
// reason, and a config file or flag with another value is accepted with a
// warning (FixedValueError).
func fixedDirectives() []*Directive {
	return []*Directive{
		fixedParam("maxmemory-policy", "noeviction", "streamd never evicts keys", nil).
			doc("fixed: noeviction (keys are never evicted; over maxmemory, commands that add data answer OOM)"),
		fixedParam("hz", "10", "the background tasks (the expiry sweep) run 10 times a second", nil).
			doc("fixed: 10 (the active expiry sweep runs every 100 ms)"),
		fixedParam("notify-keyspace-events", "", "streamd sends no keyspace notifications", nil).quote().
			doc(`fixed: "" (no keyspace notifications)`),
	}
}

// fixedParam is a CONFIG SET-able directive whose only value is value: same
// (nil: a case-insensitive comparison) says whether a given value means
// the same; any other is a FixedValueError with why.
func fixedParam(name, value, why string, same func(string) bool) *Directive {
	if same == nil {
		same = func(v string) bool { return strings.EqualFold(strings.TrimSpace(v), value) }
	}
	return &Directive{
		name: name,
		get:  func(*Config) string { return value },
		set: func(_ *Config, v string) error {
			if !same(v) {
				return &FixedValueError{Name: name, Value: v, Fixed: value, Why: why}
			}
			return nil
		},
	}
}

// absPath is path made absolute against the working directory (Load does
// it to dir; CONFIG GET dir reports it so even for a Config built by hand),
// or path itself if that fails.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
