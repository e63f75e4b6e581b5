package mariadb

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/knob"
)

func TestRender(t *testing.T) {
	cfg, _ := knob.Defaults().Apply([]string{"mariadb.max_connections=40", "mariadb.innodb_flush_log_at_trx_commit=2"})
	got := Render(cfg, Paths{DataDir: "/lab/mysql", Socket: "/lab/run/m.sock", PidFile: "/lab/run/m.pid", Log: "/lab/log/m.log", TmpDir: "/lab/tmp"})
	for _, w := range []string{"skip-networking\n", "socket = /lab/run/m.sock\n", "max_connections = 40\n", "innodb_flush_log_at_trx_commit = 2\n", "innodb_buffer_pool_size = 128M\n"} {
		if !strings.Contains(got, w) {
			t.Errorf("my.cnf lacks %q:\n%s", w, got)
		}
	}
	if frag := RenderFragment(cfg); !strings.HasPrefix(frag, "[mysqld]\n") || !strings.Contains(frag, "max_connections = 40") {
		t.Errorf("fragment: %q", frag)
	}
	if a, b := Password(), Password(); a == b || len(a) < 24 {
		t.Errorf("passwords not random enough: %q %q", a, b)
	}
}
