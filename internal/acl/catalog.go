package acl

import (
	"sort"
	"strings"
)

// Command is one thing rules can name: a command ("xadd") or a subcommand
// ("xinfo|stream", "client|list"), with its categories without '@'
// ("write", "stream", "fast"). A container ("xinfo") is also a Command; its
// subcommands are separate rows. As in Redis, +xinfo allows all of XINFO's
// subcommands and +xinfo|stream only that one.
type Command struct {
	Name       string
	Categories []string
	// NoAuth marks commands every user may run whatever its command rules
	// (Redis's CMD_NO_AUTH: AUTH, HELLO); their keys are still checked.
	NoAuth bool
}

// categoryNames is Redis 7.2's ACL category table, in ACL CAT's order.
var categoryNames = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting",
}

// CategoryNames returns Redis 7.2's ACL categories in ACL CAT's order.
func CategoryNames() []string {
	return append([]string(nil), categoryNames...)
}

func isCategory(name string) bool {
	for _, c := range categoryNames {
		if c == name {
			return true
		}
	}
	return false
}

// Catalog is the set of commands rules can name, with ids for the
// permission bitmaps. It is immutable once built.
type Catalog struct {
	names  []string       // id → full name, lower case
	ids    map[string]int // full name → id
	subs   [][]int        // id → subcommand ids (containers)
	parent []int          // id → container id, or -1
	noAuth []bool
	cats   map[string][]int // category → ids
}

// NewCatalog builds a catalog from command rows. Names are folded to lower
// case; a subcommand row "x|y" whose container "x" has no row gets an
// implicit container row without categories. Categories Redis does not
// know are ignored. Duplicate rows are merged.
func NewCatalog(cmds []Command) *Catalog {
	c := &Catalog{ids: map[string]int{}, cats: map[string][]int{}}
	add := func(name string) int {
		if id, ok := c.ids[name]; ok {
			return id
		}
		id := len(c.names)
		c.names = append(c.names, name)
		c.ids[name] = id
		c.subs = append(c.subs, nil)
		c.parent = append(c.parent, -1)
		c.noAuth = append(c.noAuth, false)
		return id
	}
	sorted := make([]Command, len(cmds))
	copy(sorted, cmds)
	for i := range sorted {
		sorted[i].Name = strings.ToLower(sorted[i].Name)
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	catSet := map[string]map[int]bool{}
	for _, cmd := range sorted {
		if cmd.Name == "" {
			continue
		}
		var id int
		if p := strings.IndexByte(cmd.Name, '|'); p >= 0 {
			pid := add(cmd.Name[:p])
			id = add(cmd.Name)
			if c.parent[id] < 0 {
				c.parent[id] = pid
				c.subs[pid] = append(c.subs[pid], id)
			}
		} else {
			id = add(cmd.Name)
		}
		if cmd.NoAuth {
			c.noAuth[id] = true
		}
		for _, cat := range cmd.Categories {
			cat = strings.ToLower(strings.TrimPrefix(cat, "@"))
			if !isCategory(cat) {
				continue
			}
			if catSet[cat] == nil {
				catSet[cat] = map[int]bool{}
			}
			if !catSet[cat][id] {
				catSet[cat][id] = true
				c.cats[cat] = append(c.cats[cat], id)
			}
		}
	}
	return c
}

// Has reports whether name ("xadd", "xinfo|stream") is in the catalog.
func (c *Catalog) Has(name string) bool {
	_, ok := c.ids[strings.ToLower(name)]
	return ok
}

// InCategory is ACL CAT <category>: the names (subcommands as
// "container|sub") of the commands in the category, sorted, and false for a
// category Redis does not know (ACL CAT replies "Unknown category '<name>'").
func (c *Catalog) InCategory(cat string) ([]string, bool) {
	cat = strings.ToLower(cat)
	if !isCategory(cat) {
		return nil, false
	}
	out := []string{}
	for _, id := range c.cats[cat] {
		out = append(out, c.names[id])
	}
	sort.Strings(out)
	return out, true
}

// lookup is Redis's strict lookupCommandBySds: "cmd" or "container|sub",
// case-insensitive; "cmd|x" for a command without subcommands is unknown.
func (c *Catalog) lookup(name string) (int, bool) {
	name = strings.ToLower(name)
	parts := strings.Split(name, "|")
	if len(parts) > 2 {
		return 0, false
	}
	id, ok := c.ids[parts[0]]
	if !ok || c.parent[id] >= 0 {
		return 0, false
	}
	if len(parts) == 1 {
		return id, true
	}
	if len(c.subs[id]) == 0 {
		return 0, false
	}
	sid, ok := c.ids[name]
	return sid, ok
}

// size is the number of ids, for bitmaps.
func (c *Catalog) size() int { return len(c.names) }
