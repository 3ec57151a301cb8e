package server

import "time"

// latencyCommand is LATENCY LATEST / HISTORY / RESET / GRAPH / DOCTOR /
// HELP over the latency monitor (latency.go).
func (s *Server) latencyCommand() *Command {
	admin := []string{"admin", "noscript", "loading", "stale"}
	acl := []string{"@admin", "@slow", "@dangerous"}
	sub := func(name string, arity int, summary string, h func(*Client, [][]byte) Reply) *Command {
		return &Command{Name: "latency|" + name, Arity: arity, Flags: admin, ACL: acl,
			Summary: summary, Since: "2.8.13", Group: "server", Handler: h}
	}
	return &Command{
		Name: "latency", Arity: -2, ACL: []string{"@slow"},
		Summary: "A container for latency diagnostics commands", Since: "2.8.13", Group: "server",
		Subcommands: []*Command{
			sub("latest", 2, "Return the latest latency samples for all events.",
				func(*Client, [][]byte) Reply { return s.latency.latest() }),
			sub("history", 3, "Return timestamp-latency samples for an event.",
				func(_ *Client, args [][]byte) Reply { return s.latency.history(string(args[2])) }),
			sub("reset", -2, "Reset latency data for one or more events.",
				func(_ *Client, args [][]byte) Reply { return Int(s.latency.reset(names(args[2:]))) }),
			sub("graph", 3, "Return a latency graph for an event.", func(_ *Client, args [][]byte) Reply {
				g, ok := s.latency.graph(string(args[2]), time.Now().Unix())
				if !ok {
					return ErrorReply("ERR No samples available for event '" + string(args[2]) + "'")
				}
				return Verbatim(g)
			}),
			sub("doctor", 2, "Return a human readable latency analysis report.",
				func(*Client, [][]byte) Reply { return Verbatim(s.latencyDoctor(time.Now().Unix())) }),
			{Name: "latency|help", Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"@slow"},
				Summary: "Show helpful text about the different subcommands.", Since: "2.8.13", Group: "server",
				Handler: func(*Client, [][]byte) Reply { return helpReply("LATENCY", latencyHelp...) }},
		},
	}
}

// latencyHelp is LATENCY HELP's text (Redis 7.0's latencyCommand, without
// HISTOGRAM, which streamd does not have).
var latencyHelp = []string{
	"DOCTOR",
	"    Return a human readable latency analysis report.",
	"GRAPH <event>",
	"    Return an ASCII latency graph for the <event> class.",
	"HISTORY <event>",
	"    Return time-latency samples for the <event> class.",
	"LATEST",
	"    Return the latest latency samples for all events.",
	"RESET [<event> ...]",
	"    Reset latency data of one or more <event> classes.",
	"    (default: reset all data for all event classes)",
}
