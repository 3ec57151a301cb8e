package glob

import (
	"strings"
	"testing"
)

// TestMatch pins Match to Redis: every expectation below was produced by
// real redis-server 7.0.15 with KEYS (the key and the pattern both prefixed
// with "k", which preserves the outcome).
func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{`*`, `hello`, true},
		{`h*o`, `hello`, true},
		{`h*o`, `hell`, false},
		{`h?llo`, `hello`, true},
		{`h?llo`, `hllo`, false},
		{`h[ae]llo`, `hello`, true},
		{`h[ae]llo`, `hillo`, false},
		{`h[^e]llo`, `hello`, false},
		{`h[^e]llo`, `hallo`, true},
		{`h[a-z]llo`, `hello`, true},
		{`h[z-a]llo`, `hello`, true},
		{`h[A-Z]llo`, `hello`, false},
		{`h\*llo`, `h*llo`, true},
		{`h\*llo`, `hello`, false},
		{`h[\]]llo`, `h]llo`, true},
		{`a[bc`, `ab`, true},
		{`a[bc`, `abc`, false},
		{`a[`, `a`, false},
		{`ab\`, `ab\`, true},
		{`*a*b*c*`, `xaxbxcx`, true},
		{`**`, `x`, true},
		{`a*`, `a`, true},
		{`a**`, `a`, true},
		{`[]]`, `]`, false},
		{`[]a]`, `a`, false},
		{`[a-]`, `-`, false},
		{`[-a]`, `-`, true},
		{`h[a-c-e]llo`, `hdllo`, false},
		{`*?`, `x`, true},
		{`?*`, ``, false},
		{`[^]`, `a`, true},
		// Redis never enters its loop for an empty string: only an empty
		// pattern matches it (KEYS/SCAN special-case a lone "*").
		{`*`, ``, false},
		{``, ``, true},
		{``, `a`, false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestMatchFold(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"MAXCLIENTS", "maxclients", true},
		{"Stream-*", "stream-node-max-entries", true},
		{"[A-Z]ort", "port", true},
		{"p[^O]rt", "port", false},
		{"save", "port", false},
	}
	for _, tt := range tests {
		if got := MatchFold(tt.pattern, tt.s); got != tt.want {
			t.Errorf("MatchFold(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
	if Match("PORT", "port") {
		t.Error("Match must be case-sensitive")
	}
}

// TestMatchStarsTerminate checks the skipLongerMatches cut: a pattern of many
// stars against a long non-matching string must answer, not go exponential.
func TestMatchStarsTerminate(t *testing.T) {
	p := strings.Repeat("a*", 40) + "b"
	s := strings.Repeat("a", 200)
	if Match(p, s) {
		t.Fatal("want no match")
	}
	if !Match(p, s+"b") {
		t.Fatal("want a match")
	}
}
