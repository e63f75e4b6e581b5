package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/model/results"
)

// The servers comparison's page: its own template and chart code, the
// same embedded chart library as the tune's.
var (
	//go:embed assets/servers.html.tmpl
	serversTmpl string
	//go:embed assets/servers.js
	serversJS string
	//go:embed assets/page.css.tmpl
	pageCSS string
)

var serversPage = withPageCSS(template.New("servers").Funcs(template.FuncMap{
	"mib":     mib,
	"f1":      func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"f2":      func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"pct":     func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) },
	"pct0":    func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) },
	"iv":      ivText,
	"ratio":   ratioText,
	"verdict": ratioVerdict,
	"even":    evenShare,
	"workers": workersCPUText,
	"dur":     func(s float64) string { return (time.Duration(s) * time.Second).String() },
	"each": func(n int) string {
		e := eachServer(n)
		return strings.ToUpper(e[:1]) + e[1:]
	},
}).Parse(serversTmpl))

// withPageCSS adds the "page-css" template the pages share to t.
func withPageCSS(t *template.Template, err error) *template.Template {
	template.Must(t, err)
	template.Must(t.New("page.css").Parse(pageCSS))
	return t
}

// ivText is an interval as "41.2 [39.0, 43.5]", without brackets when
// there is none (one round).
func ivText(iv results.Interval) string {
	if iv.Value == 0 {
		return "0"
	}
	if iv.High == 0 {
		return fmt.Sprintf("%.1f", iv.Value)
	}
	return fmt.Sprintf("%.1f [%.1f, %.1f]", iv.Value, iv.Low, iv.High)
}

// ratioText is a paired ratio as "0.92× [0.85, 1.00]".
func ratioText(r *results.Ratio) string {
	switch {
	case r == nil:
		return "-"
	case r.High == 0:
		return fmt.Sprintf("%.2f× (one round: no interval)", r.Ratio)
	}
	return fmt.Sprintf("%.2f× [%.2f, %.2f]", r.Ratio, r.Low, r.High)
}

// ratioVerdict says what a ratio of B against A means.
func ratioVerdict(r *results.Ratio) string {
	switch {
	case r == nil:
		return "not measured together"
	case r.High == 0:
		return "undecided (one round)"
	case r.High < 1:
		return "slower"
	case r.Low > 1:
		return "faster"
	}
	return "no significant difference"
}

// evenShare is an even share of a pool of n workers.
func evenShare(n int) float64 {
	if n <= 0 {
		return 0
	}
	return 1 / float64(n)
}

// workersCPUText lists the busiest workers' CPU, "95, 3, 1 ... (20)".
func workersCPUText(pct []float64) string {
	if len(pct) == 0 {
		return "-"
	}
	const show = 10
	var parts []string
	for i, p := range pct {
		if i == show {
			parts = append(parts, fmt.Sprintf("… (%d workers)", len(pct)))
			break
		}
		parts = append(parts, fmt.Sprintf("%.0f", p))
	}
	return strings.Join(parts, ", ")
}

// serversConfigs are the rows in rank order, the unmeasured last.
func serversConfigs(s *results.Servers) []results.ServerConfig {
	out := append([]results.ServerConfig(nil), s.Configs...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Rank, out[j].Rank
		if a == 0 || b == 0 {
			return a != 0 && b == 0
		}
		return a < b
	})
	return out
}

// ServersText writes a servers comparison's summary: the ranking with
// intervals, the resources each configuration used, each server's tuned
// against its default, the diagnoses and the recommendations.
func ServersText(w io.Writer, s *results.Servers) error {
	return safeText(w, func(w io.Writer) error { return serversText(w, s) })
}

func serversText(w io.Writer, s *results.Servers) error {
	fmt.Fprintf(w, "phptune servers %s: %s %s, %d connections", s.ID, s.App, s.Workload, s.Connections)
	if s.Interrupted {
		fmt.Fprint(w, " — INTERRUPTED: what was measured so far")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%s tuned for up to %s, then %d configurations measured in %d of %d interleaved rounds of %s after %s warm-up, each run in fresh processes (%s in all)\n",
		eachServer(len(s.Servers)), dur(s.TuneBudgetS), len(s.Configs), s.RoundsRun, s.Rounds, dur(s.DurationS), dur(s.WarmupS), dur(s.WallS))
	rows := serversConfigs(s)
	if len(rows) > 0 {
		serversRanking(w, s.Best, rows)
		serversCost(w, rows)
	}
	if len(s.Servers) > 0 {
		serversTuned(w, s.Servers)
	}
	if len(s.Diagnoses) > 0 {
		fmt.Fprintln(w, "\nwhy they lost:")
		for _, d := range s.Diagnoses {
			fmt.Fprintf(w, "  - [%s] %s\n", d.Cause, d.Text)
		}
	}
	serversWorkersCPU(w, rows)
	if len(s.Servers) > 0 {
		serversRecommendations(w, s.Servers)
	}
	for _, n := range s.NotCompared {
		fmt.Fprintf(w, "\nnot compared: %s: %s\n", n.Server, n.Reason)
	}
	serversWarnings(w, s.Warnings, rows)
	return nil
}

// serversRanking writes the configurations ranked by throughput, each
// against the best.
func serversRanking(w io.Writer, best string, rows []results.ServerConfig) {
	fmt.Fprintf(w, "\n%-4s %-34s %-24s %-30s %-26s %7s\n", "rank", "configuration", "throughput rps (95% CI)", "vs best", "p99 ms (95% CI)", "errors")
	for _, c := range rows {
		if c.Rank == 0 {
			why := c.Failed
			if why == "" {
				why = "not measured"
			}
			fmt.Fprintf(w, "%-4s %-34s %s\n", "-", c.Label, firstLine(why))
			continue
		}
		vs := "best"
		if c.Label != best {
			vs = ratioText(c.VsBest)
			if v := ratioVerdict(c.VsBest); v == "no significant difference" {
				vs += " ~"
			}
		}
		fmt.Fprintf(w, "%-4d %-34s %-24s %-30s %-26s %6.2f%%\n", c.Rank, c.Label, ivText(c.Throughput), vs, ivText(c.P99Ms), 100*c.ErrorRate)
	}
	fmt.Fprintln(w, "(~: no significant difference from the best; ratios are paired by round)")
}

// serversCost writes what each measured configuration cost: CPU per
// request by process group, cores, workers and their memory, how evenly
// the workers shared the work, and the rounds requests queued in.
func serversCost(w io.Writer, rows []results.ServerConfig) {
	fmt.Fprintf(w, "\n%-34s %-32s %6s %8s %11s %11s %-20s %s\n", "configuration", "CPU ms/req web+PHP+DB = stack", "cores", "workers", "PSS/worker", "PSS total", "busiest worker", "queued")
	for _, c := range rows {
		if c.Rank == 0 {
			continue
		}
		cpu := fmt.Sprintf("%.2f+%.2f+%.2f = %.2f", c.CPUWebMs, c.CPUPHPMs, c.CPUDBMs, c.CPUStackMs)
		busiest := "-"
		if c.Workers > 0 {
			busiest = fmt.Sprintf("%.0f%% (even %.0f%%)", 100*c.Imbalance, 100*evenShare(c.Workers))
		}
		fmt.Fprintf(w, "%-34s %-32s %6.2f %8d %11s %11s %-20s %d/%d rounds\n", c.Label, cpu, c.StackCores, c.Workers, mib(c.WorkerPSSB), mib(c.TotalPSSB), busiest, c.QueuedRounds, c.Rounds)
	}
	fmt.Fprintln(w, "(medians over rounds; web, PHP and DB are the observer's process groups, with mod_php Apache's children count as PHP; busiest worker: its share of the pool's CPU)")
}

// serversTuned writes each server's tuned configuration against its
// default.
func serversTuned(w io.Writer, servers []results.ServerTune) {
	fmt.Fprintln(w, "\ntuned vs default (throughput, paired by round, 95% CI):")
	for _, st := range servers {
		switch {
		case st.Failed != "":
			fmt.Fprintf(w, "  %-24s tune failed: %s\n", st.Server, firstLine(st.Failed))
		case len(st.Changes) == 0:
			fmt.Fprintf(w, "  %-24s tuned = default (no change measured better)\n", st.Server)
		default:
			fmt.Fprintf(w, "  %-24s %s %s\n", st.Server, ratioText(st.TunedVsDefault), ratioVerdict(st.TunedVsDefault))
		}
	}
}

// serversWorkersCPU writes each PHP worker's CPU, for the configurations
// with more than one worker.
func serversWorkersCPU(w io.Writer, rows []results.ServerConfig) {
	var shown bool
	for _, c := range rows {
		if c.Rank > 0 && len(c.WorkerCPUPct) > 1 {
			if !shown {
				fmt.Fprintln(w, "\nCPU of each PHP worker, % of a core, busiest first (the round of median throughput):")
				shown = true
			}
			fmt.Fprintf(w, "  %-34s %s\n", c.Label, workersCPUText(c.WorkerCPUPct))
		}
	}
}

// serversRecommendations writes each tuned server's changes and where its
// files are.
func serversRecommendations(w io.Writer, servers []results.ServerTune) {
	fmt.Fprintln(w, "\nrecommendations (each server's files in its own syntax):")
	for _, st := range servers {
		if st.Failed != "" {
			continue
		}
		where := ""
		if st.OutDir != "" {
			where = " → " + st.OutDir
		}
		fmt.Fprintf(w, "  %-24s %s%s\n", st.Server, changesWords(st.Changes), where)
	}
}

// serversWarnings writes the run's warnings and each configuration's.
func serversWarnings(w io.Writer, runWarnings []string, rows []results.ServerConfig) {
	var warns []string
	warns = append(warns, runWarnings...)
	for _, c := range rows {
		for _, x := range c.Warnings {
			warns = append(warns, c.Label+": "+x)
		}
	}
	if len(warns) > 0 {
		fmt.Fprintln(w, "\nwarnings:")
		for _, x := range warns {
			fmt.Fprintf(w, "  - %s\n", x)
		}
	}
}

// eachServer is "each of 3 servers", "the server".
func eachServer(n int) string {
	if n == 1 {
		return "the server"
	}
	return fmt.Sprintf("each of %d servers", n)
}

func changesWords(ch []string) string {
	if len(ch) == 0 {
		return "the default"
	}
	return strings.Join(ch, ", ")
}

func dur(s float64) string { return (time.Duration(s*10) * time.Second / 10).String() }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// serversView is the servers page's template input.
type serversView struct {
	Title    string
	S        *results.Servers
	Rows     []results.ServerConfig
	Commands []string
	Files    []serverFiles
	Data     template.JS
	ECharts  template.JS
	Script   template.JS
}

type serverFiles struct {
	Server string
	Files  []file
}

// serversChart is what servers.js draws, embedded as JSON.
type serversChart struct {
	Labels     []string     `json:"labels"`
	Best       string       `json:"best"`
	RPS        [][3]float64 `json:"rps"` // value, low, high
	P99        [][3]float64 `json:"p99"`
	CPUWeb     []float64    `json:"cpu_web"`
	CPUPHP     []float64    `json:"cpu_php"`
	CPUDB      []float64    `json:"cpu_db"`
	PSSWorker  []float64    `json:"pss_worker_mib"`
	PSSTotal   []float64    `json:"pss_total_mib"`
	Imbalance  []float64    `json:"imbalance"`
	Even       []float64    `json:"even"`
	WorkerCPUs [][]float64  `json:"worker_cpu"`
}

func renderServersHTML(w io.Writer, r Run, echarts string) error {
	s := r.Servers
	v := serversView{Title: title(r), S: s, Rows: serversConfigs(s), Commands: commands(r), ECharts: template.JS(echarts), Script: template.JS(serversJS)}
	var d serversChart
	d.Best = s.Best
	for _, c := range v.Rows {
		if c.Rank == 0 {
			continue
		}
		d.Labels = append(d.Labels, c.Label)
		d.RPS = append(d.RPS, [3]float64{round1(c.Throughput.Value), round1(c.Throughput.Low), round1(c.Throughput.High)})
		d.P99 = append(d.P99, [3]float64{round1(c.P99Ms.Value), round1(c.P99Ms.Low), round1(c.P99Ms.High)})
		d.CPUWeb = append(d.CPUWeb, round2(c.CPUWebMs))
		d.CPUPHP = append(d.CPUPHP, round2(c.CPUPHPMs))
		d.CPUDB = append(d.CPUDB, round2(c.CPUDBMs))
		d.PSSWorker = append(d.PSSWorker, round1(float64(c.WorkerPSSB)/(1<<20)))
		d.PSSTotal = append(d.PSSTotal, round1(float64(c.TotalPSSB)/(1<<20)))
		d.Imbalance = append(d.Imbalance, round2(c.Imbalance))
		d.Even = append(d.Even, round2(evenShare(c.Workers)))
		d.WorkerCPUs = append(d.WorkerCPUs, c.WorkerCPUPct)
	}
	for _, st := range s.Servers {
		sf := serverFiles{Server: st.Server}
		for _, n := range sortedKeys(st.Files) {
			if n == "evidence.txt" {
				continue // the tune's own story: in its directory and its report
			}
			sf.Files = append(sf.Files, file{n, st.Files[n]})
		}
		if len(sf.Files) > 0 {
			v.Files = append(v.Files, sf)
		}
	}
	js, err := json.Marshal(d) // escapes <, > and &: the data cannot end the script
	if err != nil {
		return err
	}
	v.Data = template.JS(js)
	return serversPage.Execute(w, v)
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
