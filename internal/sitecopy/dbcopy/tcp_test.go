package dbcopy

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/sitecopy/site"
)

// freePort is a loopback TCP port nothing listens on now.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestDumpOverTCP dumps from a server the app reaches at 127.0.0.1:PORT,
// and a wrong password fails with the fix named and the password not
// shown.
func TestDumpOverTCP(t *testing.T) {
	port := freePort(t)
	prod := hosttest.DebianMariaDB(t, "", func(s string) string {
		return strings.Replace(s, "skip-networking\n", "bind-address = 127.0.0.1\nport = "+strconv.Itoa(port)+"\n", 1)
	})
	for _, q := range []string{"CREATE DATABASE shop", "CREATE TABLE shop.t (id INT PRIMARY KEY)", "INSERT INTO shop.t VALUES (1), (2)",
		"CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY '" + sqlEscape(appPassword) + "'", "GRANT ALL ON shop.* TO 'app'@'127.0.0.1'"} {
		if _, err := prod.Query(q); err != nil {
			t.Fatal(err)
		}
	}
	app := &site.App{File: "wp-config.php", DB: site.Database{Name: "shop", User: "app", Password: site.NewSecret(appPassword), Host: "127.0.0.1:" + strconv.Itoa(port), Port: port}}
	target := &site.DBTarget{Endpoint: app.DB.Endpoint("/run/mysqld/mysqld.sock")}
	if target.Endpoint.Network != "tcp" {
		t.Fatalf("endpoint %v", target.Endpoint)
	}
	src, err := SourceFor(app, target, testAccount(t))
	if err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	if err := Dump(context.Background(), src, &dump, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(dump.Bytes(), []byte("INSERT INTO `t` VALUES")) {
		t.Errorf("the dump over TCP lacks the rows:\n%s", dump.String())
	}
	grants, _, err := ReadGrants(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if h := AccountHosts(grants); len(h) != 1 || h[0] != "127.0.0.1" {
		t.Errorf("the account's hosts: %v, want 127.0.0.1 (as production's grants say)", h)
	}

	src.Conn.Password = "wrong " + appPassword
	err = Dump(context.Background(), src, &bytes.Buffer{}, nil)
	if err == nil || !strings.Contains(err.Error(), "Access denied") || !strings.Contains(err.Error(), "--db-dump") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("a wrong password: %v", err)
	}
}

func TestSourceFor(t *testing.T) {
	app := &site.App{File: "/s/wp-config.php", DB: site.Database{Name: "shop", User: "app"}}
	for _, tt := range []struct {
		name   string
		app    *site.App
		target *site.DBTarget
		err    string
	}{
		{"no database", app, nil, "no database"},
		{"not found", app, &site.DBTarget{Error: "no MariaDB server runs here"}, "no MariaDB server runs here"},
		{"computed", &site.App{File: "/s/wp-config.php", NotLiteral: []string{"DB_USER"}, DB: site.Database{Name: "shop"}},
			&site.DBTarget{Endpoint: site.Endpoint{Network: "unix", Address: "/s"}}, "computed: DB_USER"},
	} {
		if _, err := SourceFor(tt.app, tt.target, Account{}); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.err)
		}
	}
}
