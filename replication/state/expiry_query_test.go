package state

import (
	"reflect"
	"testing"

	"streamd/replication/wire"
)

func TestExpiredKeys(t *testing.T) {
	ks := New()
	for _, k := range []string{"d", "b", "a", "c", "live", "forever"} {
		mustApply(t, ks, xadd(k, "1-1"), 1000)
	}
	for _, k := range []string{"d", "b", "a", "c"} {
		mustApply(t, ks, wire.Expire{Base: wire.Base{Key: k}, Ms: 2000, Relative: true}, 1000)
	}
	mustApply(t, ks, wire.Expire{Base: wire.Base{Key: "live"}, Ms: 9000, Relative: true}, 1000)
	other := xadd("x", "1-1")
	other.DB = 3
	mustApply(t, ks, other, 1000)
	mustApply(t, ks, wire.Expire{Base: wire.Base{DB: 3, Key: "x"}, Ms: 2000, Relative: true}, 1000)

	tests := []struct {
		name string
		q    wire.ExpiredKeys
		now  int64
		want []string
	}{
		{"none yet", wire.ExpiredKeys{}, 2999, nil},
		{"at the deadline, sorted", wire.ExpiredKeys{}, 3000, []string{"a", "b", "c", "d"}},
		{"limit", wire.ExpiredKeys{Limit: 2}, 3000, []string{"a", "b"}},
		{"other db", wire.ExpiredKeys{DB: 3}, 5000, []string{"x"}},
		{"later", wire.ExpiredKeys{}, 10000, []string{"a", "b", "c", "d", "live"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ks.expiredKeys(tc.q, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := res.([]string)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	// The sweep's Expired deletes them; the query then finds none.
	mustApply(t, ks, wire.Expired{Names: []string{"a", "b", "c", "d"}}, 3000)
	if res, _ := ks.expiredKeys(wire.ExpiredKeys{}, 3000); len(res.([]string)) != 0 {
		t.Fatalf("after Expired: %q", res)
	}
}
