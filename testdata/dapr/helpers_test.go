package dapr

// Test helpers: an in-process streamd, the real binary, a reference
// redis-server, a recording RESP proxy (what Dapr sends and what it is
// answered, byte for byte), Dapr component set-up and a go-redis client for
// checks from streamd's side.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dapr/components-contrib/pubsub"
	redispubsub "github.com/dapr/components-contrib/pubsub/redis"
	"github.com/dapr/kit/logger"
	"github.com/redis/go-redis/v9"

	"streamd/config"
	"streamd/internal/testutil"
	"streamd/replication"
	"streamd/server"
)

// startStreamd starts an in-process single-node streamd (in-memory shard)
// with requirepass pass ("" = none) and returns its address.
func startStreamd(t *testing.T, pass string) string {
	t.Helper()
	cfg := config.Default()
	cfg.Dir = t.TempDir()
	cfg.RequirePass = pass
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	shard := replication.NewShard()
	srv := server.New(cfg, shard, slog.New(slog.NewTextHandler(io.Discard, nil)))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return after Close")
		}
		shard.Close(false)
	})
	return ln.Addr().String()
}

// startRedis starts a reference redis-server (no persistence) on a free
// loopback port in a temporary directory and returns its address; it is
// killed at cleanup.
func startRedis(t *testing.T) string {
	t.Helper()
	bin := testutil.RequireTool(t, "redis-server")
	port := testutil.FreePort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	c := newClient(t, addr, "")
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		return c.Ping(context.Background()).Err()
	})
	return addr
}

// newClient returns a go-redis (RESP2) client for checks from the server's
// side.
func newClient(t *testing.T, addr, pass string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Password: pass, Protocol: 2, DisableIdentity: true,
		MaxRetries: -1, DialTimeout: 2 * time.Second, ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// newComponent initialises Dapr's pubsub.redis with props and closes it at
// cleanup (Close is idempotent, so tests may close it earlier).
func newComponent(t *testing.T, props map[string]string) pubsub.PubSub {
	t.Helper()
	ps, err := initComponent(props)
	if err != nil {
		t.Fatalf("Dapr pubsub.redis Init(%v): %v", props, err)
	}
	t.Cleanup(func() { ps.Close() })
	return ps
}

// initComponent creates Dapr's pubsub.redis and runs Init with props.
func initComponent(props map[string]string) (pubsub.PubSub, error) {
	l := logger.NewLogger("dapr-test")
	l.SetOutput(io.Discard)
	ps := redispubsub.NewRedisStreams(l)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	md := pubsub.Metadata{}
	md.Properties = props
	if err := ps.Init(ctx, md); err != nil {
		ps.Close()
		return nil, err
	}
	return ps, nil
}

// command is one command a client sent through the proxy.
type command struct {
	conn int      // connection number, from 1 in accept order
	args []string // the command's arguments as sent
}

// String renders the command as its arguments joined by spaces.
func (c command) String() string { return strings.Join(c.args, " ") }

// proxy sits between Dapr and a server: it forwards both directions,
// records every command (parsed from RESP) and every byte of the replies.
type proxy struct {
	t        *testing.T
	ln       net.Listener
	upstream string

	mu      sync.Mutex
	cmds    []command
	replies map[int]*bytes.Buffer
	conns   []net.Conn
	nconn   int
}

// startProxy listens on a loopback port and forwards to upstream.
func startProxy(t *testing.T, upstream string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln, upstream: upstream, replies: map[int]*bytes.Buffer{}}
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	return p
}

// addr is the proxy's listening address.
func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.nconn++
		n := p.nconn
		buf := &bytes.Buffer{}
		p.replies[n] = buf
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		go p.fromClient(n, c, u)
		go p.fromServer(n, c, u, buf)
	}
}

// fromClient parses the client's commands, records them and forwards them.
func (p *proxy) fromClient(n int, c, u net.Conn) {
	defer u.Close()
	r := bufio.NewReader(c)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		p.mu.Lock()
		p.cmds = append(p.cmds, command{conn: n, args: args})
		p.mu.Unlock()
		var b bytes.Buffer
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		if _, err := u.Write(b.Bytes()); err != nil {
			return
		}
	}
}

// fromServer forwards the server's bytes to the client and records them.
func (p *proxy) fromServer(n int, c, u net.Conn, buf *bytes.Buffer) {
	defer c.Close()
	b := make([]byte, 32<<10)
	for {
		k, err := u.Read(b)
		if k > 0 {
			p.mu.Lock()
			buf.Write(b[:k])
			p.mu.Unlock()
			if _, werr := c.Write(b[:k]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// readCommand reads one RESP array of bulk strings (what go-redis sends).
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "*") {
		return nil, fmt.Errorf("not a RESP array: %q", line)
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return nil, err
	}
	args := make([]string, n)
	for i := range args {
		h, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(h, "$") {
			return nil, fmt.Errorf("not a bulk string: %q", h)
		}
		l, err := strconv.Atoi(strings.TrimSpace(h[1:]))
		if err != nil {
			return nil, err
		}
		b := make([]byte, l+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:l])
	}
	return args, nil
}

// commands returns the recorded commands whose name (first argument,
// case-insensitive) is one of names; all of them with no names.
func (p *proxy) commands(names ...string) []command {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []command
	for _, c := range p.cmds {
		if len(names) == 0 {
			out = append(out, c)
			continue
		}
		for _, n := range names {
			if len(c.args) > 0 && strings.EqualFold(c.args[0], n) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// replyBytes returns everything the server sent on connection n.
func (p *proxy) replyBytes(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b := p.replies[n]; b != nil {
		return b.String()
	}
	return ""
}

// allReplies returns every connection's reply bytes, concatenated.
func (p *proxy) allReplies() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var s strings.Builder
	for i := 1; i <= p.nconn; i++ {
		s.WriteString(p.replies[i].String())
	}
	return s.String()
}

// receiver collects what a subscription's handler is given: every delivery
// (redeliveries included) in order.
type receiver struct {
	mu   sync.Mutex
	got  []*pubsub.NewMessage
	fail func(m *pubsub.NewMessage, attempt int) error // nil: always succeed
	seen map[string]int
}

// handler is the pubsub.Handler that records deliveries.
func (r *receiver) handler(_ context.Context, m *pubsub.NewMessage) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]int{}
	}
	cp := *m
	cp.Data = append([]byte(nil), m.Data...)
	r.got = append(r.got, &cp)
	key := string(m.Data)
	r.seen[key]++
	if r.fail != nil {
		return r.fail(m, r.seen[key])
	}
	return nil
}

// counts returns how often each payload was delivered.
func (r *receiver) counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.seen))
	for k, v := range r.seen {
		out[k] = v
	}
	return out
}

// messages returns a copy of every delivery so far.
func (r *receiver) messages() []*pubsub.NewMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*pubsub.NewMessage(nil), r.got...)
}

// waitAll waits until every payload in want was delivered at least once.
func (r *receiver) waitAll(t *testing.T, timeout time.Duration, want []string) {
	t.Helper()
	testutil.Eventually(t, timeout, 20*time.Millisecond, func() error {
		c := r.counts()
		missing := 0
		first := ""
		for _, w := range want {
			if c[w] == 0 {
				if missing == 0 {
					first = w
				}
				missing++
			}
		}
		if missing > 0 {
			return fmt.Errorf("%d of %d payloads not delivered yet (first %q)", missing, len(want), first)
		}
		return nil
	})
}

// publish publishes data on topic through ps and fails the test on error.
func publish(t *testing.T, ps pubsub.PubSub, topic string, data []byte, md map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ps.Publish(ctx, &pubsub.PublishRequest{PubsubName: "streamd", Topic: topic, Data: data, Metadata: md}); err != nil {
		t.Fatalf("Publish(%s): %v", topic, err)
	}
}

// subscribe subscribes ps to topic with r's handler until the test ends (or
// the returned cancel is called).
func subscribe(t *testing.T, ps pubsub.PubSub, topic string, r *receiver) context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := ps.Subscribe(ctx, pubsub.SubscribeRequest{Topic: topic}, r.handler); err != nil {
		t.Fatalf("Subscribe(%s): %v", topic, err)
	}
	return cancel
}

// blockedClients reads INFO clients' blocked_clients from addr.
func blockedClients(ctx context.Context, c *redis.Client) (int, error) {
	info, err := c.Info(ctx, "clients").Result()
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "blocked_clients:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("INFO clients has no blocked_clients")
}

// buildStreamd builds streamd's binary (through the replace directive) into
// a temporary directory and returns its path.
func buildStreamd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "streamd")
	out, err := exec.Command("go", "build", "-o", bin, "streamd/cmd/streamd").CombinedOutput()
	if err != nil {
		t.Fatalf("go build streamd: %v\n%s", err, out)
	}
	return bin
}

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
