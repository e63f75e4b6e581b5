package observe

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

func TestApacheGroups(t *testing.T) {
	cases := []struct {
		component   string
		root, child string
		childIsPHP  bool
	}{
		{ComponentNginx, GroupNginxMaster, GroupNginxWorkers, false},
		{ComponentApache, GroupApacheParent, GroupApacheWorkers, false},
		{ComponentApacheModPHP, GroupApacheParent, GroupApacheModPHPWorkers, true},
		{ComponentFPM, GroupFPMMaster, GroupFPMWorkers, true},
	}
	for _, c := range cases {
		root, child := groupsOf(c.component)
		if root != c.root || child != c.child {
			t.Errorf("groupsOf(%s) = %q, %q; want %q, %q", c.component, root, child, c.root, c.child)
		}
		if IsPHPWorkers(child) != c.childIsPHP {
			t.Errorf("IsPHPWorkers(%q) = %v, want %v", child, !c.childIsPHP, c.childIsPHP)
		}
	}
	// Layered as the stack is: web server, PHP, database.
	order := []string{GroupApacheParent, GroupApacheWorkers, GroupApacheModPHPWorkers, GroupMariaDB, GroupGenerator}
	for i := 1; i < len(order); i++ {
		if groupRank(order[i-1]) > groupRank(order[i]) {
			t.Errorf("group %q ranks after %q", order[i-1], order[i])
		}
	}
}

func TestApacheWarnings(t *testing.T) {
	full := func(mpm string, keep int64) *results.ApacheStatus {
		return &results.ApacheStatus{MPM: mpm, BusyWorkers: 9, IdleWorkers: 0, Slots: 10, Writing: 9 - keep + 1, KeepAlive: keep}
	}
	spare := &results.ApacheStatus{MPM: "prefork", BusyWorkers: 3, IdleWorkers: 2, Slots: 10, Writing: 4, Waiting: 2, Open: 4}
	queued := []results.ListenQueue{{Owner: ComponentApache, Queued: 6}}
	for _, tc := range []struct {
		name    string
		samples []results.Sample
		want    string // "" none
	}{
		{"prefork full and queued: the mod_php pool at its size", []results.Sample{{Apache: spare}, {Apache: full("prefork", 0), Queues: queued}},
			"Apache ran with every worker busy (10 of 10 slots) in 1 samples and up to 6 connections waited in the kernel's queue: its children are the PHP workers with mod_php, so the pool is at MaxRequestWorkers"},
		{"kept-alive connections named", []results.Sample{{Apache: full("prefork", 4), Queues: queued}},
			"up to 4 of them holding a kept-alive connection between requests"},
		{"event full", []results.Sample{{Apache: full("event", 0), Queues: queued}}, "Apache is at MaxRequestWorkers"},
		{"full without a queue: busy by design", []results.Sample{{Apache: full("prefork", 0)}}, ""},
		{"queue with spare slots", []results.Sample{{Apache: spare, Queues: queued}}, "up to 6 connections waited in Apache's accept queue"},
		{"no status read", []results.Sample{{Queues: queued}}, ""},
		{"another component's queue", []results.Sample{{Apache: full("prefork", 0), Queues: []results.ListenQueue{{Owner: ComponentFPM, Queued: 3}}}}, ""},
	} {
		got := apacheWarnings(tc.samples)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: warned %q", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestCachesAreTheStacks: a site lab's own Redis and Memcached (roots
// with ComponentRedis, ComponentMemcached) are groups of their own,
// ranked with the database, and their CPU is in the stack's per request,
// as MariaDB's is; the generator's is not.
func TestCachesAreTheStacks(t *testing.T) {
	for c, want := range map[string]string{ComponentRedis: GroupRedis, ComponentMemcached: GroupMemcached} {
		if root, child := groupsOf(c); root != want || child != want {
			t.Errorf("groupsOf(%s) = %q, %q; want %q", c, root, child, want)
		}
		if groupRank(want) != groupRank(GroupMariaDB) {
			t.Errorf("%s ranks %d, the database %d", want, groupRank(want), groupRank(GroupMariaDB))
		}
	}
	per := cpuPerRequest(cpuTotals{byGroup: map[string]float64{GroupFPMWorkers: 2, GroupMariaDB: 1, GroupRedis: 0.5, GroupMemcached: 0.5, GroupGenerator: 5, GroupOther: 3}, dtSum: 1},
		Window{Requests: 100, DurationS: 1})
	if got := per["stack"]; got < 0.0399 || got > 0.0401 {
		t.Errorf("the stack's CPU per request %v, want 0.04 (php-fpm, MariaDB, Redis and Memcached)", got)
	}
}
