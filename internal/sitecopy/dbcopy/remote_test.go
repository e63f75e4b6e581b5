package dbcopy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/sitecopy/site"
)

func TestRemoteSource(t *testing.T) {
	app := &site.App{File: "/srv/wp/wp-config.php", DB: site.Database{Name: "wp", User: "wpuser", Password: site.NewSecret("pw"), Host: "db.internal"}}
	cases := []struct {
		name   string
		target site.DBTarget
		conn   Conn // Password left out
		hosts  []string
		option string // a part of the option file, or of its error
	}{
		{"a name resolved", site.DBTarget{Endpoint: site.Endpoint{Network: "remote", Address: "db.internal:3307"}, IP: "10.213.0.2", Name: "db.internal"},
			Conn{Network: "tcp", Address: "10.213.0.2:3307", User: "wpuser", Remote: true}, []string{"localhost", "10.213.0.2"}, "host = 10.213.0.2\nport = 3307"},
		{"an IPv6 address", site.DBTarget{Endpoint: site.Endpoint{Network: "remote", Address: "[2001:db8::2]:3306"}, IP: "2001:db8::2"},
			Conn{Network: "tcp", Address: "[2001:db8::2]:3306", User: "wpuser", Remote: true}, []string{"localhost", "2001:db8::2"}, "host = 2001:db8::2"},
		{"not resolved", site.DBTarget{Endpoint: site.Endpoint{Network: "remote", Address: "db.internal:3306"}},
			Conn{Network: "remote", Address: "db.internal:3306", User: "wpuser"}, []string{"localhost"}, "only a unix socket or a loopback TCP address"},
		{"loopback", site.DBTarget{Endpoint: site.Endpoint{Network: "tcp", Address: "127.0.0.1:3306"}},
			Conn{Network: "tcp", Address: "127.0.0.1:3306", User: "wpuser"}, []string{"localhost", "127.0.0.1"}, "host = 127.0.0.1"},
	}
	for _, c := range cases {
		src, err := SourceFor(app, &c.target, Account{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := src.Conn
		got.Password = ""
		if got != c.conn {
			t.Errorf("%s: conn %+v, want %+v", c.name, got, c.conn)
		}
		if h := HostsForTarget(&c.target); !reflect.DeepEqual(h, c.hosts) {
			t.Errorf("%s: hosts %v, want %v", c.name, h, c.hosts)
		}
		conf, err := src.Conn.optionFile()
		if out := conf + errString(err); !strings.Contains(out, c.option) {
			t.Errorf("%s: option file %q, want %q in it", c.name, out, c.option)
		}
	}
	for _, bad := range []Conn{
		{Network: "tcp", Address: "10.0.0.1:3306", User: "a"},
		{Network: "tcp", Address: "db.internal:3306", User: "a", Remote: true},
		{Network: "tcp", Address: "0.0.0.0:3306", User: "a", Remote: true},
		{Network: "tcp", Address: "[fe80::1]:3306", User: "a", Remote: true},
	} {
		if _, err := bad.optionFile(); err == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
