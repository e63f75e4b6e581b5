package search_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/decide/search/sim"
	"github.com/phptune/phptune/internal/model/knob"
)

func serverStart(t *testing.T, server string) knob.Config {
	t.Helper()
	c := knob.Defaults()
	if err := c.Set(knob.ServerKnob, server); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPoolPerServer: the pool is php-fpm's where php-fpm runs and Apache's
// prefork children with mod_php, kept within Apache's rules.
func TestPoolPerServer(t *testing.T) {
	for _, tc := range []struct {
		server, pm string
		n          int
		want       map[string]string
		err        string
	}{
		{knob.ApacheEventFPM, "static", 12, map[string]string{"pm": "static", "pm.max_children": "12", "apache.max_request_workers": "150"}, ""},
		{knob.ApachePreforkModPHP, "static", 12, map[string]string{"apache.max_request_workers": "12", "apache.prefork.start_servers": "12",
			"apache.prefork.min_spare_servers": "12", "apache.prefork.max_spare_servers": "13", "apache.prefork.server_limit": "256", "pm": "dynamic", "pm.max_children": "5"}, ""},
		{knob.ApachePreforkModPHP, "static", 400, map[string]string{"apache.max_request_workers": "400", "apache.prefork.server_limit": "400"}, ""},
		{knob.ApachePreforkModPHP, "dynamic", 20, map[string]string{"apache.max_request_workers": "20", "apache.prefork.min_spare_servers": "5",
			"apache.prefork.max_spare_servers": "15", "apache.prefork.start_servers": "10"}, ""},
		{knob.ApachePreforkModPHP, "dynamic", 1, map[string]string{"apache.max_request_workers": "1", "apache.prefork.min_spare_servers": "1",
			"apache.prefork.max_spare_servers": "2", "apache.prefork.start_servers": "1"}, ""},
		{knob.ApachePreforkModPHP, "ondemand", 4, nil, "runs no php-fpm"},
	} {
		got, err := search.Pool(serverStart(t, tc.server), tc.pm, tc.n)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s pm=%s n=%d: error %v, want %q", tc.server, tc.pm, tc.n, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s pm=%s n=%d: %v", tc.server, tc.pm, tc.n, err)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s pm=%s n=%d: %s=%s, want %s", tc.server, tc.pm, tc.n, k, got[k], v)
			}
		}
		if int(got.PHPWorkers()) != tc.n {
			t.Errorf("%s: PHPWorkers %d, want %d", tc.server, got.PHPWorkers(), tc.n)
		}
	}
}

// TestFitConnectionsPerServer: only the server's own knobs are raised; the
// event MPM gets threads for every connection in whole children.
func TestFitConnectionsPerServer(t *testing.T) {
	ev := search.FitConnections(serverStart(t, knob.ApacheEventFPM), 420)
	if err := ev.Validate(); err != nil {
		t.Fatalf("event at 420 connections: %v", err)
	}
	if ev["apache.max_request_workers"] != "425" || ev["apache.event.server_limit"] != "17" || ev["listen.backlog"] != "511" {
		t.Errorf("event at 420: max_request_workers %s server_limit %s listen.backlog %s", ev["apache.max_request_workers"], ev["apache.event.server_limit"], ev["listen.backlog"])
	}
	if ev["nginx.worker_connections"] != knob.Defaults()["nginx.worker_connections"] {
		t.Errorf("nginx's knob raised for Apache: %s", ev["nginx.worker_connections"])
	}
	pf := search.FitConnections(serverStart(t, knob.ApachePreforkModPHP), 2000)
	if err := pf.Validate(); err != nil {
		t.Fatalf("prefork at 2000 connections: %v", err)
	}
	for _, c := range []struct {
		server, knob, want string
		conns              int
	}{
		{knob.LighttpdFPM, "lighttpd.max_connections", "1365", 1000},
		{knob.LighttpdFPM, "lighttpd.max_connections", "2016", 2000},
		{knob.LighttpdFPM, "lighttpd.listen_backlog", "2048", 2000},
		{knob.LighttpdFPM, "lighttpd.max_connections", "21845", 30000},
		{knob.H2OFPM, "h2o.max_connections", "1024", 1000},
		{knob.H2OFPM, "h2o.max_connections", "2016", 2000},
	} {
		got := search.FitConnections(serverStart(t, c.server), c.conns)
		if err := got.Validate(); err != nil {
			t.Fatalf("%s at %d connections: %v", c.server, c.conns, err)
		}
		if got[c.knob] != c.want || got["nginx.worker_connections"] != knob.Defaults()["nginx.worker_connections"] {
			t.Errorf("%s at %d connections: %s = %s, want %s (changes %v)", c.server, c.conns, c.knob, got[c.knob], c.want, knob.Diff(knob.Defaults(), got))
		}
	}
	ng := search.FitConnections(knob.Defaults(), 2000)
	if ng["listen.backlog"] != "2048" || ng["nginx.worker_connections"] != "4064" {
		t.Errorf("nginx at 2000: %v", knob.Diff(knob.Defaults(), ng))
	}
}

func TestChallengesFor(t *testing.T) {
	names := func(cs []search.Challenge) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	if got, want := names(search.ChallengesFor(knob.NginxFPM, true)), names(slices.Concat(search.DefaultChallenges, search.WriteChallenges)); !slices.Equal(got, want) {
		t.Errorf("nginx-fpm: %v, want %v", got, want)
	}
	ev := names(search.ChallengesFor(knob.ApacheEventFPM, false))
	pf := names(search.ChallengesFor(knob.ApachePreforkModPHP, false))
	for _, want := range []string{"pm=dynamic", "listen=tcp", "apache.keepalive=off", "pm.max_requests=1000"} {
		if !slices.Contains(ev, want) {
			t.Errorf("event lacks %s: %v", want, ev)
		}
	}
	for _, want := range []string{"apache.keepalive=off", "prefork.spares=debian", "apache.max_connections_per_child=1000", "opcache.validate_timestamps=off"} {
		if !slices.Contains(pf, want) {
			t.Errorf("prefork lacks %s: %v", want, pf)
		}
	}
	for _, no := range []string{"pm=dynamic", "pm=ondemand", "listen=tcp", "pm.max_requests=1000"} {
		if slices.Contains(pf, no) {
			t.Errorf("prefork + mod_php runs no php-fpm, yet challenges %s", no)
		}
	}
	if slices.Contains(ev, "prefork.spares=debian") {
		t.Errorf("event challenged with prefork's spares: %v", ev)
	}
}

// modPHP is the io page behind prefork + mod_php: a child is a PHP worker,
// larger than php-fpm's (Apache's modules and scoreboard besides PHP).
func modPHP() sim.Workload {
	w := sim.IOWait()
	w.Name, w.WorkerB, w.OtherB, w.KeepAliveOffCost = "io-modphp", 20*mib, 200*mib, 0.05
	return w
}

// TestDomainSizesApache: the search sizes what holds PHP's concurrency,
// php-fpm's pool behind event, Apache's children with mod_php, and every
// candidate is valid for its server.
func TestDomainSizesApache(t *testing.T) {
	for _, tc := range []struct {
		server     string
		w          sim.Workload
		conns      int
		budget     int64
		minW, maxW int
	}{
		{knob.ApacheEventFPM, sim.IOWait(), 50, 0, 30, 50},
		{knob.ApachePreforkModPHP, modPHP(), 50, 0, 30, 50},
		// 200 MiB + 20 MiB per child: 720 MiB holds 26 children.
		{knob.ApachePreforkModPHP, modPHP(), 50, 720 * mib, 20, 26},
		{knob.ApachePreforkModPHP, sim.CPUBound(), 20, 0, 1, 6},
	} {
		t.Run(tc.server+"/"+tc.w.Name, func(t *testing.T) {
			start := serverStart(t, tc.server)
			o := search.Options{Start: start, Conns: tc.conns, Cores: 2}
			o.Limits.MaxErrorRate = 0.001
			o.Limits.MemoryBudgetB = tc.budget
			d := domain(t, o)
			st := sim.New(tc.w, 7)
			drive(t, d, st)
			rec := d.Recommend()
			if rec.Config.Server() != tc.server {
				t.Fatalf("recommendation runs %s", rec.Config.Server())
			}
			n := int(rec.Config.PHPWorkers())
			t.Logf("%s: %d workers (knee %d), %.0f rps, predicted %d MiB; decisions %v; notes %q", tc.server, n, rec.Knee, rec.ThroughputRPS, rec.PredictedMemB>>20, decisions(rec), rec.Notes)
			if n < tc.minW || n > tc.maxW {
				t.Errorf("%d workers, want %d..%d", n, tc.minW, tc.maxW)
			}
			if tc.budget > 0 && tc.w.Memory(rec.Config, tc.conns) > tc.budget {
				t.Errorf("true memory %d MiB over the %d MiB budget", tc.w.Memory(rec.Config, tc.conns)>>20, tc.budget>>20)
			}
			if want := tc.w.OtherB + int64(n)*tc.w.WorkerB; rec.PredictedMemB < want {
				t.Errorf("predicted %d MiB, below %d workers' worth %d MiB", rec.PredictedMemB>>20, n, want>>20)
			}
			for _, dec := range rec.Decisions {
				if tc.server == knob.ApachePreforkModPHP && strings.HasPrefix(dec.Name, "pm") {
					t.Errorf("php-fpm's %s challenged on mod_php", dec.Name)
				}
			}
			if !slices.ContainsFunc(rec.Decisions, func(d search.Decision) bool { return d.Name == "apache.keepalive=off" }) {
				t.Errorf("KeepAlive was not challenged: %v", decisions(rec))
			}
			keepNote := slices.ContainsFunc(rec.Notes, func(n string) bool { return strings.Contains(n, "with prefork and KeepAlive on") })
			if want := tc.server == knob.ApachePreforkModPHP && n < tc.conns; keepNote != want {
				t.Errorf("KeepAlive note %v, want %v (%d workers, %d connections): %q", keepNote, want, n, tc.conns, rec.Notes)
			}
			if tc.server == knob.ApachePreforkModPHP {
				if rec.Config["pm.max_children"] != knob.Defaults()["pm.max_children"] {
					t.Errorf("mod_php recommendation changed pm.max_children to %s", rec.Config["pm.max_children"])
				}
			} else if rec.Config.Int("apache.max_request_workers") < int64(tc.conns) {
				t.Errorf("event's MaxRequestWorkers %s below the %d connections", rec.Config["apache.max_request_workers"], tc.conns)
			}
		})
	}
}

func decisions(r search.Recommendation) []string {
	var out []string
	for _, d := range r.Decisions {
		s := d.Name + ":" + d.Verdict
		if d.Skipped != "" {
			s = d.Name + ": skipped " + d.Skipped
		}
		out = append(out, s)
	}
	return out
}
