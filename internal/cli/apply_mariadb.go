package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/liveapply"
	"github.com/phptune/phptune/internal/livehost"
	"github.com/phptune/phptune/internal/mariadb"
	"github.com/phptune/phptune/internal/proc"
)

// dbFlags say which MariaDB apply and rollback change, and whether apply
// may restart it.
type dbFlags struct {
	socket  string
	restart bool
}

func (d *dbFlags) add(cmd *cobra.Command, apply bool) {
	cmd.Flags().StringVar(&d.socket, "mariadb-socket", "", "the MariaDB server's unix socket (default: from its command line or option files)")
	if apply {
		cmd.Flags().BoolVar(&d.restart, "restart-db", false, "restart MariaDB (systemctl restart, when systemd runs it) instead of SET GLOBAL: needed only for a variable that is not dynamic")
	}
}

// findMariaDB finds the host's running MariaDB server.
func findMariaDB(root, socket string) (livehost.MariaDBServer, error) {
	fs, err := proc.Default()
	if err != nil {
		return livehost.MariaDBServer{}, err
	}
	servers, err := livehost.MariaDBServers(fs, root)
	if err != nil {
		return livehost.MariaDBServer{}, err
	}
	return livehost.PickMariaDB(livehost.MariaDBUnder(servers, root, socket), socket)
}

// mariadbStep finds the server, its drop-in directory and mariadbd, and
// describes them as a step managing vars.
func mariadbStep(root string, d dbFlags) (*livehost.MariaDBStep, error) {
	s, err := findMariaDB(root, d.socket)
	if err != nil {
		return nil, usageErr("Start MariaDB, or name its socket with --mariadb-socket PATH", "the recommendation sets MariaDB's variables: %v", err)
	}
	dir, err := livehost.MariaDBDropInDir(s)
	if err != nil {
		return nil, usageErr("Give MariaDB's configuration an included directory, then run apply again", "%v", err)
	}
	bins, err := mariadb.Find()
	if err != nil {
		return nil, err
	}
	return &livehost.MariaDBStep{Server: s, Binary: bins.Server, Root: root, DropIn: filepath.Join(dir, livehost.MariaDBDropInName)}, nil
}

// planMariaDB is apply's MariaDB part: the step, with the live values the
// settings replace read first, and the drop-in's content.
func planMariaDB(ctx context.Context, f *applyFlags, settings []livehost.MariaDBSetting) (*livehost.MariaDBStep, []byte, error) {
	st, err := mariadbStep(f.root, f.db)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range settings {
		st.Vars = append(st.Vars, s.Var)
	}
	before, dynamic, err := st.ReadLive(ctx, st.Vars)
	if err != nil {
		return nil, nil, fmt.Errorf("reading MariaDB's live values over %s (as root, by unix_socket): %w", st.Server.Socket, err)
	}
	st.Before, st.Dynamic = before, dynamic
	if f.db.restart {
		unit := livehost.SystemdUnit("/proc", st.Server.PID)
		if unit == "" || !systemdRuns() || f.root != "/" {
			return nil, nil, usageErr("Leave out --restart-db (the dynamic variables are set live; the others take effect when you restart MariaDB yourself)",
				"--restart-db: MariaDB (pid %d) is not run by systemd here; phptune restarts it only with systemctl restart", st.Server.PID)
		}
		st.Restart = unit
	}
	for i := range settings {
		settings[i].Dynamic = dynamic[settings[i].Var]
	}
	return st, livehost.ComposeMariaDB(settings, before), nil
}

// printMariaDBPlan says what happens to MariaDB: each variable live now
// and after, how it takes effect.
func printMariaDBPlan(w io.Writer, st *livehost.MariaDBStep, settings []livehost.MariaDBSetting) {
	fmt.Fprintf(w, "MariaDB %s (pid %d): %s\n", st.Server.Socket, st.Server.PID, st.DropIn)
	for _, s := range settings {
		how := "SET GLOBAL now (dynamic)"
		switch {
		case st.Restart != "":
			how = "at the restart (systemctl restart " + st.Restart + ")"
		case !s.Dynamic:
			how = "NOT live: it is not dynamic and takes effect only at MariaDB's next restart (phptune restarts it only with --restart-db)"
		}
		fmt.Fprintf(w, "  %s: %s -> %s, %s\n", s.Var, st.Before[s.Var], s.Value, how)
	}
	fmt.Fprintf(w, "Plan for MariaDB: save the previous file and live values; write %s; mariadbd --help --verbose checks the whole configuration and that the server would start with these values; ", st.DropIn)
	if st.Restart != "" {
		fmt.Fprintf(w, "systemctl restart %s", st.Restart)
	} else {
		fmt.Fprint(w, "SET GLOBAL the dynamic ones (a value the server truncates or refuses fails the apply)")
	}
	fmt.Fprintln(w, "; a query must answer and the values read back; on any failure, put the file back and set the previous values again. MariaDB is never restarted without --restart-db.")
}

// rollbackMariaDB describes the MariaDB step for undoing the last apply:
// the drop-in on disk is that apply's, and records the values before it.
func rollbackMariaDB(ctx context.Context, root string, d dbFlags) (*livehost.MariaDBStep, error) {
	st, err := mariadbStep(root, d)
	if err != nil {
		return nil, err
	}
	if err := st.FromDropIn(ctx); err != nil {
		return nil, fmt.Errorf("reading MariaDB over %s: %w", st.Server.Socket, err)
	}
	return st, nil
}

// stepsFor gives the steps a journal names: php-fpm's, MariaDB's (found
// only when named).
func stepsFor(env *Env, names []string, fpm func() liveapply.Step, db func() (*livehost.MariaDBStep, error)) []liveapply.Step {
	var out []liveapply.Step
	for _, n := range names {
		switch n {
		case "php-fpm":
			if fpm != nil {
				out = append(out, fpm())
			}
		case "mariadb":
			st, err := db()
			if err != nil {
				fmt.Fprintf(env.Stderr, "MariaDB cannot be set back (%v): its file is restored; set its previous values by hand or restart it\n", err)
				continue
			}
			out = append(out, st.Step())
		}
	}
	return out
}
