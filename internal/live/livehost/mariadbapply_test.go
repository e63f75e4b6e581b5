package livehost

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/liveapply"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/servers/mariadb"
)

// TestMariaDBCutShort cuts a MariaDB apply short on a real server — after
// the drop-in is written, right after SET GLOBAL (as a SIGKILL would:
// nothing of the apply runs after), and by Ctrl-C after SET GLOBAL — and
// wants the next phptune (Recover, with the step read back from the
// drop-in's record) or the apply itself to leave the files byte-identical
// and the old values live.
func TestMariaDBCutShort(t *testing.T) {
	m := hosttest.DebianMariaDB(t, "")
	s := findCopy(t, m)
	bins, err := mariadb.Find()
	if err != nil {
		t.Skip(err)
	}
	dropIn := filepath.Join(m.ConfD, MariaDBDropInName)
	step := func() *MariaDBStep {
		return &MariaDBStep{Server: s, Binary: bins.Server, Root: m.Root, DropIn: dropIn}
	}
	settings := []MariaDBSetting{{Knob: "mariadb.innodb_buffer_pool_size", Var: "innodb_buffer_pool_size", Value: "256M"},
		{Knob: "mariadb.max_connections", Var: "max_connections", Value: "200"}}
	const before = "151 134217728"
	live := func() string {
		out, err := m.Query("SELECT @@max_connections, @@innodb_buffer_pool_size")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(out), " ")
	}
	home := t.TempDir()
	opt := liveapply.Options{Home: home, Root: m.Root, Log: t.Logf,
		StepsFor: func(names []string) []liveapply.Step {
			st := step()
			if err := st.FromDropIn(context.Background()); err != nil {
				t.Errorf("step from the drop-in: %v", err)
			}
			return []liveapply.Step{st.Step()}
		}}
	for _, c := range []string{"after the write", "after SET GLOBAL", "Ctrl-C after SET GLOBAL"} {
		t.Run(c, func(t *testing.T) {
			st := step()
			for _, x := range settings {
				st.Vars = append(st.Vars, x.Var)
			}
			var err error
			if st.Before, st.Dynamic, err = st.ReadLive(context.Background(), st.Vars); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := st.Step()
			reload := s.Reload
			first := true
			s.Reload = func(ctx context.Context) error {
				err := reload(ctx)
				if !first { // the rollback's reload
					return err
				}
				first = false
				if live() != "200 268435456" {
					t.Errorf("SET GLOBAL did not take: %s (%v)", live(), err)
				}
				switch c {
				case "after SET GLOBAL":
					runtime.Goexit()
				case "Ctrl-C after SET GLOBAL":
					cancel()
				}
				return err
			}
			o := opt
			o.AfterState = func(state string) {
				if c == "after the write" && state == liveapply.Written {
					runtime.Goexit()
				}
			}
			plan := liveapply.Plan{Changes: []liveapply.Change{{Path: dropIn, Content: ComposeMariaDB(settings, st.Before)}}, Steps: []liveapply.Step{s}}
			done := make(chan error, 1)
			go func() {
				defer close(done)
				_, err := liveapply.Apply(ctx, plan, o)
				done <- err
			}()
			err = <-done
			if c == "Ctrl-C after SET GLOBAL" {
				if err == nil || !strings.Contains(err.Error(), "rolled back to the previous configuration") {
					t.Fatalf("Ctrl-C: %v", err)
				}
			} else {
				undone, err := liveapply.Recover(context.Background(), opt)
				if err != nil || len(undone) != 1 {
					t.Fatalf("recover: %d undone, %v", len(undone), err)
				}
			}
			if got := live(); got != before {
				t.Errorf("MariaDB runs %s, want %s", got, before)
			}
			if err := m.Unchanged(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestMariaDBStepChecks: a file read after the drop-in that sets the same
// variable fails the check before anything is set; a variable that is not
// dynamic is written but not set live, and the health check does not want
// it read back (it takes effect at the next restart).
func TestMariaDBStepChecks(t *testing.T) {
	m := hosttest.DebianMariaDB(t, "")
	s := findCopy(t, m)
	bins, err := mariadb.Find()
	if err != nil {
		t.Skip(err)
	}
	dropIn := filepath.Join(m.ConfD, MariaDBDropInName)
	opt := liveapply.Options{Home: t.TempDir(), Root: m.Root, Log: t.Logf}
	apply := func(vars []string, settings []MariaDBSetting) (*MariaDBStep, error) {
		st := &MariaDBStep{Server: s, Binary: bins.Server, Root: m.Root, DropIn: dropIn, Vars: vars}
		if st.Before, st.Dynamic, err = st.ReadLive(context.Background(), vars); err != nil {
			t.Fatal(err)
		}
		plan := liveapply.Plan{Changes: []liveapply.Change{{Path: dropIn, Content: ComposeMariaDB(settings, st.Before)}}, Steps: []liveapply.Step{st.Step()}}
		_, err := liveapply.Apply(context.Background(), plan, opt)
		return st, err
	}
	maxConn := MariaDBSetting{Knob: "mariadb.max_connections", Var: "max_connections", Value: "200"}

	later := filepath.Join(m.ConfD, "zz-local.cnf")
	local := []byte("[mysqld]\nmax_connections = 90\n")
	if err := os.WriteFile(later, local, 0o644); err != nil {
		t.Fatal(err)
	}
	m.Files[later] = local
	_, err = apply([]string{"max_connections"}, []MariaDBSetting{maxConn})
	if err == nil || !strings.Contains(err.Error(), "the server would start with max_connections = 90, not the drop-in's 200") {
		t.Errorf("a later file: %v", err)
	}
	if out, _ := m.Query("SELECT @@max_connections"); out != "151" {
		t.Errorf("max_connections %s after a refused check", out)
	}
	if err := m.Unchanged(); err != nil {
		t.Error(err)
	}
	os.Remove(later)
	delete(m.Files, later)

	stack, _ := m.Query("SELECT @@thread_stack")
	st, err := apply([]string{"max_connections", "thread_stack"}, []MariaDBSetting{maxConn, {Var: "thread_stack", Value: "393216"}})
	if err != nil {
		t.Fatalf("apply with a variable that is not dynamic: %v", err)
	}
	if st.Dynamic["thread_stack"] || !st.Dynamic["max_connections"] {
		t.Errorf("dynamic: %v", st.Dynamic)
	}
	if out, _ := m.Query("SELECT @@max_connections, @@thread_stack"); strings.Join(strings.Fields(out), " ") != "200 "+stack {
		t.Errorf("live: %s (thread_stack was %s)", out, stack)
	}
	opt.StepsFor = func([]string) []liveapply.Step {
		st := &MariaDBStep{Server: s, Binary: bins.Server, Root: m.Root, DropIn: dropIn}
		if err := st.FromDropIn(context.Background()); err != nil {
			t.Error(err)
		}
		return []liveapply.Step{st.Step()}
	}
	if j, err := liveapply.Rollback(context.Background(), opt); err != nil || j == nil {
		t.Fatalf("rollback: %v", err)
	}
	if out, _ := m.Query("SELECT @@max_connections"); out != "151" {
		t.Errorf("max_connections %s after the rollback", out)
	}
	if err := m.Unchanged(); err != nil {
		t.Error(err)
	}
}

// TestComposeMariaDBRefusesHostileValues: a value the server answered
// (its account, mysql, controls the server) that is not a number never
// reaches the root-owned drop-in, where a newline would start options of
// its own.
func TestComposeMariaDBRefusesHostileValues(t *testing.T) {
	settings := []MariaDBSetting{{Knob: "mariadb.max_connections", Var: "max_connections", Value: "200"}}
	b := ComposeMariaDB(settings, map[string]string{"max_connections": "151\n[mysqld]\nuser=root\nplugin_load_add=x.so\n#"})
	if strings.Contains(string(b), "user=root") || strings.Contains(string(b), "plugin_load_add") {
		t.Fatalf("a hostile value reached the drop-in:\n%s", b)
	}
	if got := ParsePrevious([]byte(previousMark + " max_connections=151;user=root innodb_buffer_pool_size=128M\n")); len(got) != 1 || got["innodb_buffer_pool_size"] != "134217728" {
		t.Errorf("ParsePrevious kept %v, want only the size, as a number", got)
	}
}
