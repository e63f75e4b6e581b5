package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/errlog"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// The chart library (Apache ECharts, Apache-2.0, see assets/ECHARTS-LICENSE)
// and phptune's chart code are inlined into every page: a report makes no
// network request.
var (
	//go:embed assets/echarts.min.js
	echartsJS string
	//go:embed assets/report.js
	reportJS string
	//go:embed assets/report.html.tmpl
	pageTmpl string
)

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"mib": mib,
	"f1":  func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"f2":  func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"pct": func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) },
	"ms":  func(v float64) string { return fmt.Sprintf("%.1f", 1000*v) },
	// kernelLines are the kernel limits a run was bounded by.
	"kernelLines": sysctl.Lines,
	// phpLine says what PHP logged in a run, in one sentence.
	"phpLine": errlog.PHPLine,
	"capacities": func(tc *results.TuneCapacity) []*results.Capacity {
		var out []*results.Capacity
		for _, c := range []*results.Capacity{tc.Start, tc.Recommended} {
			if c != nil {
				out = append(out, c)
			}
		}
		return out
	},
}).Parse(pageTmpl))

// series is one line of a time chart; a nil point is a gap (not read).
type series struct {
	Name string     `json:"name"`
	Data []*float64 `json:"data"`
}

func num(v float64) *float64 { return &v }

func nums(vs []float64) []*float64 {
	out := make([]*float64, len(vs))
	for i, v := range vs {
		out[i] = num(v)
	}
	return out
}

// timeline is what the observer saw during one run, shaped for charts.
type timeline struct {
	Label     string    `json:"label"`
	T         []float64 `json:"t"`
	CPU       []series  `json:"cpu"`        // percent of one core per group
	Machine   []series  `json:"machine"`    // steal, idle
	Queue     []series  `json:"queue"`      // listen queues
	Workers   []series  `json:"workers"`    // active, total
	WorkerPSS []float64 `json:"worker_pss"` // MiB per worker, last sample
	WorkerPID []int     `json:"worker_pid"`
	Top       []topRow  `json:"top"` // one per sample, for the scrollable top
}

// topRow is one sample as top shows it.
type topRow struct {
	T       float64    `json:"t"`
	User    float64    `json:"user"`
	System  float64    `json:"system"`
	Steal   float64    `json:"steal"`
	Idle    float64    `json:"idle"`
	RunQ    int64      `json:"runq"`
	MemAvMi float64    `json:"mem_available_mib"`
	Groups  []topGroup `json:"groups"`
}

type topGroup struct {
	Name  string  `json:"name"`
	Procs int     `json:"procs"`
	CPU   float64 `json:"cpu"`
	RSSMi float64 `json:"rss_mib"`
	PSSMi float64 `json:"pss_mib"`
}

// trialPoint is one trial in the trial chart.
type trialPoint struct {
	N      int     `json:"n"`
	Phase  string  `json:"phase"`
	Label  string  `json:"label"`
	RPS    float64 `json:"rps"`
	P99    float64 `json:"p99_ms"`
	Conns  int     `json:"conns"`
	Status string  `json:"status"`
}

// chartData is everything the page's script draws, embedded as JSON.
type chartData struct {
	Kind      string             `json:"kind"`
	Curves    []results.Curve    `json:"curves,omitempty"`
	Configs   []configCurve      `json:"configs,omitempty"` // start and recommended against concurrency
	Knobs     []knobChart        `json:"knobs,omitempty"`
	Objective string             `json:"objective,omitempty"`
	Points    []results.Curve    `json:"points,omitempty"` // start and recommended at the tuned concurrency
	Trials    []trialPoint       `json:"trials,omitempty"`
	Decisions []results.Decision `json:"decisions,omitempty"`
	Timelines []timeline         `json:"timelines,omitempty"`
	// Capacity searches (a capacity run, or a capacity tune's two): the
	// latency-vs-rate curves.
	Capacity []capacityCurve `json:"capacity,omitempty"`
	// Bench only.
	Series      []results.Second          `json:"series,omitempty"`
	Percentiles []results.PercentilePoint `json:"percentiles,omitempty"`
	Errors      map[string]int64          `json:"errors,omitempty"`
}

// view is the template's input.
type view struct {
	Title    string
	Run      Run
	T        *results.Tune
	B        *results.Bench
	C        *results.Capacity
	Env      *results.Environment
	Commands []string
	Before   [2]row // start, recommended (tune)
	Files    []file
	Data     template.JS
	ECharts  template.JS
	Script   template.JS
	Charts   []chart
	// LeadCharts come right under the verdict (a tune's curve and its
	// trials), before any table.
	LeadCharts []chart
	Verdict    string
	// TuneVerdict is the tune's verdict, as the terminal printed it.
	TuneVerdict results.Verdict
	VerdictGood bool
	// TrialWarnings are the trials' own warnings grouped by kind
	// (generator saturation, steal...); TrialFacts the findings the tune
	// expects (a pool sized to the connections is at pm.max_children).
	TrialWarnings []string
	TrialFacts    []string
	// StealSeen is the highest steal any sample saw, in percent.
	StealSeen float64
	// HoldoutErrors are the servers' error logs over the holdout rounds
	// of the start and the recommendation; TrialErrors the other trials
	// whose logs explain failed requests.
	HoldoutErrors []configErrors
	TrialErrors   []trialErrors
	// PHPByBuild is TunePHPByBuildText's lines: what PHP logged under
	// each php.build the trials ran, when they ran more than one.
	PHPByBuild string
}

// trialErrors is one trial's failed requests as its servers' logs
// explain them.
type trialErrors struct {
	N            int
	Phase, Label string
	Conns        int
	Explanations []string
}

type row struct {
	ErrRate float64
	MemB    int64
}

type file struct{ Name, Text string }

// chart is one chart container; the script fills it by ID.
type chart struct{ ID, Title, Note string }

// capacityChart is the latency-vs-rate chart of capacity searches.
var capacityChart = chart{"capacity", "Latency against the asked rate (open model)", "Each step of the capacity search: latency percentiles measured from each request's intended send time against the rate asked (both axes logarithmic). Circles passed the SLO, triangles failed it; dashed lines are the SLO's bounds, the shaded band the bracket between the highest passing and the lowest failing rate. Hover for the step and why it failed."}

func renderHTML(w io.Writer, r Run) error {
	v := view{Title: title(r), Run: r, T: r.Tune, B: r.Bench, C: r.Capacity, Commands: commands(r), ECharts: template.JS(echartsJS), Script: template.JS(reportJS)}
	var d chartData
	if c := r.Capacity; c != nil {
		v.Env = c.Environment
		v.Verdict = capacityVerdict(c)
		v.VerdictGood = c.Outcome == "bracketed" && c.Confirmed
		d = chartData{Kind: "capacity", Capacity: []capacityCurve{capacityCurveOf("capacity", c)}}
		for _, st := range c.Steps {
			if st.Bench != nil {
				v.StealSeen = max(v.StealSeen, stealOf(st.Bench))
			}
		}
		v.StealSeen = max(v.StealSeen, envSteal(c.Environment))
		v.Charts = append(v.Charts, capacityChart)
		// The observer's view of the highest passing step: the stack at
		// its capacity.
		for i := len(c.Steps) - 1; i >= 0; i-- {
			st := c.Steps[i]
			if st.Pass && st.RateRPS == c.CapacityRPS && st.Bench != nil && st.Bench.Observation != nil && len(st.Bench.Observation.Samples) > 0 {
				d.Timelines = append(d.Timelines, timelineOf(fmt.Sprintf("step %d at %s rps", st.N, rps(st.RateRPS)), st.Bench.Observation))
				break
			}
		}
		for i, tl := range d.Timelines {
			v.Charts = append(v.Charts,
				chart{fmt.Sprintf("cpu%d", i), "CPU by process group — " + tl.Label, "Percent of one core, per sample (a top you can scroll)."},
				chart{fmt.Sprintf("fpm%d", i), "php-fpm workers and listen queues — " + tl.Label, ""},
				chart{fmt.Sprintf("pss%d", i), "PSS per php-fpm worker — " + tl.Label, ""})
		}
	} else if t := r.Tune; t != nil {
		v.Env = t.Environment
		d = tuneData(t)
		v.Before[0].ErrRate, v.Before[0].MemB = holdoutFigures(t, t.Start)
		v.Before[1].ErrRate, v.Before[1].MemB = holdoutFigures(t, t.Recommended)
		for _, n := range sortedKeys(t.Files) {
			v.Files = append(v.Files, file{n, t.Files[n]})
		}
		v.TuneVerdict = t.TheVerdict()
		var php strings.Builder
		TunePHPByBuildText(&php, t)
		v.PHPByBuild = strings.TrimSpace(php.String())
		v.Verdict, v.VerdictGood = v.TuneVerdict.Sentence, v.TuneVerdict.Outcome == results.VerdictFaster
		v.TrialWarnings, v.TrialFacts = trialWarnings(t)
		v.HoldoutErrors = holdoutErrors(t)
		for _, n := range trialsWithServerErrors(t) {
			for _, tr := range t.Trials {
				if tr.N == n {
					v.TrialErrors = append(v.TrialErrors, trialErrors{N: n, Phase: tr.Phase, Label: configLabel(tr.Config, t.Start), Conns: tr.Connections, Explanations: tr.Bench.ServerErrors.Explanations})
				}
			}
		}
		v.StealSeen = envSteal(t.Environment)
		for _, tr := range t.Trials {
			if tr.Bench != nil {
				v.StealSeen = max(v.StealSeen, stealOf(tr.Bench))
			}
		}
		if len(d.Curves) > 0 || len(d.Configs) > 0 {
			v.LeadCharts = append(v.LeadCharts, chart{"curve", "Throughput and p99 against concurrency", "Solid: throughput of the starting and the recommended configuration at each concurrency they were measured at (mean of their trials, bars: 95% confidence interval); dashed: their p99. Thin: the knee scan (a large static pool at rising concurrency)."})
		}
		if t.Capacity != nil {
			v.Charts = append(v.Charts, capacityChart)
		}
		v.LeadCharts = append(v.LeadCharts, chart{"trials", "Every trial", "Throughput of each trial in the order measured, by phase; hover for the configuration."})
		obj := "throughput (rps)"
		if t.Objective == "latency" {
			obj = "p99 latency (ms)"
		}
		for i, k := range d.Knobs {
			v.Charts = append(v.Charts, chart{fmt.Sprintf("knob%d", i), "Knob " + k.Knob + " against the objective", fmt.Sprintf("Each trial at %d connections that set %s is a point: its %s, bars: 95%% interval over the run's seconds. Start %s, recommended %s.", tunedConnections(t), k.Knob, obj, orDash(k.Start), orDash(k.Rec))})
		}
		for i, tl := range d.Timelines {
			v.Charts = append(v.Charts,
				chart{fmt.Sprintf("cpu%d", i), "CPU by process group — " + tl.Label, "Percent of one core, per sample (a top you can scroll)."},
				chart{fmt.Sprintf("fpm%d", i), "php-fpm workers and listen queues — " + tl.Label, "Active and total workers from the status page (gaps: a saturated pool could not answer it in time), worker processes counted in /proc, and connections queued in the kernel."},
				chart{fmt.Sprintf("pss%d", i), "PSS per php-fpm worker — " + tl.Label, "Proportional set size: shared memory (opcache) is divided among the processes that map it."})
		}
	} else {
		b := r.Bench
		v.Env = b.Environment
		v.StealSeen = max(envSteal(b.Environment), stealOf(b))
		d = benchData(b)
		v.Charts = append(v.Charts,
			chart{"throughput", "Throughput and latency over time", "Requests completed per second of the measured part, with p50 and p99 of each second."},
			chart{"percentiles", "Latency percentile distribution", "From the HdrHistogram of the measured part (x: percentile, logarithmic in 1/(1-p))."})
		if len(d.Errors) > 0 {
			v.Charts = append(v.Charts, chart{"errors", "Errors by class", ""})
		}
		for i := range d.Timelines {
			v.Charts = append(v.Charts,
				chart{fmt.Sprintf("cpu%d", i), "CPU by process group", "Percent of one core, per sample."},
				chart{fmt.Sprintf("fpm%d", i), "php-fpm workers and listen queues", ""},
				chart{fmt.Sprintf("pss%d", i), "PSS per php-fpm worker", ""})
		}
	}
	js, err := json.Marshal(d) // escapes <, > and & so the data cannot end the script
	if err != nil {
		return err
	}
	v.Data = template.JS(js)
	return page.Execute(w, v)
}

func tuneData(t *results.Tune) chartData {
	d := chartData{Kind: "tune", Curves: t.Curves, Decisions: t.Decisions, Configs: configCurves(t), Knobs: knobCharts(t), Objective: t.Objective}
	if tc := t.Capacity; tc != nil {
		for _, c := range []*results.Capacity{tc.Start, tc.Recommended} {
			if c != nil {
				d.Capacity = append(d.Capacity, capacityCurveOf(c.Label, c))
			}
		}
	}
	for _, tr := range t.Trials {
		p := trialPoint{N: tr.N, Phase: tr.Phase, Conns: tr.Connections, Status: tr.Status, Label: configLabel(tr.Config, t.Start)}
		if tr.Bench != nil {
			p.RPS, p.P99 = tr.Bench.ThroughputRPS, tr.Bench.Latency.P99Ms
		}
		d.Trials = append(d.Trials, p)
	}
	if h := t.Holdout; h != nil {
		conns := 0
		for _, tr := range t.Trials {
			if tr.Phase == "holdout" {
				conns = tr.Connections
			}
		}
		d.Points = []results.Curve{
			{Label: "start (holdout)", Points: []results.CurvePoint{{Connections: conns, ThroughputRPS: h.StartRPS, P99Ms: h.StartP99Ms}}},
			{Label: "recommended (holdout)", Points: []results.CurvePoint{{Connections: conns, ThroughputRPS: h.RecommendedRPS, P99Ms: h.RecommendedP99}}},
		}
	}
	// The observer's view of the last holdout run of each configuration.
	for _, which := range []struct {
		label string
		cfg   map[string]string
	}{{"recommended", t.Recommended}, {"start", t.Start}} {
		for i := len(t.Trials) - 1; i >= 0; i-- {
			tr := t.Trials[i]
			if tr.Phase == "holdout" && tr.Bench != nil && tr.Bench.Observation != nil && maps.Equal(tr.Config, which.cfg) {
				d.Timelines = append(d.Timelines, timelineOf(which.label+fmt.Sprintf(" (trial %d)", tr.N), tr.Bench.Observation))
				break
			}
		}
		if maps.Equal(t.Recommended, t.Start) {
			break
		}
	}
	return d
}

func benchData(b *results.Bench) chartData {
	d := chartData{Kind: "bench", Series: b.Series, Percentiles: b.LatencyDistribution, Errors: b.ErrorsByClass}
	if b.Observation != nil && len(b.Observation.Samples) > 0 {
		d.Timelines = append(d.Timelines, timelineOf("bench", b.Observation))
	}
	return d
}

// timelineOf turns samples into chart series.
func timelineOf(label string, o *results.Observation) timeline {
	tl := timeline{Label: label}
	cpu := map[string][]float64{}
	var order []string
	steal, idle := []float64{}, []float64{}
	queues := map[string][]float64{}
	var qorder []string
	active, total, procs := []*float64{}, []*float64{}, []*float64{}
	for i, s := range o.Samples {
		tl.T = append(tl.T, round1(s.TS))
		row := topRow{T: round1(s.TS), User: round1(s.Machine.UserPct), System: round1(s.Machine.SystemPct), Steal: round1(s.Machine.StealPct),
			Idle: round1(s.Machine.IdlePct), RunQ: s.Machine.RunQueue, MemAvMi: round1(float64(s.Machine.MemAvailableB) / (1 << 20))}
		for _, g := range s.Groups {
			row.Groups = append(row.Groups, topGroup{Name: g.Name, Procs: g.Processes, CPU: round1(g.UserPct + g.SystemPct),
				RSSMi: round1(float64(g.RSSB) / (1 << 20)), PSSMi: round1(float64(g.PSSB) / (1 << 20))})
		}
		sort.SliceStable(row.Groups, func(a, b int) bool { return row.Groups[a].CPU > row.Groups[b].CPU })
		tl.Top = append(tl.Top, row)
		for _, g := range s.Groups {
			if _, ok := cpu[g.Name]; !ok {
				order = append(order, g.Name)
				cpu[g.Name] = make([]float64, i) // zero before it appeared
			}
		}
		seen := map[string]bool{}
		for _, g := range s.Groups {
			cpu[g.Name] = append(cpu[g.Name], round1(g.UserPct+g.SystemPct))
			seen[g.Name] = true
		}
		for _, n := range order {
			if !seen[n] {
				cpu[n] = append(cpu[n], 0)
			}
		}
		steal = append(steal, round1(s.Machine.StealPct))
		idle = append(idle, round1(s.Machine.IdlePct))
		qseen := map[string]bool{}
		for _, q := range s.Queues {
			name := q.Owner + " queue"
			if _, ok := queues[name]; !ok {
				qorder = append(qorder, name)
				queues[name] = make([]float64, i)
			}
			if !qseen[name] {
				queues[name] = append(queues[name], float64(q.Queued))
				qseen[name] = true
			}
		}
		for _, n := range qorder {
			if !qseen[n] {
				queues[n] = append(queues[n], 0)
			}
		}
		var a, tot *float64
		for _, f := range s.FPM {
			if f.Error != "" {
				continue // not read this time: a gap, not a zero
			}
			if a == nil {
				a, tot = num(0), num(0)
			}
			*a += float64(f.ActiveProcesses)
			*tot += float64(f.TotalProcesses)
		}
		active, total = append(active, a), append(total, tot)
		var np float64
		for _, g := range s.Groups {
			if strings.HasPrefix(g.Name, "php-fpm workers") {
				np += float64(g.Processes)
			}
		}
		procs = append(procs, num(np))
	}
	for _, n := range order {
		tl.CPU = append(tl.CPU, series{n, nums(cpu[n])})
	}
	tl.Machine = []series{{"steal %", nums(steal)}, {"idle %", nums(idle)}}
	for _, n := range qorder {
		tl.Queue = append(tl.Queue, series{n, nums(queues[n])})
	}
	tl.Workers = []series{{"active workers (status page)", active}, {"total workers (status page)", total}, {"worker processes (/proc)", procs}}
	// Per-worker PSS from the last sample that read it.
	for i := len(o.Samples) - 1; i >= 0 && tl.WorkerPSS == nil; i-- {
		for _, g := range o.Samples[i].Groups {
			if !strings.HasPrefix(g.Name, "php-fpm workers") || len(g.PerProcess) == 0 {
				continue
			}
			ps := append([]results.ProcessSample(nil), g.PerProcess...)
			sort.Slice(ps, func(a, b int) bool { return ps[a].PSSB > ps[b].PSSB })
			for _, p := range ps {
				if p.PSSB > 0 {
					tl.WorkerPSS = append(tl.WorkerPSS, round1(float64(p.PSSB)/(1<<20)))
					tl.WorkerPID = append(tl.WorkerPID, p.PID)
				}
			}
		}
	}
	return tl
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }

// configLabel names a configuration by what differs from the start.
func configLabel(cfg, start map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(cfg) {
		if start[k] != cfg[k] {
			parts = append(parts, k+"="+cfg[k])
		}
	}
	if len(parts) == 0 {
		return "start"
	}
	return strings.Join(parts, " ")
}

// envSteal is the steal an environment recorded, in percent.
func envSteal(e *results.Environment) float64 {
	if e == nil {
		return 0
	}
	return e.MaxStealPc
}

// stealOf is the highest steal a bench's observer saw, in percent.
func stealOf(b *results.Bench) float64 {
	o := b.Observation
	if o == nil {
		return 0
	}
	m := o.Derived.MaxStealPct
	for _, s := range o.Samples {
		m = max(m, s.Machine.StealPct)
	}
	return m
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
