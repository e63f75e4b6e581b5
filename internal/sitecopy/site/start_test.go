package site

import (
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
)

// debianPool is Debian 12's pool.d/www.conf as discovery reads it.
func debianPool() *Pool {
	return &Pool{Name: "www", Listen: "unix:/run/php/php8.2-fpm.sock", User: "www-data", Group: "www-data",
		PM: map[string]string{"pm": "dynamic", "pm.max_children": "5", "pm.start_servers": "2", "pm.min_spare_servers": "1", "pm.max_spare_servers": "3"}}
}

func debianPHP() *PHPConfig {
	return &PHPConfig{Version: "8.2", Ini: "/etc/php/8.2/fpm/php.ini", Settings: map[string]Setting{
		"memory_limit":          {Value: "128M", From: "/etc/php/8.2/fpm/php.ini:435"},
		"realpath_cache_size":   {Value: "4096k", From: "/etc/php/8.2/fpm/php.ini:370"},
		"upload_max_filesize":   {Value: "2M", From: "/etc/php/8.2/fpm/php.ini:855"},
		"mysqli.default_socket": {Value: "", From: "/etc/php/8.2/fpm/php.ini:1200"},
	}}
}

// TestLiveStart maps real-looking live pools onto knobs: each case says
// the knobs that differ from Debian's defaults, the pool lines carried
// and substrings of the notes.
func TestLiveStart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		site  func() *Site
		sets  []string // knob.Config.Overrides of the start
		pool  []string
		notes []string
	}{
		{"Debian's default pool starts at the defaults",
			func() *Site { return &Site{Pool: debianPool(), PHP: debianPHP()} },
			nil, nil, nil},
		{"a static 7-child pool with opcache tweaks",
			func() *Site {
				p := debianPool()
				p.PM = map[string]string{"pm": "static", "pm.max_children": "7", "pm.max_requests": "500"}
				p.Settings = map[string]string{"listen.backlog": "1024", "request_terminate_timeout": "60s"}
				p.Overrides = map[string]string{"php_admin_value[upload_max_filesize]": "64M", "php_value[memory_limit]": "256M",
					"php_admin_value[opcache.revalidate_freq]": "60"}
				php := debianPHP()
				php.Settings["opcache.memory_consumption"] = Setting{Value: "256", From: "/etc/php/8.2/fpm/conf.d/99-site.ini:1"}
				php.Settings["opcache.validate_timestamps"] = Setting{Value: "Off", From: "/etc/php/8.2/fpm/conf.d/99-site.ini:2"}
				php.Settings["opcache.jit_buffer_size"] = Setting{Value: "64M", From: "/etc/php/8.2/fpm/conf.d/99-site.ini:3"}
				php.Settings["opcache.jit"] = Setting{Value: "1205", From: "/etc/php/8.2/fpm/conf.d/99-site.ini:4"}
				php.Settings["memory_limit"] = Setting{Value: "256M", From: "pool www (php_value[memory_limit])"}
				php.Settings["opcache.revalidate_freq"] = Setting{Value: "60", From: "pool www (php_admin_value[opcache.revalidate_freq])"}
				return &Site{Pool: p, PHP: php}
			},
			[]string{"pm=static", "pm.max_children=7", "pm.max_requests=500", "listen.backlog=1024",
				"opcache.validate_timestamps=off", "opcache.revalidate_freq=60", "opcache.memory_consumption=256",
				"opcache.jit=function", "opcache.jit_buffer_size=64M", "memory_limit=256M"},
			[]string{"php_admin_value[upload_max_filesize] = 64M", "request_terminate_timeout = 60s"},
			[]string{"php_admin_value[upload_max_filesize] = 64M: carried as-is, not tuned", "request_terminate_timeout = 60s in pool www: carried as-is"}},
		{"a pool with odd values",
			func() *Site {
				p := debianPool()
				p.Listen = "tcp:127.0.0.1:9000"
				p.PM = map[string]string{"pm": "ondemand", "pm.max_children": "100000", "pm.process_idle_timeout": "2m",
					"pm.status_path": "/status", "pm.max_spawn_rate": "64"}
				p.Settings = map[string]string{"listen.backlog": "-1", "slowlog": "/var/log/php-slow.log"}
				p.Env = []string{"APP_KEY"}
				p.Overrides = map[string]string{"php_admin_value[error_log]": "/var/log/site-php.log",
					"php_admin_value[opcache.memory_consumption]": "64", "php_value[include_path]": "$HOME/lib",
					"php_admin_value[open_basedir]": "/var/www/site:/tmp", "php_admin_value[auto_prepend_file]": "/var/www/site/waf.php"}
				php := debianPHP()
				php.Settings["memory_limit"] = Setting{Value: "-1", From: "/etc/php/8.2/fpm/php.ini:435"}
				php.Settings["opcache.memory_consumption"] = Setting{Value: "64", From: "pool www (php_admin_value[opcache.memory_consumption])"}
				php.Shadowed = map[string]Setting{"opcache.memory_consumption": {Value: "192", From: "/etc/php/8.2/fpm/php.ini:1770"}}
				php.Settings["opcache.jit"] = Setting{Value: "1235", From: "/etc/php/8.2/fpm/php.ini:1800"}
				return &Site{Pool: p, PHP: php}
			},
			[]string{"pm=ondemand", "pm.process_idle_timeout=120", "listen=tcp", "listen.backlog=65535", "opcache.memory_consumption=192"},
			[]string{"php_admin_value[auto_prepend_file] = /var/www/site/waf.php", "php_admin_value[open_basedir] = /var/www/site:/tmp"},
			[]string{"pm.max_children = 100000 in pool www: knob pm.max_children: value \"100000\" is out of range",
				"pm.status_path = /status in pool www: not carried",
				"pm.max_spawn_rate = 64 in pool www: phptune has no knob for it",
				"slowlog = /var/log/php-slow.log in pool www: not carried",
				"env[APP_KEY] in pool www: not carried",
				"php_admin_value[error_log] = /var/log/site-php.log: not carried",
				`php_value[include_path] = "$HOME/lib": not carried`,
				"memory_limit = -1 (/etc/php/8.2/fpm/php.ini:435): phptune's knob cannot express it; the lab starts with 128M",
				"opcache.memory_consumption = 64 from pool www (php_admin_value[opcache.memory_consumption]) has no effect",
				"production runs 192 (/etc/php/8.2/fpm/php.ini:1770)",
				"opcache.jit = 1235"}},
		{"a dynamic pool without start_servers gets php-fpm's own",
			func() *Site {
				p := debianPool()
				p.PM = map[string]string{"pm": "dynamic", "pm.max_children": "20", "pm.min_spare_servers": "2", "pm.max_spare_servers": "10"}
				return &Site{Pool: p}
			},
			[]string{"pm.max_children=20", "pm.start_servers=6", "pm.min_spare_servers=2", "pm.max_spare_servers=10"},
			nil, nil},
		{"spares above max_children are fitted",
			func() *Site {
				p := debianPool()
				p.PM = map[string]string{"pm": "dynamic", "pm.max_children": "2", "pm.start_servers": "2", "pm.min_spare_servers": "1", "pm.max_spare_servers": "3"}
				return &Site{Pool: p}
			},
			[]string{"pm.max_children=2", "pm.max_spare_servers=2"},
			nil, []string{"fitted to pm.max_children=2"}},
		{"no pool: Debian's defaults, said",
			func() *Site { return &Site{PoolError: "it passes nothing to php-fpm"} },
			nil, nil, []string{"no live php-fpm pool was found (it passes nothing to php-fpm)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := LiveStart(tc.site())
			if err := st.Config.Validate(); err != nil {
				t.Fatalf("start does not validate: %v", err)
			}
			got := st.Config.Overrides()
			slices.Sort(got)
			want := slices.Clone(tc.sets)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("start sets\n %q\nwant\n %q", got, want)
			}
			if !slices.Equal(st.Pool, tc.pool) {
				t.Errorf("pool lines %q, want %q", st.Pool, tc.pool)
			}
			all := strings.Join(st.Notes, "\n")
			for _, n := range tc.notes {
				if !strings.Contains(all, n) {
					t.Errorf("notes lack %q:\n%s", n, all)
				}
			}
			if len(tc.notes) == 0 && len(st.Notes) > 0 {
				t.Errorf("unexpected notes:\n%s", all)
			}
			if want := tc.site().Pool; want != nil && st.Prepend != want.Overrides["php_admin_value[auto_prepend_file]"] {
				t.Errorf("prepend %q", st.Prepend)
			}
			cfg, notes := StartConfig(tc.site())
			if !slices.Equal(cfg.Overrides(), st.Config.Overrides()) || !slices.Equal(notes, st.Notes) {
				t.Errorf("StartConfig differs from LiveStart")
			}
		})
	}
}

func TestFPMSeconds(t *testing.T) {
	for in, want := range map[string]int64{"10": 10, "10s": 10, "2m": 120, "1h": 3600, "1d": 86400, " 5s ": 5} {
		if got, err := fpmSeconds(in); err != nil || got != want {
			t.Errorf("fpmSeconds(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "s", "-1", "ten", "1w", "99999999999999999m"} {
		if _, err := fpmSeconds(in); err == nil {
			t.Errorf("fpmSeconds(%q) accepted", in)
		}
	}
}

// FuzzLiveStart: whatever a live pool and php.ini hold, the start
// validates, and every carried pool line is one line without control
// characters or a leading '$' in its value.
func FuzzLiveStart(f *testing.F) {
	f.Add("static", "7", "10s", "1024", "64M", "On", "1205", "256M")
	f.Add("dynamic", "0", "x", "-1", "-1", "", "disable", "-1")
	f.Add("ondemand", "5", "1d", "abc", "$X", "yes", "tracing", "99999G")
	f.Fuzz(func(t *testing.T, pm, maxc, idle, backlog, extra, ts, jit, mem string) {
		s := &Site{
			Pool: &Pool{Name: "www", Listen: "unix:/run/php.sock",
				PM:        map[string]string{"pm": pm, "pm.max_children": maxc, "pm.process_idle_timeout": idle},
				Settings:  map[string]string{"listen.backlog": backlog, "request_terminate_timeout": extra},
				Overrides: map[string]string{"php_admin_value[upload_max_filesize]": extra}},
			PHP: &PHPConfig{Settings: map[string]Setting{
				"opcache.validate_timestamps": {Value: ts, From: "php.ini:1"},
				"opcache.jit":                 {Value: jit, From: "php.ini:2"},
				"memory_limit":                {Value: mem, From: "php.ini:3"},
			}},
		}
		st := LiveStart(s)
		if err := st.Config.Validate(); err != nil {
			t.Fatalf("start does not validate: %v", err)
		}
		for _, l := range st.Pool {
			_, v, _ := strings.Cut(l, " = ")
			if strings.HasPrefix(v, "$") || strings.ContainsFunc(l, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Fatalf("carried %q", l)
			}
		}
		_ = knob.Defaults()
	})
}
