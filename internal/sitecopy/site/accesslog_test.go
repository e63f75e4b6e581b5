package site

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost"
)

// TestNginxAccessLogs: a server's own server-level access_log directives
// (not a location's), else the http level's, marked shared; off, syslog,
// variables and a server's own "off" leave none; the format is the
// log_format named, combined when none is; a relative path resolves
// against the prefix.
func TestNginxAccessLogs(t *testing.T) {
	const dump = "# configuration file /etc/nginx/nginx.conf:\n"
	for _, tc := range []struct {
		name, http, server string
		want               []AccessLog
	}{
		{"own, default format", "access_log /var/log/nginx/access.log;", "access_log /var/log/nginx/site.access.log;",
			[]AccessLog{{Path: "/var/log/nginx/site.access.log", Format: "combined", At: "/etc/nginx/nginx.conf:4"}}},
		{"own, named format, buffered", "", "access_log /var/log/nginx/a.log main buffer=32k flush=5s;",
			[]AccessLog{{Path: "/var/log/nginx/a.log", Format: "main", At: "/etc/nginx/nginx.conf:4"}}},
		{"own, conditional", "", "access_log /var/log/nginx/a.log combined if=$loggable;",
			[]AccessLog{{Path: "/var/log/nginx/a.log", Format: "combined", Conditional: true, At: "/etc/nginx/nginx.conf:4"}}},
		{"http level, shared", "access_log /var/log/nginx/access.log;", "",
			[]AccessLog{{Path: "/var/log/nginx/access.log", Format: "combined", At: "/etc/nginx/nginx.conf:2", Shared: true}}},
		{"relative, against the prefix", "", "access_log logs/site.log;",
			[]AccessLog{{Path: "/usr/share/nginx/logs/site.log", Format: "combined", At: "/etc/nginx/nginx.conf:4"}}},
		{"off at server level: none, not the http level's", "access_log /var/log/nginx/access.log;", "access_log off;", nil},
		{"syslog", "", "access_log syslog:server=unix:/dev/log combined;", nil},
		{"a variable", "", "access_log /var/log/nginx/$host.log;", nil},
		{"a location's only: the http level's", "access_log /var/log/nginx/access.log;", "location /api/ { access_log /var/log/nginx/api.log; }",
			[]AccessLog{{Path: "/var/log/nginx/access.log", Format: "combined", At: "/etc/nginx/nginx.conf:2", Shared: true}}},
		{"none anywhere", "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := dump + "http {\n" + tc.http + "\nserver { listen 80; server_name a.test; root /srv/a;\n" + tc.server + "\n}\n}\n"
			c, err := livehost.ParseNginxDump([]byte(conf))
			if err != nil {
				t.Fatal(err)
			}
			vs := NginxVhosts(c, "")
			if len(vs) != 1 {
				t.Fatalf("%d vhosts", len(vs))
			}
			if got := vs[0].AccessLogs; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestApacheAccessLogs: a vhost's own CustomLog, else the main server's
// (shared); pipes, syslog and unexpanded variables are left out; a
// relative path resolves against ServerRoot.
func TestApacheAccessLogs(t *testing.T) {
	vars := map[string]string{"APACHE_LOG_DIR": "/var/log/apache2"}
	for _, tc := range []struct {
		name, server, vhost string
		want                []AccessLog
	}{
		{"own", "CustomLog ${APACHE_LOG_DIR}/other_vhosts_access.log vhost_combined", "CustomLog ${APACHE_LOG_DIR}/wiki.access.log combined",
			[]AccessLog{{Path: "/var/log/apache2/wiki.access.log", Format: "combined", At: "a.conf:3"}}},
		{"the server's, shared", "CustomLog ${APACHE_LOG_DIR}/other_vhosts_access.log vhost_combined", "",
			[]AccessLog{{Path: "/var/log/apache2/other_vhosts_access.log", Format: "vhost_combined", At: "a.conf:1", Shared: true}}},
		{"piped", "", `CustomLog "|/usr/bin/rotatelogs /var/log/x 86400" combined`, nil},
		{"syslog", "", "CustomLog syslog:local1 combined", nil},
		{"unknown variable", "", "CustomLog ${NOPE}/x.log combined", nil},
		{"relative", "", "CustomLog logs/x.log common",
			[]AccessLog{{Path: "/etc/apache2/logs/x.log", Format: "common", At: "a.conf:3"}}},
		{"a pipe and a file: the file", "", "CustomLog |/bin/logger combined\nCustomLog /var/log/x.log vhost_combined env=!static",
			[]AccessLog{{Path: "/var/log/x.log", Format: "vhost_combined", Conditional: true, At: "a.conf:4"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := tc.server + "\n<VirtualHost *:80>\n" + tc.vhost + "\n</VirtualHost>\n"
			vs := ApacheVhosts(livehost.ParseApacheConfig("a.conf", []byte(conf), vars), "/")
			if len(vs) != 1 {
				t.Fatalf("%d vhosts", len(vs))
			}
			if got := vs[0].AccessLogs; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestReplayLog: a log is offered when it is a regular file of a known
// format in directories only root can write; a link, a directory others
// can write, a missing file or an unknown format is refused with why,
// and the next log is tried.
func TestReplayLog(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the log's directories must be root's")
	}
	root := t.TempDir()
	logs := filepath.Join(root, "var", "log", "nginx")
	open := filepath.Join(root, "var", "log", "open")
	for _, d := range []string{logs, open} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(logs, "site.log"), filepath.Join(open, "site.log")} {
		if err := os.WriteFile(f, []byte("x\n"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("site.log", filepath.Join(logs, "link.log")); err != nil {
		t.Fatal(err)
	}
	h := Host{Root: root}
	good := AccessLog{Path: "/var/log/nginx/site.log", Format: "combined"}
	for _, tc := range []struct {
		name string
		logs []AccessLog
		want AccessLog
		err  string
	}{
		{"a good log", []AccessLog{good}, good, ""},
		{"none", nil, AccessLog{}, "names no access log"},
		{"a link, then a good one", []AccessLog{{Path: "/var/log/nginx/link.log", Format: "combined"}, good}, good, ""},
		{"a link", []AccessLog{{Path: "/var/log/nginx/link.log", Format: "combined"}}, AccessLog{Path: "/var/log/nginx/link.log", Format: "combined"}, "symbolic link"},
		{"others can write its directory", []AccessLog{{Path: "/var/log/open/site.log", Format: "combined"}}, AccessLog{Path: "/var/log/open/site.log", Format: "combined"}, "written by others than root"},
		{"missing", []AccessLog{{Path: "/var/log/nginx/none.log", Format: "combined"}}, AccessLog{Path: "/var/log/nginx/none.log", Format: "combined"}, "no such file"},
		{"unknown format", []AccessLog{{Path: "/var/log/nginx/site.log", Format: "main"}}, AccessLog{Path: "/var/log/nginx/site.log", Format: "main"}, `format "main"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := h.ReplayLog(tc.logs)
			if got != tc.want {
				t.Errorf("log %+v, want %+v", got, tc.want)
			}
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("err %v, want one saying %q", err, tc.err)
			}
			if tc.logs == nil && !errors.Is(err, ErrNoAccessLog) {
				t.Errorf("err %v is not ErrNoAccessLog", err)
			}
		})
	}
}

// TestWriteAccessLogs: phptune site names each log with its format and
// where it is written, and says when it is shared, conditional or in a
// format --workload-from-log does not read.
func TestWriteAccessLogs(t *testing.T) {
	for _, tc := range []struct {
		name string
		logs []AccessLog
		want string
	}{
		{"none", nil, "access log  none named (none, off, a pipe, syslog or a path with a variable)\n"},
		{"own", []AccessLog{{Path: "/var/log/apache2/wiki.access.log", Format: "vhost_combined", At: "/etc/apache2/sites-enabled/wiki.conf:9"}},
			"access log  /var/log/apache2/wiki.access.log (vhost_combined, at /etc/apache2/sites-enabled/wiki.conf:9)\n"},
		{"shared, conditional, custom", []AccessLog{{Path: "/var/log/nginx/access.log", Format: "main", At: "n.conf:3", Shared: true, Conditional: true}},
			"access log  /var/log/nginx/access.log (main, at n.conf:3; the server level's: other vhosts log there too; conditional: some requests only; --workload-from-log reads combined, vhost_combined and common)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			writeAccessLogs(func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }, tc.logs)
			if b.String() != tc.want {
				t.Errorf("\n got %q\nwant %q", b.String(), tc.want)
			}
		})
	}
}

// FuzzAccessLogs: whatever nginx's dump or Apache's configuration says,
// every access log a vhost is given is an absolute, clean file path
// with no variable (pipes, syslog and off are left out).
func FuzzAccessLogs(f *testing.F) {
	f.Add("http {\naccess_log logs/a.log main if=$x;\nserver { access_log /var/log/$host.log; access_log syslog:server=x; }\nserver { access_log ../x; }\n}\n",
		"CustomLog \"|/bin/x\" combined\n<VirtualHost *:80>\nCustomLog ${APACHE_LOG_DIR}/../w.log vhost_combined env=!a\n</VirtualHost>\n")
	f.Fuzz(func(t *testing.T, nginx, apache string) {
		var vs []Vhost
		if c, err := livehost.ParseNginxDump([]byte("# configuration file /etc/nginx/nginx.conf:\n" + nginx)); err == nil {
			vs = NginxVhosts(c, "")
		}
		vs = append(vs, ApacheVhosts(livehost.ParseApacheConfig("/a.conf", []byte(apache), map[string]string{"APACHE_LOG_DIR": "/var/log/apache2"}), "/")...)
		for _, v := range vs {
			for _, l := range v.AccessLogs {
				if !filepath.IsAbs(l.Path) || filepath.Clean(l.Path) != l.Path || strings.Contains(l.Path, "$") {
					t.Fatalf("access log %+v", l)
				}
			}
		}
	})
}
