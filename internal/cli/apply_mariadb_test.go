package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
)

// liveVars reads max_connections and the buffer pool from the copy.
func liveVars(t *testing.T, m *hosttest.MariaDB) string {
	t.Helper()
	out, err := m.Query("SELECT @@max_connections, @@innodb_buffer_pool_size")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(out), " ")
}

// TestApplyMariaDB applies MariaDB's knobs with php-fpm's in one
// transaction to Debian's php-fpm and MariaDB copied into a directory and
// started for real: the drop-in written, the values set live and read
// back, then rolled back; then a value the server refuses (above its
// innodb_buffer_pool_size_max) after php-fpm already reloaded: both rolled
// back, every file byte-identical, the old values live.
func TestApplyMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm and MariaDB")
	}
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	defer func(f func() bool) { stdinIsTerminal = f }(stdinIsTerminal)
	stdinIsTerminal = func() bool { return false }
	h := hosttest.Debian(t)
	m := hosttest.DebianMariaDB(t, h.Root, func(s string) string {
		return strings.Replace(s, "[mysqld]\n", "[mysqld]\ninnodb_buffer_pool_size_max = 512M\n", 1)
	})
	const before = "151 134217728"
	if got := liveVars(t, m); got != before {
		t.Fatalf("the copy runs %s", got)
	}
	dir := t.TempDir()
	knobs := filepath.Join(dir, "k")
	write := func(s string) {
		if err := os.WriteFile(knobs, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	host := []string{"--root", h.Root, "--settle", "100ms"}
	dropIn := filepath.Join(m.ConfD, "99-phptune.cnf")
	write("pm=static\npm.max_children=7\nmariadb.max_connections=200\nmariadb.innodb_buffer_pool_size=256M\n")

	out, errs, code := runCLI(t, append([]string{"apply", "--knobs", knobs, "--dry-run"}, host...)...)
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errs)
	}
	for _, w := range []string{"+++ " + dropIn, "+max_connections = 200", "+innodb_buffer_pool_size = 256M", "+# phptune-previous: innodb_buffer_pool_size=134217728 max_connections=151",
		"max_connections: 151 -> 200, SET GLOBAL now (dynamic)", "MariaDB is never restarted without --restart-db", "+pm.max_children = 7"} {
		if !strings.Contains(out, w) {
			t.Errorf("dry run lacks %q:\n%s", w, out)
		}
	}
	if err := m.Unchanged(); err != nil {
		t.Fatalf("dry run changed the copy: %v", err)
	}

	out, errs, code = runCLI(t, append([]string{"apply", "--knobs", knobs, "--yes"}, host...)...)
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
	if got := liveVars(t, m); got != "200 268435456" {
		t.Errorf("after apply MariaDB runs %s", got)
	}
	if b, err := os.ReadFile(dropIn); err != nil || !strings.Contains(string(b), "max_connections = 200\n") {
		t.Errorf("drop-in: %v %q", err, b)
	}
	if pm, n := poolState(t, h); pm != "static" || n != 7 {
		t.Errorf("after apply the pool is %s with %d workers", pm, n)
	}

	out, errs, code = runCLI(t, "rollback", "--yes", "--root", h.Root)
	if code != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", code, out, errs)
	}
	if got := liveVars(t, m); got != before {
		t.Errorf("after rollback MariaDB runs %s, want %s", got, before)
	}
	if err := m.Unchanged(); err != nil {
		t.Error(err)
	}
	rollbackGrace(t, h, []string{"--root", h.Root})
	if err := h.Unchanged(); err != nil {
		t.Error(err)
	}

	// Chaos: the server truncates the pool to its innodb_buffer_pool_size_max
	// after php-fpm took its new configuration.
	write("pm.max_children=9\nmariadb.innodb_buffer_pool_size=1G\nmariadb.max_connections=300\n")
	out, errs, code = runCLI(t, append([]string{"apply", "--knobs", knobs, "--yes"}, host...)...)
	if code == 0 || !strings.Contains(errs, "did not take SET GLOBAL innodb_buffer_pool_size = 1073741824") || !strings.Contains(errs, "rolled back") {
		t.Fatalf("a refused value: exit %d\n%s%s", code, out, errs)
	}
	if got := liveVars(t, m); got != before {
		t.Errorf("after the refused apply MariaDB runs %s, want %s", got, before)
	}
	// The refused apply made the reloads graceful first, in a transaction
	// of its own that stays.
	rollbackGrace(t, h, []string{"--root", h.Root})
	if err := m.Unchanged(); err != nil {
		t.Error(err)
	}
	if err := h.Unchanged(); err != nil {
		t.Error(err)
	}
	if _, n := poolState(t, h); n == 9 {
		t.Error("php-fpm still runs the refused transaction's pool")
	}
}

// TestApplyMariaDBRefusals: --restart-db where systemd does not run the
// server, and a configuration without an included directory, are refused
// before anything changes, with the fix.
func TestApplyMariaDBRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm and MariaDB")
	}
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	h := hosttest.Debian(t)
	m := hosttest.DebianMariaDB(t, h.Root)
	knobs := filepath.Join(t.TempDir(), "k")
	if err := os.WriteFile(knobs, []byte("mariadb.max_connections=200\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCLI(t, "apply", "--knobs", knobs, "--yes", "--restart-db", "--root", h.Root)
	if code != 2 || !strings.Contains(errs, "--restart-db: MariaDB (pid") || !strings.Contains(errs, "Leave out --restart-db") {
		t.Errorf("--restart-db: exit %d\n%s%s", code, out, errs)
	}
	// A my.cnf without !includedir (the server keeps running with what it read).
	if err := os.WriteFile(m.MyCnf, []byte("[client-server]\nsocket = "+m.Socket+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Files[m.MyCnf] = []byte("[client-server]\nsocket = " + m.Socket + "\n")
	out, errs, code = runCLI(t, "apply", "--knobs", knobs, "--yes", "--root", h.Root)
	if code != 2 || !strings.Contains(errs, "no !includedir line") || !strings.Contains(errs, "add `!includedir /etc/mysql/mariadb.conf.d/`") {
		t.Errorf("no includedir: exit %d\n%s%s", code, out, errs)
	}
	if err := m.Unchanged(); err != nil {
		t.Error(err)
	}
	if got := liveVars(t, m); got != "151 134217728" {
		t.Errorf("MariaDB runs %s", got)
	}
}

// TestMariaDBPlanText: the plan says how each variable takes effect, and
// plainly that one that is not dynamic waits for a restart.
func TestMariaDBPlanText(t *testing.T) {
	var b strings.Builder
	st := &livehost.MariaDBStep{Server: livehost.MariaDBServer{PID: 42, Socket: "/run/mysqld/mysqld.sock"}, DropIn: "/etc/mysql/mariadb.conf.d/99-phptune.cnf",
		Before: map[string]string{"max_connections": "151", "thread_stack": "299008"}}
	printMariaDBPlan(&b, st, []livehost.MariaDBSetting{{Var: "max_connections", Value: "200", Dynamic: true}, {Var: "thread_stack", Value: "384K"}})
	for _, w := range []string{"MariaDB /run/mysqld/mysqld.sock (pid 42): /etc/mysql/mariadb.conf.d/99-phptune.cnf", "max_connections: 151 -> 200, SET GLOBAL now (dynamic)",
		"thread_stack: 299008 -> 384K, NOT live: it is not dynamic and takes effect only at MariaDB's next restart (phptune restarts it only with --restart-db)"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("plan lacks %q:\n%s", w, b.String())
		}
	}
}
