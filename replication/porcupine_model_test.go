package replication

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"streamd/streams"
)

// The porcupine model of one stream key with one consumer group, as the
// linearizability tests drive it: XADD (auto ID, a unique tag as its only
// field value), a full XRANGE, XREADGROUP ">" COUNT 1, XACK of one ID, and a
// final read of the group's state (last-delivered-id and PEL). Histories are
// partitioned by key.

// opKind is the kind of a recorded operation.
type opKind uint8

const (
	opXAdd       opKind = iota // XADD key * t <tag>
	opXRange                   // XRANGE key - +
	opXReadGroup               // XREADGROUP GROUP g c COUNT 1 STREAMS key >
	opXAck                     // XACK key g id
	opGroupState               // XINFO GROUPS + XPENDING (the group's last-delivered-id and PEL)
)

func (k opKind) String() string {
	return [...]string{"XADD", "XRANGE", "XREADGROUP", "XACK", "GROUPSTATE"}[k]
}

// opInput is a porcupine Operation's Input.
type opInput struct {
	kind opKind
	key  string
	tag  uint64     // XADD: the entry's unique tag
	id   streams.ID // XACK: the ID acknowledged
}

// opOutput is a porcupine Operation's Output.
type opOutput struct {
	// unknown: the operation's outcome is not known (OutcomeUnknownError,
	// shutdown): it may or may not have taken effect, at any time after
	// its call (the operation's Return is maxReturn).
	unknown bool
	// XADD: the ID assigned (hasID false only for an unknown XADD whose
	// entry is not in the final state). XREADGROUP: the entry delivered
	// (hasID false: the reply was nil).
	hasID bool
	id    streams.ID
	tag   uint64 // XREADGROUP: the delivered entry's tag
	// XRANGE: the number of entries and the digest of (id, tag) in order
	// (see chainSum). XACK: the number acknowledged.
	n   int
	sum uint64
	// GROUPSTATE: last-delivered-id and the PEL, sorted.
	delivered streams.ID
	pending   []streams.ID
}

// maxReturn is the Return of an operation whose outcome is unknown.
const maxReturn = math.MaxInt64

// entryNode is one entry of a modelled stream: an immutable list from the
// tail (states share their prefixes; Step never mutates one).
type entryNode struct {
	prev *entryNode
	id   streams.ID
	tag  uint64
	n    int    // entries up to and including this one
	sum  uint64 // chainSum over the entries up to this one
}

// chainSum extends a digest of a stream's (id, tag) sequence by one entry.
// XRANGE replies are compared with the model through it (length + digest),
// which keeps histories small: a reply is two numbers, not the stream.
func chainSum(prev uint64, id streams.ID, tag uint64) uint64 {
	var b [32]byte
	binary.LittleEndian.PutUint64(b[0:], prev)
	binary.LittleEndian.PutUint64(b[8:], id.Ms)
	binary.LittleEndian.PutUint64(b[16:], id.Seq)
	binary.LittleEndian.PutUint64(b[24:], tag)
	h := fnv.New64a()
	h.Write(b[:])
	return h.Sum64()
}

// streamDigest is (length, digest) of entries, as the model computes it.
func streamDigest(entries []streams.Entry) (n int, sum uint64, err error) {
	for _, e := range entries {
		tag, err := entryTag(e)
		if err != nil {
			return 0, 0, err
		}
		sum = chainSum(sum, e.ID, tag)
		n++
	}
	return n, sum, nil
}

// entryTag reads the tag of an entry written by the tests (fields "t" <tag>).
func entryTag(e streams.Entry) (uint64, error) {
	if len(e.Fields) != 2 || string(e.Fields[0]) != "t" {
		return 0, fmt.Errorf("entry %v: unexpected fields %q", e.ID, e.Fields)
	}
	var tag uint64
	if _, err := fmt.Sscan(string(e.Fields[1]), &tag); err != nil {
		return 0, fmt.Errorf("entry %v: tag %q: %v", e.ID, e.Fields[1], err)
	}
	return tag, nil
}

// keyState is the model's state for one key.
type keyState struct {
	tail      *entryNode
	delivered streams.ID   // the group's last-delivered-id
	pending   []streams.ID // the group's PEL, sorted
}

func (s keyState) len() int {
	if s.tail == nil {
		return 0
	}
	return s.tail.n
}

func (s keyState) sum() uint64 {
	if s.tail == nil {
		return 0
	}
	return s.tail.sum
}

func (s keyState) lastID() streams.ID {
	if s.tail == nil {
		return streams.ID{}
	}
	return s.tail.id
}

// appendEntry returns the state with (id, tag) appended, or false if id is
// not greater than the last ID (XADD must never go backwards).
func (s keyState) appendEntry(id streams.ID, tag uint64) (keyState, bool) {
	if !s.lastID().Less(id) {
		return s, false
	}
	s.tail = &entryNode{prev: s.tail, id: id, tag: tag, n: s.len() + 1, sum: chainSum(s.sum(), id, tag)}
	return s, true
}

// nextUndelivered returns the first entry after last-delivered-id, or nil.
func (s keyState) nextUndelivered() *entryNode {
	var next *entryNode
	for e := s.tail; e != nil && s.delivered.Less(e.id); e = e.prev {
		next = e
	}
	return next
}

// deliver returns the state after XREADGROUP delivered e.
func (s keyState) deliver(e *entryNode) keyState {
	s.delivered = e.id
	p := make([]streams.ID, 0, len(s.pending)+1)
	p = append(p, s.pending...)
	s.pending = append(p, e.id) // IDs are delivered in increasing order: stays sorted
	return s
}

// ack returns the state after XACK id, and whether id was pending.
func (s keyState) ack(id streams.ID) (keyState, bool) {
	i, ok := slices.BinarySearchFunc(s.pending, id, streams.ID.Compare)
	if !ok {
		return s, false
	}
	s.pending = slices.Delete(slices.Clone(s.pending), i, i+1)
	return s, true
}

func (s keyState) equal(o keyState) bool {
	return s.len() == o.len() && s.sum() == o.sum() && s.delivered == o.delivered && slices.Equal(s.pending, o.pending)
}

// streamStep is the model's nondeterministic step: the states the key can
// be in after the operation, none if the output is impossible.
func streamStep(st any, inp any, outp any) []any {
	s := st.(keyState)
	in := inp.(opInput)
	out := outp.(opOutput)
	switch in.kind {
	case opXAdd:
		if out.unknown {
			if !out.hasID {
				return []any{s}
			}
			if ns, ok := s.appendEntry(out.id, in.tag); ok {
				return []any{s, ns}
			}
			return []any{s}
		}
		if ns, ok := s.appendEntry(out.id, in.tag); ok {
			return []any{ns}
		}
		return nil
	case opXRange:
		if out.n == s.len() && out.sum == s.sum() {
			return []any{s}
		}
		return nil
	case opXReadGroup:
		next := s.nextUndelivered()
		if out.unknown {
			if next == nil {
				return []any{s}
			}
			return []any{s, s.deliver(next)}
		}
		if !out.hasID {
			if next == nil {
				return []any{s}
			}
			return nil
		}
		if next != nil && next.id == out.id && next.tag == out.tag {
			return []any{s.deliver(next)}
		}
		return nil
	case opXAck:
		ns, was := s.ack(in.id)
		if out.unknown {
			if was {
				return []any{s, ns}
			}
			return []any{s}
		}
		if (out.n == 1) == was && out.n <= 1 {
			return []any{ns}
		}
		return nil
	case opGroupState:
		if out.delivered == s.delivered && slices.Equal(out.pending, s.pending) {
			return []any{s}
		}
		return nil
	}
	panic(fmt.Sprintf("unknown op kind %v", in.kind))
}

// streamModel is the porcupine model (partitioned by key).
var streamModel = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(opInput).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		slices.Sort(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init:  func() []any { return []any{keyState{}} },
	Step:  streamStep,
	Equal: func(a, b any) bool { return a.(keyState).equal(b.(keyState)) },
	Hash: func(st any) uint64 {
		s := st.(keyState)
		h := s.sum() ^ uint64(s.len())<<1 ^ s.delivered.Ms*31 ^ s.delivered.Seq
		for _, id := range s.pending {
			h = h*1099511628211 ^ id.Ms ^ id.Seq<<7
		}
		return h
	},
	DescribeOperation: func(inp, outp any) string {
		in, out := inp.(opInput), outp.(opOutput)
		var res string
		switch {
		case out.unknown && in.kind == opXAdd && out.hasID:
			res = "unknown (in final state as " + out.id.String() + ")"
		case out.unknown:
			res = "unknown"
		case in.kind == opXAdd:
			res = out.id.String()
		case in.kind == opXRange:
			res = fmt.Sprintf("%d entries, digest %016x", out.n, out.sum)
		case in.kind == opXReadGroup && out.hasID:
			res = fmt.Sprintf("%v (tag %d)", out.id, out.tag)
		case in.kind == opXReadGroup:
			res = "nil"
		case in.kind == opXAck:
			res = fmt.Sprint(out.n)
		case in.kind == opGroupState:
			res = fmt.Sprintf("last-delivered %v, PEL %v", out.delivered, out.pending)
		}
		arg := ""
		switch in.kind {
		case opXAdd:
			arg = fmt.Sprintf(" tag %d", in.tag)
		case opXAck:
			arg = " " + in.id.String()
		}
		return fmt.Sprintf("%v %s%s -> %s", in.kind, in.key, arg, res)
	},
	DescribeState: func(st any) string {
		s := st.(keyState)
		var b strings.Builder
		fmt.Fprintf(&b, "%d entries (last %v, digest %016x); last-delivered %v; PEL %v", s.len(), s.lastID(), s.sum(), s.delivered, s.pending)
		return b.String()
	},
}

// TestStreamModel checks the model itself on small hand-made histories.
func TestStreamModel(t *testing.T) {
	id := func(ms uint64) streams.ID { return streams.ID{Ms: ms} }
	digest := func(pairs ...uint64) opOutput { // id ms, tag, id ms, tag, ...
		var out opOutput
		for i := 0; i < len(pairs); i += 2 {
			out.sum = chainSum(out.sum, id(pairs[i]), pairs[i+1])
			out.n++
		}
		return out
	}
	op := func(client int, in opInput, call int64, out opOutput, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
	}
	add := func(key string, tag uint64) opInput { return opInput{kind: opXAdd, key: key, tag: tag} }
	rng := func(key string) opInput { return opInput{kind: opXRange, key: key} }
	rg := opInput{kind: opXReadGroup, key: "a"}
	ack := func(ms uint64) opInput { return opInput{kind: opXAck, key: "a", id: id(ms)} }
	model := streamModel.ToModel()
	cases := []struct {
		name string
		ok   bool
		h    []porcupine.Operation
	}{
		{"concurrent adds, read sees both", true, []porcupine.Operation{
			op(0, add("a", 1), 0, opOutput{id: id(2)}, 10),
			op(1, add("a", 2), 1, opOutput{id: id(1)}, 9),
			op(2, rng("a"), 11, digest(1, 2, 2, 1), 12),
		}},
		{"read misses an acknowledged add", false, []porcupine.Operation{
			op(0, add("a", 1), 0, opOutput{id: id(1)}, 10),
			op(2, rng("a"), 11, digest(), 12),
		}},
		{"concurrent read may miss it", true, []porcupine.Operation{
			op(0, add("a", 1), 0, opOutput{id: id(1)}, 10),
			op(2, rng("a"), 5, digest(), 12),
		}},
		{"IDs must grow in linearization order", false, []porcupine.Operation{
			op(0, add("a", 1), 0, opOutput{id: id(2)}, 1),
			op(0, add("a", 2), 2, opOutput{id: id(1)}, 3),
		}},
		{"keys are independent", true, []porcupine.Operation{
			op(0, add("a", 1), 0, opOutput{id: id(5)}, 1),
			op(0, add("b", 2), 2, opOutput{id: id(1)}, 3),
			op(0, rng("b"), 4, digest(1, 2), 5),
		}},
		{"unknown add applied later", true, []porcupine.Operation{
			op(0, add("a", 1), 0, opOutput{unknown: true, hasID: true, id: id(1)}, maxReturn),
			op(1, rng("a"), 5, digest(), 6),
			op(1, rng("a"), 7, digest(1, 1), 8),
		}},
		{"unknown add never applied", true, []porcupine.Operation{
			op(0, add("a", 1), 0, opOutput{unknown: true}, maxReturn),
			op(1, rng("a"), 7, digest(), 8),
		}},
		{"applied entry cannot vanish", false, []porcupine.Operation{
			op(0, add("a", 1), 0, opOutput{unknown: true, hasID: true, id: id(1)}, maxReturn),
			op(1, rng("a"), 7, digest(1, 1), 8),
			op(1, rng("a"), 9, digest(), 10),
		}},
		{"readgroup delivers in order, ack once", true, []porcupine.Operation{
			op(0, add("a", 1), 0, opOutput{id: id(1)}, 1),
			op(0, add("a", 2), 2, opOutput{id: id(2)}, 3),
			op(1, rg, 4, opOutput{hasID: true, id: id(1), tag: 1}, 5),
			op(1, rg, 6, opOutput{hasID: true, id: id(2), tag: 2}, 7),
			op(1, rg, 8, opOutput{}, 9),
			op(1, ack(1), 10, opOutput{n: 1}, 11),
			op(1, ack(1), 12, opOutput{n: 0}, 13),
			op(1, opInput{kind: opGroupState, key: "a"}, 14, opOutput{delivered: id(2), pending: []streams.ID{id(2)}}, 15),
		}},
		{"readgroup skips an entry", false, []porcupine.Operation{
			op(0, add("a", 1), 0, opOutput{id: id(1)}, 1),
			op(0, add("a", 2), 2, opOutput{id: id(2)}, 3),
			op(1, rg, 4, opOutput{hasID: true, id: id(2), tag: 2}, 5),
		}},
		{"double delivery", false, []porcupine.Operation{
			op(0, add("a", 1), 0, opOutput{id: id(1)}, 1),
			op(1, rg, 4, opOutput{hasID: true, id: id(1), tag: 1}, 5),
			op(2, rg, 6, opOutput{hasID: true, id: id(1), tag: 1}, 7),
		}},
		{"ack of a non-pending ID answers 1", false, []porcupine.Operation{
			op(1, ack(1), 10, opOutput{n: 1}, 11),
		}},
		{"unknown readgroup explains the PEL", true, []porcupine.Operation{
			op(0, add("a", 1), 0, opOutput{id: id(1)}, 1),
			op(1, rg, 4, opOutput{unknown: true}, maxReturn),
			op(2, opInput{kind: opGroupState, key: "a"}, 6, opOutput{delivered: id(1), pending: []streams.ID{id(1)}}, 7),
		}},
	}
	for _, c := range cases {
		res := porcupine.CheckOperationsTimeout(model, c.h, 5*time.Second)
		if want := map[bool]porcupine.CheckResult{true: porcupine.Ok, false: porcupine.Illegal}[c.ok]; res != want {
			t.Errorf("%s: %v, want %v", c.name, res, want)
		}
	}
}
