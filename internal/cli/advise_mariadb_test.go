package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
)

// TestAdviseMariaDB reads a real MariaDB beside a real php-fpm, both from
// Debian's configuration in a directory: a 16 MiB buffer pool under about
// 40 MiB of InnoDB data scanned once misses, so advise raises it (within
// the memory budget); max_connections 12 is below the pool's 5 workers +
// 10, so advise raises it to 15; the server just started, so its counters
// are called too short to trust; --exit-code counts the change.
func TestAdviseMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm and MariaDB")
	}
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	h := hosttest.Debian(t)
	m := hosttest.DebianMariaDB(t, h.Root, func(s string) string {
		return strings.Replace(s, "[mysqld]\n", "[mysqld]\ninnodb_buffer_pool_size = 16M\nmax_connections = 12\n", 1)
	})
	for _, q := range []string{
		"CREATE DATABASE shop",
		"CREATE TABLE shop.t (id INT PRIMARY KEY, s VARCHAR(4000)) ENGINE=InnoDB",
		"INSERT INTO shop.t SELECT seq, REPEAT('x', 4000) FROM shop.seq_1_to_10000",
		"ANALYZE TABLE shop.t",
		"SELECT COUNT(*) FROM shop.t WHERE s LIKE '%y%'",
	} {
		if _, err := m.Query(q); err != nil {
			t.Fatal(err)
		}
	}
	out, errs, code := runCLI(t, "advise", "--fpm-config", h.Conf, "--mariadb-socket", m.Socket, "--json", "--exit-code")
	if code != 1 {
		t.Fatalf("advise: exit %d, want 1 (a change)\n%s%s", code, out, errs)
	}
	var a advise.Advice
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	db := a.MariaDB
	if db == nil || db.Error != "" || db.PID != m.PID() {
		t.Fatalf("mariadb: %+v", db)
	}
	if db.BufferPoolB != 16<<20 || db.DataIndexB < 30<<20 || db.HitRate < 0 || db.HitRate >= 0.99 || db.MaxConnections != 12 || db.PoolsMaxChildren != 5 {
		t.Errorf("figures: %+v", db)
	}
	want := []string{"mariadb.innodb_buffer_pool_size=128M", "mariadb.max_connections=15"}
	if strings.Join(db.Knobs, " ") != strings.Join(want, " ") {
		t.Errorf("knobs %v, want %v", db.Knobs, want)
	}
	text := ""
	for _, f := range a.Findings {
		text += f.Message + "\n"
	}
	for _, w := range []string{"MariaDB: up for", "too short to trust its counters", "innodb_buffer_pool_size 16.0 MiB -> 128.0 MiB", "max_connections 12 -> 15", "the database's growth"} {
		if !strings.Contains(text, w) {
			t.Errorf("findings lack %q:\n%s", w, text)
		}
	}
	out, errs, code = runCLI(t, "advise", "--fpm-config", h.Conf, "--mariadb-socket", m.Socket)
	if code != 0 || !strings.Contains(out, "mariadb.max_connections=15") || !strings.Contains(out, "connections max used") {
		t.Errorf("text: exit %d\n%s%s", code, out, errs)
	}
}
