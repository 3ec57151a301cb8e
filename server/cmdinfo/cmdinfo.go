//go:generate go run gen_redis.go

// Package cmdinfo renders COMMAND's replies (INFO, DOCS, LIST and its
// filters, HELP) from plain descriptions of the command table's rows. The
// server owns the table (rows with handlers) and fills a Desc from each
// row; this package imports only server/resp and internal/glob.
package cmdinfo

import (
	"strings"

	"streamd/internal/glob"
	"streamd/server/resp"
)

// Desc is what COMMAND reports of one command or subcommand.
type Desc struct {
	// Name is the lower-case name ("xadd"; subcommands "xgroup|create").
	Name string
	// Arity follows Redis: N exactly N arguments, -N at least N.
	Arity int
	// Flags and ACL are COMMAND INFO's flags and ACL categories.
	Flags, ACL []string
	// FirstKey, LastKey, Step are the legacy key positions.
	FirstKey, LastKey, Step int
	// Summary, Since and Group are COMMAND DOCS's fields.
	Summary, Since, Group string
	// Subcommands are a container's.
	Subcommands []Desc
	// KeyFlags, for a command without Redis data, are its key spec's
	// flags ("RW", "delete"); empty: derived from Flags (see Specs).
	KeyFlags []string
}

// Specs are the command's key specs: redis-server's (redis7.json) for a
// command Redis has, else the one its legacy key positions imply, with
// KeyFlags or else flags from its command flags (RW update for a write, RO
// access for a read).
func (d Desc) Specs() []KeySpec {
	if e := redisData[d.Name]; e != nil {
		return e.specs
	}
	if d.FirstKey <= 0 {
		return nil
	}
	flags := []string{"RO", "access"}
	for _, f := range d.Flags {
		if f == "write" {
			flags = []string{"RW", "update"}
		}
	}
	if len(d.KeyFlags) > 0 {
		flags = d.KeyFlags
	}
	return []KeySpec{SpecFromPositions(d.FirstKey, d.LastKey, d.Step, flags)}
}

// errSyntax is Redis's generic syntax error.
const errSyntax = resp.ErrorReply("ERR syntax error")

// Info is Redis 7's 10-element COMMAND INFO entry: name, arity, flags,
// first key, last key, step, ACL categories, tips, key specs, subcommands.
// Tips and key specs are redis-server's (redis7.json) for a command Redis
// has; for another, no tips and the key spec its legacy positions imply
// (Desc.Specs).
func Info(d Desc) resp.Reply {
	tips, specs := resp.Reply(resp.Set{}), resp.Reply(resp.Set{})
	if e := redisData[d.Name]; e != nil {
		tips, specs = e.tips, e.keySpecs
	} else {
		set := resp.Set{}
		for _, ks := range d.Specs() {
			set = append(set, ks.reply())
		}
		specs = set
	}
	flags := make(resp.Set, len(d.Flags))
	for i, f := range d.Flags {
		flags[i] = resp.SimpleString(f)
	}
	acl := make(resp.Set, len(d.ACL))
	for i, a := range d.ACL {
		acl[i] = resp.SimpleString(a)
	}
	// Redis 7 sends no subcommands as an empty set, some as an array.
	var subs resp.Reply = resp.Set{}
	if len(d.Subcommands) > 0 {
		arr := make(resp.Array, 0, len(d.Subcommands))
		for _, sc := range d.Subcommands {
			arr = append(arr, Info(sc))
		}
		subs = arr
	}
	return resp.Array{
		resp.BulkString(d.Name),
		resp.Int(d.Arity),
		flags,
		resp.Int(d.FirstKey),
		resp.Int(d.LastKey),
		resp.Int(d.Step),
		acl,
		tips,
		specs,
		subs,
	}
}

// Infos is COMMAND INFO's reply: each command's entry, a null array for
// an unknown name (a Desc with no Name).
func Infos(ds []Desc) resp.Reply {
	out := make(resp.Array, 0, len(ds))
	for _, d := range ds {
		if d.Name == "" {
			out = append(out, resp.Null{})
			continue
		}
		out = append(out, Info(d))
	}
	return out
}

// Docs is COMMAND DOCS's reply: a map of name → docs (the caller leaves
// unknown names out, as Redis does).
func Docs(ds []Desc) resp.Reply {
	out := make(resp.Map, 0, len(ds))
	for _, d := range ds {
		out = append(out, resp.KV{K: resp.BulkString(d.Name), V: docs(d)})
	}
	return out
}

// docs is one command's docs map: redis-server's fields (redis7.json:
// summary, since, group, complexity, doc_flags, history, arguments, ...)
// for a command Redis has, else the row's summary, since and group; with
// Redis 8's complexity, history and arguments (redis8.json) where streamd
// has them; and, for a container, the docs of the subcommands streamd has.
func docs(d Desc) resp.Reply {
	var m resp.Map
	if e := redisData[d.Name]; e != nil {
		m = append(m, e.docs...)
	} else {
		m = resp.Map{
			{K: resp.BulkString("summary"), V: resp.BulkString(d.Summary)},
			{K: resp.BulkString("since"), V: resp.BulkString(d.Since)},
			{K: resp.BulkString("group"), V: resp.BulkString(d.Group)},
		}
	}
	m = overlay8(d.Name, m)
	if len(d.Subcommands) > 0 {
		m = append(m, resp.KV{K: resp.BulkString("subcommands"), V: Docs(d.Subcommands)})
	}
	return m
}

// List is COMMAND LIST [FILTERBY MODULE m | ACLCAT cat | PATTERN p], with
// filter the arguments after LIST. Like Redis, the plain list has
// top-level names only, while a filter also looks at subcommands.
func List(ds []Desc, filter [][]byte) resp.Reply {
	var match func(*Desc) bool
	switch {
	case len(filter) == 0:
	case len(filter) == 3 && strings.EqualFold(string(filter[0]), "filterby"):
		val := string(filter[2])
		switch strings.ToLower(string(filter[1])) {
		case "module":
			match = func(*Desc) bool { return false } // no modules
		case "aclcat":
			match = func(d *Desc) bool {
				for _, a := range d.ACL {
					if strings.EqualFold(strings.TrimPrefix(a, "@"), val) {
						return true
					}
				}
				return false
			}
		case "pattern":
			match = func(d *Desc) bool { return glob.MatchFold(val, d.Name) }
		default:
			return errSyntax
		}
	default:
		return errSyntax
	}
	out := resp.Array{}
	for i := range ds {
		d := &ds[i]
		if match == nil {
			out = append(out, resp.BulkString(d.Name))
			continue
		}
		if match(d) {
			out = append(out, resp.BulkString(d.Name))
		}
		for j := range d.Subcommands {
			if match(&d.Subcommands[j]) {
				out = append(out, resp.BulkString(d.Subcommands[j].Name))
			}
		}
	}
	return out
}

// HelpLines are COMMAND HELP's lines between the header and HELP's own.
func HelpLines() []string {
	return []string{
		"(no subcommand)",
		"    Return details about all Redis commands.",
		"COUNT",
		"    Return the total number of commands in this Redis server.",
		"LIST",
		"    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]",
		"    Return details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"DOCS [<command-name> ...]",
		"    Return documentation details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"GETKEYS <full-command>",
		"    Return the keys from a full Redis command.",
		"GETKEYSANDFLAGS <full-command>",
		"    Return the keys and the access flags from a full Redis command.",
	}
}
