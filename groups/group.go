package groups

import (
	"fmt"
	"sort"

	"streamd/pel"
	"streamd/streams"
)

// EntriesReadInvalid is the entries-read value of a group whose logical read
// counter is unknown (Redis's SCG_INVALID_ENTRIES_READ); XINFO shows it as
// null.
const EntriesReadInvalid = -1

// Group is a consumer group, as Redis's streamCG.
type Group struct {
	// Name is the group's name.
	Name string
	// LastID is the last-delivered-id: ">" reads deliver entries after it.
	LastID streams.ID
	// EntriesRead is the logical read counter (entries-read), or
	// EntriesReadInvalid.
	EntriesRead int64
	// PEL holds the group's pending entries and each consumer's index.
	PEL *pel.PEL
	// consumers is kept sorted by name.
	consumers []*Consumer
	// consumerBytes is what the consumers take, kept by CreateConsumer
	// and DeleteConsumer (memory.go).
	consumerBytes int64
	// Config is the group's XGROUP CONFIG settings (config.go).
	Config Config
	// DeadLettered counts the entries dead-lettered so far (XINFO GROUPS
	// dead-lettered).
	DeadLettered int64
	// deadLetters are the entries the current claiming call dead-lettered,
	// until TakeDeadLetters.
	deadLetters []DeadLetter
}

// Consumer is a consumer of a group, as Redis 7.2's streamConsumer. Its
// pending entries are indexed in the group's PEL under its name (the NACK
// data lives once, in the group tree): see Group.Pending.
type Consumer struct {
	// Name is the consumer's name.
	Name string
	// SeenMs is the last time the consumer attempted an interaction
	// (XREADGROUP, XCLAIM, XAUTOCLAIM); XINFO CONSUMERS "idle" is now minus it.
	SeenMs int64
	// ActiveMs is the last time the consumer read or claimed something, or
	// -1 if never; XINFO CONSUMERS "inactive" is now minus it.
	ActiveMs int64
}

func newGroup(name string, lastID streams.ID, entriesRead int64) *Group {
	return &Group{Name: name, LastID: lastID, EntriesRead: entriesRead, PEL: pel.New()}
}

// Clone returns a deep copy of the group.
func (g *Group) Clone() *Group {
	c := *g
	c.PEL = g.PEL.Clone()
	c.deadLetters = nil
	c.consumers = make([]*Consumer, len(g.consumers))
	for i, k := range g.consumers {
		kc := *k
		c.consumers[i] = &kc
	}
	return &c
}

func (g *Group) search(name string) (int, bool) {
	i := sort.Search(len(g.consumers), func(i int) bool { return g.consumers[i].Name >= name })
	return i, i < len(g.consumers) && g.consumers[i].Name == name
}

// Consumer returns the consumer named name, or nil. It changes nothing (as
// Redis 7.2's streamLookupConsumer, which no longer refreshes seen-time).
func (g *Group) Consumer(name string) *Consumer {
	if i, ok := g.search(name); ok {
		return g.consumers[i]
	}
	return nil
}

// CreateConsumer adds a consumer (XGROUP CREATECONSUMER, or implicitly on
// first use) with seen-time nowMs and no active-time, as
// streamCreateConsumer. It returns nil if the consumer exists.
func (g *Group) CreateConsumer(name string, nowMs int64) *Consumer {
	i, ok := g.search(name)
	if ok {
		return nil
	}
	c := &Consumer{Name: name, SeenMs: nowMs, ActiveMs: -1}
	g.consumerBytes += consumerMemory(c)
	g.consumers = append(g.consumers, nil)
	copy(g.consumers[i+1:], g.consumers[i:])
	g.consumers[i] = c
	return c
}

// touchConsumer returns the consumer named name, creating it if needed, with
// its seen-time set to nowMs: Redis 7.2's XREADGROUP, XCLAIM and XAUTOCLAIM
// all start with this lookup-or-create-then-seen step.
func (g *Group) touchConsumer(name string, nowMs int64) *Consumer {
	c := g.Consumer(name)
	if c == nil {
		c = g.CreateConsumer(name, nowMs)
	}
	c.SeenMs = nowMs
	return c
}

// DeleteConsumer removes a consumer and its pending entries (XGROUP
// DELCONSUMER, streamDelConsumer). It returns the number of pending entries
// dropped and whether the consumer existed.
func (g *Group) DeleteConsumer(name string) (pending int64, ok bool) {
	i, ok := g.search(name)
	if !ok {
		return 0, false
	}
	pending = int64(g.PEL.RemoveConsumer(name))
	g.consumerBytes -= consumerMemory(g.consumers[i])
	copy(g.consumers[i:], g.consumers[i+1:])
	g.consumers[len(g.consumers)-1] = nil
	g.consumers = g.consumers[:len(g.consumers)-1]
	return pending, true
}

// Consumers returns the consumers in name order. The slice is the group's
// own: do not change it.
func (g *Group) Consumers() []*Consumer { return g.consumers }

// Pending returns the number of entries pending for the named consumer.
func (g *Group) Pending(consumer string) int64 { return int64(g.PEL.ConsumerLen(consumer)) }

// SetID moves the last-delivered-id and sets entries-read (XGROUP SETID).
// Redis sets entries-read even when ENTRIESREAD is not given, to -1 then.
func (g *Group) SetID(id streams.ID, entriesRead int64) {
	g.LastID = id
	g.EntriesRead = entriesRead
}

// Check verifies the group's PEL invariant and that every pending entry is
// owned by an existing consumer; for tests.
func (g *Group) Check() error {
	if err := g.PEL.Check(); err != nil {
		return fmt.Errorf("group %q: %w", g.Name, err)
	}
	var err error
	g.PEL.Ascend(streams.MinID, func(n pel.NACK) bool {
		if g.Consumer(n.Consumer) == nil && !g.PEL.Nacked(n.ID) {
			err = fmt.Errorf("group %q: %s owned by unknown consumer %q", g.Name, n.ID, n.Consumer)
		}
		return err == nil
	})
	for i := 1; err == nil && i < len(g.consumers); i++ {
		if g.consumers[i-1].Name >= g.consumers[i].Name {
			err = fmt.Errorf("group %q: consumers out of order", g.Name)
		}
	}
	if err == nil {
		err = g.checkMemory()
	}
	return err
}
