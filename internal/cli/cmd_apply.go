package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/liveapply"
	"github.com/phptune/phptune/internal/livehost"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/loopback"
	"github.com/phptune/phptune/internal/noredirect"
	"github.com/phptune/phptune/internal/phpfpm"
	"github.com/phptune/phptune/internal/recommend"
	"github.com/phptune/phptune/internal/termsafe"
	"github.com/phptune/phptune/internal/tune"
)

func init() {
	register(newApplyCmd)
	register(newRollbackCmd)
}

// hostFlags say which live host, and which of its php-fpm masters, advise,
// apply and rollback work on: the same flags, with the same meaning, on
// the three commands.
type hostFlags struct {
	root, fpmConfig, fpmPrefix, iniDir, pool, home string
}

// add registers the host flags and apply's and rollback's --apply-home.
func (f *hostFlags) add(cmd *cobra.Command) {
	f.addHost(cmd, "default ROOT/etc/php/VERSION/fpm/php-fpm.conf", "the pool to change (default: the configuration's only pool, or www)")
	cmd.Flags().StringVar(&f.home, "apply-home", "", "where transactions and the files they replaced are kept (default PHPTUNE_HOME/apply)")
}

// addHost registers the flags naming the host, its master and pool;
// fpmDefault and poolHelp say what the command does without them.
func (f *hostFlags) addHost(cmd *cobra.Command, fpmDefault, poolHelp string) {
	fl := cmd.Flags()
	fl.StringVar(&f.root, "root", "/", "the host's root: / on the host itself, or a directory holding a copy (its etc/php/VERSION/fpm, etc/nginx, etc/apache2, etc/mysql)")
	fl.StringVar(&f.fpmConfig, "fpm-config", "", "php-fpm.conf of the master ("+fpmDefault+")")
	fl.StringVar(&f.fpmPrefix, "fpm-prefix", "", "the master's -p prefix, when it runs with one (relative paths in its configuration are resolved against it)")
	fl.StringVar(&f.iniDir, "ini-dir", "", "the conf.d php-fpm's PHP reads (default ROOT/etc/php/VERSION/fpm/conf.d)")
	fl.StringVar(&f.pool, "pool", "", poolHelp)
}

// liveFPM is the php-fpm master a host's flags name, read from disk and
// found running.
type liveFPM struct {
	bin    *phpfpm.Binary
	host   *livehost.FPMHost
	pool   livehost.Pool
	fpm    livehost.FPM
	iniDir string
}

// resolve reads the host's php-fpm configuration and finds its master.
func (f *hostFlags) resolve() (*liveFPM, error) {
	bin, err := phpfpm.Find()
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(f.root) {
		return nil, usageErr("Try: --root /srv/host-copy", "--root %q: give an absolute directory", f.root)
	}
	if st, err := os.Stat(f.root); err != nil || !st.IsDir() {
		return nil, usageErr("Try: --root / (this host) or the directory of a copy", "--root %s is not a directory", f.root)
	}
	conf := f.fpmConfig
	if conf == "" {
		conf = filepath.Join(f.root, "etc", "php", bin.Version, "fpm", "php-fpm.conf")
	}
	iniDir := f.iniDir
	if iniDir == "" {
		iniDir = filepath.Join(f.root, "etc", "php", bin.Version, "fpm", "conf.d")
	}
	host, err := livehost.ReadFPM(conf, f.fpmPrefix)
	if err != nil {
		return nil, usageErr("Point at the master's configuration with --fpm-config FILE", "php-fpm configuration: %v", err)
	}
	name := f.pool
	if name == "" {
		name = "www"
		if len(host.Pools) == 1 {
			name = host.Pools[0].Name
		}
	}
	pool, ok := host.Pool(name)
	if !ok {
		return nil, usageErr("Name one with --pool", "--pool %s: %s has no such pool (it has: %s)", name, conf, strings.Join(host.PoolNames(), ", "))
	}
	l := &liveFPM{bin: bin, host: host, pool: pool, iniDir: iniDir}
	l.fpm = livehost.FPM{Binary: bin.Path, Conf: conf, Prefix: f.fpmPrefix, Listen: pool.Listen,
		StatusPath: pool.StatusPath, StartArgs: []string{"-y", conf}}
	if f.fpmPrefix != "" {
		l.fpm.StartArgs = append(l.fpm.StartArgs, "-p", f.fpmPrefix)
	}
	if f.root != "/" {
		// A copy's master reads the copy's conf.d, not the compiled-in one.
		l.fpm.Env = []string{"PHP_INI_SCAN_DIR=" + iniDir}
	} else if pid, err := l.fpm.Master(); err == nil {
		// systemctl only for the master a service runs, never for
		// another master of the same version's unit.
		l.fpm.Systemd = livehost.FindFPMService(context.Background(), f.root, pid)
	}
	return l, nil
}

func (f *hostFlags) applyHome() string {
	if f.home != "" {
		return f.home
	}
	return filepath.Join(lab.Home(), "apply")
}

// systemdRuns reports whether systemd is this machine's init.
func systemdRuns() bool {
	st, err := os.Stat("/run/systemd/system")
	return err == nil && st.IsDir()
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
}

func newApplyCmd(env *Env) *cobra.Command {
	f := &applyFlags{}
	cmd := &cobra.Command{
		Use:   "apply [DIR | --knobs FILE]",
		Short: "Apply a recommendation to a live php-fpm and MariaDB: drop-ins, checks, reload, health check, automatic rollback",
		Long: `phptune apply puts a recommendation (a tune's directory, or --knobs FILE as
recommended.knobs holds) on a running host without editing its files: the pool's
settings go to a drop-in in the pool's include directory (pool.d/zz-phptune.conf,
reopening the pool's section, read after its own file) and PHP's to conf.d/99-phptune.ini.
nginx's (the running master of ROOT/etc/nginx/nginx.conf or --nginx-config, read
through its own nginx -T) go to zz-phptune.conf in a directory nginx includes at
http level (conf.d), when an http-level file may carry them and no other file
sets them at http level already: keepalive_timeout, access_log off.

As root, apply reads the recommendation (recommended.knobs, result.json or
--knobs FILE) only when no other account could have written it: the file
and its directory must be root's or yours (SUDO_UID's under sudo), writable
by no group or other account, and the file no link; anything else is
refused, naming its owner or mode.

The whole change is one transaction. The previous state of every file it
writes is saved under phptune's home first; then the files are written
atomically (temporary file, fsync, rename), only into directories no other
user can write; php-fpm -t checks the whole configuration; php-fpm reloads
(systemctl only when the master is the main process of the systemd service
its cgroup names, otherwise SIGUSR2 to the master found in /proc by its
title, owned by root: no pid file is trusted), letting the requests in
flight finish for up to its process_control_timeout. Debian's php-fpm.conf
leaves that at 0, with which a reload kills them (502s): the first apply on
such a master sets process_control_timeout = 10s in zz-phptune-reload.conf
beside the pool's drop-in, in a transaction of its own reloaded at a moment
the pool is idle (that one reload is abrupt if none comes within 10 s);
phptune rollback of the recommendation leaves it, a second rollback removes
it. Requests go to the pool during every php-fpm reload and the failures are
counted and printed; with --settle above 0 any failure rolls back. nginx
likewise (nginx -t -c CONF, then systemctl reload nginx or SIGHUP to its master
found the same way, done once new workers run and the old ones stopped
accepting); the health check waits for the reloaded master
and reads the pool's status page (pm.status_path; without it, it only
connects), and --check-url must answer as it did before. Any failure rolls
every file back and reloads the old configuration; so does Ctrl-C. An apply
killed outright is undone by the next phptune apply or phptune rollback.
One apply or rollback runs at a time (a lock). phptune rollback undoes the
last apply by hand.

MariaDB's knobs (mariadb.*) go to 99-phptune.cnf in the last directory its
my.cnf includes (!includedir; Debian: /etc/mysql/mariadb.conf.d), in the same
transaction: mariadbd --help --verbose checks the whole configuration and that
the server would start with the new values; the dynamic variables are set live
with SET GLOBAL (their previous values read first and recorded in the file, so
a rollback sets them back; a value the server truncates or refuses fails the
apply); a query must answer and the values read back. MariaDB is found in /proc
(--mariadb-socket names its socket) and is talked to only after SO_PEERCRED
shows the socket is its process's. It is never restarted: a variable that is
not dynamic takes effect at its next restart, unless --restart-db is given
and systemd runs it (systemctl restart).

--settle (5s) is also an error-rate check: the 5xx lines in the access logs of
the nginx servers whose fastcgi_pass sends to the pool (never another server's;
a pool no running nginx passes to is said so) over the settle window after the
reload against as long before the apply (or, without such a log, the pool's
status page: max children reached and slow requests
per accepted connection, measured over as long before the change); a rate worse
after (at least 3 errors, over 1 point and twice the rate before) rolls back,
the numbers in the reason.

Settings a drop-in cannot carry are refused or printed, never written: a change
of the pool's socket (listen), several pools (fpm.pools), nginx's
worker_processes, worker_rlimit_nofile, worker_cpu_affinity, events
(worker_connections, multi_accept), listen (backlog, reuseport) and a directive
your files already set at http level: these are printed as an exact patch of
your files, kept beside the transaction for cd ROOT && patch -p0.

--dry-run prints each file's diff and the plan, and changes nothing. Without
--yes apply asks before changing anything (and refuses when it cannot ask).`,
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

func runApply(env *Env, f *applyFlags) error {
	// The plan quotes the host's paths, versions and files: their control
	// characters are shown, not acted on.
	out := termsafe.NewWriter(env.Stdout)
	_, rec, err := knobConfig(f.knobs, nil)
	if err != nil {
		return err
	}
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
	live, err := f.resolve()
	if err != nil {
		return err
	}
	if err := checkMeasuredVersion(f.result, live.bin.Version); err != nil {
		return err
	}
	if err := checkKnobVersions(rec, hostPHPVersion(live.bin)); err != nil {
		return err
	}
	drop, err := livehost.Compose(live.host, live.pool.Name, rec, live.iniDir)
	if err != nil {
		return usageErr("See what the recommendation holds: phptune apply --dry-run", "%v", err)
	}
	if _, err := live.fpm.Master(); err != nil {
		return fmt.Errorf("php-fpm with %s is not running (%v): apply changes a running master; start it first", live.fpm.Conf, err)
	}
	var plan liveapply.Plan
	for _, c := range []struct {
		path string
		b    []byte
	}{{drop.PoolPath, drop.Pool}, {drop.IniPath, drop.Ini}} {
		if c.b != nil {
			plan.Changes = append(plan.Changes, liveapply.Change{Path: c.path, Content: c.b})
		}
	}
	var grace *liveapply.Change
	if len(plan.Changes) > 0 {
		if grace, err = livehost.GraceChange(live.host, live.pool.Name); err != nil {
			return usageErr("Set process_control_timeout in php-fpm.conf's [global] section by hand", "%v", err)
		}
		live.fpm.Probe = &livehost.ReloadProbe{}
		plan.Steps = []liveapply.Step{live.fpm.Step()}
		if f.settle > 0 {
			plan.Steps = append(plan.Steps, live.fpm.Probe.Step())
		}
	}
	settings := livehost.MariaDBSettings(rec)
	var db *livehost.MariaDBStep
	if len(settings) > 0 {
		st, content, err := planMariaDB(env.Ctx, f, settings)
		if err != nil {
			return err
		}
		db = st
		i := len(plan.Changes)
		plan.Changes = append(plan.Changes, liveapply.Change{Path: st.DropIn, Content: content})
		plan.Steps = append(plan.Steps, st.Step())
		// The values shown in the plan were read before the lock: read
		// them again under it, after any apply cut short is undone, so
		// the drop-in records what the server really ran before.
		plan.Prepare = func(ctx context.Context, p *liveapply.Plan) error {
			before, _, err := st.ReadLive(ctx, st.Vars)
			if err != nil {
				return fmt.Errorf("reading MariaDB's live values again: %w", err)
			}
			st.Before = before
			p.Changes[i].Content = livehost.ComposeMariaDB(settings, before)
			return nil
		}
	}
	if f.checkURL != "" {
		step, err := urlStep(env.Ctx, f.checkURL, f.checkHost)
		if err != nil {
			return err
		}
		plan.Steps = append(plan.Steps, step)
	}
	ngx, err := f.nginx.resolveForApply(env.Ctx, f.root, out)
	if err != nil {
		return err
	}
	np, err := planNginx(ngx, rec, f.root, &plan)
	if err != nil {
		return usageErr("See what the recommendation holds: phptune apply --dry-run", "%v", err)
	}
	plan.Settle = f.settle
	printPlan(out, live, drop, plan, f)
	printGrace(out, grace)
	np.print(out, f.root)
	if db != nil {
		printMariaDBPlan(out, db, settings)
	}
	printManual(out, rec, np.handled)
	if len(plan.Changes) == 0 {
		fmt.Fprintln(out, "Nothing to apply: the recommendation changes no php-fpm, PHP, nginx or MariaDB setting a drop-in can carry.")
		return nil
	}
	if f.dryRun {
		return nil
	}
	if !f.yes {
		ok, err := confirm(env, "apply", "Apply it? [y/N] ")
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(out, "Nothing changed.")
			return nil
		}
	}
	if err := addErrorRate(env, &plan, np, live, f.settle); err != nil {
		return err
	}
	opt := liveapply.Options{Home: f.applyHome(), Root: f.root,
		Log: func(format string, args ...any) {
			fmt.Fprintf(termsafe.NewWriter(env.Stderr), "apply: "+format+"\n", args...)
		},
		StepsFor: func(names []string) []liveapply.Step {
			steps := stepsFor(env, names, live.fpm.Step, func() (*livehost.MariaDBStep, error) { return rollbackMariaDB(context.Background(), f.root, f.db) })
			return append(steps, nginxSteps(names, ngx)...)
		}}
	if grace != nil {
		g, err := liveapply.Apply(env.Ctx, livehost.GracePlan(live.fpm, *grace), opt)
		if err != nil {
			if errors.Is(err, liveapply.ErrBusy) {
				return err
			}
			return fmt.Errorf("making php-fpm's reloads graceful failed, nothing of the recommendation was applied: %w", err)
		}
		fmt.Fprintf(out, "php-fpm's reloads now let requests in flight finish (transaction %s: process_control_timeout = %v in %s).\n", g.ID, livehost.ReloadGrace, grace.Path)
	}
	j, err := liveapply.Apply(env.Ctx, plan, opt)
	printProbe(env.Stderr, "apply", live.fpm.Probe)
	if err != nil {
		if errors.Is(err, liveapply.ErrBusy) {
			return err
		}
		return fmt.Errorf("apply failed: %w", err)
	}
	applied := append(append([]string{}, drop.Knobs...), np.dropKnobs()...)
	for _, s := range settings {
		applied = append(applied, s.Knob)
	}
	fmt.Fprintf(out, "Applied (transaction %s): %s. Undo with: phptune rollback\n", j.ID, strings.Join(applied, " "))
	np.savePatch(opt, j, f.root, out)
	return nil
}

// checkMeasuredVersion refuses a tune's recommendation measured on another
// PHP branch than the host's php-fpm (result: the tune's result.json; none
// for a bare knob file, which says no version).
func checkMeasuredVersion(result, hostVersion string) error {
	if result == "" {
		return nil
	}
	b, err := readTrusted(result)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a directory with recommended.knobs only: nothing to check
	}
	if err != nil {
		return err
	}
	var r struct {
		Environment struct {
			Versions map[string]string `json:"versions"`
		} `json:"environment"`
	}
	if json.Unmarshal(b, &r) != nil {
		return usageErr("Give the tune's directory as phptune tune wrote it, or --knobs FILE", "%s is not a tune's result", result)
	}
	v := r.Environment.Versions["php-fpm"]
	if v == "" {
		return nil
	}
	branch := v
	if parts := strings.SplitN(v, ".", 3); len(parts) >= 2 {
		branch = parts[0] + "." + parts[1]
	}
	if branch != hostVersion {
		return usageErr("Tune again on this host's PHP (phptune tune), or apply the knobs you checked yourself with --knobs FILE",
			"the recommendation in %s was measured on PHP %s; this host runs php-fpm %s", filepath.Dir(result), v, hostVersion)
	}
	return nil
}

// printPlan writes what apply will do: each file's diff, the checks, the
// reload and the health checks.
func printPlan(w io.Writer, live *liveFPM, drop *livehost.DropIns, plan liveapply.Plan, f *applyFlags) {
	fmt.Fprintf(w, "php-fpm %s, master of %s, pool %s (%s)\n", live.bin.Version, live.fpm.Conf, live.pool.Name, live.pool.Listen)
	for _, c := range plan.Changes {
		old, _ := os.ReadFile(c.Path)
		fmt.Fprint(w, tune.UnifiedDiff(c.Path, c.Path, lines(old), lines(c.Content), 3))
	}
	if len(plan.Steps) == 0 || plan.Steps[0].Name != "php-fpm" {
		return // nothing of php-fpm's changes
	}
	reload := "SIGUSR2 to php-fpm's master of " + live.fpm.Conf + " (found in /proc, owned by root)"
	if live.fpm.Systemd != "" {
		reload = "systemctl reload-or-restart " + live.fpm.Systemd
	}
	fmt.Fprintf(w, "Plan: save the files' previous state; write them; %s -t; %s; wait %v; ", live.bin.Path, reload, f.settle)
	if live.pool.StatusPath != "" {
		fmt.Fprintf(w, "read pool %s's status page %s", live.pool.Name, live.pool.StatusPath)
	} else {
		fmt.Fprintf(w, "connect to pool %s (pm.status_path is off in it: set pm.status_path = /status for a real health check)", live.pool.Name)
	}
	if f.checkURL != "" {
		fmt.Fprintf(w, "; GET %s", f.checkURL)
		if f.checkHost != "" {
			fmt.Fprintf(w, " (Host: %s)", f.checkHost)
		}
	}
	fmt.Fprintln(w, "; on any failure, put every file back and reload.")
}

// printManual prints the recommendation's settings apply does not write
// (handled: the nginx knobs apply wrote or printed a patch for).
func printManual(w io.Writer, rec knob.Config, handled map[string]bool) {
	var web []string
	for _, ch := range knob.Diff(knob.Defaults(), rec) {
		k, _ := knob.Lookup(ch.Knob)
		if k.Component != knob.PHPFPM && k.Component != knob.PHP && k.Component != knob.Server && k.Component != knob.Build && k.Component != knob.MariaDB && !handled[ch.Knob] {
			web = append(web, ch.Knob+"="+ch.To)
		}
	}
	if len(web) == 0 {
		return
	}
	fmt.Fprintf(w, "Not applied (%s): the web server's settings apply writes only for a running nginx it read (a drop-in or a patch; an upstream's keepalive not at all); merge these by hand:\n", strings.Join(web, " "))
	files := recommend.Files(knob.Defaults(), rec, recommend.Target{})
	for _, name := range []string{recommend.WebFile(rec.Server())} {
		if b, ok := files[name]; ok {
			fmt.Fprintf(w, "--- %s\n%s", name, b)
		}
	}
}

func lines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// stdinIsTerminal says whether apply can ask (a variable for tests).
var stdinIsTerminal = func() bool { return term.IsTerminal(int(os.Stdin.Fd())) }

// confirm asks on the terminal before command (apply, rollback) changes
// a live host; without a terminal it refuses.
func confirm(env *Env, command, prompt string) (bool, error) {
	if !stdinIsTerminal() {
		fix := "Add --yes to " + command + " without asking"
		if command == "apply" {
			fix += ", or --dry-run to see the plan"
		}
		return false, usageErr(fix, "%s asks before changing a live host, and standard input is not a terminal", command)
	}
	fmt.Fprint(env.Stderr, prompt)
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(line)), "y"), nil
}

// checkLoopbackURL accepts only http:// URLs whose host is a loopback IP
// literal (loopback.HTTPURL): apply never sends requests elsewhere.
func checkLoopbackURL(u string) error {
	if _, err := loopback.HTTPURL(u); err != nil {
		return usageErr("Try: --check-url http://127.0.0.1/", "--check-url %v", err)
	}
	return nil
}

// urlStep probes url now (with host, when set, as its Host header) and
// returns a step whose health check wants the same status again.
func urlStep(ctx context.Context, url, host string) (liveapply.Step, error) {
	get := func(ctx context.Context) (int, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, err
		}
		if host != "" {
			req.Host = host
		}
		client := noredirect.Client(nil)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	before, err := get(ctx)
	if err != nil {
		return liveapply.Step{}, fmt.Errorf("--check-url %s before the change: %v", url, err)
	}
	return liveapply.Step{Name: "check-url", Healthy: func(ctx context.Context) error {
		now, err := get(ctx)
		if err != nil {
			return fmt.Errorf("%s: %v", url, err)
		}
		if now != before {
			return fmt.Errorf("%s answered %d, %d before the change", url, now, before)
		}
		return nil
	}}, nil
}

func newRollbackCmd(env *Env) *cobra.Command {
	f := &hostFlags{}
	var nf nginxFlags
	var db dbFlags
	var yes bool
	cmd := &cobra.Command{
		Use:   "rollback",
		Short: "Undo the last phptune apply (or one cut short): its files put back, php-fpm and nginx reloaded, MariaDB's values set back",
		Long: `phptune rollback undoes the newest apply that is not undone yet: every file it
wrote goes back to its saved previous state (a file it created is removed),
the servers the apply changed (php-fpm, nginx) check and reload the restored
configuration and their health is checked; MariaDB's variables are set back to
the values the apply recorded. An apply that was cut short (killed) is undone
the same way, here or by the next phptune apply. Give the same host flags as
the apply. Without --yes rollback names the transaction and asks first (and
refuses when it cannot ask).

php-fpm's reload lets the requests in flight finish when its master has a
process_control_timeout (the first apply sets one, in a transaction of its own
that the recommendation's rollback leaves: a second rollback undoes it, and
its reload is then the last graceful one); requests are sent to the pool
during the reload and the failures counted and printed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.root == "/" && os.Geteuid() != 0 {
				return usageErr("Run it as root", "rollback changes the host's php-fpm: it needs root")
			}
			live, err := f.resolve()
			if err != nil {
				return err
			}
			opt := liveapply.Options{Home: f.applyHome(), Root: f.root,
				Log: func(format string, args ...any) {
					fmt.Fprintf(termsafe.NewWriter(env.Stderr), "rollback: "+format+"\n", args...)
				},
				StepsFor: func(names []string) []liveapply.Step {
					steps := stepsFor(env, names, live.fpm.Step, func() (*livehost.MariaDBStep, error) { return rollbackMariaDB(env.Ctx, f.root, db) })
					return append(steps, nginxStepsOf(names, func() (*livehost.Nginx, error) { return nf.master(f.root) })...)
				}}
			next, err := liveapply.Next(opt)
			if err != nil {
				return err
			}
			if next == nil {
				fmt.Fprintln(env.Stdout, "Nothing to roll back.")
				return nil
			}
			fmt.Fprintf(env.Stdout, "Rolls back transaction %s (%s, %s): %s\n", next.ID, next.State, next.Created.Format(time.RFC3339), savedPaths(next))
			if !yes {
				ok, err := confirm(env, "rollback", "Roll it back? [y/N] ")
				if err != nil {
					return err
				}
				if !ok {
					fmt.Fprintln(env.Stdout, "Nothing changed.")
					return nil
				}
			}
			live.fpm.Probe = &livehost.ReloadProbe{}
			j, err := liveapply.Rollback(env.Ctx, opt)
			printProbe(env.Stderr, "rollback", live.fpm.Probe)
			if j == nil && err == nil {
				fmt.Fprintln(env.Stdout, "Nothing to roll back.")
				return nil
			}
			if err != nil {
				return fmt.Errorf("rollback of transaction %s did not complete: %w", j.ID, err)
			}
			fmt.Fprintf(env.Stdout, "Rolled back transaction %s (%d files restored).\n", j.ID, len(j.Files))
			return nil
		},
	}
	f.add(cmd)
	nf.add(cmd)
	db.add(cmd, false)
	cmd.Flags().BoolVar(&yes, "yes", false, "roll back without asking")
	return cmd
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
