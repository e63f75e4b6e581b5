package knob

import (
	"errors"
	"strings"
	"testing"
)

func TestServerKnobs(t *testing.T) {
	cases := []struct {
		name    string
		set     []string
		wantErr string // substring; "" means valid
	}{
		{"default is nginx", nil, ""},
		{"apache event defaults", []string{"server=apache-event-fpm"}, ""},
		{"apache prefork defaults", []string{"server=apache-prefork-modphp"}, ""},
		{"unknown server", []string{"server=iis"}, "not one of the choices; valid: nginx-fpm|apache-event-fpm|apache-prefork-modphp|lighttpd-fpm|caddy-fpm|h2o-fpm"},
		{"lighttpd defaults", []string{"server=lighttpd-fpm"}, ""},
		{"caddy defaults", []string{"server=caddy-fpm"}, ""},
		{"h2o defaults", []string{"server=h2o-fpm"}, ""},
		{"lighttpd knobs", []string{"server=lighttpd-fpm", "lighttpd.max_worker=2", "lighttpd.max_connections=4096", "lighttpd.max_keep_alive_requests=0", "pm=static", "pm.max_children=8"}, ""},
		{"caddy knobs", []string{"server=caddy-fpm", "caddy.gomaxprocs=2", "caddy.lb_try_duration=500", "caddy.access_log=on", "listen=tcp"}, ""},
		{"caddy gomaxprocs auto", []string{"server=caddy-fpm", "caddy.gomaxprocs=auto"}, ""},
		{"h2o knobs", []string{"server=h2o-fpm", "h2o.num_threads=4", "h2o.fastcgi_keepalive=2000", "h2o.access_log=off", "pm.max_children=20"}, ""},
		{"h2o threads range", []string{"server=h2o-fpm", "h2o.num_threads=0"}, `value "0" is out of range; valid: auto|1..256 (default auto)`},
		{"lighttpd connections range", []string{"server=lighttpd-fpm", "lighttpd.max_connections=30000"}, "valid: 16..21845"},
		{"lighttpd knob refused under nginx", []string{"lighttpd.max_worker=2"},
			"knob lighttpd.max_worker=2 belongs to server lighttpd-fpm, but this configuration runs server=nginx-fpm; set server=lighttpd-fpm, or leave lighttpd.max_worker at its default 0"},
		{"caddy knob refused under h2o", []string{"server=h2o-fpm", "caddy.gomaxprocs=2"}, "knob caddy.gomaxprocs=2 belongs to server caddy-fpm, but this configuration runs server=h2o-fpm"},
		{"h2o knob refused under lighttpd", []string{"server=lighttpd-fpm", "h2o.num_threads=2"}, "knob h2o.num_threads=2 belongs to server h2o-fpm, but this configuration runs server=lighttpd-fpm"},
		{"nginx knob refused under caddy", []string{"server=caddy-fpm", "nginx.keepalive_timeout=0"}, "belongs to server nginx-fpm, but this configuration runs server=caddy-fpm"},
		{"apache knob refused under h2o", []string{"server=h2o-fpm", "apache.keepalive=off"}, "belongs to server apache-event-fpm or apache-prefork-modphp, but this configuration runs server=h2o-fpm"},
		{"fpm rules apply behind lighttpd", []string{"server=lighttpd-fpm", "pm.max_children=2"}, "pm.max_spare_servers=3 is greater than pm.max_children=2"},
		{"nginx knob refused under apache", []string{"server=apache-event-fpm", "nginx.worker_processes=4"},
			"knob nginx.worker_processes=4 belongs to server nginx-fpm, but this configuration runs server=apache-event-fpm; set server=nginx-fpm, or leave nginx.worker_processes at its default auto"},
		{"nginx knob at its default is irrelevant", []string{"server=apache-event-fpm", "nginx.worker_processes=auto"}, ""},
		{"fpm knob refused with mod_php", []string{"server=apache-prefork-modphp", "pm.max_children=20"},
			"knob pm.max_children=20 belongs to server nginx-fpm, apache-event-fpm, lighttpd-fpm, caddy-fpm or h2o-fpm, but this configuration runs server=apache-prefork-modphp (PHP runs inside Apache's children"},
		{"fpm knob kept with apache event", []string{"server=apache-event-fpm", "pm=static", "pm.max_children=20"}, ""},
		{"fpm rules skipped with mod_php", []string{"server=apache-prefork-modphp", "pm.max_children=5"}, ""},
		{"apache knob refused under nginx", []string{"apache.max_request_workers=50"},
			"knob apache.max_request_workers=50 belongs to server apache-event-fpm or apache-prefork-modphp, but this configuration runs server=nginx-fpm"},
		{"event knob refused under prefork", []string{"server=apache-prefork-modphp", "apache.event.threads_per_child=50", "apache.max_request_workers=100"},
			"apache.event.threads_per_child=50 belongs to server apache-event-fpm"},
		{"php knobs apply to every server", []string{"server=apache-prefork-modphp", "opcache.validate_timestamps=off", "mariadb.max_connections=300"}, ""},
		{"event workers multiple of threads", []string{"server=apache-event-fpm", "apache.max_request_workers=160"}, "not a multiple of apache.event.threads_per_child=25; Apache lowers it to 150"},
		{"event workers above limit", []string{"server=apache-event-fpm", "apache.max_request_workers=500"}, "raise server_limit to at least 20"},
		{"event workers within raised limit", []string{"server=apache-event-fpm", "apache.max_request_workers=500", "apache.event.server_limit=20"}, ""},
		{"event workers below a child", []string{"server=apache-event-fpm", "apache.max_request_workers=10"}, "below apache.event.threads_per_child=25"},
		{"event spare threads", []string{"server=apache-event-fpm", "apache.event.max_spare_threads=40"}, "below min_spare_threads + threads_per_child = 50"},
		{"prefork workers above limit", []string{"server=apache-prefork-modphp", "apache.max_request_workers=300"}, "above apache.prefork.server_limit=256"},
		{"prefork spares", []string{"server=apache-prefork-modphp", "apache.prefork.max_spare_servers=5"}, "is not above min_spare_servers=5"},
		{"prefork small pool", []string{"server=apache-prefork-modphp", "apache.max_request_workers=8", "apache.prefork.start_servers=2", "apache.prefork.min_spare_servers=1", "apache.prefork.max_spare_servers=3"}, ""},
		{"distro PHP with mod_php", []string{"server=apache-prefork-modphp", "php.build=distro"}, ""},
		{"unit defaults", []string{"server=unit"}, ""},
		{"unit static pool", []string{"server=unit", "unit.processes=20"}, ""},
		{"unit dynamic pool", []string{"server=unit", "unit.pm=dynamic", "unit.processes=8", "unit.spare_processes=2"}, ""},
		{"unit spares above max", []string{"server=unit", "unit.pm=dynamic", "unit.processes=2", "unit.spare_processes=3"}, "unit.spare_processes=3 is greater than unit.processes=2"},
		{"spares ignored when static", []string{"server=unit", "unit.processes=2", "unit.spare_processes=3"}, ""},
		{"fpm knob refused with unit", []string{"server=unit", "pm.max_children=20"}, "(PHP runs in Unit's application processes there"},
		{"unit knob refused with nginx", []string{"unit.processes=4"}, "knob unit.processes=4 belongs to server unit, but this configuration runs server=nginx-fpm"},
		{"apache knob refused with unit", []string{"server=unit", "apache.keepalive=off"}, "belongs to server apache-event-fpm or apache-prefork-modphp, but this configuration runs server=unit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Defaults().Apply(c.set)
			if err == nil {
				err = cfg.Validate()
			}
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.wantErr != "" && err == nil:
				t.Fatalf("want error containing %q, got none", c.wantErr)
			case c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr):
				t.Fatalf("error %q does not contain %q", err, c.wantErr)
			}
		})
	}
}

// Unit and mod_php run Debian's libphp8.2 (embed SAPI, Apache module):
// a php-fpm build of phptune's cannot be theirs.
func TestBuildRefusedWithoutFPM(t *testing.T) {
	old := BuildValidator
	BuildValidator = func(v string) (string, error) { return v, nil }
	defer func() { BuildValidator = old }()
	for server, want := range map[string]string{UnitPHP: "embed SAPI", ApachePreforkModPHP: "Apache module", NginxFPM: ""} {
		cfg, err := Defaults().Apply([]string{"server=" + server, "php.build=0123456789ab"})
		if err != nil {
			t.Fatal(err)
		}
		err = cfg.Validate()
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("server=%s php.build=ID: %v, want %q", server, err, want)
		}
	}
}

func TestServerErrorIsTyped(t *testing.T) {
	cfg, _ := Defaults().Apply([]string{"server=apache-event-fpm", "nginx.keepalive_timeout=10"})
	var se *ServerError
	if err := cfg.Validate(); !errors.As(err, &se) || se.Knob.Name != "nginx.keepalive_timeout" || se.Server != ApacheEventFPM {
		t.Fatalf("want a *ServerError for nginx.keepalive_timeout, got %v", err)
	}
}

func TestServerRelevance(t *testing.T) {
	cases := []struct {
		server, knob string
		want         bool
	}{
		{NginxFPM, "nginx.worker_processes", true},
		{NginxFPM, "apache.max_request_workers", false},
		{ApacheEventFPM, "nginx.worker_processes", false},
		{ApacheEventFPM, "apache.event.threads_per_child", true},
		{ApacheEventFPM, "apache.prefork.start_servers", false},
		{ApacheEventFPM, "pm.max_children", true},
		{ApachePreforkModPHP, "pm.max_children", false},
		{ApachePreforkModPHP, "listen", false},
		{ApachePreforkModPHP, "apache.prefork.start_servers", true},
		{ApachePreforkModPHP, "opcache.enable", true},
		{ApachePreforkModPHP, "server", true},
		{UnitPHP, "unit.processes", true},
		{UnitPHP, "pm.max_children", false},
		{UnitPHP, "nginx.worker_processes", false},
		{UnitPHP, "opcache.enable", true},
		{UnitPHP, "mariadb.max_connections", true},
		{NginxFPM, "unit.processes", false},
		{LighttpdFPM, "lighttpd.max_worker", true},
		{LighttpdFPM, "pm.max_children", true},
		{LighttpdFPM, "nginx.worker_processes", false},
		{LighttpdFPM, "h2o.num_threads", false},
		{CaddyFPM, "caddy.gomaxprocs", true},
		{CaddyFPM, "listen", true},
		{CaddyFPM, "apache.keepalive", false},
		{H2OFPM, "h2o.fastcgi_keepalive", true},
		{H2OFPM, "caddy.access_log", false},
		{H2OFPM, "opcache.enable", true},
		{NginxFPM, "lighttpd.access_log", false},
		{ApachePreforkModPHP, "h2o.num_threads", false},
	}
	for _, c := range cases {
		cfg := Defaults()
		cfg[ServerKnob] = c.server
		if got := cfg.Relevant(c.knob); got != c.want {
			t.Errorf("server=%s: Relevant(%s) = %v, want %v", c.server, c.knob, got, c.want)
		}
	}
}

// A configuration stored before the server knob (and Apache's knobs)
// existed is nginx's, valid, and differs from the defaults in nothing.
func TestConfigWithoutServerKnobs(t *testing.T) {
	old := Defaults()
	for name := range old {
		if k := byName[name]; k.Component == Apache || k.Component == Server || k.Component == Lighttpd || k.Component == Caddy || k.Component == H2O {
			delete(old, name)
		}
	}
	if err := old.Validate(); err != nil {
		t.Fatalf("an older configuration does not validate: %v", err)
	}
	if old.Server() != NginxFPM {
		t.Fatalf("Server() = %q, want nginx-fpm", old.Server())
	}
	if d := Diff(Defaults(), old); len(d) != 0 {
		t.Fatalf("Diff with the defaults = %v, want none", d)
	}
	// A mod_php configuration needs no php-fpm knob.
	modphp := Defaults()
	modphp[ServerKnob] = ApachePreforkModPHP
	for name := range modphp {
		if k := byName[name]; k.Component == PHPFPM || k.Component == Nginx {
			delete(modphp, name)
		}
	}
	if err := modphp.Validate(); err != nil {
		t.Fatalf("a mod_php configuration without php-fpm's knobs does not validate: %v", err)
	}
}

// TestWorkersKnobPerServer: every server in front of php-fpm sizes PHP
// with pm.max_children; mod_php with MaxRequestWorkers, Unit with its
// application processes.
func TestWorkersKnobPerServer(t *testing.T) {
	for _, s := range Servers {
		want := "pm.max_children"
		switch s {
		case ApachePreforkModPHP:
			want = "apache.max_request_workers"
		case UnitPHP:
			want = "unit.processes"
		}
		if got := WorkersKnob(s); got != want {
			t.Errorf("WorkersKnob(%s) = %s, want %s", s, got, want)
		}
		if RunsFPM(s) != (s != ApachePreforkModPHP && s != UnitPHP) {
			t.Errorf("RunsFPM(%s) = %v", s, RunsFPM(s))
		}
	}
}

func TestUnitThreadsNeedZTS(t *testing.T) {
	for _, tt := range []struct {
		set  []string
		want string
	}{
		{[]string{"server=unit", "unit.threads=1"}, ""},
		{[]string{"server=unit", "unit.threads=4"}, "unit.threads=4: Debian's PHP embed library (libphp8.2-embed) is built without thread safety"},
		{[]string{"unit.threads=4"}, "belongs to server unit"},
	} {
		c, err := Defaults().Apply(tt.set)
		if err != nil {
			t.Fatal(err)
		}
		err = c.Validate()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%v: %v, want %q", tt.set, err, tt.want)
		}
	}
}
