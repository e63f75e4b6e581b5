package livehost

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/advise"
	"github.com/phptune/phptune/internal/livehost/hosttest"
	"github.com/phptune/phptune/internal/proc"
)

// findCopy finds the copy's server among those running.
func findCopy(t *testing.T, m *hosttest.MariaDB) MariaDBServer {
	t.Helper()
	fs, err := proc.Default()
	if err != nil {
		t.Fatal(err)
	}
	servers, err := MariaDBServers(fs, m.Root)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		if s.PID == m.PID() {
			return s
		}
	}
	t.Fatalf("the copy's mariadbd (pid %d) was not found among %+v", m.PID(), servers)
	return MariaDBServer{}
}

// TestReadMariaDB reads a real MariaDB started from Debian's configuration
// in a directory: found in /proc, its socket from its option files, its
// counters and variables read as root by unix_socket.
func TestReadMariaDB(t *testing.T) {
	m := hosttest.DebianMariaDB(t, "")
	if _, err := m.Query("CREATE DATABASE shop; CREATE TABLE shop.t (id INT PRIMARY KEY, s TEXT) ENGINE=InnoDB; INSERT INTO shop.t VALUES (1, REPEAT('x', 20000)), (2, 'y')"); err != nil {
		t.Fatal(err)
	}
	s := findCopy(t, m)
	if s.Socket != m.Socket || s.SocketFrom != "its option files" || s.DefaultsFile != m.MyCnf {
		t.Errorf("socket %q from %s, defaults file %q", s.Socket, s.SocketFrom, s.DefaultsFile)
	}
	if s.Conf == nil || len(s.Conf.IncludeDirs) != 2 || s.Conf.IncludeDirs[1] != m.ConfD {
		t.Fatalf("configuration: %+v (%s)", s.Conf, s.ConfError)
	}
	fs, _ := proc.Default()
	db := ReadMariaDB(context.Background(), fs, s)
	if db.Error != "" || db.DataError != "" {
		t.Fatalf("read: %s %s", db.Error, db.DataError)
	}
	if db.Vars["max_connections"] != "151" || db.Vars["innodb_buffer_pool_size"] != "134217728" || !strings.HasPrefix(db.Version, "10.") {
		t.Errorf("variables: %v", db.Vars)
	}
	if _, ok := db.Status["Uptime"]; !ok || db.Status["Max_used_connections"] < 1 || db.Status["Innodb_buffer_pool_read_requests"] <= 0 {
		t.Errorf("status: %v", db.Status)
	}
	if db.DataIndexB < 16<<10 || db.ResidentB <= 0 {
		t.Errorf("data %d bytes, resident %d bytes", db.DataIndexB, db.ResidentB)
	}
	a := advise.AdviseHost(advise.Host{MemTotal: 4 << 30, MemAvailable: 3 << 30}, nil, db)
	if a.MariaDB == nil || a.MariaDB.MaxConnections != 151 {
		t.Fatalf("advice: %+v", a.MariaDB)
	}
	if !strings.Contains(findingText(a), "too short to trust its counters") {
		t.Errorf("a server up for seconds is not called too short:\n%s", findingText(a))
	}
}

func findingText(a advise.Advice) string {
	var out []string
	for _, f := range a.Findings {
		out = append(out, f.Severity+": "+f.Message)
	}
	return strings.Join(out, "\n")
}

// TestMariaDBRefusesPlantedSocket: a socket whose listener is not the
// server's process is refused before a byte is sent.
func TestMariaDBRefusesPlantedSocket(t *testing.T) {
	m := hosttest.DebianMariaDB(t, "")
	s := findCopy(t, m)
	planted := filepath.Join(t.TempDir(), "planted.sock")
	l, err := net.Listen("unix", planted)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 1)
			if n, _ := c.Read(buf); n > 0 {
				t.Error("the planted socket received a byte")
			}
			c.Close()
		}
	}()
	s.Socket = planted
	fs, _ := proc.Default()
	db := ReadMariaDB(context.Background(), fs, s)
	if !strings.Contains(db.Error, "refusing to talk to") || !strings.Contains(db.Error, "not MariaDB's server") {
		t.Errorf("planted socket: %q", db.Error)
	}
}
