//go:build ignore

// gen_redis asks a real redis-server for COMMAND DOCS and COMMAND INFO of
// every command named in redis_commands.txt (RESP3) and writes what
// cmdinfo serves from them to redis7.json: per command and subcommand, its
// docs fields (summary, since, group, complexity, doc_flags, history,
// arguments, ...; subcommands left out: the server lists its own), its
// tips and its key specs, as RESP3 values.
//
//	go generate ./server/cmdinfo            # starts redis-server on a free port
//	go run gen_redis.go -addr 127.0.0.1:6379 # or uses a running one
//
// The JSON encoding of a RESP3 value: a bulk string is "$text", a simple
// string "+text", an integer a number, an aggregate an array whose first
// element is its kind ("*" array, "~" set, "%" map with keys and values
// alternating).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", "", "a running redis-server (default: start one on a free port)")
	list := flag.String("names", "redis_commands.txt", "the commands, one a line")
	out := flag.String("out", "redis7.json", "the file to write")
	flag.Parse()
	if err := run(*addr, *list, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen_redis:", err)
		os.Exit(1)
	}
}

func run(addr, list, out string) error {
	names, err := readNames(list)
	if err != nil {
		return err
	}
	if addr == "" {
		stop, a, err := startRedis()
		if err != nil {
			return err
		}
		defer stop()
		addr = a
	}
	c, err := dial(addr)
	if err != nil {
		return err
	}
	if _, err := c.do("HELLO", "3"); err != nil {
		return err
	}
	ver, err := c.do("INFO", "server")
	if err != nil {
		return err
	}
	doc := map[string]any{"redis_version": redisVersion(ver.(string))}
	cmds := map[string]any{}
	for _, name := range names {
		infos, err := c.do("COMMAND", "INFO", name)
		if err != nil {
			return err
		}
		info, _ := infos.(kind).e[0].(kind)
		if info.k == "" {
			return fmt.Errorf("redis-server has no command %q", name)
		}
		if err := addInfo(c, cmds, info); err != nil {
			return err
		}
	}
	doc["commands"] = cmds
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(b, '\n'), 0o644)
}

// addInfo stores one COMMAND INFO entry's tips and key specs with its docs,
// then its subcommands'.
func addInfo(c *conn, cmds map[string]any, info kind) error {
	name := strings.TrimPrefix(info.e[0].(string), "$")
	docs, err := c.do("COMMAND", "DOCS", name)
	if err != nil {
		return err
	}
	dm := docs.(kind)
	if len(dm.e) != 2 {
		return fmt.Errorf("COMMAND DOCS %s: %d elements", name, len(dm.e))
	}
	fields := dm.e[1].(kind)
	kept := kind{k: "%"}
	for i := 0; i+1 < len(fields.e); i += 2 {
		if fields.e[i] != "$subcommands" {
			kept.e = append(kept.e, fields.e[i], fields.e[i+1])
		}
	}
	cmds[name] = map[string]any{"docs": kept, "tips": info.e[7], "key_specs": info.e[8]}
	for _, sc := range info.e[9].(kind).e {
		if err := addInfo(c, cmds, sc.(kind)); err != nil {
			return err
		}
	}
	return nil
}

func readNames(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			names = append(names, strings.ToLower(l))
		}
	}
	sort.Strings(names)
	return names, nil
}

func redisVersion(info string) string {
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "redis_version:"); ok {
			return v
		}
	}
	return "?"
}

// startRedis runs redis-server on a free port until stop.
func startRedis() (stop func(), addr string, err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no", "--bind", "127.0.0.1")
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	stop = func() { cmd.Process.Kill(); cmd.Wait() }
	addr = "127.0.0.1:" + strconv.Itoa(port)
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return stop, addr, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	return nil, "", errors.New("redis-server did not start")
}

// kind is an aggregate: k is "*", "~" or "%", e its elements.
type kind struct {
	k string
	e []any
}

func (a kind) MarshalJSON() ([]byte, error) {
	return json.Marshal(append([]any{a.k}, a.e...))
}

type conn struct {
	c net.Conn
	r *bufio.Reader
}

func dial(addr string) (*conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &conn{c, bufio.NewReader(c)}, nil
}

func (c *conn) do(args ...string) (any, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.c.Write(b.Bytes()); err != nil {
		return nil, err
	}
	return c.read()
}

// read reads one RESP3 value: bulk and verbatim strings as "$text" (INFO's
// verbatim without its prefix, as plain text), simple strings "+text",
// integers int64, aggregates kind, a null kind{}.
func (c *conn) read() (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	t, rest := line[0], line[1:]
	switch t {
	case '+':
		return "+" + rest, nil
	case '-':
		return nil, errors.New(rest)
	case ':':
		return strconv.ParseInt(rest, 10, 64)
	case '_':
		return kind{}, nil
	case '$', '=':
		n, _ := strconv.Atoi(rest)
		if n < 0 {
			return kind{}, nil
		}
		buf := make([]byte, n+2)
		if _, err := ioReadFull(c.r, buf); err != nil {
			return nil, err
		}
		s := string(buf[:n])
		if t == '=' {
			return s[4:], nil
		}
		return "$" + s, nil
	case '*', '~', '%':
		n, _ := strconv.Atoi(rest)
		if t == '%' {
			n *= 2
		}
		a := kind{k: string(t), e: []any{}}
		for i := 0; i < n; i++ {
			v, err := c.read()
			if err != nil {
				return nil, err
			}
			a.e = append(a.e, v)
		}
		return a, nil
	}
	return nil, fmt.Errorf("unexpected reply %q", line)
}

func ioReadFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
