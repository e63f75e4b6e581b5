package lab

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/seal"
)

// remoteSite is a site whose database is db.internal (10.213.0.2) and
// whose caches are there and at 10.9.0.5, with one host that did not
// resolve.
func remoteSite(dbAddr string) *site.Site {
	return &site.Site{DocRoot: site.DocRoot{Path: "/srv/wp"},
		DB: &site.DBTarget{Endpoint: site.Endpoint{Network: "remote", Address: dbAddr}, IP: "10.213.0.2", Name: "db.internal"},
		Caches: []site.Cache{
			{Kind: "redis", Addr: "tcp:db.internal:6379", Setting: "WP_REDIS_HOST"},
			{Kind: "memcached", Addr: "tcp:10.9.0.5:11211", Setting: "session.save_path"},
			{Kind: "redis", Addr: "tcp:nowhere.internal:6380", Setting: "REDIS_HOST"},
		},
		Remote: []site.RemoteHost{
			{Name: "db.internal", IP: "10.213.0.2", For: []string{"database", "redis"}},
			{IP: "10.9.0.5", For: []string{"memcached"}},
			{Name: "nowhere.internal", For: []string{"redis"}, Error: "nowhere.internal does not resolve on this host"},
		}}
}

func TestSiteServed(t *testing.T) {
	cases := []struct {
		name   string
		site   *site.Site
		served []ServedAddr
		dbIP   string
		notes  []string // parts of the notes, in order
	}{
		{"remote at 3306", remoteSite("db.internal:3306"),
			[]ServedAddr{{Name: "db.internal", IP: "10.213.0.2", For: []string{"database", "redis"}}, {IP: "10.9.0.5", For: []string{"memcached"}}},
			"10.213.0.2", []string{"nowhere.internal does not resolve"}},
		{"remote at 3307", remoteSite("db.internal:3307"),
			[]ServedAddr{{Name: "db.internal", IP: "10.213.0.2", For: []string{"database", "redis"}}, {IP: "10.9.0.5", For: []string{"memcached"}}},
			"", []string{"nowhere.internal", "listens on port 3306 only"}},
		{"loopback name", &site.Site{DB: &site.DBTarget{Endpoint: site.Endpoint{Network: "tcp", Address: "127.0.1.1:3306"}, IP: "127.0.1.1", Name: "local-db"},
			Remote: []site.RemoteHost{{Name: "local-db", IP: "127.0.1.1", For: []string{"database"}}}},
			[]ServedAddr{{Name: "local-db", IP: "127.0.1.1", For: []string{"database"}}}, "127.0.1.1", nil},
		{"local", &site.Site{DB: &site.DBTarget{Endpoint: site.Endpoint{Network: "unix", Address: "/run/mysqld/mysqld.sock"}}}, nil, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := siteServed(c.site); !reflect.DeepEqual(got, c.served) {
				t.Errorf("siteServed = %+v, want %+v", got, c.served)
			}
			if got := siteDBIP(c.site); got != c.dbIP {
				t.Errorf("siteDBIP = %q, want %q", got, c.dbIP)
			}
			notes := servedNotes(c.site)
			if len(notes) != len(c.notes) {
				t.Fatalf("notes %q, want %d", notes, len(c.notes))
			}
			for i, n := range c.notes {
				if !strings.Contains(notes[i], n) {
					t.Errorf("note %d %q lacks %q", i, notes[i], n)
				}
			}
		})
	}
}

func TestLabServed(t *testing.T) {
	l := &Lab{SiteNames: []string{"site.test"}, SiteDBIP: "10.213.0.2", SiteServed: []ServedAddr{
		{Name: "db.internal", IP: "10.213.0.2"}, {IP: "10.9.0.5"}, {Name: "site.test", IP: "10.1.1.1"}, {Name: "bad", IP: "x"}}}
	want := []seal.Served{
		{Name: "db.internal", Addr: netip.MustParseAddr("10.213.0.2")},
		{Addr: netip.MustParseAddr("10.9.0.5")},
		{Addr: netip.MustParseAddr("10.1.1.1")},
	}
	if got := l.sealServed(); !reflect.DeepEqual(got, want) {
		t.Errorf("sealServed = %+v, want %+v", got, want)
	}
	if got := l.dbBindAlso(); !reflect.DeepEqual(got, []string{"10.213.0.2"}) {
		t.Errorf("dbBindAlso = %v", got)
	}
	if got := l.dbOwnAlso(); !reflect.DeepEqual(got, []netip.AddrPort{netip.MustParseAddrPort("10.213.0.2:3306")}) {
		t.Errorf("dbOwnAlso = %v", got)
	}
	l.SiteDBIP = ""
	if l.dbBindAlso() != nil || l.dbOwnAlso() != nil {
		t.Error("a lab whose database is local binds another address")
	}
}

// TestRemoteCacheServers: a cache on another machine the seal answers at
// gets the lab's server at that address; one whose name did not resolve
// gets none, and is said.
func TestRemoteCacheServers(t *testing.T) {
	haveCaches(t, "redis", "memcached")
	servers, said := siteCacheServers(remoteSite("db.internal:3306"), "", "/var/lib/phptune/labs/x", []string{"site.test"}, 0)
	if len(servers) != 2 {
		t.Fatalf("servers %+v, want a Redis and a Memcached", servers)
	}
	if r := servers[0]; r.Kind != "redis" || r.Port != 6379 || !reflect.DeepEqual(r.IPs, []string{"10.213.0.2"}) {
		t.Errorf("Redis %+v", r)
	}
	if m := servers[1]; m.Kind != "memcached" || m.Port != 11211 || !reflect.DeepEqual(m.IPs, []string{"10.9.0.5"}) {
		t.Errorf("Memcached %+v", m)
	}
	if own := cacheOwnAddrs(servers); !reflect.DeepEqual(own, []netip.AddrPort{netip.MustParseAddrPort("10.213.0.2:6379"), netip.MustParseAddrPort("10.9.0.5:11211")}) {
		t.Errorf("own %v", own)
	}
	if !strings.Contains(said[0], "the lab runs its own Redis at that address") || !strings.Contains(said[2], "does not resolve") && !strings.Contains(said[2], "no cache at that address") {
		t.Errorf("said %q", said)
	}
	conf := servers[0].redisConfig("/l/cache")
	if !strings.Contains(conf, "bind 10.213.0.2\nport 6379\nprotected-mode no\n") {
		t.Errorf("Redis at another machine's address:\n%s", conf)
	}
	if args := strings.Join(servers[1].memcachedArgs("/l/m.pid"), " "); !strings.Contains(args, "-l 10.9.0.5 -p 11211") {
		t.Errorf("Memcached args %s", args)
	}
	for ips, want := range map[string]string{"127.0.0.1": "", "127.0.0.1 -::1": "", "127.0.0.1 10.0.0.1": "protected-mode no\n"} {
		if got := protectedMode(strings.Fields(ips)); got != want {
			t.Errorf("protectedMode(%s) = %q, want %q", ips, got, want)
		}
	}
}
