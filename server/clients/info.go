package clients

import (
	"strconv"
	"strings"
	"time"
)

// Info is what CLIENT LIST and CLIENT INFO show of one connection. The
// server fills it from its client; Line formats it.
type Info struct {
	ID    int64
	Addr  string // remote address, ip:port
	LAddr string // local address, ip:port
	FD    int64  // the socket's file descriptor, or -1
	Name  string // CLIENT SETNAME's name, "" when none
	User  string // the ACL user ("" reads "default")
	// Age is how long the connection has been open; Idle how long since
	// its last command (0 while a command runs).
	Age, Idle time.Duration
	// Multi is set inside MULTI, Blocked while a blocking command waits;
	// NoEvict and NoTouch are CLIENT NO-EVICT's and NO-TOUCH's modes.
	Multi, Blocked, NoEvict, NoTouch bool
	DB                               int
	Cmd                              string // the last command ("client|list"), "" before the first
	Resp                             int    // the protocol version, 2 or 3
	LibName, LibVer                  string // CLIENT SETINFO's attributes
}

// Flags is the line's flags field: x (in MULTI), b (blocked), e
// (no-evict), T (no-touch), or N when none is set.
func (i Info) Flags() string {
	flags := ""
	if i.Multi {
		flags += "x"
	}
	if i.Blocked {
		flags += "b"
	}
	if i.NoEvict {
		flags += "e"
	}
	if i.NoTouch {
		flags += "T"
	}
	if flags == "" {
		flags = "N"
	}
	return flags
}

// Line is the client's CLIENT LIST line (without the newline), with Redis
// 7.2's fields in its order. Buffer and memory figures (qbuf, argv-mem,
// omem, tot-mem...) are not tracked by streamd and read 0; sub, psub and
// ssub are 0 (no pub/sub), redir -1; user is User ("default" when empty).
func (i Info) Line() string {
	cmd := i.Cmd
	if cmd == "" {
		cmd = "NULL"
	}
	multi := int64(-1)
	if i.Multi {
		multi = 0
	}
	var b strings.Builder
	kv := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	kv("id", itoa(i.ID))
	kv("addr", i.Addr)
	kv("laddr", i.LAddr)
	kv("fd", itoa(i.FD))
	kv("name", i.Name)
	kv("age", itoa(seconds(i.Age)))
	kv("idle", itoa(seconds(i.Idle)))
	kv("flags", i.Flags())
	kv("db", itoa(int64(i.DB)))
	kv("sub", "0")
	kv("psub", "0")
	kv("ssub", "0")
	kv("multi", itoa(multi))
	for _, k := range []string{"qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll", "omem", "tot-mem"} {
		kv(k, "0")
	}
	kv("events", "r")
	kv("cmd", cmd)
	user := i.User
	if user == "" {
		user = "default"
	}
	kv("user", user)
	kv("redir", "-1")
	kv("resp", itoa(int64(i.Resp)))
	kv("lib-name", i.LibName)
	kv("lib-ver", i.LibVer)
	return b.String()
}

// seconds is d in whole seconds, rounded down.
func seconds(d time.Duration) int64 { return int64(d / time.Second) }
