package server

import "streamd/replication/wire"

// Command is one row of the command table: what COMMAND reports about it and
// the function that runs it. Exactly one of Handler and Planner is set
// (or neither, for a container whose Subcommands do the work).
type Command struct {
	// Name is the lower-case name ("xadd"; subcommands "xgroup|create").
	Name string
	// Arity follows Redis: N means exactly N arguments (the name included),
	// -N at least N. For subcommands the count includes the container name.
	Arity int
	// Flags as COMMAND INFO reports them: "write", "readonly", "denyoom",
	// "fast", "blocking", "noscript", "loading", "stale", "admin",
	// "no_auth", "no_multi", ...
	Flags []string
	// FirstKey, LastKey, Step are the legacy key positions (0 = no keys;
	// LastKey -1 = the last argument).
	FirstKey, LastKey, Step int
	// KeysFrom, when set, finds the keys of a command whose keys move
	// ("movablekeys": XREAD/XREADGROUP's follow STREAMS); routing uses it
	// instead of the legacy positions (commandKeys).
	KeysFrom func(args [][]byte) [][]byte
	// Control marks the commands the dispatcher itself must recognise
	// (transaction and connection control: MULTI, EXEC, DISCARD, WATCH,
	// UNWATCH, QUIT, RESET, SELECT); ctlNone for every other.
	Control control
	// Fanout marks a keyless command that spans the whole keyspace (DBSIZE,
	// KEYS, SCAN, FLUSHDB, FLUSHALL): over several shards it runs on each
	// and the answers are combined (fanout.go).
	Fanout bool
	// ACL lists the ACL categories ("@stream", "@write", "@slow", ...).
	ACL []string
	// Summary, Since and Group feed COMMAND DOCS ("stream", "generic",
	// "connection", "server", "transactions").
	Summary, Since, Group string
	// Subcommands, for containers (XGROUP, XINFO, CLIENT, CONFIG, COMMAND).
	Subcommands []*Command

	// Handler runs a command that does not touch the keyspace.
	Handler func(c *Client, args [][]byte) Reply
	// Planner turns a keyspace command's arguments into a Plan; a non-nil
	// Reply is an argument error, answered as is.
	Planner func(c *Client, args [][]byte) (Plan, Reply)

	// write and blocking cache the "write" and "blocking" Flags for the
	// per-request pipelining check, denyoom the "denyoom" flag for the
	// maxmemory check (maxmemory.go); newCommandTable sets them.
	write, blocking, denyoom bool
	// keyAccess is what the ACL key rules check per key (acl_keys.go);
	// newCommandTable sets it from the key specs (keySpecFlags).
	keyAccess []keyAccess
	// parent is a subcommand's container (nil for a top-level command).
	parent *Command
}

// Plan is what a keyspace command becomes: the engine operation and the
// function that turns the engine's answer into the reply. The plan runner
// (plan.go) sends a wire.Command to Shard.Propose and a wire.Query to
// Shard.Query; inside EXEC, every plan's Op goes into one wire.Exec.
type Plan struct {
	Op     wire.Op
	Format func(res any, err error) Reply
	// Block, when non-nil and not inside MULTI/EXEC, makes the runner wait
	// for the keys when Format's answer is a null (XREAD/XREADGROUP BLOCK).
	Block *Blocking
	// Added says Format is xreply.Added (XADD): a pipeline replies with
	// the new ID without boxing it (pipeline.finish).
	Added bool
}

// control names a command the dispatcher treats specially (Command.Control).
type control uint8

// The controls.
const (
	ctlNone control = iota
	ctlMulti
	ctlExec
	ctlDiscard
	ctlWatch
	ctlUnwatch
	ctlQuit
	ctlReset
	ctlSelect
)

// withControl sets a row's Control.
func withControl(k control, c *Command) *Command {
	c.Control = k
	return c
}

// runsInMulti reports whether the command runs at once after MULTI instead
// of being queued (EXEC, DISCARD, MULTI, WATCH, QUIT and RESET, as Redis's
// processCommand).
func (c *Command) runsInMulti() bool {
	switch c.Control {
	case ctlExec, ctlDiscard, ctlMulti, ctlWatch, ctlQuit, ctlReset:
		return true
	}
	return false
}
