package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/live/livehost"
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

// rollback is the MariaDB step for undoing the last apply on the host
// rooted at root.
func (d *dbFlags) rollback(ctx context.Context, root string) (*livehost.MariaDBStep, error) {
	st, err := livehost.RollbackMariaDB(ctx, root, d.socket)
	return st, hostErr(err)
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
