package recommend

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/nginx"
	"github.com/phptune/phptune/internal/servers/phpfpm"
)

func config(t *testing.T, set ...string) knob.Config {
	t.Helper()
	c, err := knob.Defaults().Apply(set)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFiles(t *testing.T) {
	start := knob.Defaults()
	tests := []struct {
		name   string
		rec    knob.Config
		db     bool
		want   map[string][]string // file -> lines it must contain
		absent map[string][]string
	}{
		{
			name: "defaults change nothing",
			rec:  knob.Defaults(),
			want: map[string][]string{
				PoolFile:  {"pm = dynamic", "pm.max_children = 5", `listen = "/run/php/php8.2-fpm.sock"`},
				IniFile:   {"opcache.validate_timestamps = 1", "/etc/php/8.2/fpm/conf.d/99-phptune.ini"},
				NginxFile: {"worker_processes auto;", "fastcgi_pass unix:/run/php/php8.2-fpm.sock;"},
			},
			absent: map[string][]string{PoolFile: {"was"}, IniFile: {"was"}, NginxFile: {"was"}, MyCnfFile: {"[mysqld]"}},
		},
		{
			name: "static pool on tcp without timestamps",
			rec:  config(t, "pm=static", "pm.max_children=12", "listen=tcp", "opcache.validate_timestamps=off", "nginx.access_log=off"),
			want: map[string][]string{
				PoolFile:  {"pm = static  ; phptune: was dynamic", "pm.max_children = 12  ; phptune: was 5", "listen = 127.0.0.1:9000  ; phptune: was unix", "point nginx's fastcgi_pass"},
				IniFile:   {"opcache.validate_timestamps = 0  ; phptune: was on", "reload php-fpm"},
				NginxFile: {"fastcgi_pass 127.0.0.1:9000;  # phptune: was unix", "access_log off;  # phptune: was on"},
			},
			absent: map[string][]string{PoolFile: {"pm.start_servers"}},
		},
		{
			name: "database settings",
			rec:  config(t, "mariadb.innodb_buffer_pool_size=512M", "mariadb.max_connections=60"),
			db:   true,
			want: map[string][]string{
				MyCnfFile: {"[mysqld]", "innodb_buffer_pool_size = 512M  # phptune: was 128M", "max_connections = 60  # phptune: was 151", "innodb_flush_log_at_trx_commit = 1\n"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := Files(start, tc.rec, Target{PHPVersion: "8.2", UsesDB: tc.db})
			for f, lines := range tc.want {
				for _, l := range lines {
					if !strings.Contains(files[f], l) {
						t.Errorf("%s lacks %q:\n%s", f, l, files[f])
					}
				}
			}
			for f, lines := range tc.absent {
				for _, l := range lines {
					if strings.Contains(files[f], l) {
						t.Errorf("%s has %q:\n%s", f, l, files[f])
					}
				}
			}
		})
	}
}

// TestFilesAcceptedByServers checks the pool fragment and the nginx snippet
// with the real programs' own config test.
func TestFilesAcceptedByServers(t *testing.T) {
	fpm, err := phpfpm.Find()
	if err != nil {
		t.Skipf("php-fpm not installed (make setup): %v", err)
	}
	nginxBin, err := nginx.Find()
	if err != nil {
		t.Skipf("nginx not installed (make setup): %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("the pool fragment names user www-data, which only root can check")
	}
	for _, rec := range []knob.Config{
		knob.Defaults(),
		config(t, "pm=static", "pm.max_children=12", "listen=tcp", "nginx.access_log=off", "nginx.listen_backlog=1024"),
		config(t, "pm=ondemand", "pm.max_children=30", "pm.max_requests=500"),
		config(t, "pm=static", "pm.max_children=15", "fpm.pools=3", "nginx.worker_processes=2", "nginx.fastcgi_keepalive=2"),
		config(t, "pm=static", "pm.max_children=12", "fpm.pools=2", "listen=tcp"),
	} {
		dir := t.TempDir()
		files := Files(knob.Defaults(), rec, Target{PHPVersion: "8.2"})
		conf := filepath.Join(dir, "php-fpm.conf")
		global := "[global]\npid = " + filepath.Join(dir, "fpm.pid") + "\nerror_log = " + filepath.Join(dir, "fpm.log") + "\n"
		if err := os.WriteFile(conf, []byte(global+files[PoolFile]), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(fpm.Path, fpm.TestArgs(conf)...).CombinedOutput(); err != nil {
			t.Errorf("php-fpm -t refused the pool fragment: %v\n%s\n%s", err, out, files[PoolFile])
		}
		nconf := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(nconf, []byte(files[NginxFile]), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"-t", "-p", dir, "-c", nconf, "-e", filepath.Join(dir, "error.log"), "-g", "pid " + filepath.Join(dir, "nginx.pid") + ";"}
		if out, err := exec.Command(nginxBin, args...).CombinedOutput(); err != nil {
			t.Errorf("nginx -t refused the snippet: %v\n%s\n%s", err, out, files[NginxFile])
		}
	}
}

func TestFilesPoolsAndKeepalive(t *testing.T) {
	rec := config(t, "pm=static", "pm.max_children=15", "fpm.pools=3", "nginx.worker_processes=2", "nginx.fastcgi_keepalive=2")
	files := Files(knob.Defaults(), rec, Target{PHPVersion: "8.2"})
	for file, wants := range map[string][]string{
		PoolFile: {"[www]\n", "[www2]\n", "[www3]\n", `listen = "/run/php/php8.2-fpm-3.sock"`, "pm.max_children = 5", "fpm.pools=3: 3 pools"},
		NginxFile: {"upstream php_fpm {  # phptune: was 1", `server unix:/run/php/php8.2-fpm-2.sock max_fails=3 fail_timeout=1s;`,
			"keepalive 2;  # phptune: was 0", "fastcgi_pass php_fpm;", "fastcgi_keep_conn on;"},
	} {
		for _, w := range wants {
			if !strings.Contains(files[file], w) {
				t.Errorf("%s lacks %q:\n%s", file, w, files[file])
			}
		}
	}
	if strings.Contains(Files(knob.Defaults(), knob.Defaults(), Target{})[NginxFile], "upstream") {
		t.Error("the default recommendation has an upstream")
	}
}
