package cmdinfo

import (
	_ "embed"
	"encoding/json"

	"streamd/server/resp"
)

// redis8JSON is the hand-written COMMAND DOCS data of Redis 8's stream
// commands and options (no Redis 8 server exists to ask, so gen_redis.go
// cannot make it): per command its complexity (commands Redis 7 lacks),
// the history entries after 7.0 and the full argument list, in the format
// of Redis's src/commands/*.json.
//
//go:embed redis8.json
var redis8JSON []byte

// redis8Arg is one argument in Redis's command JSON format.
type redis8Arg struct {
	Name         string      `json:"name"`
	Type         string      `json:"type"`
	KeySpecIndex *int        `json:"key_spec_index"`
	Token        string      `json:"token"`
	Summary      string      `json:"summary"`
	Since        string      `json:"since"`
	Optional     bool        `json:"optional"`
	Multiple     bool        `json:"multiple"`
	MultiToken   bool        `json:"multiple_token"`
	Arguments    []redis8Arg `json:"arguments"`
}

// redis8Doc is one command's overlay.
type redis8Doc struct {
	Complexity string      `json:"complexity"`
	History    [][2]string `json:"history"`
	Arguments  []redis8Arg `json:"arguments"`
}

// redis8Docs maps a command name to its Redis 8 overlay.
var redis8Docs map[string]*redis8Doc

func init() {
	var doc struct {
		Commands map[string]*redis8Doc `json:"commands"`
	}
	if err := json.Unmarshal(redis8JSON, &doc); err != nil {
		panic("cmdinfo: redis8.json: " + err.Error())
	}
	redis8Docs = doc.Commands
}

// HasRedis8Docs reports whether redis8.json overlays the command's COMMAND
// DOCS (Redis 8's arguments and history): the differential test against
// the 7.0 redis-server leaves those fields out of its comparison.
func HasRedis8Docs(name string) bool { return redis8Docs[name] != nil }

// overlay8 returns m with the Redis 8 fields of name applied, in Redis's
// order (summary, since, group, complexity, ..., history, arguments): the
// complexity if m has none, the history entries appended to 7.0's, the
// arguments replaced.
func overlay8(name string, m resp.Map) resp.Map {
	o := redis8Docs[name]
	if o == nil {
		return m
	}
	var history resp.Set
	out := make(resp.Map, 0, len(m)+3)
	hasComplexity := false
	for _, kv := range m {
		switch key(kv.K) {
		case "history":
			if s, ok := kv.V.(resp.Set); ok {
				history = append(history, s...)
			}
			continue
		case "arguments":
			continue
		case "complexity":
			hasComplexity = true
		}
		out = append(out, kv)
	}
	if !hasComplexity && o.Complexity != "" {
		out = insertAfterGroup(out, resp.KV{K: resp.BulkString("complexity"), V: resp.BulkString(o.Complexity)})
	}
	for _, h := range o.History {
		history = append(history, resp.Array{resp.BulkString(h[0]), resp.BulkString(h[1])})
	}
	if len(history) > 0 {
		out = append(out, resp.KV{K: resp.BulkString("history"), V: history})
	}
	if len(o.Arguments) > 0 {
		out = append(out, resp.KV{K: resp.BulkString("arguments"), V: argList(o.Arguments)})
	}
	return out
}

// key is a docs map key's text.
func key(r resp.Reply) string {
	if b, ok := r.(resp.Bulk); ok {
		return string(b)
	}
	return ""
}

// insertAfterGroup puts kv right after the "group" field (or at the end).
func insertAfterGroup(m resp.Map, kv resp.KV) resp.Map {
	for i := range m {
		if key(m[i].K) == "group" {
			out := make(resp.Map, 0, len(m)+1)
			out = append(out, m[:i+1]...)
			out = append(out, kv)
			return append(out, m[i+1:]...)
		}
	}
	return append(m, kv)
}

// argList renders arguments as Redis 7's COMMAND DOCS does
// (addReplyCommandArgList): per argument a map of name, type, then
// key_spec_index, token, summary, since, flags and the nested arguments of
// a oneof or block, each only when set.
func argList(args []redis8Arg) resp.Array {
	out := make(resp.Array, 0, len(args))
	for _, a := range args {
		m := resp.Map{
			{K: resp.BulkString("name"), V: resp.BulkString(a.Name)},
			{K: resp.BulkString("type"), V: resp.BulkString(a.Type)},
		}
		if a.KeySpecIndex != nil {
			m = append(m, resp.KV{K: resp.BulkString("key_spec_index"), V: resp.Int(*a.KeySpecIndex)})
		}
		if a.Token != "" {
			m = append(m, resp.KV{K: resp.BulkString("token"), V: resp.BulkString(a.Token)})
		}
		if a.Summary != "" {
			m = append(m, resp.KV{K: resp.BulkString("summary"), V: resp.BulkString(a.Summary)})
		}
		if a.Since != "" {
			m = append(m, resp.KV{K: resp.BulkString("since"), V: resp.BulkString(a.Since)})
		}
		var flags resp.Set
		if a.Optional {
			flags = append(flags, resp.SimpleString("optional"))
		}
		if a.Multiple {
			flags = append(flags, resp.SimpleString("multiple"))
		}
		if a.MultiToken {
			flags = append(flags, resp.SimpleString("multiple_token"))
		}
		if len(flags) > 0 {
			m = append(m, resp.KV{K: resp.BulkString("flags"), V: flags})
		}
		if a.Type == "oneof" || a.Type == "block" {
			m = append(m, resp.KV{K: resp.BulkString("arguments"), V: argList(a.Arguments)})
		}
		out = append(out, m)
	}
	return out
}
