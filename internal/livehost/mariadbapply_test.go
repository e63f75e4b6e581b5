package livehost

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/liveapply"
	"github.com/phptune/phptune/internal/livehost/hosttest"
	"github.com/phptune/phptune/internal/mariadb"
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
