package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/advise"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/livehost"
	"github.com/phptune/phptune/internal/proc"
	"github.com/phptune/phptune/internal/termsafe"
)

func init() { register(newAdviseCmd) }

// ErrChanges is advise --exit-code's exit 1: a change is recommended.
type ErrChanges struct{}

func (ErrChanges) Error() string { return "advise recommends changes (--exit-code)" }

func newAdviseCmd(env *Env) *cobra.Command {
	var host hostFlags
	var asJSON, exitCode, noDB bool
	var dbSocket string
	var watch, every time.Duration
	var front frontFlags
	var extras adviseExtras
	cmd := &cobra.Command{
		Use:   "advise",
		Short: "Read a live host's php-fpm pools (no load sent) and size them together under its memory",
		Long: `phptune advise reads what a running host shows, sending no load and changing
nothing: every php-fpm master in /proc (or the one of --fpm-config), its pools
as configured (include globs followed), each pool's workers' memory (PSS), its
status page over FastCGI when pm.status_path is set (max active processes, max
children reached, listen queue since the master started), the host's memory,
swap and the masters' cgroup limit.

Every pool is sized together under the host's one memory budget (available
memory plus what the workers hold, less a reserve of a tenth of the host, at
least 256 MiB): each pool's share follows its peak (max active processes, or
its configured size without a status page) times its workers' 95th percentile
PSS. A pool larger than its share is lowered; a pool that reached
pm.max_children is raised, at most doubled, when its share allows; the others
are kept. Findings say what was read and what was not (the status page off,
and how to turn it on; a master up for less than a day: too short to trust
its peaks; queueing; swap). Advise cannot see the knee without load: phptune
tune measures it. --watch 10m samples every --every (10 s) over that long: the
workers' PSS percentiles then cover the whole watch and the memory available is the
lowest seen.

MariaDB, when one runs (mariadbd in /proc owned by root or mysql; its socket
from its command line, its option files or --mariadb-socket), is read as root
by unix_socket authentication, after SO_PEERCRED shows the socket's listener is
that server: its counters since it started (uptime under a day: too short to
trust), max used connections against max_connections and the pools' total
pm.max_children, the buffer pool against its InnoDB data (InnoDB's persistent
index statistics) and its hit rate, temporary tables on disk, slow queries, the
query cache. It makes no temporary table on disk: the counters first, the
variables as @@GLOBAL.name, no information_schema query. It shares the one
memory budget with the pools: a raised buffer pool comes out of it.

It finds the web server in front: the running nginx master (its -c, or
--nginx-config; ROOT/etc/nginx/nginx.conf under --root) read through its own
nginx -T, and Apache's SetHandler/ProxyPassMatch hand-offs (apache2.conf and
its includes, apache2ctl -S); for each pool it says which server and listen
address pass to its socket, and warns of a pool no server passes to, of an
nginx whose workers x worker_connections hold fewer proxied requests than the
pools' max_children, of upstream keepalive holding more workers than a pool
has or kept without fastcgi_keep_conn on, and of listen backlogs
net.core.somaxconn caps.

--exit-code exits 1 when a change is recommended (as git diff --exit-code), so
advise fits monitoring and CI; 2 stays a bad command line. The drop-in it
prints is what phptune apply writes.

--opcache reads each master's opcache (shared by its pools) through one of its
pools: a status script written into a new private directory under
--opcache-dir (root's, 0755; the script 0644: the pool reads it, nobody else
can write it), requested over FastCGI only after SO_PEERCRED shows the socket
is held by the master, and removed afterwards, Ctrl-C included. A pool whose
chroot, security.limit_extensions, open_basedir or disable_functions would
block it is not used, and the reason is printed. Findings: opcache off; its
memory, interned strings, key table, JIT buffer or realpath cache full (raised
to twice what they hold, max_accelerated_files to the prime PHP uses); the hit
rate; timestamps checked on every request; the JIT off.

When the results database holds a finished tune of the host's PHP version
(the newest, or --tune RUN-ID), advise puts its measured pool size beside its
own and says why they differ. --html FILE writes an offline page (a link or
another account's file under that name is refused); -o DIR writes
advice.json, advice.html and advice.txt into a new directory (or an empty one
of yours only you can write).`,
		Example: `  phptune advise
  phptune advise --json
  phptune advise --fpm-config /etc/php/8.2/fpm/php-fpm.conf --exit-code
  phptune advise --opcache -o advice/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if watch < 0 || every <= 0 {
				return usageErr("Try: --watch 10m --every 10s", "--watch %v --every %v: give a duration of 0 or more and an interval above 0", watch, every)
			}
			if err := extras.check(); err != nil {
				return err
			}
			fs, err := proc.Default()
			if err != nil {
				return err
			}
			masters, err := livehost.Masters(fs)
			if err != nil {
				return err
			}
			masters, err = host.adviseMasters(masters)
			if err != nil {
				return err
			}
			fpmPrefix := host.fpmPrefix
			if len(masters) == 0 {
				return fmt.Errorf("no php-fpm master is running here: advise reads a live host (start php-fpm, or use phptune lab and phptune tune)")
			}
			front.root = host.root
			fr, frontFindings, err := adviseFront(env.Ctx, &front, masters, fpmPrefix)
			if err != nil {
				return err
			}
			var samples [][]advise.Pool
			var hosts []advise.Host
			start := time.Now()
			for {
				var pools []advise.Pool
				for _, m := range masters {
					ps, err := livehost.Observe(env.Ctx, fs, m, fpmPrefix)
					if err != nil {
						return fmt.Errorf("php-fpm master %d (%s): %w", m.PID, m.Conf, err)
					}
					pools = append(pools, host.adviseePools(ps)...)
				}
				host, err := livehost.HostMemory(fs, masters)
				if err != nil {
					return err
				}
				samples, hosts = append(samples, pools), append(hosts, host)
				if time.Since(start)+every > watch {
					break
				}
				select {
				case <-env.Ctx.Done():
					fmt.Fprintf(env.Stderr, "advise: interrupted after %v: advising on the %d samples taken\n", time.Since(start).Round(time.Second), len(samples))
				case <-time.After(every):
					continue
				}
				break
			}
			a := advise.AdviseHost(advise.MergeHosts(hosts), advise.Merge(samples), readMariaDB(env, fs, host.root, dbSocket, noDB))
			a.Front, a.Findings = fr, append(a.Findings, frontFindings...)
			if len(samples) > 1 {
				a.Findings = append(a.Findings, advise.Finding{Severity: "info", Message: fmt.Sprintf("watched for %v: %d samples, every %v; the workers' PSS percentiles cover every sample, the memory available is the lowest seen",
					time.Since(start).Round(time.Second), len(samples), every)})
			}
			if err := extras.extend(env, &a, fs, masters, fpmPrefix); err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(a); err != nil {
					return err
				}
			} else {
				printAdvice(env, a)
			}
			if err := extras.write(env, a, fpmPrefix, host.iniDir); err != nil {
				return err
			}
			if exitCode && a.Changes() {
				return ErrChanges{}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	host.addHost(cmd, "default: every master running; under --root, every master started from the copy's files", "only this pool (default: every pool of the masters read)")
	fl.BoolVar(&asJSON, "json", false, "print the advice as JSON")
	fl.BoolVar(&exitCode, "exit-code", false, "exit 1 when a change is recommended")
	fl.DurationVar(&watch, "watch", 0, "sample the pools and the memory over this long (e.g. 10m) instead of once; Ctrl-C advises on what was sampled")
	fl.DurationVar(&every, "every", 10*time.Second, "with --watch, the time between samples")
	extras.addFlags(fl)
	fl.StringVar(&dbSocket, "mariadb-socket", "", "the MariaDB server's unix socket (default: from its command line or option files)")
	fl.BoolVar(&noDB, "no-mariadb", false, "do not read MariaDB")
	front.add(cmd)
	return cmd
}

func confs(ms []livehost.Master) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Conf)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// printAdvice prints the advice's text. Much of it the host wrote (pool
// names and paths, MariaDB's version and answers, the findings quoting
// them): it is written with every control character but newline and tab
// escaped (termsafe.Text).
func printAdvice(env *Env, a advise.Advice) {
	var text strings.Builder
	te := *env
	te.Stdout = &text
	writeAdvice(&te, a)
	io.WriteString(env.Stdout, termsafe.Text(text.String()))
}

// writeAdvice is printAdvice's text, unescaped.
func writeAdvice(env *Env, a advise.Advice) {
	w := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "pool\tpm\tmax_children\trecommended\tworkers\tPSS p95\tmax active\tmax reached\tqueue max\tmaster")
	for _, p := range a.Pools {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%.1f MiB\t%d\t%d\t%d\t%s\n", p.Pool, p.PM, p.MaxChildren, p.Recommended, p.Workers,
			float64(p.WorkerPSSP95)/(1<<20), p.MaxActive, p.MaxReached, p.ListenQueueMax, p.Master)
	}
	w.Flush()
	for _, f := range a.Findings {
		where := ""
		if f.Pool != "" {
			where = "pool " + f.Pool + ": "
		}
		fmt.Fprintf(env.Stdout, "%s: %s%s\n", f.Severity, where, f.Message)
	}
	for _, p := range a.Pools {
		if !p.Changed() {
			continue
		}
		lines := poolKnobs(p)
		fmt.Fprintf(env.Stdout, "\nPool %s: put these in a knob file and run phptune apply --pool %s --knobs FILE (it writes %s after %s):\n%s\n",
			p.Pool, p.Pool, livehost.PoolDropInName, p.File, strings.Join(lines, "\n"))
	}
	printExtras(env.Stdout, a)
	printMariaDBAdvice(env, a.MariaDB)
}

// poolKnobs are the knob assignments of a pool's recommended size: its
// process manager with pm.max_children, and a dynamic pool's spares
// brought within php-fpm's rules for it.
func poolKnobs(p advise.PoolAdvice) []string {
	cfg := knob.Defaults()
	if p.PM != "" {
		if err := cfg.Set("pm", p.PM); err != nil {
			return []string{fmt.Sprintf("pm.max_children=%d", p.Recommended)}
		}
	}
	cfg["pm.max_children"] = strconv.FormatInt(p.Recommended, 10)
	cfg = cfg.FitDynamic()
	var out []string
	for _, name := range []string{"pm", "pm.max_children", "pm.start_servers", "pm.min_spare_servers", "pm.max_spare_servers"} {
		if cfg.Relevant(name) {
			out = append(out, name+"="+cfg[name])
		}
	}
	return out
}

// adviseMasters keeps the masters advise reads: those of the host at
// --root (on a copy, a master started from the copy's files) and, with
// --fpm-config, the one started with it.
func (f *hostFlags) adviseMasters(masters []livehost.Master) ([]livehost.Master, error) {
	if !filepath.IsAbs(f.root) {
		return nil, usageErr("Try: --root / (this host) or --root /abs/path/of/a/copy", "--root %s: give an absolute path", f.root)
	}
	root := filepath.Clean(f.root)
	var only []livehost.Master
	for _, m := range masters {
		if root != "/" && !strings.HasPrefix(m.Conf, root+"/") {
			continue
		}
		if f.fpmConfig != "" && m.Conf != f.fpmConfig {
			continue
		}
		only = append(only, m)
	}
	if len(only) == 0 && (root != "/" || f.fpmConfig != "") {
		var named []string
		if f.fpmConfig != "" {
			named = append(named, "--fpm-config "+f.fpmConfig)
		}
		if root != "/" {
			named = append(named, "--root "+root)
		}
		return nil, usageErr("Running masters: "+confs(masters), "%s: no running php-fpm master was started with it", strings.Join(named, " and "))
	}
	return only, nil
}

// adviseePools keeps --pool's pool (every pool without it).
func (f *hostFlags) adviseePools(pools []advise.Pool) []advise.Pool {
	if f.pool == "" {
		return pools
	}
	var only []advise.Pool
	for _, p := range pools {
		if p.Name == f.pool {
			only = append(only, p)
		}
	}
	return only
}
