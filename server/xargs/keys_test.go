package xargs

import "testing"

func TestScanCursor(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"42", 42, true},
		{"18446744073709551615", 1<<64 - 1, true},
		{"18446744073709551616", 0, false},
		{"-1", 1<<64 - 1, true},
		{"+7", 7, true},
		{"", 0, true},
		{" 1", 0, false},
		{"1x", 0, false},
	}
	for _, tc := range tests {
		got, ok := ScanCursor([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("ScanCursor(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
