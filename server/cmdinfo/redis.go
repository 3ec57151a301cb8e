package cmdinfo

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"streamd/server/resp"
)

// redisJSON is what gen_redis.go took from a real redis-server's COMMAND
// DOCS and COMMAND INFO (see its doc comment for the encoding).
//
//go:embed redis7.json
var redisJSON []byte

// redisEntry is one command's (or subcommand's) data from redis-server.
type redisEntry struct {
	// docs are COMMAND DOCS's fields but subcommands, in Redis's order.
	docs resp.Map
	// tips and keySpecs are COMMAND INFO's 8th and 9th elements.
	tips     resp.Reply
	keySpecs resp.Reply
	// specs are the key specs parsed, for GETKEYS.
	specs []KeySpec
}

// redisData maps a full name ("xadd", "xgroup|create") to its entry;
// RedisVersion is the redis-server the data came from.
var (
	redisData    map[string]*redisEntry
	RedisVersion string
)

func init() {
	var doc struct {
		Version  string `json:"redis_version"`
		Commands map[string]struct {
			Docs     json.RawMessage `json:"docs"`
			Tips     json.RawMessage `json:"tips"`
			KeySpecs json.RawMessage `json:"key_specs"`
		} `json:"commands"`
	}
	if err := json.Unmarshal(redisJSON, &doc); err != nil {
		panic("cmdinfo: redis7.json: " + err.Error())
	}
	RedisVersion = doc.Version
	redisData = make(map[string]*redisEntry, len(doc.Commands))
	for name, c := range doc.Commands {
		e := &redisEntry{}
		docs, ok := mustValue(name, c.Docs).(resp.Map)
		if !ok {
			panic("cmdinfo: redis7.json: " + name + ": docs is not a map")
		}
		e.docs = docs
		e.tips = mustValue(name, c.Tips)
		e.keySpecs = mustValue(name, c.KeySpecs)
		specs, err := parseKeySpecs(e.keySpecs)
		if err != nil {
			panic("cmdinfo: redis7.json: " + name + ": " + err.Error())
		}
		e.specs = specs
		redisData[name] = e
	}
}

// HasRedisData reports whether redis7.json describes the command (a full
// name): the server's tests check every row Redis has is there.
func HasRedisData(name string) bool { return redisData[name] != nil }

// KeySpecFlags returns the flags of each of the command's key specs in
// redis-server's COMMAND INFO (redis7.json), one space-separated string a
// spec ("RW access update"); nil when Redis has no key specs for it.
func KeySpecFlags(name string) []string {
	e := redisData[name]
	if e == nil {
		return nil
	}
	var out []string
	for _, ks := range e.specs {
		out = append(out, strings.Join(ks.Flags, " "))
	}
	return out
}

func mustValue(name string, raw json.RawMessage) resp.Reply {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		panic("cmdinfo: redis7.json: " + name + ": " + err.Error())
	}
	r, err := toReply(v)
	if err != nil {
		panic("cmdinfo: redis7.json: " + name + ": " + err.Error())
	}
	return r
}

// toReply turns gen_redis.go's JSON encoding back into a reply value.
func toReply(v any) (resp.Reply, error) {
	switch v := v.(type) {
	case float64:
		return resp.Int(int64(v)), nil
	case string:
		switch {
		case strings.HasPrefix(v, "$"):
			return resp.BulkString(v[1:]), nil
		case strings.HasPrefix(v, "+"):
			return resp.SimpleString(v[1:]), nil
		}
	case []any:
		if len(v) == 0 {
			break
		}
		elems := make([]resp.Reply, 0, len(v)-1)
		for _, e := range v[1:] {
			r, err := toReply(e)
			if err != nil {
				return nil, err
			}
			elems = append(elems, r)
		}
		switch v[0] {
		case "*":
			return resp.Array(elems), nil
		case "~":
			return resp.Set(elems), nil
		case "%":
			if len(elems)%2 != 0 {
				return nil, fmt.Errorf("odd map")
			}
			m := make(resp.Map, 0, len(elems)/2)
			for i := 0; i < len(elems); i += 2 {
				m = append(m, resp.KV{K: elems[i], V: elems[i+1]})
			}
			return m, nil
		}
	}
	return nil, fmt.Errorf("bad value %v", v)
}
