package server

import (
	"net"
	"strings"
	"syscall"
	"time"

	"streamd/server/clients"
)

// clientCommand is the CLIENT container and its subcommands.
func clientCommand() *Command {
	sub := func(name string, arity int, flags []string, summary, since string, h func(*Client, [][]byte) Reply) *Command {
		// Redis adds @admin and @dangerous to every "admin" command.
		acl := []string{"@slow", "@connection"}
		if len(flags) > 0 && flags[0] == "admin" {
			acl = []string{"@admin", "@slow", "@dangerous", "@connection"}
		}
		return &Command{Name: "client|" + name, Arity: arity, Flags: flags, ACL: acl,
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

func cmdCLIENTSETNAME(c *Client, args [][]byte) Reply {
	if r := clients.ValidateName(args[2]); r != nil {
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
	attr, r := clients.ParseSetInfo(args[2], args[3])
	if r != nil {
		return r
	}
	c.mu.Lock()
	if attr == clients.LibName {
		c.libName = string(args[3])
	} else {
		c.libVer = string(args[3])
	}
	c.mu.Unlock()
	return OK
}

// cmdCLIENTLIST is CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id ...].
// Every streamd client is "normal" (no replicas, no pub/sub).
func cmdCLIENTLIST(c *Client, args [][]byte) Reply {
	f, r := clients.ParseList(args[2:])
	if r != nil {
		return r
	}
	var b strings.Builder
	if f.Normal() {
		now := time.Now()
		for _, o := range c.srv.clientList() {
			if f.Match(clients.Info{ID: o.id}) {
				b.WriteString(o.info(now).Line())
				b.WriteByte('\n')
			}
		}
	}
	return Verbatim(b.String())
}

// cmdCLIENTINFO is CLIENT INFO: this connection's CLIENT LIST line.
func cmdCLIENTINFO(c *Client, args [][]byte) Reply {
	return Verbatim(c.info(time.Now()).Line() + "\n")
}

// info is what CLIENT LIST shows of the client at now. "fd" is the
// socket's descriptor.
func (c *Client) info(now time.Time) clients.Info {
	c.mu.Lock()
	i := clients.Info{
		Name: c.name, LibName: c.libName, LibVer: c.libVer,
		NoEvict: c.noEvict, NoTouch: c.noTouch,
	}
	c.mu.Unlock()
	if p := c.lastCmd.Load(); p != nil {
		i.Cmd = *p
	}
	i.Idle = now.Sub(time.Unix(0, c.lastActive.Load()))
	if c.inCommand.Load() {
		i.Idle = 0
	}
	i.ID, i.Addr, i.LAddr, i.FD = c.id, c.addr, c.laddr, connFD(c.nc)
	i.User = c.userName()
	i.Age = now.Sub(c.createdAt)
	i.Multi, i.Blocked = c.inMulti(), c.isBlocked()
	i.DB, i.Resp = c.DB(), c.Proto()
	return i
}

// connFD returns the connection's file descriptor, or -1.
func connFD(nc net.Conn) int64 {
	if f, ok := nc.(interface{ FD() int64 }); ok {
		return f.FD() // the event loop's (loop_linux.go)
	}
	return netConnFD(nc)
}

// netConnFD is connFD of a connection of Go's (TLS: the one under it).
func netConnFD(nc net.Conn) int64 {
	sc, ok := rawConn(nc).(syscall.Conn)
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
		return clients.ErrNoSuchClient
	}
	f, r := clients.ParseKill(args[2:])
	if r != nil {
		return r
	}
	if f.User != "" && s.aclNow().users.Get(f.User) == nil {
		return ErrorReply("ERR No such user '" + f.User + "'")
	}
	killed := 0
	now := time.Now()
	for _, o := range s.clientList() {
		// The filters read the fields fixed at accept only (see
		// KillFilter.Match): no other client's locks are taken.
		addrs := clients.Info{ID: o.id, Addr: o.addr, LAddr: o.laddr, Age: now.Sub(o.createdAt), User: o.userName()}
		if (f.SkipMe && o == c) || !f.Match(addrs) {
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
	id, withError, r := clients.ParseUnblock(args[2:])
	if r != nil {
		return r
	}
	how := BlockUnblockedTimeout
	if withError {
		how = BlockUnblockedError
	}
	o := c.srv.clientByID(id)
	if o == nil || !o.unblock(how) {
		return Int(0)
	}
	return Int(1)
}

// cmdCLIENTNOEVICT is CLIENT NO-EVICT on|off. streamd evicts no clients;
// the flag is kept and shown in CLIENT LIST ("e").
func cmdCLIENTNOEVICT(c *Client, args [][]byte) Reply {
	on, ok := clients.OnOff(args[2])
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
	on, ok := clients.OnOff(args[2])
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
	return helpReply("CLIENT", clients.HelpLines()...)
}
