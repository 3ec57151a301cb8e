package dapr

// Dapr's pubsub.redis component (components-contrib v1.16.1, its own
// go-redis clients) against an in-process streamd, through a recording proxy
// so that the commands Dapr sends and the exact replies it gets are
// asserted, not only the outcome.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dapr/components-contrib/pubsub"
	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// hasArgs reports whether c's arguments, case-insensitively, contain want
// as a contiguous run.
func hasArgs(c command, want ...string) bool {
	for i := 0; i+len(want) <= len(c.args); i++ {
		ok := true
		for j, w := range want {
			if !strings.EqualFold(c.args[i+j], w) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// TestDaprInit: Init's version probe (INFO server on a go-redis v8
// connection: no HELLO) reads redis_version >= 7 and so Dapr switches to its
// go-redis v9 client, which opens its connections with HELLO 3 (RESP3) and
// PINGs; streamd's CLIENT LIST shows those connections as resp=3 go-redis.
func TestDaprInit(t *testing.T) {
	addr := startStreamd(t, "")
	p := startProxy(t, addr)
	newComponent(t, map[string]string{"redisHost": p.addr(), "consumerID": "init"})

	cmds := p.commands()
	if len(cmds) == 0 || cmds[0].conn != 1 || !strings.EqualFold(cmds[0].String(), "info server") {
		t.Fatalf("first command = %v, want INFO server on the probe connection; all: %v", cmds, cmds)
	}
	for _, c := range cmds {
		if c.conn == 1 && strings.EqualFold(c.args[0], "HELLO") {
			t.Fatalf("the v8 probe connection sent %v", c)
		}
	}
	probe := p.replyBytes(1)
	i := strings.Index(probe, "redis_version:")
	if i < 0 {
		t.Fatalf("INFO server reply lacks redis_version: %q", probe)
	}
	ver := strings.TrimSpace(strings.SplitN(probe[i+len("redis_version:"):], "\r\n", 2)[0])
	if major, _ := strconv.Atoi(strings.SplitN(ver, ".", 2)[0]); major < 7 {
		t.Fatalf("redis_version %q < 7: Dapr would pick its v8 client", ver)
	}

	// Every later connection is the v9 client's: HELLO 3 first.
	v9conns := map[int]bool{}
	for _, c := range cmds {
		if c.conn > 1 && !v9conns[c.conn] {
			v9conns[c.conn] = true
			if len(c.args) < 2 || !strings.EqualFold(c.args[0], "HELLO") || c.args[1] != "3" {
				t.Fatalf("connection %d's first command = %v, want HELLO 3", c.conn, c)
			}
			if !strings.HasPrefix(p.replyBytes(c.conn), "%") {
				t.Fatalf("HELLO 3 answered %q, want a RESP3 map", p.replyBytes(c.conn))
			}
		}
	}
	if len(v9conns) == 0 {
		t.Fatalf("no connection after the probe: %v", cmds)
	}
	if len(p.commands("PING")) == 0 {
		t.Fatalf("Init sent no PING: %v", cmds)
	}
	list, err := newClient(t, addr, "").ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range strings.Split(list, "\n") {
		if strings.Contains(l, " resp=3") && strings.Contains(l, " lib-name=go-redis") {
			found = true
		}
	}
	if !found {
		t.Fatalf("CLIENT LIST shows no resp=3 go-redis connection:\n%s", list)
	}
}

// publishTrimmed publishes n messages with Dapr's settings props to topic on
// target (through a proxy) after seeding the stream with pre ancient
// entries, and returns the stream's length and the XADDs Dapr sent.
func publishTrimmed(t *testing.T, target string, props map[string]string, topic string, pre, n int) (int64, []command) {
	t.Helper()
	ctx := context.Background()
	c := newClient(t, target, "")
	for i := 1; i <= pre; i++ {
		if err := c.XAdd(ctx, &redis.XAddArgs{Stream: topic, ID: fmt.Sprintf("%d-1", i), Values: []string{"data", "old"}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	p := startProxy(t, target)
	props["redisHost"] = p.addr()
	ps := newComponent(t, props)
	for i := range n {
		publish(t, ps, topic, []byte("m"+strconv.Itoa(i)), nil)
	}
	l, err := c.XLen(ctx, topic).Result()
	if err != nil {
		t.Fatal(err)
	}
	return l, p.commands("XADD")
}

// TestDaprPublishTrim: maxLenApprox becomes XADD MAXLEN ~ n and streamTTL
// becomes XADD MINID ~ <now-ttl>-1; streamd trims to the same length as
// redis-server given the same stream (whole nodes only, as Redis does).
func TestDaprPublishTrim(t *testing.T) {
	redisAddr := startRedis(t)
	addr := startStreamd(t, "")

	t.Run("maxLenApprox", func(t *testing.T) {
		props := func() map[string]string { return map[string]string{"consumerID": "p", "maxLenApprox": "5"} }
		got, xadds := publishTrimmed(t, addr, props(), "capped", 0, 250)
		want, _ := publishTrimmed(t, redisAddr, props(), "capped", 0, 250)
		if len(xadds) != 250 {
			t.Fatalf("%d XADDs through the proxy, want 250", len(xadds))
		}
		for _, x := range xadds {
			if !reflect.DeepEqual(x.args[:6], []string{"xadd", "capped", "maxlen", "~", "5", "*"}) {
				t.Fatalf("Dapr sent %v, want XADD capped MAXLEN ~ 5 * …", x)
			}
		}
		t.Logf("XLEN after 250 publishes with MAXLEN ~ 5: streamd %d, redis-server %d", got, want)
		if got != want || got >= 250 || got < 5 {
			t.Fatalf("XLEN after 250 publishes with MAXLEN ~ 5: streamd %d, redis-server %d", got, want)
		}
	})
	t.Run("streamTTL", func(t *testing.T) {
		props := func() map[string]string { return map[string]string{"consumerID": "p", "streamTTL": "1h"} }
		before := time.Now().Add(-time.Hour).UnixMilli()
		got, xadds := publishTrimmed(t, addr, props(), "ttl", 300, 3)
		after := time.Now().Add(-time.Hour).UnixMilli()
		want, _ := publishTrimmed(t, redisAddr, props(), "ttl", 300, 3)
		if len(xadds) != 3 {
			t.Fatalf("%d XADDs through the proxy, want 3", len(xadds))
		}
		for _, x := range xadds {
			if x.args[2] != "minid" || x.args[3] != "~" || x.args[5] != "*" {
				t.Fatalf("Dapr sent %v, want XADD ttl MINID ~ <ms>-1 * …", x)
			}
			ms, err := strconv.ParseInt(strings.TrimSuffix(x.args[4], "-1"), 10, 64)
			if err != nil || ms < before || ms > after {
				t.Fatalf("MINID %q not now-1h", x.args[4])
			}
		}
		t.Logf("XLEN after 3 streamTTL publishes over 300 ancient entries: streamd %d, redis-server %d", got, want)
		if got != want || got >= 303 {
			t.Fatalf("XLEN after streamTTL publishes over 300 ancient entries: streamd %d, redis-server %d", got, want)
		}
	})
}

// TestDaprBinaryPayloads: arbitrary bytes (NUL, CR LF, RESP look-alikes,
// invalid UTF-8, every byte value, empty, 1 MiB) and metadata arrive as
// published.
func TestDaprBinaryPayloads(t *testing.T) {
	addr := startStreamd(t, "")
	pub := newComponent(t, map[string]string{"redisHost": addr, "consumerID": "pub"})
	sub := newComponent(t, map[string]string{"redisHost": addr, "consumerID": "bin"})
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	big := bytes.Repeat([]byte("\x00\xff\r\n"), 1<<18)
	payloads := [][]byte{all, []byte("\r\n$5\r\nhello\r\n*1\r\n"), []byte("\xff\xfe\xfd"), {0}, big, []byte("plain")}
	r := &receiver{}
	subscribe(t, sub, "bin", r)
	md := map[string]string{"k": "v\x00\r\n", "trace": "1"}
	var want []string
	for _, pl := range payloads {
		publish(t, pub, "bin", pl, md)
		want = append(want, string(pl))
	}
	r.waitAll(t, 20*time.Second, want)
	for _, m := range r.messages() {
		if !reflect.DeepEqual(m.Metadata, md) {
			t.Fatalf("metadata %q, want %q", m.Metadata, md)
		}
		if m.Topic != "bin" {
			t.Fatalf("topic %q", m.Topic)
		}
	}
	for k, n := range r.counts() {
		if n != 1 {
			t.Fatalf("payload of %d bytes delivered %d times", len(k), n)
		}
	}
}

// TestDaprSubscribe: the first subscriber's XGROUP CREATE … 0 MKSTREAM makes
// the group, the second gets exactly "BUSYGROUP Consumer Group name already
// exists" (which Dapr ignores by comparing the text); XREADGROUP with COUNT
// and BLOCK ms (readTimeout) and BLOCK 0 (the default); two consumer IDs
// each get every message; two subscribers sharing a consumer ID split them.
func TestDaprSubscribe(t *testing.T) {
	addr := startStreamd(t, "")
	p := startProxy(t, addr)
	check := newClient(t, addr, "")
	ctx := context.Background()
	pub := newComponent(t, map[string]string{"redisHost": addr, "consumerID": "pub"})
	a1 := newComponent(t, map[string]string{"redisHost": p.addr(), "consumerID": "A", "queueDepth": "10", "readTimeout": "2s"})
	a2 := newComponent(t, map[string]string{"redisHost": p.addr(), "consumerID": "A"})
	b := newComponent(t, map[string]string{"redisHost": p.addr(), "consumerID": "B"})
	ra1, ra2, rb := &receiver{}, &receiver{}, &receiver{}
	subscribe(t, a1, "orders", ra1)
	subscribe(t, a2, "orders", ra2)
	subscribe(t, b, "orders", rb)

	creates := p.commands("XGROUP")
	if len(creates) != 3 {
		t.Fatalf("XGROUP commands: %v", creates)
	}
	for _, c := range creates {
		if !hasArgs(c, "xgroup", "create", "orders") || !hasArgs(c, "0", "mkstream") {
			t.Fatalf("Dapr sent %v, want XGROUP CREATE orders <group> 0 MKSTREAM", c)
		}
	}
	const busy = "-BUSYGROUP Consumer Group name already exists\r\n"
	if !strings.Contains(p.replyBytes(creates[1].conn), busy) {
		t.Fatalf("second subscriber of group A was answered %q, want %q", p.replyBytes(creates[1].conn), busy)
	}
	if strings.Contains(p.replyBytes(creates[0].conn), "BUSYGROUP") || strings.Contains(p.replyBytes(creates[2].conn), "BUSYGROUP") {
		t.Fatal("a first subscriber of its group got BUSYGROUP")
	}

	// All three park in XREADGROUP (a1 re-parks every 2 s).
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		n, err := blockedClients(ctx, check)
		if err != nil || n < 2 {
			return fmt.Errorf("blocked_clients %d, %v", n, err)
		}
		return nil
	})
	var want []string
	for i := range 40 {
		m := fmt.Sprintf("order-%02d", i)
		want = append(want, m)
		publish(t, pub, "orders", []byte(m), nil)
		testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
			if ra1.counts()[m]+ra2.counts()[m] == 0 {
				return fmt.Errorf("%s not delivered to group A", m)
			}
			return nil
		})
	}
	rb.waitAll(t, 20*time.Second, want)

	c1, c2, cb := ra1.counts(), ra2.counts(), rb.counts()
	for _, m := range want {
		if c1[m]+c2[m] != 1 || cb[m] != 1 {
			t.Fatalf("%s delivered to A %d+%d times, to B %d times; want once each", m, c1[m], c2[m], cb[m])
		}
	}
	if len(c1) == 0 || len(c2) == 0 {
		t.Fatalf("subscribers sharing consumer ID A did not split the messages: %d and %d", len(c1), len(c2))
	}

	var sawCountBlock, sawBlock0 bool
	for _, c := range p.commands("XREADGROUP") {
		switch {
		case hasArgs(c, "group", "A", "A", "count", "10", "block", "2000", "streams", "orders", ">"):
			sawCountBlock = true
		case hasArgs(c, "count", "100", "block", "0", "streams", "orders", ">"):
			sawBlock0 = true
		}
	}
	if !sawCountBlock || !sawBlock0 {
		t.Fatalf("XREADGROUP COUNT 10 BLOCK 2000 seen %v, COUNT 100 BLOCK 0 seen %v", sawCountBlock, sawBlock0)
	}

	// streamd's view: both groups read everything and acked it all.
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		gs, err := check.XInfoGroups(ctx, "orders").Result()
		if err != nil {
			return err
		}
		if len(gs) != 2 {
			return fmt.Errorf("groups %+v", gs)
		}
		for _, g := range gs {
			if g.Pending != 0 || g.Lag != 0 || g.EntriesRead != 40 {
				return fmt.Errorf("group %+v", g)
			}
		}
		return nil
	})
	cons, err := check.XInfoConsumers(ctx, "orders", "A").Result()
	if err != nil || len(cons) != 1 || cons[0].Name != "A" {
		t.Fatalf("XINFO CONSUMERS orders A = %+v, %v; want the one consumer A", cons, err)
	}
}

// TestDaprRedelivery: a handler that fails leaves its message pending; the
// component's XPENDING + XCLAIM loop hands it back after processingTimeout
// until the handler succeeds; acked messages never come back.
func TestDaprRedelivery(t *testing.T) {
	addr := startStreamd(t, "")
	p := startProxy(t, addr)
	check := newClient(t, addr, "")
	ctx := context.Background()
	pub := newComponent(t, map[string]string{"redisHost": addr, "consumerID": "pub"})
	sub := newComponent(t, map[string]string{"redisHost": p.addr(), "consumerID": "R",
		"processingTimeout": "300", "redeliverInterval": "100"})
	r := &receiver{fail: func(m *pubsub.NewMessage, attempt int) error {
		if string(m.Data) == "bad" && attempt < 3 {
			return errors.New("handler failure")
		}
		return nil
	}}
	subscribe(t, sub, "jobs", r)
	want := []string{"ok-1", "bad", "ok-2", "ok-3"}
	for _, m := range want {
		publish(t, pub, "jobs", []byte(m), nil)
	}
	// While it fails, the message is pending in streamd.
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		if r.counts()["bad"] < 1 {
			return errors.New("bad not delivered yet")
		}
		return nil
	})
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if r.counts()["bad"] >= 3 {
			return nil
		}
		pe, err := check.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "jobs", Group: "R", Start: "-", End: "+", Count: 10}).Result()
		if err != nil {
			return err
		}
		if len(pe) != 1 || pe[0].Consumer != "R" {
			return fmt.Errorf("XPENDING while failing: %+v", pe)
		}
		return errors.New("bad not yet delivered 3 times")
	})
	r.waitAll(t, 10*time.Second, want)
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := r.counts()["bad"]; n != 3 {
			return fmt.Errorf("bad delivered %d times", n)
		}
		return nil
	})
	// Let the reclaim loop run five more rounds, then nothing came back.
	n0 := len(p.commands("XPENDING"))
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := len(p.commands("XPENDING")); n < n0+5 {
			return fmt.Errorf("%d XPENDING rounds since success", n-n0)
		}
		return nil
	})
	got := r.counts()
	wantCounts := map[string]int{"ok-1": 1, "bad": 3, "ok-2": 1, "ok-3": 1}
	if !reflect.DeepEqual(got, wantCounts) {
		t.Fatalf("deliveries %v, want %v", got, wantCounts)
	}
	claims := p.commands("XCLAIM")
	if len(claims) < 2 {
		t.Fatalf("XCLAIMs %v, want the two redeliveries", claims)
	}
	for _, c := range claims {
		if !hasArgs(c, "xclaim", "jobs", "R", "R", "300") {
			t.Fatalf("Dapr sent %v, want XCLAIM jobs R R 300 …", c)
		}
	}
	for _, c := range p.commands("XPENDING") {
		if !hasArgs(c, "xpending", "jobs", "R", "-", "+", "100") {
			t.Fatalf("Dapr sent %v, want XPENDING jobs R - + 100", c)
		}
	}
	pending, err := check.XPending(ctx, "jobs", "R").Result()
	if err != nil || pending.Count != 0 {
		t.Fatalf("XPENDING jobs R = %+v, %v; want nothing pending", pending, err)
	}
}

// TestDaprCloseWhileBlocked: Close on a component whose subscription is
// parked in XREADGROUP … BLOCK 0 returns promptly and cleanly, the server's
// blocked client goes away, and a new subscriber with the same consumer ID
// gets what is published next.
func TestDaprCloseWhileBlocked(t *testing.T) {
	addr := startStreamd(t, "")
	p := startProxy(t, addr)
	check := newClient(t, addr, "")
	ctx := context.Background()
	pub := newComponent(t, map[string]string{"redisHost": addr, "consumerID": "pub"})
	first := newComponent(t, map[string]string{"redisHost": p.addr(), "consumerID": "K"})
	r1 := &receiver{}
	subscribe(t, first, "parked", r1)
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		parked := false
		for _, c := range p.commands("XREADGROUP") {
			parked = parked || hasArgs(c, "block", "0", "streams", "parked", ">")
		}
		n, err := blockedClients(ctx, check)
		if err != nil || !parked || n != 1 {
			return fmt.Errorf("XREADGROUP BLOCK 0 sent %v, blocked_clients %d, %v", parked, n, err)
		}
		return nil
	})
	closed := make(chan error, 1)
	go func() { closed <- first.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Close did not return within 15s of a subscription parked in XREADGROUP BLOCK 0")
	}
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		n, err := blockedClients(ctx, check)
		if err != nil || n != 0 {
			return fmt.Errorf("blocked_clients %d, %v", n, err)
		}
		return nil
	})

	second := newComponent(t, map[string]string{"redisHost": addr, "consumerID": "K"})
	r2 := &receiver{}
	subscribe(t, second, "parked", r2)
	publish(t, pub, "parked", []byte("after-close"), nil)
	r2.waitAll(t, 10*time.Second, []string{"after-close"})
	if len(r1.messages()) != 0 {
		t.Fatalf("the closed subscriber received %d messages", len(r1.messages()))
	}
}

// TestDaprAuth: with requirepass, redisPassword authenticates both of
// Dapr's clients (AUTH on the v8 probe, HELLO 3 AUTH default … on v9);
// a wrong password and none fail Init with Redis's texts.
func TestDaprAuth(t *testing.T) {
	const pass = "s3cret pass"
	addr := startStreamd(t, pass)
	p := startProxy(t, addr)
	ps := newComponent(t, map[string]string{"redisHost": p.addr(), "redisPassword": pass, "consumerID": "auth"})
	r := &receiver{}
	subscribe(t, ps, "secure", r)
	publish(t, ps, "secure", []byte("hello"), nil)
	r.waitAll(t, 10*time.Second, []string{"hello"})

	cmds := p.commands()
	if !reflect.DeepEqual(cmds[0].args, []string{"auth", pass}) || !strings.EqualFold(cmds[1].String(), "info server") {
		t.Fatalf("probe connection sent %v, %v; want AUTH then INFO server", cmds[0], cmds[1])
	}
	hellos := p.commands("HELLO")
	if len(hellos) == 0 {
		t.Fatal("no HELLO")
	}
	for _, h := range hellos {
		if !reflect.DeepEqual(h.args, []string{"hello", "3", "auth", "default", pass}) {
			t.Fatalf("Dapr sent %q, want HELLO 3 AUTH default <pass>", h.args)
		}
	}

	_, err := initComponent(map[string]string{"redisHost": addr, "redisPassword": "wrong", "consumerID": "auth"})
	if err == nil || !strings.Contains(err.Error(), "WRONGPASS invalid username-password pair or user is disabled.") {
		t.Fatalf("Init with a wrong password: %v", err)
	}
	_, err = initComponent(map[string]string{"redisHost": addr, "consumerID": "auth"})
	if err == nil || !strings.Contains(err.Error(), "NOAUTH Authentication required.") {
		t.Fatalf("Init without a password: %v", err)
	}
}
