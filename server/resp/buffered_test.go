package resp

import (
	"io"
	"reflect"
	"strings"
	"testing"
)

// readAll reads every request from in, n bytes per read, and returns the
// arguments (as strings) and the error that ended reading.
func readAll(in string, n int, authed bool) ([][]string, error) {
	rr := NewRequestReader(&chunkedReader{data: []byte(in), n: n},
		func() int64 { return 1 << 20 }, func() bool { return authed })
	var out [][]string
	for {
		args, err := rr.ReadCommand()
		if err != nil {
			return out, err
		}
		var ss []string
		for _, a := range args {
			if cap(a) != len(a) {
				return out, io.ErrShortBuffer // arguments must be capped
			}
			ss = append(ss, string(a))
		}
		out = append(out, ss)
	}
}

// TestReadBufferedMatchesGeneralPath: requests taken whole from the buffer
// (readBuffered) parse as the general path does, wherever reads split them,
// and malformed input gets the same error either way.
func TestReadBufferedMatchesGeneralPath(t *testing.T) {
	big := strings.Repeat("x", 20000)
	inputs := []string{
		"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$1\r\nf\r\n$1\r\nv\r\n" +
			"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
		"*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\nPING\r\n*1\r\n$4\r\nPING\r\n",
		"*2\r\n$4\r\nECHO\r\n$20000\r\n" + big + "\r\n*1\r\n$4\r\nPING\r\n",
		"*1\n$4\nPING\n*1\r\n$4\r\nPING\r\n",
		"*1\r\n$+4\r\nPING\r\n",
		"*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n",
		"*2\r\n$4\r\nECHO\r\n:1\r\n",
		"*1\r\n$-1\r\n",
		"*1\r\n$4\r\nPI",
		"*12\r\n" + strings.Repeat("$1\r\na\r\n", 12),
	}
	for _, in := range inputs {
		for _, authed := range []bool{true, false} {
			want, wantErr := readAll(in, 1, authed) // one byte per read: never whole in the buffer
			for n := 2; n <= len(in)+1; n += 1 + n/8 {
				got, err := readAll(in, n, authed)
				if !reflect.DeepEqual(got, want) || (err == nil) != (wantErr == nil) ||
					(err != nil && err.Error() != wantErr.Error()) {
					t.Fatalf("%.40q authed=%v read %d: got %q, %v; want %q, %v", in, authed, n, got, err, want, wantErr)
				}
			}
		}
	}
}
