package resp

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		ok   bool
	}{
		{"PING", []string{"PING"}, true},
		{"  set  a   b ", []string{"set", "a", "b"}, true},
		{`echo "a b"`, []string{"echo", "a b"}, true},
		{`echo "x\x41\n"`, []string{"echo", "xA\n"}, true},
		{`echo 'it\'s'`, []string{"echo", "it's"}, true},
		{`echo ""`, []string{"echo", ""}, true},
		{`echo foo"bar"`, []string{"echo", "foobar"}, true},
		{`echo "a"b`, nil, false},
		{`echo "abc`, nil, false},
		{`echo 'abc`, nil, false},
		{"", nil, true},
	}
	for _, tt := range tests {
		got, ok := SplitArgs([]byte(tt.in))
		var strs []string
		for _, a := range got {
			strs = append(strs, string(a))
		}
		if ok != tt.ok || !reflect.DeepEqual(strs, tt.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q, %v", tt.in, strs, ok, tt.want, tt.ok)
		}
	}
}

func TestRequestReader(t *testing.T) {
	big := strings.Repeat("a", InlineMaxSize+10)
	tests := []struct {
		name    string
		in      string
		authed  bool
		want    [][]string
		wantErr string // protocol error text, "" for io.EOF at the end
	}{
		{"multibulk", "*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n", true, [][]string{{"ECHO", "hi"}}, ""},
		{"pipelined and empty skipped", "*0\r\n*-1\r\n\r\nPING\r\n*1\r\n$4\r\nPING\r\n", true,
			[][]string{{"PING"}, {"PING"}}, ""},
		{"inline LF only", "ECHO 'a b'\n", true, [][]string{{"ECHO", "a b"}}, ""},
		{"binary bulk", "*1\r\n$3\r\na\r\n\r\n", true, [][]string{{"a\r\n"}}, ""},
		{"bad multibulk length", "*x\r\n", true, nil, "invalid multibulk length"},
		{"expected dollar", "*1\r\n+OK\r\n", true, nil, "expected '$', got '+'"},
		{"negative bulk", "*1\r\n$-3\r\n", true, nil, "invalid bulk length"},
		{"bulk over proto-max-bulk-len", "*1\r\n$2000000\r\n", true, nil, "invalid bulk length"},
		{"unbalanced", "ECHO \"a\r\n", true, nil, "unbalanced quotes in request"},
		{"too big inline", big, true, nil, "too big inline request"},
		{"too big count", "*" + big, true, nil, "too big mbulk count string"},
		{"unauthenticated multibulk", "*11\r\n", false, nil, "unauthenticated multibulk length"},
		{"unauthenticated bulk", "*1\r\n$20000\r\n", false, nil, "unauthenticated bulk length"},
		{"unauthenticated signed count", "*+11\r\n", false, nil, "invalid multibulk length"},
		// Lengths are read by string2ll: no sign, no leading zero, no "-0".
		{"plus bulk length", "*1\r\n$+4\r\nPING\r\n", true, nil, "invalid bulk length"},
		{"plus count", "*+1\r\n$4\r\nPING\r\n", true, nil, "invalid multibulk length"},
		{"zero-led count", "*01\r\n$4\r\nPING\r\n", true, nil, "invalid multibulk length"},
		{"zero-led bulk length", "*1\r\n$04\r\nPING\r\n", true, nil, "invalid bulk length"},
		{"minus zero count", "*-0\r\n", true, nil, "invalid multibulk length"},
		{"most negative count is empty", "*-9223372036854775808\r\nPING\r\n", true, [][]string{{"PING"}}, ""},
		// A header ends at its first '\r'; the byte after it is skipped.
		{"LF-only count", "*1\n$4\r\nPING\r\n", true, nil, "invalid multibulk length"},
		{"CR and any byte", "*1\rx$4\ryPINGzz", true, [][]string{{"PING"}}, ""},
		{"empty bulk header", "*1\r\n\r\n", true, nil, "expected '$', got ' '"},
		// A NUL hides a line's end, as from Redis's strchr.
		{"NUL in count", "*1\x00\r\n$4\r\nPING\r\n", true, nil, ""},
		{"NUL in count, then 64 KiB", "*1\x00\r\n" + big, true, nil, "too big mbulk count string"},
		{"NUL in inline", "PING\x00\r\n" + big, true, nil, "too big inline request"},
		{"long count line ending in the last read", "*" + strings.Repeat("1", InlineMaxSize+100) + "\r\n", true, nil,
			"invalid multibulk length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rr := NewRequestReader(strings.NewReader(tt.in),
				func() int64 { return 1 << 20 }, func() bool { return tt.authed })
			var got [][]string
			var err error
			for {
				var args [][]byte
				args, err = rr.ReadCommand()
				if err != nil {
					break
				}
				var strs []string
				for _, a := range args {
					strs = append(strs, string(a))
				}
				got = append(got, strs)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("commands = %q, want %q", got, tt.want)
			}
			if tt.wantErr == "" {
				if !errors.Is(err, io.EOF) {
					t.Errorf("err = %v, want EOF", err)
				}
				return
			}
			var pe ProtocolError
			if !errors.As(err, &pe) || string(pe) != tt.wantErr {
				t.Errorf("err = %v, want protocol error %q", err, tt.wantErr)
			}
		})
	}
}
