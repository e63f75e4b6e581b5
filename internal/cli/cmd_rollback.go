package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/live/liveapply"
	"github.com/phptune/phptune/internal/live/livehost"
)

// rollbackFlags are rollback's: the host's, its nginx's and MariaDB's, as
// apply's.
type rollbackFlags struct {
	hostFlags
	nginx nginxFlags
	db    dbFlags
	yes   bool
}

func newRollbackCmd(env *Env) *cobra.Command {
	f := &rollbackFlags{}
	cmd := &cobra.Command{
		Use:   "rollback",
		Short: "Undo the last phptune apply (or one cut short): its files put back, php-fpm and nginx reloaded, MariaDB's values set back",
		Long:  rollbackLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.root == "/" && os.Geteuid() != 0 {
				return usageErr("Run it as root", "rollback changes the host's php-fpm: it needs root")
			}
			return runRollback(env, f)
		},
	}
	f.hostFlags.add(cmd)
	f.nginx.add(cmd)
	f.db.add(cmd, false)
	cmd.Flags().BoolVar(&f.yes, "yes", false, "roll back without asking")
	return cmd
}

func runRollback(env *Env, f *rollbackFlags) error {
	live, err := f.resolve(env.Ctx)
	if err != nil {
		return err
	}
	opt := liveapply.Options{Home: f.applyHome(), Root: f.root, Log: logTo(env, "rollback"),
		StepsFor: livehost.Recovery{
			FPM:     func() liveapply.Step { return live.FPM.Step() }, // read when called: the probe is set later
			MariaDB: func() (*livehost.MariaDBStep, error) { return f.db.rollback(env.Ctx, f.root) },
			Nginx: func() (*livehost.Nginx, error) {
				ng, err := livehost.FindNginx(env.Ctx, f.nginx.spec(f.root))
				return ng, hostErr(err)
			},
			Warn: func(msg string) { fmt.Fprintln(env.Stderr, msg) },
		}.Steps}
	next, err := liveapply.Next(opt)
	if err != nil {
		return err
	}
	if next == nil {
		fmt.Fprintln(env.Stdout, "Nothing to roll back.")
		return nil
	}
	fmt.Fprintf(env.Stdout, "Rolls back transaction %s (%s, %s): %s\n", next.ID, next.State, next.Created.Format(time.RFC3339), savedPaths(next))
	if !f.yes {
		ok, err := confirm(env, "rollback", "Roll it back? [y/N] ")
		if err != nil || !ok {
			if err == nil {
				fmt.Fprintln(env.Stdout, "Nothing changed.")
			}
			return err
		}
	}
	live.FPM.Probe = &livehost.ReloadProbe{}
	j, err := liveapply.Rollback(env.Ctx, opt)
	printProbe(env.Stderr, "rollback", live.FPM.Probe)
	if j == nil && err == nil {
		fmt.Fprintln(env.Stdout, "Nothing to roll back.")
		return nil
	}
	if err != nil {
		return fmt.Errorf("rollback of transaction %s did not complete: %w", j.ID, err)
	}
	fmt.Fprintf(env.Stdout, "Rolled back transaction %s (%d files restored).\n", j.ID, len(j.Files))
	return nil
}

// savedPaths lists the files a transaction wrote, for the question.
func savedPaths(j *liveapply.Journal) string {
	var paths []string
	for _, f := range j.Files {
		paths = append(paths, f.Path)
	}
	if len(paths) == 0 {
		return "no files"
	}
	return strings.Join(paths, ", ")
}
