package mariadb

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
)

func TestBindAlso(t *testing.T) {
	p := Paths{DataDir: "/l/mysql", Socket: "/l/dbrun/mysqld.sock", PidFile: "/l/run/m.pid", Log: "/l/log/m.log", TmpDir: "/l/tmp", TCP: "127.0.0.1:3306"}
	cases := []struct {
		also []string
		want string
	}{
		{nil, "bind-address = 127.0.0.1\n"},
		{[]string{"10.213.0.2"}, "bind-address = 127.0.0.1,10.213.0.2\n"},
		{[]string{"10.213.0.2", "::ffff:10.213.0.2", "2001:db8::2"}, "bind-address = 127.0.0.1,10.213.0.2,2001:db8::2\n"},
		{[]string{"127.0.0.1", "0.0.0.0", "db.internal", "10.0.0.1\nskip-grant-tables", "fe80::1%eth0"}, "bind-address = 127.0.0.1\n"},
	}
	for _, c := range cases {
		p.BindAlso = c.also
		out := Render(knob.Defaults(), p)
		if !strings.Contains(out, c.want) || strings.Contains(out, "skip-grant-tables") {
			t.Errorf("BindAlso %q: want %q in\n%s", c.also, c.want, out)
		}
	}
	p.TCP, p.BindAlso = "", []string{"10.213.0.2"}
	if out := Render(knob.Defaults(), p); strings.Contains(out, "bind-address") || !strings.Contains(out, "skip-networking") {
		t.Errorf("BindAlso without TCP put the server on the network:\n%s", out)
	}
}
