package resp

import "testing"

func TestAppendReply(t *testing.T) {
	tests := []struct {
		r      Reply
		p2, p3 string
	}{
		{OK, "+OK\r\n", "+OK\r\n"},
		{ErrorReply("ERR a\r\nb"), "-ERR a  b\r\n", "-ERR a  b\r\n"},
		{Int(-5), ":-5\r\n", ":-5\r\n"},
		{Bulk(nil), "$-1\r\n", "_\r\n"},
		{BulkString(""), "$0\r\n\r\n", "$0\r\n\r\n"},
		{Array(nil), "*-1\r\n", "_\r\n"},
		{NullArray{}, "*-1\r\n", "_\r\n"},
		{Null{}, "$-1\r\n", "_\r\n"},
		{Map{{BulkString("a"), Int(1)}}, "*2\r\n$1\r\na\r\n:1\r\n", "%1\r\n$1\r\na\r\n:1\r\n"},
		{Set{Int(1)}, "*1\r\n:1\r\n", "~1\r\n:1\r\n"},
		{Push{BulkString("x")}, "*1\r\n$1\r\nx\r\n", ">1\r\n$1\r\nx\r\n"},
		{Double(1.5), "$3\r\n1.5\r\n", ",1.5\r\n"},
		{Verbatim("hi"), "$2\r\nhi\r\n", "=6\r\ntxt:hi\r\n"},
	}
	for _, tt := range tests {
		if got := string(AppendReply(nil, tt.r, 2)); got != tt.p2 {
			t.Errorf("RESP2 %#v = %q, want %q", tt.r, got, tt.p2)
		}
		if got := string(AppendReply(nil, tt.r, 3)); got != tt.p3 {
			t.Errorf("RESP3 %#v = %q, want %q", tt.r, got, tt.p3)
		}
	}
}

func TestAppendCommand(t *testing.T) {
	got := string(AppendCommand(nil, []byte("SET"), []byte("k"), []byte("")))
	if want := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"; got != want {
		t.Errorf("AppendCommand = %q, want %q", got, want)
	}
}
