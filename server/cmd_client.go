package server

import (
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clientCommand is the CLIENT container and its subcommands.
func clientCommand() *Command {
	sub := func(name string, arity int, flags []string, summary, since string, h func(*Client, [][]byte) Reply) *Command {
		return &Command{Name: "client|" + name, Arity: arity, Flags: flags, ACL: []string{"@slow", "@connection"},
			Summary: summary, Since: since, Group: "connection", Handler: h}
	}
	ls := []string{"noscript", "loading", "stale"}
	admin := []string{"admin", "noscript", "loading", "stale"}
	return &Command{
		Name: "client", Arity: -2, ACL: []string{"@slow"},
		Summary: "A container for client connection commands.", Since: "2.4.0", Group: "connection",
		Subcommands: []*Command{
			sub("id", 2, ls, "Returns the unique client ID of the connection.", "5.0.0", cmdCLIENTID),
			sub("setname", 3, ls, "Sets the connection name.", "2.6.9", cmdCLIENTSETNAME),
			sub("getname", 2, ls, "Returns the name of the connection.", "2.6.9", cmdCLIENTGETNAME),
			sub("setinfo", 4, ls, "Sets information specific to the client or connection.", "7.2.0", cmdCLIENTSETINFO),
			sub("list", -2, admin, "Lists open connections.", "2.4.0", cmdCLIENTLIST),
			sub("info", 2, ls, "Returns information about the connection.", "6.2.0", cmdCLIENTINFO),
			sub("kill", -3, admin, "Terminates open connections.", "2.4.0", cmdCLIENTKILL),
			sub("unblock", -3, admin, "Unblocks a client blocked by a blocking command from a different connection.", "5.0.0", cmdCLIENTUNBLOCK),
			sub("tracking", -3, ls, "Controls server-assisted client-side caching for the connection.", "6.0.0",
				func(c *Client, args [][]byte) Reply { return c.srv.clientTracking(c, args) }),
			sub("caching", 3, ls, "Instructs the server whether to track the keys in the next request.", "6.0.0",
				func(c *Client, args [][]byte) Reply { return c.srv.clientCaching(c, args) }),
			sub("trackinginfo", 2, ls, "Returns information about server-assisted client-side caching for the connection.", "6.2.0",
				func(c *Client, args [][]byte) Reply { return c.srv.clientTrackingInfo(c) }),
			sub("no-evict", 3, admin, "Sets the client eviction mode of the connection.", "7.0.0", cmdCLIENTNOEVICT),
			sub("no-touch", 3, ls, "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.", "7.2.0", cmdCLIENTNOTOUCH),
			sub("help", 2, []string{"loading", "stale"}, "Returns helpful text about the different subcommands.", "5.0.0", cmdCLIENTHELP),
		},
	}
}

func cmdCLIENTID(c *Client, args [][]byte) Reply { return Int(c.id) }

// validateClientName is Redis's validateClientAttr: only printable ASCII
// other than space ('!' to '~').
func validateClientName(name []byte) Reply {
	if !validClientAttr(name) {
		return ErrorReply("ERR Client names cannot contain spaces, newlines or special characters.")
	}
	return nil
}

func validClientAttr(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func cmdCLIENTSETNAME(c *Client, args [][]byte) Reply {
	if r := validateClientName(args[2]); r != nil {
		return r
	}
	c.mu.Lock()
	c.name = string(args[2])
	c.mu.Unlock()
	return OK
}

// cmdCLIENTGETNAME replies the name, or a null when none is set.
func cmdCLIENTGETNAME(c *Client, args [][]byte) Reply {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.name == "" {
		return Null{}
	}
	return BulkString(c.name)
}

// cmdCLIENTSETINFO is CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2).
func cmdCLIENTSETINFO(c *Client, args [][]byte) Reply {
	attr := string(args[2])
	var dst *string
	switch strings.ToLower(attr) {
	case "lib-name":
		dst = &c.libName
	case "lib-ver":
		dst = &c.libVer
	default:
		return ErrorReply("ERR Unrecognized option '" + attr + "'")
	}
	if !validClientAttr(args[3]) {
		return ErrorReply("ERR " + attr + " cannot contain spaces, newlines or special characters.")
	}
	c.mu.Lock()
	*dst = string(args[3])
	c.mu.Unlock()
	return OK
}

// cmdCLIENTLIST is CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id ...].
// Every streamd client is "normal" (no replicas, no pub/sub).
func cmdCLIENTLIST(c *Client, args [][]byte) Reply {
	var ids map[int64]bool
	typ := ""
	for i := 2; i < len(args); i++ {
		opt := strings.ToLower(string(args[i]))
		switch {
		case opt == "type" && i+1 < len(args) && ids == nil:
			typ = strings.ToLower(string(args[i+1]))
			switch typ {
			case "normal", "master", "replica", "slave", "pubsub":
			default:
				return ErrorReply("ERR Unknown client type '" + string(args[i+1]) + "'")
			}
			i++
		case opt == "id" && i+1 < len(args) && typ == "":
			ids = make(map[int64]bool)
			for i++; i < len(args); i++ {
				id, err := strconv.ParseInt(string(args[i]), 10, 64)
				if err != nil || id <= 0 {
					return ErrorReply("ERR Invalid client ID")
				}
				ids[id] = true
			}
		default:
			return errSyntax
		}
	}
	var b strings.Builder
	if typ == "" || typ == "normal" {
		for _, o := range c.srv.clientList() {
			if ids != nil && !ids[o.id] {
				continue
			}
			b.WriteString(o.infoLine())
			b.WriteByte('\n')
		}
	}
	return Verbatim(b.String())
}

// cmdCLIENTINFO is CLIENT INFO: this connection's CLIENT LIST line.
func cmdCLIENTINFO(c *Client, args [][]byte) Reply {
	return Verbatim(c.infoLine() + "\n")
}

// infoLine is the client's CLIENT LIST line, with Redis 7.2's fields in its
// order. Buffer and memory figures (qbuf, argv-mem, omem, tot-mem...) are
// not tracked by streamd and read 0; "fd" is the socket's descriptor.
func (c *Client) infoLine() string {
	now := time.Now()
	c.mu.Lock()
	name, libName, libVer, cmd := c.name, c.libName, c.libVer, c.lastCmd
	idle := now.Sub(c.lastActive)
	if c.inCommand {
		idle = 0
	}
	noEvict, noTouch := c.noEvict, c.noTouch
	c.mu.Unlock()
	if cmd == "" {
		cmd = "NULL"
	}
	flags := ""
	multi := -1
	if c.inMulti() {
		flags += "x"
		multi = 0
	}
	if c.isBlocked() {
		flags += "b"
	}
	if noEvict {
		flags += "e"
	}
	if noTouch {
		flags += "T"
	}
	if flags == "" {
		flags = "N"
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
	kv("id", itoa(c.id))
	kv("addr", c.addr)
	kv("laddr", c.laddr)
	kv("fd", itoa(connFD(c.nc)))
	kv("name", name)
	kv("age", itoa(int64(now.Sub(c.createdAt)/time.Second)))
	kv("idle", itoa(int64(idle/time.Second)))
	kv("flags", flags)
	kv("db", itoa(int64(c.DB())))
	kv("sub", "0")
	kv("psub", "0")
	kv("ssub", "0")
	kv("multi", itoa(int64(multi)))
	for _, k := range []string{"qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll", "omem", "tot-mem"} {
		kv(k, "0")
	}
	kv("events", "r")
	kv("cmd", cmd)
	kv("user", "default")
	kv("redir", "-1")
	kv("resp", itoa(int64(c.Proto())))
	kv("lib-name", libName)
	kv("lib-ver", libVer)
	return b.String()
}

// connFD returns the connection's file descriptor, or -1.
func connFD(nc net.Conn) int64 {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := int64(-1)
	raw.Control(func(f uintptr) { fd = int64(f) })
	return fd
}

// cmdCLIENTKILL is CLIENT KILL addr:port (old form: +OK or "No such
// client") or CLIENT KILL <filter> <value> ... (new form: the number
// killed; SKIPME defaults to yes). A client killing itself gets its reply
// first, as Redis closes it after the reply.
func cmdCLIENTKILL(c *Client, args [][]byte) Reply {
	s := c.srv
	if len(args) == 3 {
		addr := string(args[2])
		for _, o := range s.clientList() {
			if o.addr == addr {
				s.kill(c, o)
				return OK
			}
		}
		return ErrorReply("ERR No such client")
	}
	var (
		id          int64
		typ         string
		addr, laddr string
		user        string
		maxAge      int64
		skipMe      = true
	)
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return errSyntax
		}
		val := string(args[i+1])
		switch strings.ToLower(string(args[i])) {
		case "id":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < 1 {
				return ErrorReply("ERR client-id should be greater than 0")
			}
			id = n
		case "type":
			typ = strings.ToLower(val)
			switch typ {
			case "normal", "master", "replica", "slave", "pubsub":
			default:
				return ErrorReply("ERR Unknown client type '" + val + "'")
			}
		case "addr":
			addr = val
		case "laddr":
			laddr = val
		case "user":
			if val != "default" {
				return ErrorReply("ERR No such user '" + val + "'")
			}
			user = val
		case "skipme":
			switch strings.ToLower(val) {
			case "yes":
				skipMe = true
			case "no":
				skipMe = false
			default:
				return errSyntax
			}
		case "maxage":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return errNotInteger
			}
			maxAge = n
		default:
			return errSyntax
		}
	}
	killed := 0
	now := time.Now()
	for _, o := range s.clientList() {
		switch {
		case id != 0 && o.id != id,
			typ != "" && typ != "normal",
			addr != "" && o.addr != addr,
			laddr != "" && o.laddr != laddr,
			user != "" && user != "default",
			maxAge > 0 && int64(now.Sub(o.createdAt)/time.Second) < maxAge,
			skipMe && o == c:
			continue
		}
		s.kill(c, o)
		killed++
	}
	return Int(killed)
}

// kill closes o's connection; when o is the caller, after its reply.
func (s *Server) kill(caller, o *Client) {
	if o == caller {
		caller.quit = true
		return
	}
	o.nc.Close()
}

// cmdCLIENTUNBLOCK is CLIENT UNBLOCK id [TIMEOUT|ERROR]: 1 if the client was
// blocked and is released, else 0.
func cmdCLIENTUNBLOCK(c *Client, args [][]byte) Reply {
	id, err := strconv.ParseInt(string(args[2]), 10, 64)
	if err != nil {
		return errNotInteger
	}
	how := BlockUnblockedTimeout
	if len(args) == 4 {
		switch strings.ToLower(string(args[3])) {
		case "timeout":
		case "error":
			how = BlockUnblockedError
		default:
			return ErrorReply("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
		}
	} else if len(args) > 4 {
		return errSyntax
	}
	o := c.srv.clientByID(id)
	if o == nil || !o.unblock(how) {
		return Int(0)
	}
	return Int(1)
}

// onOff parses NO-EVICT / NO-TOUCH's argument.
func onOff(arg []byte) (bool, bool) {
	switch strings.ToLower(string(arg)) {
	case "on":
		return true, true
	case "off":
		return false, true
	}
	return false, false
}

// cmdCLIENTNOEVICT is CLIENT NO-EVICT on|off. streamd evicts no clients;
// the flag is kept and shown in CLIENT LIST ("e").
func cmdCLIENTNOEVICT(c *Client, args [][]byte) Reply {
	on, ok := onOff(args[2])
	if !ok {
		return errSyntax
	}
	c.mu.Lock()
	c.noEvict = on
	c.mu.Unlock()
	return OK
}

// cmdCLIENTNOTOUCH is CLIENT NO-TOUCH on|off. streamd keeps no LRU/LFU;
// the flag is kept and shown in CLIENT LIST ("T").
func cmdCLIENTNOTOUCH(c *Client, args [][]byte) Reply {
	on, ok := onOff(args[2])
	if !ok {
		return errSyntax
	}
	c.mu.Lock()
	c.noTouch = on
	c.mu.Unlock()
	return OK
}

// helpReply builds a HELP reply as Redis's addReplyHelp: a first line
// naming the command, the lines, then "HELP / Prints this help.".
func helpReply(cmd string, lines ...string) Reply {
	out := Array{SimpleString(cmd + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")}
	for _, l := range lines {
		out = append(out, SimpleString(l))
	}
	return append(out, SimpleString("HELP"), SimpleString("    Prints this help."))
}

// cmdCLIENTHELP lists the CLIENT subcommands streamd implements.
func cmdCLIENTHELP(c *Client, args [][]byte) Reply {
	return helpReply("CLIENT",
		"CACHING (YES|NO)",
		"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
		"GETNAME",
		"    Return the name of the current connection.",
		"ID",
		"    Return the ID of the current connection.",
		"INFO",
		"    Return information about the current client connection.",
		"KILL <ip:port>",
		"    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]",
		"    Kill connections. Options are:",
		"    * ADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made from the specified address",
		"    * LADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made to specified local address",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Kill connections by type.",
		"    * USER <username>",
		"      Kill connections authenticated by <username>.",
		"    * SKIPME (YES|NO)",
		"      Skip killing current connection (default: yes).",
		"    * ID <client-id>",
		"      Kill connections by client id.",
		"    * MAXAGE <maxage>",
		"      Kill connections older than the specified age.",
		"LIST [options ...]",
		"    Return information about client connections. Options:",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Return clients of specified type.",
		"SETNAME <name>",
		"    Assign the name <name> to the current connection.",
		"SETINFO <option> <value>",
		"    Set client meta attr. Options are:",
		"    * LIB-NAME: the client lib name.",
		"    * LIB-VER: the client lib version.",
		"UNBLOCK <clientid> [TIMEOUT|ERROR]",
		"    Unblock the specified blocked client.",
		"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
		"         [OPTIN] [OPTOUT] [NOLOOP]",
		"    Control server assisted client side caching.",
		"TRACKINGINFO",
		"    Report tracking status for the current connection.",
		"NO-EVICT (ON|OFF)",
		"    Protect current client connection from eviction.",
		"NO-TOUCH (ON|OFF)",
		"    Will not touch LRU/LFU stats when this mode is on.",
	)
}
