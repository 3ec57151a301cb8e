package server

import (
	"strings"
	"testing"
)

// TestDiffScriptPad: {pad:N} in command arguments, after repeat's {i}.
func TestDiffScriptPad(t *testing.T) {
	s, err := parseDiffScript("t.txt", "repeat 2 XADD s {i}-1 f a{pad:{i}0}b\nXADD s 3-1 f {pad:0}")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a" + strings.Repeat("x", 10) + "b", "a" + strings.Repeat("x", 20) + "b", ""}
	if len(s.Steps) != 3 {
		t.Fatalf("steps = %+v", s.Steps)
	}
	for i, st := range s.Steps {
		if got := st.Args[4]; got != want[i] {
			t.Errorf("step %d: value of %d bytes, want %d", i, len(got), len(want[i]))
		}
	}
	for _, bad := range []string{"XADD s * f {pad:", "XADD s * f {pad:x}", "XADD s * f {pad:-1}"} {
		if _, err := parseDiffScript("t.txt", bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
