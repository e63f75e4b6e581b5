package livehost_test

import (
	"reflect"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost"
)

// TestApacheCustomLog: CustomLog is recorded on the <VirtualHost> that
// writes it, or on the server when it is outside any (every vhost
// without its own logs there), with ${VAR} expanded, quotes removed, its
// format's nickname or string, inside <IfModule> too; pipes are kept as
// written for the reader to skip.
func TestApacheCustomLog(t *testing.T) {
	defines := map[string]string{"APACHE_LOG_DIR": "/var/log/apache2"}
	for _, tc := range []struct {
		name          string
		conf          string
		vhost, server []livehost.ApacheAccessLog
	}{
		{"vhost_combined with a variable",
			"<VirtualHost *:80>\nCustomLog ${APACHE_LOG_DIR}/wiki.access.log vhost_combined\n</VirtualHost>\n",
			[]livehost.ApacheAccessLog{{File: "/var/log/apache2/wiki.access.log", Format: "vhost_combined", At: "a.conf:2"}}, nil},
		{"quoted path, combined",
			"<VirtualHost *:80>\n  CustomLog \"/var/log/my site.log\" combined\n</VirtualHost>\n",
			[]livehost.ApacheAccessLog{{File: "/var/log/my site.log", Format: "combined", At: "a.conf:2"}}, nil},
		{"relative path, common",
			"<VirtualHost *:80>\nCustomLog logs/access.log common\n</VirtualHost>\n",
			[]livehost.ApacheAccessLog{{File: "logs/access.log", Format: "common", At: "a.conf:2"}}, nil},
		{"a format string",
			"<VirtualHost *:80>\nCustomLog /var/log/x.log \"%h %t %>s\"\n</VirtualHost>\n",
			[]livehost.ApacheAccessLog{{File: "/var/log/x.log", Format: "%h %t %>s", At: "a.conf:2"}}, nil},
		{"piped, kept as written",
			"<VirtualHost *:80>\nCustomLog \"|/usr/bin/rotatelogs /var/log/x.%Y 86400\" combined\n</VirtualHost>\n",
			[]livehost.ApacheAccessLog{{File: "|/usr/bin/rotatelogs /var/log/x.%Y 86400", Format: "combined", At: "a.conf:2"}}, nil},
		{"conditional",
			"<VirtualHost *:80>\nCustomLog /var/log/x.log combined env=!dontlog\nCustomLog /var/log/y.log combined expr=%{REQUEST_STATUS}>=500\n</VirtualHost>\n",
			[]livehost.ApacheAccessLog{{File: "/var/log/x.log", Format: "combined", Conditional: true, At: "a.conf:2"},
				{File: "/var/log/y.log", Format: "combined", Conditional: true, At: "a.conf:3"}}, nil},
		{"inside IfModule",
			"<VirtualHost *:80>\n<IfModule log_config_module>\n  CustomLog /var/log/x.log combined\n</IfModule>\n</VirtualHost>\n",
			[]livehost.ApacheAccessLog{{File: "/var/log/x.log", Format: "combined", At: "a.conf:3"}}, nil},
		{"server level, Debian's other-vhosts log",
			"CustomLog ${APACHE_LOG_DIR}/other_vhosts_access.log vhost_combined\n<VirtualHost *:80>\nServerName a\n</VirtualHost>\n",
			nil, []livehost.ApacheAccessLog{{File: "/var/log/apache2/other_vhosts_access.log", Format: "vhost_combined", At: "a.conf:1"}}},
		{"no format: refused by Apache, not recorded",
			"<VirtualHost *:80>\nCustomLog /var/log/x.log\n</VirtualHost>\n", nil, nil},
		{"TransferLog and ErrorLog are not CustomLog",
			"<VirtualHost *:80>\nTransferLog /var/log/t.log\nErrorLog /var/log/e.log\n</VirtualHost>\n", nil, nil},
		{"an unknown variable stays",
			"<VirtualHost *:80>\nCustomLog ${NOPE}/x.log combined\n</VirtualHost>\n",
			[]livehost.ApacheAccessLog{{File: "${NOPE}/x.log", Format: "combined", At: "a.conf:2"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := livehost.ParseApacheConfig("a.conf", []byte(tc.conf), defines)
			if len(c.Vhosts) != 1 {
				t.Fatalf("%d vhosts", len(c.Vhosts))
			}
			if got := c.Vhosts[0].AccessLogs; !reflect.DeepEqual(got, tc.vhost) {
				t.Errorf("vhost's logs\n got %+v\nwant %+v", got, tc.vhost)
			}
			if got := c.AccessLogs; !reflect.DeepEqual(got, tc.server) {
				t.Errorf("server's logs\n got %+v\nwant %+v", got, tc.server)
			}
		})
	}
}
