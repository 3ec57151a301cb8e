package server

// Test utilities shared by the differential tests (diff_*_test.go) and the
// end-to-end tests (e2e_*_test.go): a raw RESP2/RESP3 client that keeps the
// reply's wire type and a real redis-server launcher. Polling, free ports and
// the tool rule are internal/testutil's.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamd/internal/testutil"
	"streamd/server/resp"
)

// startRedis starts a fresh real redis-server on a free loopback port with
// no persistence and returns its address; it is shut down when the test ends.
func startRedis(t testing.TB) string {
	t.Helper()
	return startRedisOn(t, "127.0.0.1")
}

// startRedisOn is startRedis bound to host (an address of this machine)
// as well as 127.0.0.1, where it is checked; it returns host's address.
func startRedisOn(t testing.TB, host string) string {
	t.Helper()
	bin := testutil.RequireTool(t, "redis-server")
	dir := t.TempDir()
	bind := []string{"127.0.0.1"}
	if host != "127.0.0.1" {
		bind = append(bind, host)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port := testutil.FreePort(t)
		args := append(append([]string{"--port", strconv.Itoa(port), "--bind"}, bind...),
			"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
			"--logfile", filepath.Join(dir, "redis.log"))
		cmd := exec.Command(bin, args...)
		dieWithParent(cmd)
		if err := cmd.Start(); err != nil {
			t.Fatalf("start redis-server: %v", err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		if lastErr = waitPing(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), exited, 10*time.Second); lastErr == nil {
			t.Cleanup(func() {
				cmd.Process.Kill()
				<-exited
			})
			return addr
		}
		cmd.Process.Kill()
		<-exited
	}
	t.Fatalf("redis-server did not start: %v", lastErr)
	return ""
}

// waitPing polls addr with PING until it answers PONG, the process exits or
// the timeout passes.
func waitPing(addr string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-exited:
			return errors.New("process exited")
		default:
		}
		c, err := dialRESP(addr)
		if err == nil {
			r, err2 := c.Do("PING")
			c.Close()
			if err2 == nil && r.Kind == '+' && r.Str == "PONG" {
				return nil
			}
			err = fmt.Errorf("PING: %v %v", r, err2)
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Value is one RESP reply as it came off the wire: its type byte and value.
// Kind is the RESP type: '+' simple, '-' error, ':' integer, '$' bulk,
// '*' array, '_' null (RESP3), '%' map, '~' set, ',' double, '#' boolean,
// '=' verbatim, '(' big number, '>' push. A RESP2 null bulk is Kind '$' with
// Nil set, a RESP2 null array Kind '*' with Nil set.
type Value struct {
	Kind  byte
	Str   string  // simple, error, bulk, double, bignum, verbatim ("txt:..." without prefix), boolean ("t"/"f")
	Int   int64   // integer
	Elems []Value // array, set, push; map as k1, v1, k2, v2, ...
	Nil   bool
}

// String renders v in a compact, unambiguous form for diffs.
func (v Value) String() string {
	var b strings.Builder
	v.render(&b)
	return b.String()
}

func (v Value) render(b *strings.Builder) {
	switch v.Kind {
	case '+':
		b.WriteString("+" + v.Str)
	case '-':
		b.WriteString("(error) " + v.Str)
	case ':':
		b.WriteString("(integer) " + strconv.FormatInt(v.Int, 10))
	case '$':
		if v.Nil {
			b.WriteString("(nil bulk)")
		} else {
			b.WriteString(strconv.Quote(v.Str))
		}
	case '_':
		b.WriteString("(null)")
	case ',':
		b.WriteString("(double) " + v.Str)
	case '#':
		b.WriteString("(bool) " + v.Str)
	case '=':
		b.WriteString("(verbatim) " + strconv.Quote(v.Str))
	case '(':
		b.WriteString("(bignum) " + v.Str)
	case '*', '~', '>', '%':
		if v.Nil {
			b.WriteString("(nil array)")
			return
		}
		br := aggregateBrackets[v.Kind]
		open, close := br[0], br[1]
		b.WriteString(open)
		for i, e := range v.Elems {
			if i > 0 {
				if v.Kind == '%' && i%2 == 1 {
					b.WriteString(": ")
				} else {
					b.WriteString(", ")
				}
			}
			e.render(b)
		}
		b.WriteString(close)
	default:
		fmt.Fprintf(b, "(kind %q) %q", v.Kind, v.Str)
	}
}

// aggregateBrackets are the delimiters String uses for each aggregate kind.
var aggregateBrackets = map[byte][2]string{'*': {"[", "]"}, '~': {"set{", "}"}, '>': {"push[", "]"}, '%': {"map{", "}"}}

// Equal reports whether a and b have the same type and value, recursively.
func (v Value) Equal(o Value) bool {
	if v.Kind != o.Kind || v.Nil != o.Nil || v.Str != o.Str || v.Int != o.Int || len(v.Elems) != len(o.Elems) {
		return false
	}
	for i := range v.Elems {
		if !v.Elems[i].Equal(o.Elems[i]) {
			return false
		}
	}
	return true
}

// respConn is a raw RESP connection: it writes commands as multibulk and
// reads replies with their wire types. RESP3 pushes that arrive while a
// reply is awaited are kept in Pushes, in arrival order.
type respConn struct {
	nc     net.Conn
	r      *bufio.Reader
	Pushes []Value
}

// dialRESP connects to addr.
func dialRESP(addr string) (*respConn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &respConn{nc: nc, r: bufio.NewReader(nc)}, nil
}

// Close closes the connection.
func (c *respConn) Close() error { return c.nc.Close() }

// Send writes one command without reading its reply.
func (c *respConn) Send(args ...string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.nc.Write(b.Bytes())
	return err
}

// SendRaw writes bytes as they are (inline commands, protocol errors).
func (c *respConn) SendRaw(p []byte) error {
	c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.nc.Write(p)
	return err
}

// Receive reads the next non-push reply, waiting at most timeout.
func (c *respConn) Receive(timeout time.Duration) (Value, error) {
	c.nc.SetReadDeadline(time.Now().Add(timeout))
	for {
		v, err := readValue(c.r)
		if err != nil {
			return Value{}, err
		}
		if v.Kind == '>' {
			c.Pushes = append(c.Pushes, v)
			continue
		}
		return v, nil
	}
}

// Do sends a command and reads its reply (10s timeout).
func (c *respConn) Do(args ...string) (Value, error) {
	if err := c.Send(args...); err != nil {
		return Value{}, err
	}
	return c.Receive(10 * time.Second)
}

// readValue reads one RESP2/RESP3 reply with resp's reply reader and
// returns it as a Value, normalised for comparison: a RESP3 blob error is
// Kind '-' like a simple error, and a verbatim string loses its "txt:"
// format prefix. Attributes are dropped (the reader returns the reply they
// annotate).
func readValue(r *bufio.Reader) (Value, error) {
	v, err := resp.NewReplyReader(r).Read()
	if err != nil {
		return Value{}, err
	}
	return testValue(v), nil
}

// testValue converts a resp.Value (see readValue).
func testValue(v resp.Value) Value {
	out := Value{Kind: v.Kind, Str: v.Str, Int: v.Int, Nil: v.Nil}
	switch v.Kind {
	case '!':
		out.Kind = '-'
	case '=':
		if len(out.Str) >= 4 {
			out.Str = out.Str[4:]
		}
	}
	if v.Elems != nil {
		out.Elems = make([]Value, len(v.Elems))
		for i, e := range v.Elems {
			out.Elems[i] = testValue(e)
		}
	}
	return out
}
