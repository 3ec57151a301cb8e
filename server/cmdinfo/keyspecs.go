package cmdinfo

import (
	"fmt"
	"strconv"
	"strings"

	"streamd/server/resp"
)

// KeySpec is one of Redis 7's key specs: where a command's keys start
// (begin_search: an index, or the argument after a keyword) and how many
// follow (find_keys: a range, or a count given in an argument), with the
// keys' flags (RW/RO/OW/RM, access/update/insert/delete, ...).
type KeySpec struct {
	Flags []string
	// BeginIndex is begin_search index's position; 0 with Keyword set
	// searches Keyword from StartFrom (negative: from the end, backwards).
	BeginIndex int
	Keyword    string
	StartFrom  int
	// KeyNum selects find_keys keynum (KeyNumIdx, FirstKey, KeyStep);
	// otherwise it is range (LastKey, KeyStep, Limit).
	KeyNum              bool
	LastKey, Limit      int
	KeyNumIdx, FirstKey int
	KeyStep             int
}

// SpecFromPositions is the key spec of a command described only by legacy
// key positions (first, last, step; last -1 is the last argument), as
// Redis derives it for a command without specs: begin_search index first,
// find_keys range with lastkey relative to it.
func SpecFromPositions(first, last, step int, flags []string) KeySpec {
	ks := KeySpec{Flags: flags, BeginIndex: first, KeyStep: step}
	if last < 0 {
		ks.LastKey = last
	} else {
		ks.LastKey = last - first
	}
	return ks
}

// reply is the key spec's COMMAND INFO map.
func (ks KeySpec) reply() resp.Reply {
	flags := make(resp.Set, len(ks.Flags))
	for i, f := range ks.Flags {
		flags[i] = resp.SimpleString(f)
	}
	var bs, fk resp.Map
	if ks.Keyword != "" {
		bs = resp.Map{{K: resp.BulkString("type"), V: resp.BulkString("keyword")}, {K: resp.BulkString("spec"), V: resp.Map{
			{K: resp.BulkString("keyword"), V: resp.BulkString(ks.Keyword)}, {K: resp.BulkString("startfrom"), V: resp.Int(ks.StartFrom)}}}}
	} else {
		bs = resp.Map{{K: resp.BulkString("type"), V: resp.BulkString("index")}, {K: resp.BulkString("spec"), V: resp.Map{
			{K: resp.BulkString("index"), V: resp.Int(ks.BeginIndex)}}}}
	}
	if ks.KeyNum {
		fk = resp.Map{{K: resp.BulkString("type"), V: resp.BulkString("keynum")}, {K: resp.BulkString("spec"), V: resp.Map{
			{K: resp.BulkString("keynumidx"), V: resp.Int(ks.KeyNumIdx)}, {K: resp.BulkString("firstkey"), V: resp.Int(ks.FirstKey)},
			{K: resp.BulkString("keystep"), V: resp.Int(ks.KeyStep)}}}}
	} else {
		fk = resp.Map{{K: resp.BulkString("type"), V: resp.BulkString("range")}, {K: resp.BulkString("spec"), V: resp.Map{
			{K: resp.BulkString("lastkey"), V: resp.Int(ks.LastKey)}, {K: resp.BulkString("keystep"), V: resp.Int(ks.KeyStep)},
			{K: resp.BulkString("limit"), V: resp.Int(ks.Limit)}}}}
	}
	return resp.Map{{K: resp.BulkString("flags"), V: flags},
		{K: resp.BulkString("begin_search"), V: bs}, {K: resp.BulkString("find_keys"), V: fk}}
}

// parseKeySpecs reads COMMAND INFO's key specs (a set of maps).
func parseKeySpecs(r resp.Reply) ([]KeySpec, error) {
	set, ok := r.(resp.Set)
	if !ok {
		return nil, fmt.Errorf("key specs are not a set")
	}
	var out []KeySpec
	for _, e := range set {
		m, ok := e.(resp.Map)
		if !ok {
			return nil, fmt.Errorf("key spec is not a map")
		}
		var ks KeySpec
		for _, f := range strs(get(m, "flags")) {
			ks.Flags = append(ks.Flags, f)
		}
		bs, _ := get(m, "begin_search").(resp.Map)
		bspec, _ := get(bs, "spec").(resp.Map)
		switch str(get(bs, "type")) {
		case "index":
			ks.BeginIndex = num(get(bspec, "index"))
		case "keyword":
			ks.Keyword, ks.StartFrom = str(get(bspec, "keyword")), num(get(bspec, "startfrom"))
		default:
			return nil, fmt.Errorf("begin_search %q", str(get(bs, "type")))
		}
		fk, _ := get(m, "find_keys").(resp.Map)
		fspec, _ := get(fk, "spec").(resp.Map)
		switch str(get(fk, "type")) {
		case "range":
			ks.LastKey, ks.KeyStep, ks.Limit = num(get(fspec, "lastkey")), num(get(fspec, "keystep")), num(get(fspec, "limit"))
		case "keynum":
			ks.KeyNum = true
			ks.KeyNumIdx, ks.FirstKey, ks.KeyStep = num(get(fspec, "keynumidx")), num(get(fspec, "firstkey")), num(get(fspec, "keystep"))
		default:
			return nil, fmt.Errorf("find_keys %q", str(get(fk, "type")))
		}
		out = append(out, ks)
	}
	return out, nil
}

func get(m resp.Map, k string) resp.Reply {
	for _, kv := range m {
		if str(kv.K) == k {
			return kv.V
		}
	}
	return nil
}

func str(r resp.Reply) string {
	switch v := r.(type) {
	case resp.Bulk:
		return string(v)
	case resp.SimpleString:
		return string(v)
	}
	return ""
}

func num(r resp.Reply) int {
	n, _ := r.(resp.Int)
	return int(n)
}

func strs(r resp.Reply) []string {
	set, _ := r.(resp.Set)
	out := make([]string, 0, len(set))
	for _, e := range set {
		out = append(out, str(e))
	}
	return out
}

// KeyPos is one key GETKEYS found: its argument index and its spec's flags.
type KeyPos struct {
	Pos   int
	Flags []string
}

// GetKeys finds a command's keys in args (args[0] the command name) with
// its key specs, as Redis's getKeysUsingKeySpecs: ok is false when a spec
// does not fit the arguments (a missing keyword, a bad key count, a range
// out of bounds), as Redis's "invalid spec".
func GetKeys(specs []KeySpec, args [][]byte, variadic bool) (keys []KeyPos, ok bool) {
	argc := len(args)
	for _, ks := range specs {
		first := 0
		if ks.Keyword != "" {
			start, end := ks.StartFrom, argc-1
			if ks.StartFrom <= 0 {
				start, end = argc+ks.StartFrom, 1
			}
			for i := start; i != end; {
				if i >= argc || i < 1 {
					break
				}
				if strings.EqualFold(string(args[i]), ks.Keyword) {
					first = i + 1
					break
				}
				if start <= end {
					i++
				} else {
					i--
				}
			}
			if first == 0 {
				return nil, false
			}
		} else {
			first = ks.BeginIndex
		}
		var last, step int
		if ks.KeyNum {
			step = ks.KeyStep
			if ks.KeyNumIdx >= argc || first+ks.KeyNumIdx >= argc {
				return nil, false
			}
			n, err := strconv.ParseInt(string(args[first+ks.KeyNumIdx]), 10, 64)
			if err != nil || n < 0 {
				return nil, false
			}
			first += ks.FirstKey
			last = first + int(n) - 1
		} else {
			step = ks.KeyStep
			switch {
			case ks.LastKey >= 0:
				last = first + ks.LastKey
			case ks.Limit == 0:
				last = argc + ks.LastKey
			default:
				last = first + ((argc-first)/ks.Limit + ks.LastKey)
			}
		}
		step = max(step, 1)
		if last >= argc || last < first || first >= argc {
			return nil, false
		}
		for i := first; i <= last; i += step {
			if i >= argc || i < first {
				if variadic {
					continue
				}
				break
			}
			keys = append(keys, KeyPos{Pos: i, Flags: ks.Flags})
		}
	}
	return keys, true
}
