package server

// Normalisations for the differential tests: only what must differ between
// two servers running the same script (clock-derived values, internal
// layout, build identity) is rewritten, on both replies alike, before they
// are compared.

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// diffNormCtx is the per-server state normalisation keeps across a script
// run: the auto-ID placeholder map.
type diffNormCtx struct {
	ids map[string]string // generated ID → "<id:N>", by order of first appearance
}

// autoIDPattern matches an entry ID whose milliseconds look like a wall
// clock (13+ digits): one produced by `*` (or written with a real time).
var autoIDPattern = regexp.MustCompile(`^[0-9]{13,}-[0-9]+$`)

// mapAutoIDs replaces clock-derived IDs by placeholders numbered in order of
// first appearance, so Redis's and streamd's IDs map to the same names as
// long as the same entries appear in the same order. It is always on.
func (n *diffNormCtx) mapAutoIDs(v Value) Value {
	switch v.Kind {
	case '$', '+':
		if !v.Nil && autoIDPattern.MatchString(v.Str) {
			p, ok := n.ids[v.Str]
			if !ok {
				p = "<id:" + strconv.Itoa(len(n.ids)+1) + ">"
				n.ids[v.Str] = p
			}
			v.Str = p
		}
	case '*', '%', '~', '>':
		v.Elems = mapValues(v.Elems, n.mapAutoIDs)
	}
	return v
}

// mapValues applies f to a copy of vs.
func mapValues(vs []Value, f func(Value) Value) []Value {
	if vs == nil {
		return nil
	}
	out := make([]Value, len(vs))
	for i, e := range vs {
		out[i] = f(e)
	}
	return out
}

// diffNormRules are the rules a script can switch on with `norm RULE`.
// Each takes the command (upper-cased name first) and a reply.
var diffNormRules = map[string]func(cmd []string, v Value) Value{
	// idle: consumer and PEL times (idle, inactive ≥ 0, seen-time,
	// active-time, delivery-time, XPENDING's per-entry idle) are read from
	// each server's clock.
	"idle": normIdle,
	// time: TIME's seconds and microseconds.
	"time": func(cmd []string, v Value) Value {
		if cmd[0] != "TIME" || v.Kind == '-' {
			return v
		}
		return placeholderAll(v, "<time>")
	},
	// clientid: CLIENT ID's integer and HELLO's id (connection counters
	// differ: Redis counts the harness's probe connections too).
	"clientid": func(cmd []string, v Value) Value {
		if v.Kind == ':' && cmd[0] == "CLIENT" {
			return Value{Kind: '+', Str: "<client-id>"}
		}
		return replaceKeyed(v, map[string]string{"id": "<client-id>"})
	},
	// hello: HELLO's server version (streamd reports its own Redis
	// compatibility level) and client id.
	"hello": func(cmd []string, v Value) Value {
		if cmd[0] != "HELLO" {
			return v
		}
		return replaceKeyed(v, map[string]string{"version": "<version>", "id": "<client-id>"})
	},
	// radix: XINFO STREAM's radix-tree-keys/-nodes describe the internal
	// node layout, not the data.
	"radix": func(cmd []string, v Value) Value {
		return replaceKeyed(v, map[string]string{"radix-tree-keys": "<radix>", "radix-tree-nodes": "<radix>"})
	},
	// info: INFO text has build/process figures; keep only that it is a
	// non-empty report with the same section headers requested.
	"info": func(cmd []string, v Value) Value {
		if cmd[0] != "INFO" || (v.Kind != '$' && v.Kind != '=') || v.Nil {
			return v
		}
		var heads []string
		for _, l := range strings.Split(v.Str, "\r\n") {
			if strings.HasPrefix(l, "# ") {
				heads = append(heads, l)
			}
		}
		return Value{Kind: v.Kind, Str: "<info " + strings.Join(heads, ",") + ">"}
	},
	// acllog: ACL LOG's age-seconds and client-info come from each
	// server's clock and connection.
	"acllog": func(cmd []string, v Value) Value {
		if cmd[0] != "ACL" || len(cmd) < 2 || !strings.EqualFold(cmd[1], "LOG") {
			return v
		}
		return replaceKeyed(v, map[string]string{"age-seconds": "<age>", "client-info": "<client-info>",
			"timestamp-created": "<unix-ms>", "timestamp-last-updated": "<unix-ms>"})
	},
	// sort: KEYS and SCAN order follow Redis's hash table; compare as sets.
	"sort": func(cmd []string, v Value) Value {
		if cmd[0] == "SCAN" && v.Kind == '*' && len(v.Elems) == 2 {
			v.Elems = []Value{v.Elems[0], sortValues(v.Elems[1])}
			return v
		}
		return sortValues(v)
	},
}

// sortValues sorts an aggregate's elements by their rendering.
func sortValues(v Value) Value {
	if v.Kind != '*' && v.Kind != '~' {
		return v
	}
	es := append([]Value(nil), v.Elems...)
	sort.Slice(es, func(i, j int) bool { return es[i].String() < es[j].String() })
	v.Elems = es
	return v
}

// placeholderAll replaces every scalar in v by p.
func placeholderAll(v Value, p string) Value {
	switch v.Kind {
	case '*', '%', '~', '>':
		v.Elems = mapValues(v.Elems, func(e Value) Value { return placeholderAll(e, p) })
		return v
	}
	return Value{Kind: '+', Str: p}
}

// isKeyed reports whether v's elements read as key/value pairs: a RESP3 map,
// or a RESP2 flat array of even length whose even positions are strings.
func isKeyed(v Value) bool {
	if v.Kind == '%' {
		return true
	}
	if v.Kind != '*' || len(v.Elems)%2 != 0 || len(v.Elems) == 0 {
		return false
	}
	for i := 0; i < len(v.Elems); i += 2 {
		if k := v.Elems[i].Kind; k != '$' && k != '+' {
			return false
		}
	}
	return true
}

// replaceKeyed replaces, anywhere in v, the value that follows a key listed
// in keys (in maps and flat key/value arrays) by the key's placeholder.
func replaceKeyed(v Value, keys map[string]string) Value {
	switch v.Kind {
	case '*', '%', '~', '>':
	default:
		return v
	}
	es := mapValues(v.Elems, func(e Value) Value { return replaceKeyed(e, keys) })
	if isKeyed(v) {
		for i := 0; i+1 < len(es); i += 2 {
			if p, ok := keys[es[i].Str]; ok && es[i+1].Kind != '*' && es[i+1].Kind != '%' {
				es[i+1] = Value{Kind: '+', Str: p}
			}
		}
	}
	v.Elems = es
	return v
}

// normIdle implements the "idle" rule.
func normIdle(cmd []string, v Value) Value {
	v = normTimes(v)
	// XPENDING key group [IDLE ms] start end count [consumer]: each entry
	// is [id, consumer, idle, delivery-count].
	if cmd[0] == "XPENDING" && len(cmd) >= 6 && v.Kind == '*' {
		es := append([]Value(nil), v.Elems...)
		for i, e := range es {
			if e.Kind == '*' && len(e.Elems) == 4 && e.Elems[2].Kind == ':' {
				e.Elems = append([]Value(nil), e.Elems...)
				e.Elems[2] = Value{Kind: '+', Str: "<idle>"}
				es[i] = e
			}
		}
		v.Elems = es
	}
	return v
}

// normTimes rewrites keyed time fields and wall-clock millisecond integers.
func normTimes(v Value) Value {
	switch v.Kind {
	case ':':
		if v.Int >= 1_000_000_000_000 {
			return Value{Kind: '+', Str: "<unix-ms>"}
		}
		return v
	case '*', '%', '~', '>':
	default:
		return v
	}
	es := mapValues(v.Elems, normTimes)
	if isKeyed(v) {
		for i := 0; i+1 < len(es); i += 2 {
			switch es[i].Str {
			case "idle", "seen-time", "active-time", "delivery-time":
				if es[i+1].Kind == ':' || es[i+1].Kind == '+' {
					es[i+1] = Value{Kind: '+', Str: "<" + es[i].Str + ">"}
				}
			case "inactive":
				// -1 (never active) is exact; a duration is clock-derived.
				if es[i+1].Kind == '+' || (es[i+1].Kind == ':' && es[i+1].Int >= 0) {
					es[i+1] = Value{Kind: '+', Str: "<inactive>"}
				}
			}
		}
	}
	v.Elems = es
	return v
}

// xinfo72Fields are the consumer fields Redis 7.2 added to XINFO CONSUMERS
// and XINFO STREAM FULL; a 7.0 reference server lacks them, so they are
// dropped from streamd's replies (a deliberate, counted difference). 7.0.15
// already has recorded-first-entry-id, which is compared. Redis 8 fields
// (8.8's nacked-count) are dropped the same way.
var xinfo72Fields = map[string]bool{"active-time": true, "inactive": true, "nacked-count": true}

// dropXinfo72 removes the 7.2-only keyed fields anywhere in v and reports
// whether it removed any.
func dropXinfo72(v Value) (Value, bool) { return dropXinfoFields(v, xinfo72Fields) }

// dropXinfoFields removes the keyed fields named in fields anywhere in v
// and reports whether it removed any.
func dropXinfoFields(v Value, fields map[string]bool) (Value, bool) {
	switch v.Kind {
	case '*', '%':
	default:
		return v, false
	}
	dropped := false
	es := make([]Value, 0, len(v.Elems))
	keyed := isKeyed(v)
	for i := 0; i < len(v.Elems); i++ {
		if keyed && i%2 == 0 && fields[v.Elems[i].Str] {
			i++ // skip the value too
			dropped = true
			continue
		}
		e, d := dropXinfoFields(v.Elems[i], fields)
		dropped = dropped || d
		es = append(es, e)
	}
	v.Elems = es
	return v, dropped
}
