package observe

import (
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

func TestWebServerGroups(t *testing.T) {
	cases := []struct {
		component   string
		root, child string
	}{
		{ComponentLighttpd, GroupLighttpd, GroupLighttpdWorkers},
		{ComponentCaddy, GroupCaddy, GroupCaddy},
		{ComponentH2O, GroupH2O, GroupH2O},
	}
	for _, c := range cases {
		root, child := groupsOf(c.component)
		if root != c.root || child != c.child {
			t.Errorf("groupsOf(%s) = %q, %q; want %q, %q", c.component, root, child, c.root, c.child)
		}
		if IsPHPWorkers(root) || IsPHPWorkers(child) {
			t.Errorf("%s's groups count as PHP workers", c.component)
		}
		// Web servers rank before PHP and the database.
		for _, g := range []string{root, child} {
			if groupRank(g) >= groupRank(GroupFPMMaster) {
				t.Errorf("group %q ranks after php-fpm", g)
			}
		}
	}
}

func TestWebStatusWarnings(t *testing.T) {
	light := func(over, died int64) *results.LighttpdStatus {
		return &results.LighttpdStatus{BusyServers: 4, FastCGIOverloaded: over, FastCGIDied: died}
	}
	reqs := func(accesses, fcgi int64) *results.LighttpdStatus {
		return &results.LighttpdStatus{TotalAccesses: accesses, FastCGIRequests: fcgi}
	}
	h2o := func(conns, e502, e503 int64) *results.H2OStatus {
		return &results.H2OStatus{Connections: conns, MaxConnections: 16, Errors502: e502, Errors503: e503}
	}
	for _, tc := range []struct {
		name    string
		samples []results.Sample
		want    []string // parts, one per warning
	}{
		{"lighttpd overloaded during the window", []results.Sample{{Lighttpd: light(2, 0)}, {Lighttpd: light(9, 1)}},
			[]string{"lighttpd could not connect to php-fpm 8 times"}},
		{"lighttpd counters steady", []results.Sample{{Lighttpd: light(5, 0)}, {Lighttpd: light(5, 0)}}, nil},
		{"lighttpd resending", []results.Sample{{Lighttpd: reqs(100, 100)}, {Lighttpd: reqs(900, 4000)}, {Lighttpd: reqs(2600, 12000)}},
			[]string{"lighttpd sent 11900 FastCGI requests for 2500 client requests"}},
		{"lighttpd's accesses a second behind", []results.Sample{{Lighttpd: reqs(100, 100)}, {Lighttpd: reqs(100, 800)}, {Lighttpd: reqs(1500, 1500)}}, nil},
		{"lighttpd workers answering in turn", []results.Sample{{Lighttpd: reqs(5000, 5000)}, {Lighttpd: reqs(100, 400)}, {Lighttpd: reqs(5100, 5100)}}, nil},
		{"one lighttpd sample", []results.Sample{{Lighttpd: light(5, 0)}}, nil},
		{"h2o 502s", []results.Sample{{H2O: h2o(3, 0, 0)}, {H2O: h2o(3, 40, 2)}},
			[]string{"h2o answered 42 requests with 502 or 503 itself"}},
		{"h2o at max-connections", []results.Sample{{H2O: h2o(15, 0, 0)}, {H2O: h2o(2, 0, 0)}},
			[]string{"h2o held its max-connections (16) in 1 samples"}},
		{"nothing read", []results.Sample{{}, {}}, nil},
	} {
		got := webStatusWarnings(tc.samples)
		if len(got) != len(tc.want) || !slices.EqualFunc(got, tc.want, func(g, w string) bool { return strings.Contains(g, w) }) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
