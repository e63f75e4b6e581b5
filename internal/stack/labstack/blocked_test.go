package labstack

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/seal"
)

func TestBlockedDelta(t *testing.T) {
	a := func(proto, dest string, n uint64) seal.Attempt {
		return seal.Attempt{Proto: proto, Dest: netip.MustParseAddrPort(dest), Count: n}
	}
	cases := []struct {
		name          string
		before, after []seal.Attempt
		want          []results.Blocked
	}{
		{name: "nothing", want: nil},
		{name: "all new", after: []seal.Attempt{a("tcp", "127.0.0.1:3306", 4)},
			want: []results.Blocked{{Proto: "tcp", Dest: "127.0.0.1:3306", Count: 4}}},
		{name: "only what the run added, most first", before: []seal.Attempt{a("tcp", "127.0.0.1:3306", 4), a("tcp", "10.0.0.1:80", 1)},
			after: []seal.Attempt{a("tcp", "127.0.0.1:3306", 5), a("tcp", "10.0.0.1:80", 1), a("udp", "8.8.8.8:53", 3)},
			want:  []results.Blocked{{Proto: "udp", Dest: "8.8.8.8:53", Count: 3}, {Proto: "tcp", Dest: "127.0.0.1:3306", Count: 1}}},
		{name: "protocols apart", before: []seal.Attempt{a("tcp", "10.0.0.1:53", 2)},
			after: []seal.Attempt{a("tcp", "10.0.0.1:53", 2), a("udp", "10.0.0.1:53", 2)},
			want:  []results.Blocked{{Proto: "udp", Dest: "10.0.0.1:53", Count: 2}}},
		{name: "counters reset (a new seal) count nothing negative", before: []seal.Attempt{a("tcp", "10.0.0.1:80", 9)},
			after: []seal.Attempt{a("tcp", "10.0.0.1:80", 2)}, want: nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := BlockedDelta(c.before, c.after); !reflect.DeepEqual(got, c.want) {
				t.Errorf("BlockedDelta = %+v, want %+v", got, c.want)
			}
		})
	}
}
