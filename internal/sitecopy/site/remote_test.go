package site

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

// fakeLookup resolves names from a table, for the length of a test.
func fakeLookup(t testing.TB, table map[string][]string) {
	t.Helper()
	old := lookupHost
	lookupHost = func(_ context.Context, name string) ([]netip.Addr, error) {
		addrs, ok := table[strings.ToLower(name)]
		if !ok {
			return nil, errors.New("no such host")
		}
		var out []netip.Addr
		for _, a := range addrs {
			out = append(out, netip.MustParseAddr(a))
		}
		return out, nil
	}
	t.Cleanup(func() { lookupHost = old })
}

var remoteTable = map[string][]string{
	"db.internal":    {"10.213.0.2"},
	"dual.internal":  {"2001:db8::2", "10.0.0.2"},
	"v6.internal":    {"2001:db8::3"},
	"local-db":       {"127.0.1.1"},
	"meta.internal":  {"169.254.169.254"},
	"empty.internal": {},
}

func TestResolveHost(t *testing.T) {
	fakeLookup(t, remoteTable)
	cases := []struct {
		host, want, err string
	}{
		{"10.213.0.2", "10.213.0.2", ""},
		{"[2001:db8::9]", "2001:db8::9", ""},
		{"::ffff:10.1.1.1", "10.1.1.1", ""},
		{"db.internal", "10.213.0.2", ""},
		{"DB.internal", "10.213.0.2", ""},
		{"dual.internal", "10.0.0.2", ""},
		{"v6.internal", "2001:db8::3", ""},
		{"local-db", "127.0.1.1", ""},
		{"0.0.0.0", "", "unspecified"},
		{"meta.internal", "", "link-local"},
		{"nowhere.internal", "", "does not resolve"},
		{"empty.internal", "", "no address"},
		{"a b", "", "neither an IP address nor a host name"},
		{"", "", "neither"},
	}
	for _, c := range cases {
		got, err := resolveHost(c.host)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("resolveHost(%q) = %v, %v; want an error containing %q", c.host, got, err, c.err)
		case c.err == "" && (err != nil || got.String() != c.want):
			t.Errorf("resolveHost(%q) = %v, %v; want %s", c.host, got, err, c.want)
		}
	}
}

func TestFindRemoteDB(t *testing.T) {
	fakeLookup(t, remoteTable)
	cases := []struct {
		addr     string
		done     bool
		endpoint Endpoint
		ip, name string
		how, err string // parts of How and Error
	}{
		{"10.213.0.2:3306", true, Endpoint{"remote", "10.213.0.2:3306"}, "10.213.0.2", "", "another machine: the copy connects to 10.213.0.2:3306", ""},
		{"db.internal:3307", true, Endpoint{"remote", "db.internal:3307"}, "10.213.0.2", "db.internal", "db.internal resolves to 10.213.0.2 on this host", ""},
		{"local-db:3306", false, Endpoint{"tcp", "127.0.1.1:3306"}, "127.0.1.1", "local-db", "", ""},
		{"nowhere.internal:3306", true, Endpoint{"remote", "nowhere.internal:3306"}, "", "", "", "does not resolve"},
		{"224.0.0.1:3306", true, Endpoint{"remote", "224.0.0.1:3306"}, "", "", "", "multicast"},
	}
	for _, c := range cases {
		d := &DBTarget{Endpoint: Endpoint{"remote", c.addr}}
		done := findRemoteDB(d)
		if done != c.done || d.Endpoint != c.endpoint || d.IP != c.ip || d.Name != c.name || !strings.Contains(d.How, c.how) || !strings.Contains(d.Error, c.err) || (c.err == "") != (d.Error == "") {
			t.Errorf("findRemoteDB(%s) = %v, %+v", c.addr, done, d)
		}
		if c.done && c.err == "" && d.ServerPID != 0 {
			t.Errorf("findRemoteDB(%s): a server pid %d for another machine", c.addr, d.ServerPID)
		}
	}
}

func TestFindRemote(t *testing.T) {
	fakeLookup(t, remoteTable)
	s := &Site{Host: "site.test", Vhost: Vhost{Names: []string{"site.test", "www.site.test"}},
		DB: &DBTarget{Endpoint: Endpoint{"remote", "db.internal:3306"}, IP: "10.213.0.2", Name: "db.internal"},
		Caches: []Cache{
			{Kind: "redis", Addr: "tcp:DB.internal:6379"},
			{Kind: "redis", Addr: "tcp:127.0.0.1:6380"},
			{Kind: "memcached", Addr: "tcp:10.9.0.5:11211"},
			{Kind: "memcached", Addr: "tcp:localhost:11212"},
			{Kind: "redis", Addr: "tcp:www.site.test:6379"},
			{Kind: "redis", Addr: "unix:/run/redis/redis.sock"},
			{Kind: "redis", Addr: "tcp:nowhere.internal:6379"},
			{Kind: "memcached", Addr: "tcp:local-db:11211"},
		}}
	s.findRemote()
	want := []RemoteHost{
		{Name: "db.internal", IP: "10.213.0.2", For: []string{"database", "redis"}},
		{IP: "10.9.0.5", For: []string{"memcached"}},
		{Name: "nowhere.internal", For: []string{"redis"}, Error: "nowhere.internal does not resolve on this host: no such host"},
		{Name: "local-db", IP: "127.0.1.1", For: []string{"memcached"}},
	}
	if !reflect.DeepEqual(s.Remote, want) {
		t.Errorf("Remote = %+v\nwant %+v", s.Remote, want)
	}
	for host, ip := range map[string]string{"db.internal": "10.213.0.2", "10.9.0.5": "10.9.0.5", "nowhere.internal": "", "other": ""} {
		if got := s.RemoteIP(host); got != ip {
			t.Errorf("RemoteIP(%s) = %q, want %q", host, got, ip)
		}
	}
	var lines []string
	writeRemote(func(f string, a ...any) { lines = append(lines, f) }, s.Remote)
	if len(lines) != len(want) {
		t.Errorf("writeRemote wrote %d lines, want %d", len(lines), len(want))
	}
}

// FuzzResolveHost: whatever the configuration writes as a host, an
// address resolveHost accepts is one a seal can stand in for.
func FuzzResolveHost(f *testing.F) {
	fakeLookup(f, remoteTable)
	for _, s := range []string{"10.213.0.2", "db.internal", "[::1]", "0.0.0.0", "fe80::1%eth0", "meta.internal", "a..b", "::ffff:224.0.0.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		a, err := resolveHost(host)
		if err != nil {
			return
		}
		if !a.IsValid() || a.IsUnspecified() || a.IsMulticast() || a.IsLinkLocalUnicast() || a.Zone() != "" || a.Is4In6() {
			t.Fatalf("resolveHost(%q) = %v, which a seal cannot stand in for", host, a)
		}
	})
}
