package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/watch/proc"
)

func init() { register(newAdviseCmd) }

// ErrChanges is advise --exit-code's exit 1: a change is recommended.
type ErrChanges struct{}

func (ErrChanges) Error() string { return "advise recommends changes (--exit-code)" }

// adviseFlags are advise's flags.
type adviseFlags struct {
	host                   hostFlags
	nginx                  nginxFlags
	asJSON, exitCode, noDB bool
	dbSocket               string
	watch, every           time.Duration
	extras                 adviseExtras
}

func newAdviseCmd(env *Env) *cobra.Command {
	f := &adviseFlags{}
	cmd := &cobra.Command{
		Use:   "advise",
		Short: "Read a live host's php-fpm pools (no load sent) and size them together under its memory",
		Long:  adviseLong,
		Example: `  phptune advise
  phptune advise --json
  phptune advise --fpm-config /etc/php/8.2/fpm/php-fpm.conf --exit-code
  phptune advise --opcache -o advice/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.watch < 0 || f.every <= 0 {
				return usageErr("Try: --watch 10m --every 10s", "--watch %v --every %v: give a duration of 0 or more and an interval above 0", f.watch, f.every)
			}
			if err := f.extras.check(); err != nil {
				return err
			}
			return runAdvise(env, f)
		},
	}
	fl := cmd.Flags()
	f.host.addHost(cmd, "default: every master running; under --root, every master started from the copy's files", "only this pool (default: every pool of the masters read)")
	fl.BoolVar(&f.asJSON, "json", false, "print the advice as JSON")
	fl.BoolVar(&f.exitCode, "exit-code", false, "exit 1 when a change is recommended")
	fl.DurationVar(&f.watch, "watch", 0, "sample the pools and the memory over this long (e.g. 10m) instead of once; Ctrl-C advises on what was sampled")
	fl.DurationVar(&f.every, "every", 10*time.Second, "with --watch, the time between samples")
	f.extras.addFlags(fl)
	fl.StringVar(&f.dbSocket, "mariadb-socket", "", "the MariaDB server's unix socket (default: from its command line or option files)")
	fl.BoolVar(&f.noDB, "no-mariadb", false, "do not read MariaDB")
	f.nginx.add(cmd)
	return cmd
}

func runAdvise(env *Env, f *adviseFlags) error {
	fs, err := proc.Default()
	if err != nil {
		return err
	}
	masters, err := livehost.Masters(fs)
	if err != nil {
		return err
	}
	masters, err = livehost.SelectMasters(masters, f.host.root, f.host.fpmConfig)
	if err != nil {
		return hostErr(err)
	}
	prefix := f.host.fpmPrefix
	if len(masters) == 0 {
		return fmt.Errorf("no php-fpm master is running here: advise reads a live host (start php-fpm, or use phptune lab and phptune tune)")
	}
	fr, frontFindings, err := livehost.ReadFront(env.Ctx, f.nginx.spec(f.host.root), masters, prefix)
	if err != nil {
		return hostErr(err)
	}
	samples, hosts, watched, err := sampleHost(env, f, fs, masters)
	if err != nil {
		return err
	}
	var db *advise.MariaDB
	if !f.noDB {
		db = livehost.AdviseMariaDB(env.Ctx, fs, f.host.root, f.dbSocket)
	}
	a := advise.AdviseHost(advise.MergeHosts(hosts), advise.Merge(samples), db)
	a.Front, a.Findings = fr, append(a.Findings, frontFindings...)
	if len(samples) > 1 {
		a.Findings = append(a.Findings, advise.Finding{Severity: "info", Message: fmt.Sprintf("watched for %v: %d samples, every %v; the workers' PSS percentiles cover every sample, the memory available is the lowest seen",
			watched.Round(time.Second), len(samples), f.every)})
	}
	if err := f.extras.extend(env, &a, masters, prefix); err != nil {
		return err
	}
	if err := writeAdvice(env, a, f.asJSON); err != nil {
		return err
	}
	if err := f.extras.write(env, a, prefix, f.host.iniDir); err != nil {
		return err
	}
	if f.exitCode && a.Changes() {
		return ErrChanges{}
	}
	return nil
}

// sampleHost samples the pools and the host's memory once, or every
// --every over --watch (Ctrl-C ends the watch early and keeps what was
// sampled), and says how long it watched.
func sampleHost(env *Env, f *adviseFlags, fs *proc.FS, masters []livehost.Master) ([][]advise.Pool, []advise.Host, time.Duration, error) {
	var samples [][]advise.Pool
	var hosts []advise.Host
	start := time.Now()
	for {
		pools, host, err := livehost.SamplePools(env.Ctx, fs, masters, f.host.fpmPrefix, f.host.pool)
		if err != nil {
			return nil, nil, 0, err
		}
		samples, hosts = append(samples, pools), append(hosts, host)
		if time.Since(start)+f.every > f.watch {
			return samples, hosts, time.Since(start), nil
		}
		select {
		case <-env.Ctx.Done():
			fmt.Fprintf(env.Stderr, "advise: interrupted after %v: advising on the %d samples taken\n", time.Since(start).Round(time.Second), len(samples))
			return samples, hosts, time.Since(start), nil
		case <-time.After(f.every):
		}
	}
}

// writeAdvice prints the advice, as JSON or as text.
func writeAdvice(env *Env, a advise.Advice, asJSON bool) error {
	if !asJSON {
		printAdvice(env, a)
		return nil
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(a)
}

// printAdvice prints the advice's text. Much of it the host wrote (pool
// names and paths, MariaDB's version and answers, the findings quoting
// them): it is written with every control character but newline and tab
// escaped (termsafe.Text).
func printAdvice(env *Env, a advise.Advice) {
	var text strings.Builder
	te := *env
	te.Stdout = &text
	writeAdviceText(&te, a)
	io.WriteString(env.Stdout, termsafe.Text(text.String()))
}

// writeAdviceText is printAdvice's text, unescaped.
func writeAdviceText(env *Env, a advise.Advice) {
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
