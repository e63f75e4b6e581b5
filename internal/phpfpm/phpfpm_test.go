package phpfpm

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/knob"
)

func TestRenderPool(t *testing.T) {
	cases := []struct {
		name    string
		set     []string
		want    []string
		notWant []string
	}{
		{"distro default", nil,
			[]string{"pm = dynamic\n", "pm.max_children = 5\n", "pm.start_servers = 2\n", "pm.min_spare_servers = 1\n", "pm.max_spare_servers = 3\n", "listen.mode = 0600\n", "listen.backlog = 511\n"},
			[]string{"user =", "pm.process_idle_timeout"}},
		{"static", []string{"pm=static", "pm.max_children=48", "pm.max_requests=2000"},
			[]string{"pm = static\n", "pm.max_children = 48\n", "pm.max_requests = 2000\n"},
			[]string{"pm.start_servers", "spare"}},
		{"ondemand over tcp", []string{"pm=ondemand", "listen=tcp", "pm.process_idle_timeout=30"},
			[]string{"pm = ondemand\n", "pm.process_idle_timeout = 30s\n", "listen.allowed_clients = 127.0.0.1\n", "listen = 127.0.0.1:9000\n"},
			[]string{"listen.mode"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := knob.Defaults().Apply(c.set)
			if err != nil {
				t.Fatal(err)
			}
			listen := "/lab/run/php-fpm.sock"
			if cfg["listen"] == "tcp" {
				listen = "127.0.0.1:9000"
			}
			got := RenderPool(cfg, Paths{Listen: listen, StatusPath: "/fpm-status"})
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("pool lacks %q:\n%s", w, got)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(got, w) {
					t.Errorf("pool has %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestRenderIni(t *testing.T) {
	cfg, _ := knob.Defaults().Apply([]string{"opcache.validate_timestamps=off", "opcache.jit_buffer_size=64M", "opcache.jit=function"})
	got := RenderIni(cfg)
	for _, w := range []string{"opcache.validate_timestamps = 0\n", "opcache.enable = 1\n", "opcache.jit_buffer_size = 64M\n", "opcache.jit = function\n", "realpath_cache_size = 4M\n"} {
		if !strings.Contains(got, w) {
			t.Errorf("ini lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "pm.") || strings.Contains(got, "nginx") {
		t.Errorf("ini carries other components' knobs:\n%s", got)
	}
}

func TestCheckSocketPath(t *testing.T) {
	if err := CheckSocketPath("/var/lib/phptune/labs/x/run/php-fpm.sock"); err != nil {
		t.Error(err)
	}
	if err := CheckSocketPath("/" + strings.Repeat("d", 120) + "/php-fpm.sock"); err == nil || !strings.Contains(err.Error(), "PHPTUNE_HOME") {
		t.Errorf("long path not refused helpfully: %v", err)
	}
}
