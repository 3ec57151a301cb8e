package xargs

import (
	"math"
	"testing"

	"streamd/server/resp"
	"streamd/streams"
)

func TestParseInt64(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"7", 7, true},
		{"-7", -7, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"18446744073709551616", 0, false},
		{"99999999999999999999", 0, false},
		{"-0", 0, false},
		{"01", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"-", 0, false},
		{"", 0, false},
		{"1x", 0, false},
		{"1.5", 0, false},
		{"000000000000000000001", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseInt64([]byte(tt.in))
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseInt64(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIsOpt(t *testing.T) {
	tests := []struct {
		arg, name string
		want      bool
	}{
		{"count", "COUNT", true},
		{"CoUnT", "COUNT", true},
		{"COUNTS", "COUNT", false},
		{"", "COUNT", false},
		{"mkstream", "MKSTREAM", true},
		{"M\u212aSTREAM", "MKSTREAM", false}, // Kelvin sign: strcasecmp is ASCII only
		{"nomk\u017ftream", "NOMKSTREAM", false},
	}
	for _, tt := range tests {
		if got := isOpt([]byte(tt.arg), tt.name); got != tt.want {
			t.Errorf("isOpt(%q, %q) = %v", tt.arg, tt.name, got)
		}
	}
}

func TestRangeBounds(t *testing.T) {
	max := uint64(math.MaxUint64)
	tests := []struct {
		in       string
		start    bool
		want     streams.ID
		wantErr  resp.Reply
		describe string
	}{
		{"-", true, streams.MinID, nil, "minus"},
		{"+", false, streams.MaxID, nil, "plus"},
		{"5", true, streams.ID{Ms: 5}, nil, "ms-only start takes seq 0"},
		{"5", false, streams.ID{Ms: 5, Seq: max}, nil, "ms-only end takes seq max"},
		{"(5", true, streams.ID{Ms: 5, Seq: 1}, nil, "exclusive start"},
		{"(5", false, streams.ID{Ms: 5, Seq: max - 1}, nil, "exclusive end"},
		{"(5-" + "18446744073709551615", true, streams.ID{Ms: 6}, nil, "exclusive start carries"},
		{"(6-0", false, streams.ID{Ms: 5, Seq: max}, nil, "exclusive end borrows"},
		{"(18446744073709551615-18446744073709551615", true, streams.ID{}, ErrStartID, "no successor"},
		{"(18446744073709551615", true, streams.ID{Ms: max, Seq: 1}, nil, "ms-only max start"},
		{"(0-0", false, streams.ID{}, ErrEndID, "no predecessor"},
		{"(0", false, streams.ID{Ms: 0, Seq: max - 1}, nil, "ms-only zero end"},
		{"(-", true, streams.ID{}, ErrInvalidID, "exclusive minus is strict"},
		{"(+", false, streams.ID{}, ErrInvalidID, "exclusive plus is strict"},
		{"(", true, streams.ID{}, ErrInvalidID, "lone paren"},
		{"bad", false, streams.ID{}, ErrInvalidID, "garbage"},
	}
	for _, tt := range tests {
		var got streams.ID
		var r resp.Reply
		if tt.start {
			got, r = RangeStart([]byte(tt.in))
		} else {
			got, r = RangeEnd([]byte(tt.in))
		}
		if r != tt.wantErr {
			t.Errorf("%s: %q: err %v, want %v", tt.describe, tt.in, r, tt.wantErr)
			continue
		}
		if r == nil && got != tt.want {
			t.Errorf("%s: %q: got %v, want %v", tt.describe, tt.in, got, tt.want)
		}
	}
}

func TestSubcommandSyntaxError(t *testing.T) {
	got := SubcommandSyntaxError("XGROUP", []byte("create"))
	want := resp.ErrorReply("ERR unknown subcommand or wrong number of arguments for 'create'. Try XGROUP HELP.")
	if got != want {
		t.Fatalf("got %q", got)
	}
}
