package livehost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
)

// debianHost copies Debian 12's php-fpm.conf and pool.d/www.conf
// (testdata/debian) into dir, its include pointed at the copy.
func debianHost(t *testing.T) (conf string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "pool.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/debian/php-fpm.conf")
	if err != nil {
		t.Fatal(err)
	}
	conf = filepath.Join(dir, "php-fpm.conf")
	b = []byte(strings.Replace(string(b), "include=/etc/php/8.2/fpm/pool.d/*.conf", "include="+dir+"/pool.d/*.conf", 1))
	if err := os.WriteFile(conf, b, 0o644); err != nil {
		t.Fatal(err)
	}
	www, err := os.ReadFile("testdata/debian/pool.d/www.conf")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pool.d", "www.conf"), www, 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

func TestReadFPMDebian(t *testing.T) {
	conf := debianHost(t)
	h, err := ReadFPM(conf, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(conf)
	if len(h.Includes) != 1 || h.Includes[0] != dir+"/pool.d/*.conf" {
		t.Errorf("global: %+v", h)
	}
	if len(h.Pools) != 1 {
		t.Fatalf("pools %+v", h.Pools)
	}
	p := h.Pools[0]
	if p.Name != "www" || p.File != dir+"/pool.d/www.conf" || p.Listen != "unix:/run/php/php8.2-fpm.sock" || p.StatusPath != "" || p.PM != "dynamic" || p.MaxChildren != 5 {
		t.Errorf("pool %+v (Debian leaves pm.status_path commented out)", p)
	}
}

func TestReadFPMValues(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("fpm.conf", "[global]\npid = run/fpm.pid ; relative: against the prefix\ndaemonize = no\ninclude = conf.d/*.conf\n")
	write("conf.d/a.conf", "[site-a]\nlisten = 9001\npm.status_path = \"/status-$pool\"\n[site-b]\nlisten = [::]:9002\n")
	write("conf.d/b.conf", "[site-a]\nlisten = /run/a.sock\n")
	h, err := ReadFPM(filepath.Join(dir, "fpm.conf"), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Includes) != 1 || h.Includes[0] != dir+"/conf.d/*.conf" {
		t.Errorf("includes %q: a relative include is against the prefix", h.Includes)
	}
	a, _ := h.Pool("site-a")
	b, _ := h.Pool("site-b")
	if a.Listen != "unix:/run/a.sock" || a.StatusPath != "/status-site-a" || a.File != dir+"/conf.d/a.conf" {
		t.Errorf("site-a %+v: the last listen wins, $pool expands, the first file is its file", a)
	}
	if b.Listen != "tcp:127.0.0.1:9002" {
		t.Errorf("site-b %+v", b)
	}
	write("bad.conf", "[global]\nnot a setting\n")
	if _, err := ReadFPM(filepath.Join(dir, "bad.conf"), ""); err == nil || !strings.Contains(err.Error(), "bad.conf:2") {
		t.Errorf("a bad line: %v", err)
	}
}

func FuzzReadFPM(f *testing.F) {
	for _, s := range []string{"[global]\npid = /run/x.pid\n", "[www]\nlisten = 9000\n", "[a]\ninclude = /nonexistent/*.conf\n", "x = \"y\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		conf := filepath.Join(t.TempDir(), "fpm.conf")
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := ReadFPM(conf, "")
		if err != nil {
			return
		}
		for _, p := range h.Pools {
			if p.Listen != "" && !strings.HasPrefix(p.Listen, "unix:") && !strings.HasPrefix(p.Listen, "tcp:") {
				t.Errorf("pool %q listen %q", p.Name, p.Listen)
			}
		}
	})
}

func TestCompose(t *testing.T) {
	conf := debianHost(t)
	h, err := ReadFPM(conf, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(conf)
	rec := func(set ...string) knob.Config {
		c, err := knob.Defaults().Apply(set)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name       string
		pool       string
		rec        knob.Config
		pool_, ini []string // lines wanted
		err        string
	}{
		{"static pool and opcache", "www", rec("pm=static", "pm.max_children=12", "opcache.validate_timestamps=off"),
			[]string{"[www]\n", "pm = static\n", "pm.max_children = 12\n"}, []string{"opcache.validate_timestamps = 0\n"}, ""},
		{"dynamic writes its spares", "www", rec("pm.max_children=20", "pm.max_spare_servers=10"),
			[]string{"pm = dynamic\n", "pm.max_children = 20\n", "pm.start_servers = 2\n", "pm.min_spare_servers = 1\n", "pm.max_spare_servers = 10\n"}, nil, ""},
		{"max_requests alone", "www", rec("pm.max_requests=1000"), []string{"pm.max_requests = 1000\n"}, nil, ""},
		{"ini only", "www", rec("realpath_cache_size=16M"), nil, []string{"realpath_cache_size = 16M\n"}, ""},
		{"no such pool", "shop", rec("pm.max_children=12"), nil, nil, `has no pool "shop" (it has: www)`},
		{"several pools", "www", rec("pm.max_children=12", "fpm.pools=2"), nil, nil, "does not split a live pool"},
		{"socket move", "www", rec("listen=tcp"), nil, nil, "does not move pool www's socket (unix:/run/php/php8.2-fpm.sock)"},
		{"mod_php", "www", rec("server=apache-prefork-modphp"), nil, nil, "runs no php-fpm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Compose(h, tt.pool, tt.rec, "/etc/php/8.2/fpm/conf.d")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.PoolPath != dir+"/pool.d/zz-phptune.conf" || d.IniPath != "/etc/php/8.2/fpm/conf.d/99-phptune.ini" {
				t.Errorf("paths %s %s", d.PoolPath, d.IniPath)
			}
			for _, w := range tt.pool_ {
				if !strings.Contains(string(d.Pool), w) {
					t.Errorf("pool drop-in lacks %q:\n%s", w, d.Pool)
				}
			}
			for _, w := range tt.ini {
				if !strings.Contains(string(d.Ini), w) {
					t.Errorf("ini drop-in lacks %q:\n%s", w, d.Ini)
				}
			}
			if len(tt.pool_) == 0 && d.Pool != nil || len(tt.ini) == 0 && d.Ini != nil {
				t.Errorf("an unneeded file: pool %q ini %q", d.Pool, d.Ini)
			}
		})
	}
}
