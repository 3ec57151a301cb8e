package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/testutil"
)

// rawCase is raw request bytes and what the server answers: the reply
// bytes and whether it then closes the connection. Every case ends in a
// closed connection or with the reply to rawEnd, so reading its answer
// needs no quiet period.
type rawCase struct {
	name string
	in   string
	// want is the expected reply bytes (checked against streamd even
	// without a redis-server); "" leaves it to the comparison with Redis.
	want   string
	closes bool
}

// rawEnd is a last request whose reply (rawEndReply) marks the end of the
// answer on a connection that stays open; rawQuit ends one that has not
// authenticated (QUIT needs no AUTH: "+OK", then the server closes).
const (
	rawEnd      = "*2\r\n$4\r\nECHO\r\n$3\r\nEND\r\n"
	rawEndReply = "$3\r\nEND\r\n"
	rawQuit     = "*1\r\n$4\r\nQUIT\r\n"
	noAuth      = "-NOAUTH Authentication required.\r\n"
)

const (
	errMultibulkLen = "-ERR Protocol error: invalid multibulk length\r\n"
	errBulkLen      = "-ERR Protocol error: invalid bulk length\r\n"
)

// requestLengthCases are the "*N" and "$N" spellings Redis 7's string2ll
// refuses or reads in its own way, each checked byte for byte.
var requestLengthCases = []rawCase{
	// The five: a sign, leading zeros and "-0" are protocol errors.
	{"plus bulk", "*1\r\n$+4\r\nPING\r\n", errBulkLen, true},
	{"plus multibulk", "*+1\r\n$4\r\nPING\r\n", errMultibulkLen, true},
	{"leading zero multibulk", "*01\r\n$4\r\nPING\r\n", errMultibulkLen, true},
	{"leading zero bulk", "*1\r\n$04\r\nPING\r\n", errBulkLen, true},
	{"minus zero multibulk", "*-0\r\nPING\r\n", errMultibulkLen, true},
	// Empty and negative counts are skipped.
	{"minus one", "*-1\r\nPING\r\n" + rawEnd, "+PONG\r\n" + rawEndReply, false},
	{"zero", "*0\r\nPING\r\n" + rawEnd, "+PONG\r\n" + rawEndReply, false},
	{"minus two", "*-2\r\n" + rawEnd, rawEndReply, false},
	{"most negative", "*-9223372036854775808\r\n" + rawEnd, rawEndReply, false},
	{"below int64", "*-9223372036854775809\r\n", errMultibulkLen, true},
	{"double zero", "*00\r\n", errMultibulkLen, true},
	{"minus leading zero", "*-01\r\n", errMultibulkLen, true},
	{"empty count", "*\r\n", errMultibulkLen, true},
	{"over INT_MAX", "*2147483648\r\n", errMultibulkLen, true},
	{"INT_MAX then inline", "*2147483647\r\nPING\r\n", "-ERR Protocol error: expected '$', got 'P'\r\n", true},
	{"huge count", "*99999999999999999999\r\n", errMultibulkLen, true},
	{"int64 max count", "*9223372036854775807\r\n", errMultibulkLen, true},
	{"hex count", "*0x1\r\n", errMultibulkLen, true},
	{"exponent count", "*1e1\r\n", errMultibulkLen, true},
	{"space after count", "*1 \r\n$4\r\nPING\r\n", errMultibulkLen, true},
	{"space before count", "* 1\r\n$4\r\nPING\r\n", errMultibulkLen, true},
	// Bulk lengths.
	{"null bulk in a request", "*1\r\n$-1\r\n", errBulkLen, true},
	{"minus zero bulk", "*1\r\n$-0\r\n", errBulkLen, true},
	{"double zero bulk", "*1\r\n$00\r\n\r\n", errBulkLen, true},
	{"zeros bulk", "*1\r\n$0004\r\nPING\r\n", errBulkLen, true},
	{"empty bulk length", "*1\r\n$\r\nPING\r\n", errBulkLen, true},
	{"space in bulk length", "*1\r\n$ 4\r\nPING\r\n", errBulkLen, true},
	{"space after bulk length", "*1\r\n$4 \r\nPING\r\n", errBulkLen, true},
	{"int64 max bulk", "*1\r\n$9223372036854775807\r\n", errBulkLen, true},
	{"int64 min bulk", "*1\r\n$-9223372036854775808\r\n", errBulkLen, true},
	{"over proto-max-bulk-len", "*1\r\n$536870913\r\n", errBulkLen, true},
	{"empty argument", "*1\r\n$0\r\n\r\n" + rawEnd, "", false},
	{"after a good request", "*1\r\n$4\r\nPING\r\n*1\r\n$+4\r\nPING\r\n", "+PONG\r\n" + errBulkLen, true},
	// Where a header ends: at its first '\r', whose next byte is skipped
	// unchecked; the two bytes after a bulk are skipped unchecked too.
	{"LF-only count", "*1\n$4\r\nPING\r\n", errMultibulkLen, true},
	{"LF-only bulk length", "*1\r\n$4\nPING\r\n$4\r\n", errBulkLen, true},
	{"CR and any byte after the count", "*1\rx$4\r\nPING\r\n" + rawEnd, "+PONG\r\n" + rawEndReply, false},
	{"CR and any byte after the bulk length", "*1\r\n$4\rxPING\r\n" + rawEnd, "+PONG\r\n" + rawEndReply, false},
	{"any two bytes after a bulk", "*1\r\n$4\r\nPINGxx" + rawEnd, "+PONG\r\n" + rawEndReply, false},
	{"CR CR LF after the bulk length", "*1\r\n$4\r\r\nPING\r\n" + rawEnd, "", false},
	{"no dollar", "*1\r\nPING\r\n", "-ERR Protocol error: expected '$', got 'P'\r\n", true},
	{"empty bulk header", "*1\r\n\r\n", "-ERR Protocol error: expected '$', got ' '\r\n", true},
	{"nested array", "*1\r\n*4\r\nPING\r\n", "-ERR Protocol error: expected '$', got '*'\r\n", true},
	// A NUL before the end of a line hides the end from Redis's strchr:
	// it waits for more than 64 KiB, then gives up.
	{"NUL in count", "*1\x00\r\n$4\r\nPING\r\n" + strings.Repeat("a", 70000),
		"-ERR Protocol error: too big mbulk count string\r\n", true},
	{"NUL in bulk length", "*1\r\n$4\x00\r\nPING\r\n" + strings.Repeat("a", 70000),
		"-ERR Protocol error: too big bulk count string\r\n", true},
	{"NUL in inline", "PING\x00\r\n" + strings.Repeat("a", 70000),
		"-ERR Protocol error: too big inline request\r\n", true},
	{"NUL in a bulk is data", "*2\r\n$4\r\nECHO\r\n$3\r\na\x00b\r\n" + rawEnd, "$3\r\na\x00b\r\n" + rawEndReply, false},
	// Inline requests and what is not a multibulk.
	{"dollar inline", "$4\r\nPING\r\n" + rawEnd, "", false},
	{"blank lines", "\r\nPING\r\n\nPING\n" + rawEnd, "+PONG\r\n+PONG\r\n" + rawEndReply, false},
	{"long count line", "*" + strings.Repeat("1", 70000) + "\r\n", "", true},
	{"long inline ending in the last read", "ECHO " + strings.Repeat("a", 70000) + "\r\n" + rawEnd,
		"$70000\r\n" + strings.Repeat("a", 70000) + "\r\n" + rawEndReply, false},
	{"long inline past the read", "ECHO " + strings.Repeat("a", 90000) + "\r\n",
		"-ERR Protocol error: too big inline request\r\n", true},
	{"unbalanced quotes", "ECHO \"a\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n", true},
	{"long count line past the read", "*" + strings.Repeat("1", 90000) + "\r\n",
		"-ERR Protocol error: too big mbulk count string\r\n", true},
}

// unauthCases run on a connection that has not authenticated to a server
// with a password: Redis 7's smaller limits before AUTH.
var unauthCases = []rawCase{
	{"ten arguments", "*10\r\n$4\r\nPING\r\n" + strings.Repeat("$1\r\na\r\n", 9) + rawQuit, noAuth + "+OK\r\n", true},
	{"eleven arguments", "*11\r\n", "-ERR Protocol error: unauthenticated multibulk length\r\n", true},
	{"eleven with a sign", "*+11\r\n", errMultibulkLen, true},
	{"bulk of 16384", "*2\r\n$4\r\nECHO\r\n$16384\r\n" + strings.Repeat("x", 16384) + "\r\n" + rawQuit, noAuth + "+OK\r\n", true},
	{"bulk of 16385", "*2\r\n$4\r\nECHO\r\n$16385\r\n", "-ERR Protocol error: unauthenticated bulk length\r\n", true},
	{"negative count", "*-11\r\n" + rawQuit, "+OK\r\n", true},
	{"inline is not limited", "XADD s * " + strings.Repeat("f v ", 10) + "\r\n" + rawQuit, noAuth + "+OK\r\n", true},
	{"after AUTH", "AUTH pw\r\n*11\r\n$4\r\nECHO\r\n$1\r\na\r\n" + strings.Repeat("$1\r\nb\r\n", 9) + rawQuit,
		"+OK\r\n-ERR wrong number of arguments for 'echo' command\r\n+OK\r\n", true},
}

// rawExchange sends in on a new connection to addr and reads the answer:
// until the server closes the connection, or up to rawEnd's reply.
func rawExchange(t *testing.T, addr, in string) (string, bool) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	go nc.Write([]byte(in)) // a server may close before reading it all
	nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	var out bytes.Buffer
	buf := make([]byte, 4096)
	for {
		n, err := nc.Read(buf)
		out.Write(buf[:n])
		if strings.HasSuffix(in, rawEnd) && bytes.HasSuffix(out.Bytes(), []byte(rawEndReply)) {
			return out.String(), false
		}
		if errors.Is(err, io.EOF) || isReset(err) {
			return out.String(), true
		}
		if err != nil {
			t.Fatalf("%q: read: %v (got %q)", in, err, out.String())
		}
	}
}

// isReset reports a connection reset (a server that closed with unread
// input resets it; the replies before arrived first).
func isReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && strings.Contains(oe.Err.Error(), "connection reset")
}

// checkRawCases runs each case on streamd (at addr) and, when redis is not
// "", on Redis too, comparing the bytes and the close.
func checkRawCases(t *testing.T, cases []rawCase, addr, redis string) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, closed := rawExchange(t, addr, tc.in)
			if tc.want != "" && got != tc.want {
				t.Errorf("streamd answered %q, want %q", got, tc.want)
			}
			if closed != tc.closes {
				t.Errorf("streamd closed the connection: %v, want %v (answer %q)", closed, tc.closes, got)
			}
			if redis == "" {
				return
			}
			want, rclosed := rawExchange(t, redis, tc.in)
			if got != want || closed != rclosed {
				t.Errorf("streamd: %q closed=%v\nredis:   %q closed=%v", got, closed, want, rclosed)
			}
		})
	}
}

// haveRedis reports whether redis-server is installed; without it a test
// checks its literal expectations only (unless STREAMD_REQUIRE_REDIS makes
// it fail).
func haveRedis(t *testing.T) bool {
	if _, err := exec.LookPath("redis-server"); err != nil {
		testutil.RequireTool(t, "redis-server") // fails under STREAMD_REQUIRE_REDIS
		return false
	}
	return true
}

// redisForRaw returns a fresh redis-server's address, or "" without one.
func redisForRaw(t *testing.T) string {
	if !haveRedis(t) {
		return ""
	}
	return startRedis(t)
}

// TestRequestLengthsVsRedis sends raw request bytes to streamd and to a
// real redis-server and compares the reply bytes and whether each closes
// the connection: lengths are read as Redis 7's string2ll reads them.
func TestRequestLengthsVsRedis(t *testing.T) {
	_, addr := startTestServer(t, nil)
	checkRawCases(t, requestLengthCases, addr, redisForRaw(t))
}

// TestUnauthenticatedLimitsVsRedis: with a password set, a client that has
// not authenticated may send at most 10 arguments of at most 16384 bytes
// in a multibulk, as in Redis 7.
func TestUnauthenticatedLimitsVsRedis(t *testing.T) {
	_, addr := startTestServer(t, func(c *config.Config) { c.RequirePass = "pw" })
	redis := redisForRaw(t)
	if redis != "" {
		c := dial(t, redis)
		if v, err := c.Do("CONFIG", "SET", "requirepass", "pw"); err != nil || v.String() != "+OK" {
			t.Fatalf("CONFIG SET requirepass on redis: %s %v", v, err)
		}
	}
	checkRawCases(t, unauthCases, addr, redis)
}
