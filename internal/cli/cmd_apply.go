package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/base/loopback"
	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/live/liveapply"
	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/traffic/load"
)

func init() {
	register(newApplyCmd)
	register(newRollbackCmd)
}

type applyFlags struct {
	hostFlags
	knobs    string
	result   string // the tune's result.json, when apply was given its directory
	dryRun   bool
	yes      bool
	settle   time.Duration
	checkURL string
	// checkHost is the Host header of --check-url's request (--check-host):
	// a site's own vhost instead of nginx's default server.
	checkHost string
	nginx     nginxFlags
	db        dbFlags
	rec       knob.Config // the recommendation read from knobs
}

func newApplyCmd(env *Env) *cobra.Command {
	f := &applyFlags{}
	cmd := &cobra.Command{
		Use:   "apply [DIR | --knobs FILE]",
		Short: "Apply a recommendation to a live php-fpm and MariaDB: drop-ins, checks, reload, health check, automatic rollback",
		Long:  applyLong,
		Example: `  phptune apply phptune-tune-RUN --dry-run
  phptune apply --knobs recommended.knobs --check-url http://127.0.0.1/ --yes
  phptune apply --root /srv/copy --fpm-config /srv/copy/etc/php/8.2/fpm/php-fpm.conf --knobs k --yes
  phptune apply --knobs k --nginx-config /etc/nginx/nginx.conf --settle 30s --yes
  phptune rollback`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if f.knobs != "" {
					return usageErr("Give one of them", "apply takes a tune's directory or --knobs FILE, not both")
				}
				f.knobs = filepath.Join(args[0], "recommended.knobs")
				f.result = filepath.Join(args[0], "result.json")
			}
			if f.knobs == "" {
				return usageErr("Try: phptune apply phptune-tune-RUN, or --knobs recommended.knobs", "apply needs a recommendation")
			}
			return runApply(env, f)
		},
	}
	f.hostFlags.add(cmd)
	f.nginx.add(cmd)
	f.db.add(cmd, true)
	fl := cmd.Flags()
	fl.StringVar(&f.knobs, "knobs", "", "the recommendation: a knob file (KNOB=VALUE lines, as recommended.knobs)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the diff of every file and the plan; change nothing")
	fl.BoolVar(&f.yes, "yes", false, "apply without asking")
	fl.DurationVar(&f.settle, "settle", 5*time.Second, "wait after the reload before the health checks; the error rate over it (5xx in the access logs of the nginx servers passing to the pool, else the pool's status page) must not be worse than over as long before, and no request sent during php-fpm's reload may fail")
	fl.StringVar(&f.checkURL, "check-url", "", "an http:// URL on loopback that must answer after the reload with the status it had before")
	fl.StringVar(&f.checkHost, "check-host", "", "with --check-url: the Host its request carries (a site's server_name, e.g. site.test), so the check asks the site itself, not the web server's default site")
	return cmd
}

// check refuses apply's bad flags before anything is read of the host.
func (f *applyFlags) check() error {
	if f.checkHost != "" {
		if f.checkURL == "" {
			return usageErr("Try: --check-url http://127.0.0.1/ --check-host "+f.checkHost, "--check-host names the Host of --check-url's request: give --check-url too")
		}
		if err := load.CheckHost(f.checkHost); err != nil {
			return usageErr("Try: --check-host site.test", "--check-host: %v", err)
		}
	}
	if f.checkURL != "" {
		if err := checkLoopbackURL(f.checkURL); err != nil {
			return err
		}
	}
	if f.root == "/" && os.Geteuid() != 0 && !f.dryRun {
		return usageErr("Run it as root (or with --dry-run to see the plan)", "apply changes the host's php-fpm: it needs root")
	}
	return nil
}

func runApply(env *Env, f *applyFlags) error {
	// The plan quotes the host's paths, versions and files: their control
	// characters are shown, not acted on.
	out := termsafe.NewWriter(env.Stdout)
	_, rec, err := knobConfig(f.knobs, nil)
	if err != nil {
		return err
	}
	f.rec = rec
	if err := f.check(); err != nil {
		return err
	}
	live, err := f.resolve(env.Ctx)
	if err != nil {
		return err
	}
	if err := checkMeasuredVersion(f.result, live.Bin.Version); err != nil {
		return err
	}
	if err := checkKnobVersions(rec, hostPHPVersion(live.Bin)); err != nil {
		return err
	}
	p, err := livehost.PlanApply(env.Ctx, livehost.ApplyInput{Live: live, Rec: rec, Root: f.root, Settle: f.settle,
		CheckURL: f.checkURL, CheckHost: f.checkHost, DBSocket: f.db.socket, RestartDB: f.db.restart,
		Nginx: f.nginx.spec(f.root), Warn: func(msg string) { fmt.Fprintln(out, msg) }})
	if err != nil {
		return hostErr(err)
	}
	printApplyPlan(out, live, p, f)
	if len(p.Plan.Changes) == 0 {
		fmt.Fprintln(out, "Nothing to apply: the recommendation changes no php-fpm, PHP, nginx or MariaDB setting a drop-in can carry.")
		return nil
	}
	if f.dryRun {
		return nil
	}
	if !f.yes {
		ok, err := confirm(env, "apply", "Apply it? [y/N] ")
		if err != nil || !ok {
			if err == nil {
				fmt.Fprintln(out, "Nothing changed.")
			}
			return err
		}
	}
	return executeApply(env, f, live, p)
}

// executeApply runs the plan: the grace transaction first when there is
// one, then the recommendation's, and says what was applied.
func executeApply(env *Env, f *applyFlags, live *livehost.LiveFPM, p *livehost.ApplyPlan) error {
	out := termsafe.NewWriter(env.Stdout)
	warn := func(msg string) { fmt.Fprintln(termsafe.NewWriter(env.Stderr), "apply: "+msg) }
	if err := p.AddErrorRate(env.Ctx, live, f.settle, warn); err != nil {
		return err
	}
	opt := liveapply.Options{Home: f.applyHome(), Root: f.root, Log: logTo(env, "apply"),
		StepsFor: livehost.Recovery{
			FPM:     func() liveapply.Step { return live.FPM.Step() }, // read when called: the probe is set later
			MariaDB: func() (*livehost.MariaDBStep, error) { return f.db.rollback(context.Background(), f.root) },
			Nginx:   func() (*livehost.Nginx, error) { return nginxOf(p.Nginx), nil },
			Warn:    func(msg string) { fmt.Fprintln(env.Stderr, msg) },
		}.Steps}
	if p.Grace != nil {
		g, err := liveapply.Apply(env.Ctx, livehost.GracePlan(live.FPM, *p.Grace), opt)
		if err != nil {
			if errors.Is(err, liveapply.ErrBusy) {
				return err
			}
			return fmt.Errorf("making php-fpm's reloads graceful failed, nothing of the recommendation was applied: %w", err)
		}
		fmt.Fprintf(out, "php-fpm's reloads now let requests in flight finish (transaction %s: process_control_timeout = %v in %s).\n", g.ID, livehost.ReloadGrace, p.Grace.Path)
	}
	j, err := liveapply.Apply(env.Ctx, p.Plan, opt)
	printProbe(env.Stderr, "apply", live.FPM.Probe)
	if err != nil {
		if errors.Is(err, liveapply.ErrBusy) {
			return err
		}
		return fmt.Errorf("apply failed: %w", err)
	}
	fmt.Fprintf(out, "Applied (transaction %s): %s. Undo with: phptune rollback\n", j.ID, strings.Join(p.Applied(), " "))
	saveNginxPatch(out, p.NginxChanges, opt, j, f.root)
	return nil
}

// logTo is a transaction's log: lines on standard error, prefixed with
// the command (apply, rollback), their control characters shown.
func logTo(env *Env, command string) func(format string, args ...any) {
	return func(format string, args ...any) {
		fmt.Fprintf(termsafe.NewWriter(env.Stderr), command+": "+format+"\n", args...)
	}
}

// nginxOf is the nginx of ngx, nil for none.
func nginxOf(ngx *livehost.LiveNginx) *livehost.Nginx {
	if ngx == nil {
		return nil
	}
	return &ngx.Nginx
}

// checkMeasuredVersion refuses a tune's recommendation measured on another
// PHP branch than the host's php-fpm (result: the tune's result.json; none
// for a bare knob file, which says no version).
func checkMeasuredVersion(result, hostVersion string) error {
	if result == "" {
		return nil
	}
	v, err := tuneFPMVersion(result)
	if err != nil || v == "" {
		return err
	}
	if !knob.SameBranch(v, hostVersion) {
		return usageErr("Tune again on this host's PHP (phptune tune), or apply the knobs you checked yourself with --knobs FILE",
			"the recommendation in %s was measured on PHP %s; this host runs php-fpm %s", filepath.Dir(result), v, hostVersion)
	}
	return nil
}

// checkLoopbackURL accepts only http:// URLs whose host is a loopback IP
// literal (loopback.HTTPURL): apply never sends requests elsewhere.
func checkLoopbackURL(u string) error {
	if _, err := loopback.HTTPURL(u); err != nil {
		return usageErr("Try: --check-url http://127.0.0.1/", "--check-url %v", err)
	}
	return nil
}
