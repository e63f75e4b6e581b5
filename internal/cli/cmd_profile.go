package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/flamegraph"
	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/labprofile"
	"github.com/phptune/phptune/internal/labstack"
	"github.com/phptune/phptune/internal/outdir"
	"github.com/phptune/phptune/internal/perf"
	"github.com/phptune/phptune/internal/profile"
	"github.com/phptune/phptune/internal/redact"
)

func init() { register(newProfileCmd) }

func newProfileCmd(env *Env) *cobra.Command {
	st := stackFlags{defaultApp: "hello"}
	var clock, outDir string
	var conns, rounds, freq int
	var d, warmup time.Duration
	var asJSON, native, php bool
	cmd := &cobra.Command{
		Use:   "profile [--app APP | --docroot DIR | --lab NAME | --site NAME]",
		Short: "Show where the time goes under load: native stacks (perf) and PHP functions (excimer), and the knobs they point to",
		Long: `phptune profile loads a lab with phptune's generator and samples it, in
rounds of three interleaved runs: plain; with perf sampling every CPU
(cpu-clock at --freq Hz, DWARF call graphs: Debian's PHP has no frame
pointers); with the excimer extension sampling PHP stacks in every
request (--php-clock cpu or wall). The two samplers never run together.

It prints the native samples by component (Zend VM executor, allocator,
strings/arrays, compiler/opcache, mysqlnd, libc, kernel network, page
faults, files, scheduling, the web server, MariaDB), the top PHP
functions (self and inclusive; WordPress plugins by name), the findings
with the knobs they point to, and each sampler's overhead: CPU per
request against the plain runs of the same rounds, with its interval.

Files go to -o DIR (default ./phptune-profile-TIME; a new directory, or an
empty one of yours only you can write, made before the lab starts): profile.json (every
figure and the folded stacks), native.folded and php.folded (the folded
format other flame graph tools read), profile.html (both flame graphs,
offline and searchable).

perf runs as root on a machine where it may sample every CPU; it reads
only binaries root alone could have written (mapped files of the lab's
own are left unnamed), and the lab's output (the PHP samples) is read as
hostile input. Without perf or its permission, the PHP profile is still
made and the reason is printed.`,
		Example: `  phptune profile --app wordpress -c 8 -d 20s
  phptune profile --app strings --rounds 2
  phptune profile --lab mylab --php-clock wall`,
		RunE: func(c *cobra.Command, args []string) error {
			if err := st.check(false); err != nil {
				return err
			}
			set, _, err := knobConfig(st.knobsFile, st.set)
			if err != nil {
				return err
			}
			if rounds < 1 || rounds > 20 || conns < 1 || d < time.Second || warmup < 0 {
				return usageErr("Try: --rounds 3 -c 8 -d 10s", "--rounds 1..20, -c at least 1, -d at least 1s")
			}
			if clock != lab.ProfilerCPU && clock != lab.ProfilerWall {
				return usageErr("Try: --php-clock cpu (CPU time) or --php-clock wall (waits count too)", "--php-clock %q is not cpu or wall", clock)
			}
			if freq < 1 || freq > 999 {
				return usageErr("Try: --freq 49 (DWARF stacks are costly: 49-99 Hz)", "--freq %d: use 1..999 Hz", freq)
			}
			if !native && !php {
				return usageErr("Leave out --native=false or --php=false", "nothing to sample: --native and --php are both off")
			}
			if err := checkOutDirFor(outDir, "phptune-profile-TIME", "profile"); err != nil {
				return err
			}
			plan, err := st.plan(env.Ctx)
			if err != nil {
				return err
			}
			// Made now, before the lab: a directory planted under the
			// default name is refused before anything runs.
			if outDir == "" {
				outDir = "phptune-profile-" + time.Now().UTC().Format("20060102-150405")
			}
			out, err := createOutDir(outDir)
			if err != nil {
				return err
			}
			defer out.CloseRemovingIfEmpty()
			ctx := env.Ctx
			say := func(format string, a ...any) { fmt.Fprintf(env.Stderr, "profile: "+format+"\n", a...) }
			sess, err := openSession(env, &st, sessionSpec{command: "profile", site: plan.site, set: set, restore: true, workload: st.workloadSpec()})
			if err != nil {
				return err
			}
			defer sess.Close()
			l, w := sess.Lab, sess.Workload
			pw := &w
			appName := st.appLabel()
			if st.lab != "" {
				appName = l.App
			}
			tmp, err := os.MkdirTemp("", "phptune-profile-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			res, err := labprofile.Run(ctx, l, *pw, labprofile.Options{
				Conns: conns, Duration: d, Warmup: warmup, Rounds: rounds, PHPClock: clock,
				Native: native, PHP: php, Perf: perf.Options{Freq: freq, StackBytes: perf.DefaultOptions.StackBytes},
				TempDir: tmp, Say: say,
			})
			if err != nil {
				return err
			}
			if err := redact.Value(res, nil); err != nil {
				return err
			}
			if err := writeProfile(out, appName, pw.Name, res); err != nil {
				return err
			}
			if asJSON {
				e := json.NewEncoder(env.Stdout)
				e.SetIndent("", "  ")
				return e.Encode(res)
			}
			printProfile(env.Stdout, res)
			fmt.Fprintf(env.Stdout, "\nfiles: %s (profile.html: flame graphs)\n", outDir)
			return nil
		},
	}
	fl := cmd.Flags()
	st.add(fl, "profile", labstack.WorkloadFront)
	fl.IntVarP(&conns, "connections", "c", 8, "connections")
	fl.IntVar(&rounds, "rounds", 3, "rounds; each runs plain, with perf and with excimer once")
	fl.DurationVarP(&d, "duration", "d", 10*time.Second, "measured time of each run")
	fl.DurationVar(&warmup, "warmup", 3*time.Second, "warm-up of each run, not measured (the samplers run through it)")
	fl.StringVar(&clock, "php-clock", lab.ProfilerCPU, "excimer's clock: cpu (the worker's CPU time) or wall (waiting on the database counts too)")
	fl.IntVar(&freq, "freq", perf.DefaultOptions.Freq, "perf's sampling rate per CPU, Hz")
	fl.BoolVar(&native, "native", true, "sample native stacks with perf")
	fl.BoolVar(&php, "php", true, "sample PHP stacks with excimer")
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	fl.StringVarP(&outDir, "output", "o", "", "a new or empty directory of yours for the files (default ./phptune-profile-TIME)")
	return cmd
}

// writeProfile writes a profile's files into dir.
func writeProfile(dir *outdir.Dir, app, workload string, res *labprofile.Result) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := dir.WriteFile("profile.json", append(b, '\n')); err != nil {
		return err
	}
	page := flamegraph.Page{
		Title:    "phptune profile: " + app,
		Subtitle: fmt.Sprintf("%s, workload %s, %d connections, %d rounds of %.0f s per sampler", res.Server, workload, res.Connections, res.Rounds, res.DurationS),
	}
	if res.Native != nil && res.Native.Samples > 0 {
		n := res.Native
		if err := writeFolded(dir, "native.folded", n.Folded); err != nil {
			return err
		}
		page.Tables = append(page.Tables, shareTable("Native samples by component (every process of the stack)", profile.Top(n.Components, n.Samples, 0)),
			shareTable("PHP workers' native samples by component", profile.Top(n.PHPComponents, n.ByRole[profile.RolePHP], 0)))
		page.Graphs = append(page.Graphs, flamegraph.Graph{ID: "native", Title: "Native stacks (perf)",
			Note: "cpu-clock samples of every process of the stack, rooted at php, web server and mariadb; _[k] frames are the kernel's.", Folded: n.Folded})
	}
	if res.PHP != nil && res.PHP.Samples > 0 {
		p := res.PHP
		if err := writeFolded(dir, "php.folded", p.Folded); err != nil {
			return err
		}
		page.Tables = append(page.Tables, shareTable("PHP functions, self", profile.Top(p.Self, p.Samples, 20)),
			shareTable("PHP functions, inclusive", profile.Top(p.Inclusive, p.Samples, 20)))
		if len(p.Plugins) > 0 {
			page.Tables = append(page.Tables, shareTable("WordPress plugins and themes, inclusive", profile.Top(p.Plugins, p.Samples, 20)))
		}
		page.Graphs = append(page.Graphs, flamegraph.Graph{ID: "php", Title: "PHP stacks (excimer)",
			Note: "excimer samples (" + res.PHPClock + " clock, 10 ms period) of every request the workers served.", Folded: p.Folded})
	}
	var rows [][]string
	for _, f := range res.Findings {
		rows = append(rows, []string{f.Evidence, strings.Join(f.Challenges, " | ")})
	}
	for _, o := range res.Overhead {
		rows = append(rows, []string{"overhead — " + o.Summary(), ""})
	}
	page.Tables = append(page.Tables, flamegraph.Table{Title: "Findings and overhead", Columns: []string{"what was measured", "configurations worth measuring"}, Rows: rows})
	var html bytes.Buffer
	if err := flamegraph.Render(&html, page); err != nil {
		return err
	}
	return dir.WriteFile("profile.html", html.Bytes())
}

func shareTable(title string, es []profile.Entry) flamegraph.Table {
	t := flamegraph.Table{Title: title, Columns: []string{"", "samples", "share"}}
	for _, e := range es {
		t.Rows = append(t.Rows, []string{e.Name, fmt.Sprint(e.Samples), fmt.Sprintf("%.1f%%", 100*e.Share)})
	}
	return t
}

func writeFolded(dir *outdir.Dir, name string, f profile.Folded) error {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d\n", k, f[k])
	}
	return dir.WriteFile(name, []byte(b.String()))
}

// printProfile prints the top lists, the findings and the overhead.
func printProfile(w io.Writer, res *labprofile.Result) {
	if n := res.Native; n != nil && n.Samples > 0 {
		php := n.ByRole[profile.RolePHP]
		fmt.Fprintf(w, "Native samples: %d of the stack (%d PHP, %d web server, %d MariaDB); %d of other processes left out\n",
			n.Samples, php, n.ByRole[profile.RoleWeb], n.ByRole[profile.RoleMariaDB], n.Dropped)
		for _, e := range profile.Top(n.Components, n.Samples, 0) {
			fmt.Fprintf(w, "  %-32s %6.1f%%  %d\n", e.Name, 100*e.Share, e.Samples)
		}
		fmt.Fprintf(w, "PHP workers' native functions (self):\n")
		for _, e := range profile.Top(n.PHPSelf, php, 10) {
			fmt.Fprintf(w, "  %-48s %6.1f%%\n", e.Name, 100*e.Share)
		}
	}
	if res.NativeUnavailable != "" {
		fmt.Fprintf(w, "Native profile: none: %s\n", res.NativeUnavailable)
	}
	if p := res.PHP; p != nil && p.Samples > 0 {
		fmt.Fprintf(w, "\nPHP samples (%s clock): %d\n  self:\n", res.PHPClock, p.Samples)
		for _, e := range profile.Top(p.Self, p.Samples, 10) {
			fmt.Fprintf(w, "    %-50s %6.1f%%\n", e.Name, 100*e.Share)
		}
		fmt.Fprintf(w, "  inclusive:\n")
		for _, e := range profile.Top(p.Inclusive, p.Samples, 10) {
			fmt.Fprintf(w, "    %-50s %6.1f%%\n", e.Name, 100*e.Share)
		}
		if len(p.Plugins) > 0 {
			fmt.Fprintf(w, "  WordPress plugins and themes (inclusive):\n")
			for _, e := range profile.Top(p.Plugins, p.Samples, 10) {
				fmt.Fprintf(w, "    %-50s %6.1f%%\n", e.Name, 100*e.Share)
			}
		}
	}
	if res.PHPUnavailable != "" {
		fmt.Fprintf(w, "PHP profile: none: %s\n", res.PHPUnavailable)
	}
	fmt.Fprintf(w, "\nFindings:\n")
	if len(res.Findings) == 0 {
		fmt.Fprintf(w, "  none above their thresholds\n")
	}
	for _, f := range res.Findings {
		fmt.Fprintf(w, "  - %s\n", f.Evidence)
		if len(f.Challenges) > 0 {
			fmt.Fprintf(w, "    worth measuring: %s\n", strings.Join(f.Challenges, " | "))
		}
	}
	fmt.Fprintf(w, "\nOverhead (against the plain runs of the same rounds):\n")
	for _, o := range res.Overhead {
		fmt.Fprintf(w, "  %s\n", o.Summary())
	}
}
