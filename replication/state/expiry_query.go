package state

import (
	"sort"

	"streamd/replication/wire"
)

// expiredKeys answers wire.ExpiredKeys: the database's keys whose deadline
// is at or before nowMs, sorted (no map order reaches the answer), at most
// Limit of them (Limit <= 0: all). The server's sweep proposes wire.Expired
// with them; the sweep's entry time decides again, so a key given a new
// deadline in between survives.
func (ks *Keyspace) expiredKeys(q wire.ExpiredKeys, nowMs int64) (any, error) {
	d := ks.db(q.DB)
	var out []string
	for k, dl := range d.expires {
		if dl <= nowMs {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}
