package seal

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

// listed is what nft 1.0.6 (Debian 12) prints for `nft -j list table inet
// phptune_seal` after a process tried 10.255.255.1:80 once, 127.0.0.1:3306
// twice and 2001:db8::1:443 once.
const listed = `{"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}},` +
	` {"table": {"family": "inet", "name": "phptune_seal", "handle": 1}},` +
	` {"set": {"family": "inet", "name": "own4", "table": "phptune_seal", "type": ["ipv4_addr", "inet_service"], "handle": 1, "elem": [{"concat": ["127.0.0.1", 80]}]}},` +
	` {"set": {"family": "inet", "name": "out4", "table": "phptune_seal", "type": ["ipv4_addr", "inet_proto", "inet_service"], "handle": 3, "size": 65536, "elem": [` +
	`{"elem": {"val": {"concat": ["10.255.255.1", "tcp", 80]}, "counter": {"packets": 1, "bytes": 60}}},` +
	` {"elem": {"val": {"concat": ["127.0.0.1", "tcp", 3306]}, "counter": {"packets": 2, "bytes": 120}}}], "stmt": [{"counter": null}]}},` +
	` {"set": {"family": "inet", "name": "out6", "table": "phptune_seal", "type": ["ipv6_addr", "inet_proto", "inet_service"], "handle": 4, "size": 65536, "elem": [` +
	`{"elem": {"val": {"concat": ["2001:db8::1", "tcp", 443]}, "counter": {"packets": 1, "bytes": 80}}}], "stmt": [{"counter": null}]}},` +
	` {"chain": {"family": "inet", "table": "phptune_seal", "name": "output", "handle": 5}}]}`

func TestParseAttempts(t *testing.T) {
	ap := netip.MustParseAddrPort
	cases := []struct {
		name string
		in   string
		want []Attempt
		err  string
	}{
		{"table", listed, []Attempt{
			{Dest: ap("127.0.0.1:3306"), Proto: "tcp", Count: 2},
			{Dest: ap("10.255.255.1:80"), Proto: "tcp", Count: 1},
			{Dest: ap("[2001:db8::1]:443"), Proto: "tcp", Count: 1},
		}, ""},
		{"no attempts", `{"nftables": [{"set": {"name": "out4", "elem": []}}, {"set": {"name": "out6"}}]}`, nil, ""},
		{"numeric protocol", `{"nftables": [{"set": {"name": "out4", "elem": [{"elem": {"val": {"concat": ["192.0.2.1", 17, 53]}, "counter": {"packets": 3, "bytes": 1}}}]}}]}`,
			[]Attempt{{Dest: ap("192.0.2.1:53"), Proto: "udp", Count: 3}}, ""},
		{"not JSON", `nft: table not found`, nil, "nft's JSON"},
		{"no counter", `{"nftables": [{"set": {"name": "out4", "elem": [{"elem": {"val": {"concat": ["192.0.2.1", "tcp", 53]}}}]}}]}`, nil, "with a counter"},
		{"bad address", `{"nftables": [{"set": {"name": "out4", "elem": [{"elem": {"val": {"concat": ["x", "tcp", 53]}, "counter": {"packets": 1}}}]}}]}`, nil, "ParseAddr"},
		{"bad port", `{"nftables": [{"set": {"name": "out6", "elem": [{"elem": {"val": {"concat": ["::1", "tcp", 70000]}, "counter": {"packets": 1}}}]}}]}`, nil, "port"},
		{"bare element", `{"nftables": [{"set": {"name": "out4", "elem": ["10.0.0.1"]}}]}`, nil, "element"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseAttempts([]byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("parseAttempts() error = %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("parseAttempts() = %v, want %v", got, c.want)
			}
		})
	}
}

// FuzzParseAttempts: any input parses or fails cleanly, and every attempt
// parsed has a valid destination and a protocol.
func FuzzParseAttempts(f *testing.F) {
	f.Add(listed)
	f.Add(`{"nftables": [{"set": {"name": "out4", "elem": [{"elem": {"val": {"concat": ["192.0.2.1", 17, 53]}, "counter": {"packets": 3}}}]}}]}`)
	f.Add(`{}`)
	f.Fuzz(func(t *testing.T, in string) {
		got, err := parseAttempts([]byte(in))
		if err != nil {
			return
		}
		for _, a := range got {
			if !a.Dest.IsValid() || a.Proto == "" {
				t.Fatalf("parseAttempts(%q) gave %+v", in, a)
			}
		}
	})
}
