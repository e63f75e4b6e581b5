package livehost

import (
	"strings"
	"testing"
)

// FuzzParseNginxTitle: a title is any process's to set; whatever it
// holds, a parsed master names an absolute configuration without a NUL
// or newline.
func FuzzParseNginxTitle(f *testing.F) {
	f.Add("nginx: master process /usr/sbin/nginx -g daemon on; master_process on;")
	f.Add("nginx: master process /usr/sbin/nginx -c /srv/a b/nginx.conf -p /srv/ -e /tmp/e.log")
	f.Add("nginx: master process nginx -c")
	f.Fuzz(func(t *testing.T, title string) {
		m, ok := ParseNginxTitle(title)
		if !ok {
			return
		}
		if m.Conf == "" || strings.ContainsAny(m.Conf, "\x00\n") {
			t.Fatalf("title %q gave configuration %q", title, m.Conf)
		}
	})
}

// FuzzParseApacheS: apache2ctl -S's output, whatever the configuration
// it reports says, gives vhosts with a file and a positive line.
func FuzzParseApacheS(f *testing.F) {
	f.Add([]byte("VirtualHost configuration:\n*:80                   localhost (/etc/apache2/sites-enabled/000-default.conf:1)\n"))
	f.Add([]byte("*:443 is a NameVirtualHost\n         default server a (/x.conf:2)\n         port 443 namevhost a (/x.conf:2)\n                 alias b\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		for _, v := range ParseApacheS(out) {
			if v.File == "" || v.Line <= 0 {
				t.Fatalf("vhost %+v from %q", v, out)
			}
		}
	})
}
