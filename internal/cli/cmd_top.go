package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/watch/observe"
)

func init() { register(newTopCmd) }

func newTopCmd(env *Env) *cobra.Command {
	var f struct {
		json     bool
		count    int
		interval time.Duration
	}
	cmd := &cobra.Command{
		Use:   "top [LAB]",
		Short: "Watch a running lab: every process group, php-fpm's status and the kernel's queues",
		Long: `top samples a running lab every interval and shows, like top, the CPU and
memory of each process group (nginx master/workers, php-fpm master/workers,
mariadbd, everything else), the machine (CPU split with steal, run queue,
memory, swap), and beside it php-fpm's status page read over FastCGI straight
from the pool's socket, per worker, with nginx's and MariaDB's counters and
the kernel's accept queues of the fpm socket and nginx's port.

Memory is PSS: shared pages (opcache, the PHP binary) are divided among the
processes that map them, so the figures add up, unlike RSS.

Without LAB, the only running lab is used. Ctrl-C stops.`,
		Example: `  phptune top
  phptune top wp --json --count 10 > samples.jsonl`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if f.count < 0 {
				return usageErr("Try: --count 10", "--count %d: give a number of samples, or 0 for no limit", f.count)
			}
			l, err := topLab(args)
			if err != nil {
				return err
			}
			cfg, closeDB, err := labstack.Observer(l)
			if err != nil {
				return err
			}
			defer closeDB()
			cfg.Interval = f.interval
			cfg.Others = true
			o, err := observe.New(cfg)
			if err != nil {
				return usageErr("Try: --interval 1s", "%v", err)
			}
			return runTop(env, o, l, f.interval, f.count, f.json)
		},
	}
	cmd.Flags().BoolVar(&f.json, "json", false, "print each sample as one JSON line instead of the live view")
	cmd.Flags().IntVar(&f.count, "count", 0, "stop after N samples (0: until Ctrl-C)")
	cmd.Flags().DurationVar(&f.interval, "interval", time.Second, "time between samples")
	return cmd
}

// topLab opens the named lab, or the only one there is.
func topLab(args []string) (*lab.Lab, error) {
	if len(args) == 1 {
		l, err := lab.Open(args[0])
		if err != nil {
			return nil, usageErr("Try: phptune lab status", "%v", err)
		}
		return l, nil
	}
	hs, err := lab.List()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, h := range hs {
		if h.Status == "up" {
			names = append(names, h.Lab.Name)
		}
	}
	switch len(names) {
	case 0:
		return nil, usageErr("Try: phptune lab up --app hello", "no lab is running")
	case 1:
		return lab.Open(names[0])
	}
	return nil, usageErr("Try: phptune top "+names[0], "%d labs are running (%s); name one", len(names), strings.Join(names, ", "))
}

func runTop(env *Env, o *observe.Observer, l *lab.Lab, interval time.Duration, count int, asJSON bool) error {
	ctx := env.Ctx
	if err := o.Baseline(); err != nil {
		return err
	}
	width, tty := 0, false
	if fd, ok := env.TermStdout.(*os.File); ok && term.IsTerminal(int(fd.Fd())) && !asJSON {
		tty = true
	}
	enc := json.NewEncoder(env.Stdout)
	var prev *results.Sample
	t := time.NewTicker(interval)
	defer t.Stop()
	for n := 0; count == 0 || n < count; n++ {
		select {
		case <-ctx.Done():
			return nil // Ctrl-C is how top is meant to end
		case <-t.C:
		}
		s := o.Sample(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if asJSON {
			if err := enc.Encode(s); err != nil {
				return err
			}
			continue
		}
		if tty {
			if w, _, err := term.GetSize(int(env.TermStdout.(*os.File).Fd())); err == nil {
				width = w
			}
		}
		// The frame quotes the pools' status pages (renderTop escapes
		// them field by field); only the redraw goes to the terminal raw.
		frame := termsafe.Text(renderTop(l, &s, prev, width))
		if tty {
			// Home and clear, then the frame: a redraw in place.
			frame = "\x1b[H\x1b[2J" + frame
		} else if n > 0 {
			frame = "\n" + frame
		}
		if _, err := io.WriteString(env.TermStdout, frame); err != nil {
			return err
		}
		prev = &s
	}
	return nil
}

// renderTop draws one sample: the machine and the groups on the left, the
// fpm status and the other servers on the right when width allows,
// otherwise one below the other.
func renderTop(l *lab.Lab, s, prev *results.Sample, width int) string {
	// A lab writes its status page (the pool's name, each worker's
	// state, request URI and script) and names its processes: every line
	// is shown with its control characters escaped, never acted on.
	left := safeLines(topLeft(l, s))
	right := safeLines(topRight(s, prev))
	lw := 0
	for _, line := range left {
		lw = max(lw, len(line))
	}
	rw := 0
	for _, line := range right {
		rw = max(rw, len(line))
	}
	var b strings.Builder
	if width > 0 && lw+3+rw <= width {
		for i := 0; i < max(len(left), len(right)); i++ {
			var a, c string
			if i < len(left) {
				a = left[i]
			}
			if i < len(right) {
				c = right[i]
			}
			fmt.Fprintf(&b, "%-*s   %s\n", lw, a, c)
		}
	} else {
		for _, line := range left {
			b.WriteString(line + "\n")
		}
		b.WriteString("\n")
		for _, line := range right {
			b.WriteString(line + "\n")
		}
	}
	for _, e := range s.Errors {
		b.WriteString("! " + termsafe.Line(e) + "\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// safeLines escapes the control characters of each of lines, in place.
func safeLines(lines []string) []string {
	for i, line := range lines {
		lines[i] = termsafe.Line(line)
	}
	return lines
}

func topLeft(l *lab.Lab, s *results.Sample) []string {
	m := s.Machine
	limit := "none"
	if m.CgroupMemLimitB > 0 {
		limit = size(m.CgroupMemLimitB)
	}
	out := []string{
		fmt.Sprintf("phptune top  lab %s (%s)  %s  sampler %.2f%% of a core", l.Name, l.App, time.Now().Format("15:04:05"), s.SamplerCPUPct),
		fmt.Sprintf("CPU x%d  user %.1f%%  sys %.1f%%  softirq %.1f%%  steal %.1f%%  idle %.1f%%",
			m.Cores, m.UserPct, m.SystemPct, m.SoftIRQPct, m.StealPct, m.IdlePct),
		fmt.Sprintf("     run queue %d  context switches %.0f/s", m.RunQueue, m.ContextSwitchesS),
		fmt.Sprintf("MEM  available %s  swap used %s  cgroup limit %s", size(m.MemAvailableB), size(m.SwapUsedB), limit),
		"",
		fmt.Sprintf("%-16s %5s %6s %6s %6s %8s %8s %8s", "GROUP", "PROCS", "CPU%", "USER%", "SYS%", "RSS", "PSS", "USS"),
	}
	for _, g := range s.Groups {
		mem := fmt.Sprintf("%8s %8s %8s", size(g.RSSB), size(g.PSSB), size(g.USSB))
		if g.Name == observe.GroupOther {
			mem = fmt.Sprintf("%8s %8s %8s", "-", "-", "-")
		}
		out = append(out, fmt.Sprintf("%-16.16s %5d %6.1f %6.1f %6.1f %s", g.Name, g.Processes, g.UserPct+g.SystemPct, g.UserPct, g.SystemPct, mem))
	}
	out = append(out, "", "(CPU% of one core; memory PSS = shared pages divided among sharers)")
	if len(s.Queues) > 0 {
		out = append(out, "", "KERNEL ACCEPT QUEUES")
		for _, q := range s.Queues {
			bl := fmt.Sprint(q.Backlog)
			if q.Backlog < 0 {
				bl = "?"
			}
			out = append(out, fmt.Sprintf("  %-8s %4d / %-5s %s", q.Owner, q.Queued, bl, shorten(q.Socket, 48)))
		}
	}
	return out
}

func topRight(s, prev *results.Sample) []string {
	var out []string
	rate := func(cur, old int64) string {
		if prev == nil || s.DTS <= 0 || cur < old {
			return ""
		}
		return fmt.Sprintf(" (%.0f/s)", float64(cur-old)/s.DTS)
	}
	for i, f := range s.FPM {
		if f.Error != "" {
			out = append(out, fmt.Sprintf("php-fpm pool %s: status page not read:", f.Pool), "  "+shorten(f.Error, 70))
			continue
		}
		var old results.FPMStatus
		if prev != nil && i < len(prev.FPM) {
			old = prev.FPM[i]
		}
		out = append(out,
			fmt.Sprintf("php-fpm pool %s (%s)  accepted %d%s", f.Pool, f.ProcessManager, f.AcceptedConn, rate(f.AcceptedConn, old.AcceptedConn)),
			fmt.Sprintf("  active %d  idle %d  total %d  max active %d  max children reached %d",
				f.ActiveProcesses, f.IdleProcesses, f.TotalProcesses, f.MaxActiveProcesses, f.MaxChildrenReached),
			fmt.Sprintf("  listen queue %d (max %d, len %d)  slow requests %d", f.ListenQueue, f.MaxListenQueue, f.ListenQueueLen, f.SlowRequests),
			fmt.Sprintf("  %-7s %-15s %7s %8s %6s %8s  %s", "PID", "STATE", "REQS", "DUR ms", "CPU%", "PSS", "REQUEST"))
		pss := map[int]results.ProcessSample{}
		for _, g := range s.Groups {
			for _, p := range g.PerProcess {
				pss[p.PID] = p
			}
		}
		ws := slices.Clone(f.Workers)
		slices.SortFunc(ws, func(a, b results.FPMWorker) int { return a.PID - b.PID })
		for j, w := range ws {
			if j == 24 {
				out = append(out, fmt.Sprintf("  ... %d more workers", len(ws)-j))
				break
			}
			p := pss[w.PID]
			out = append(out, fmt.Sprintf("  %-7d %-15.15s %7d %8.1f %6.1f %8s  %s", w.PID, w.State, w.Requests,
				float64(w.RequestDurationUs)/1000, p.CPUPct, size(p.PSSB), shorten(w.RequestURI, 30)))
		}
		out = append(out, "")
	}
	if n := s.Nginx; n != nil {
		var old results.NginxStatus
		if prev != nil && prev.Nginx != nil {
			old = *prev.Nginx
		}
		out = append(out, fmt.Sprintf("nginx  active %d  reading %d  writing %d  waiting %d", n.Active, n.Reading, n.Writing, n.Waiting),
			fmt.Sprintf("       requests %d%s  accepts %d%s", n.Requests, rate(n.Requests, old.Requests), n.Accepts, rate(n.Accepts, old.Accepts)))
	}
	if d := s.MariaDB; d != nil {
		var old results.MariaDBStatus
		if prev != nil && prev.MariaDB != nil {
			old = *prev.MariaDB
		}
		out = append(out, fmt.Sprintf("mariadb threads %d  running %d  questions %d%s", d.ThreadsConnected, d.ThreadsRunning, d.Questions, rate(d.Questions, old.Questions)),
			fmt.Sprintf("        slow queries %d  row lock waits %d", d.SlowQueries, d.InnodbRowLockWaits))
	}
	return out
}

// size prints bytes in binary units, short enough for a column.
func size(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%dB", b)
	}
	v, u := float64(b), "B"
	for _, next := range []string{"K", "M", "G", "T"} {
		if v < unit {
			break
		}
		v, u = v/unit, next
	}
	return fmt.Sprintf("%.1f%s", v, u)
}

// shorten keeps the end of long strings (paths, URIs), where they differ.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n+1:]
}
