package livehost

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/watch/proc"
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

// TestReadMariaDBLeavesCountersAlone: advise's reading of MariaDB, done 5
// times, adds no temporary table on disk to the server's counters (a sum
// over information_schema.tables added 19 on disk and about 110 in all,
// each time) and one in memory each: SHOW GLOBAL STATUS's own, which the
// server counts after the statement, so the counters each read reports are
// the server's before it read.
func TestReadMariaDBLeavesCountersAlone(t *testing.T) {
	m := hosttest.DebianMariaDB(t, "")
	if _, err := m.Query("CREATE DATABASE shop; CREATE TABLE shop.t (id INT PRIMARY KEY, s TEXT) ENGINE=InnoDB; INSERT INTO shop.t VALUES (1, REPEAT('x', 20000))"); err != nil {
		t.Fatal(err)
	}
	s := findCopy(t, m)
	fs, _ := proc.Default()
	// The test reads as advise does: SHOW GLOBAL STATUS, counted once
	// it is over.
	counters := func() (disk, all int64) {
		out, err := m.Query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Created_tmp_tables', 'Created_tmp_disk_tables')")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Sscanf(out, "Created_tmp_disk_tables %d\nCreated_tmp_tables %d", &disk, &all); err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		return disk, all
	}
	disk, all := counters()
	for i := int64(0); i < 5; i++ {
		db := ReadMariaDB(context.Background(), fs, s)
		if db.Error != "" || db.DataError != "" {
			t.Fatalf("read %d: %s %s", i, db.Error, db.DataError)
		}
		// all+1: the test's own SHOW, then one per read before this one.
		if d, a := db.Status["Created_tmp_disk_tables"], db.Status["Created_tmp_tables"]; d != disk || a != all+1+i {
			t.Errorf("read %d reports %d on disk, %d in all; want %d, %d", i, d, a, disk, all+1+i)
		}
		if db.Vars["max_connections"] != "151" || db.DataIndexB < 16<<10 {
			t.Errorf("read %d: variables %v, data %d bytes", i, db.Vars, db.DataIndexB)
		}
	}
	if d, a := counters(); d != disk || a != all+6 {
		t.Errorf("5 reads took the server's temporary tables from %d on disk, %d in all, to %d, %d (want %d, %d)", disk, all, d, a, disk, all+6)
	}
}
