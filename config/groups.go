package config

import "strings"

// Groups are --help's and the README's sections, in their order; every
// directive belongs to one (Doc.Group).
var Groups = []string{"basics", "persistence", "cluster", "security", "observability"}

// directiveGroups places the directives the prefix rules of groupOf do not.
var directiveGroups = map[string]string{
	"bind": "basics", "port": "basics", "databases": "basics", "maxclients": "basics", "timeout": "basics",
	"tcp-keepalive": "basics", "event-loop": "basics", "proto-max-bulk-len": "basics", "stream-node-max-entries": "basics",
	"stream-node-max-bytes": "basics", "stream-idmp-duration": "basics", "stream-idmp-maxsize": "basics", "stream-default-acklevel": "basics", "hz": "basics", "maxmemory": "basics", "maxmemory-policy": "basics",
	"notify-keyspace-events": "basics",

	"dir": "persistence", "appendonly": "persistence", "appendfsync": "persistence", "save": "persistence",
	"log-store": "persistence", "snapshot-log-size": "persistence",

	"node-id": "cluster", "bootstrap": "cluster", "join": "cluster", "join-tls": "cluster", "peers": "cluster",
	"shards": "cluster", "quorum-timeout": "cluster", "balance-leaders": "cluster", "transfer-hold-timeout": "cluster",

	"requirepass": "security", "protected-mode": "security", "cluster-secret": "security",
	"cluster-secret-file": "security", "user": "security", "aclfile": "security", "acllog-max-len": "security",

	"loglevel": "observability", "log-format": "observability", "latency-tracking": "observability",
}

// groupOf is the directive's group: directiveGroups, else by its prefix
// (tls-: security; raft-, cluster-: cluster; slowlog-, metrics-, log:
// observability), else basics.
func groupOf(name string) string {
	if g, ok := directiveGroups[name]; ok {
		return g
	}
	for _, r := range []struct{ prefix, group string }{
		{"tls-", "security"}, {"acl", "security"}, {"raft-", "cluster"}, {"cluster-", "cluster"},
		{"slowlog-", "observability"}, {"metrics-", "observability"}, {"latency-", "observability"}, {"log", "observability"},
	} {
		if strings.HasPrefix(name, r.prefix) {
			return r.group
		}
	}
	return "basics"
}
