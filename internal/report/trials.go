package report

import (
	"fmt"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/stats"
)

// estimate is a figure with its 95% confidence interval.
type estimate struct {
	V  float64 `json:"v"`
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// meanCI is the mean of xs with a Student t interval (a point interval
// for fewer than two values).
func meanCI(xs []float64) estimate {
	m := stats.Mean(xs)
	if len(xs) < 2 {
		return estimate{m, m, m}
	}
	h := stats.TQuantile(0.975, float64(len(xs)-1)) * stats.StdDev(xs) / math.Sqrt(float64(len(xs)))
	return estimate{m, m - h, m + h}
}

// trialObjective is a trial's objective figure with a 95% interval from the
// spread of its seconds: throughput (successful responses per second) or,
// for the latency objective, p99 in milliseconds. Seconds are correlated,
// so the interval is a within-run indication, narrower than the
// run-to-run spread the repeated trials show.
func trialObjective(b *results.Bench, objective string) estimate {
	var xs []float64
	for _, s := range b.Series {
		if objective == "latency" {
			if s.Requests > 0 {
				xs = append(xs, s.P99Ms)
			}
		} else {
			xs = append(xs, float64(s.Requests-s.Errors))
		}
	}
	e := meanCI(xs)
	v := b.ThroughputRPS
	if objective == "latency" {
		v = b.Latency.P99Ms
	}
	if len(xs) == 0 {
		return estimate{v, v, v}
	}
	// Centre the interval on the run's own figure.
	return estimate{v, v - (e.V - e.Lo), v + (e.Hi - e.V)}
}

// knobChart is one knob's values against the objective, each trial a point.
type knobChart struct {
	Knob   string      `json:"knob"`
	Values []string    `json:"values"` // x categories, in order
	Start  string      `json:"start"`  // the starting value
	Rec    string      `json:"recommended"`
	Points []knobPoint `json:"points"`
}

type knobPoint struct {
	X      int      `json:"x"` // index into Values
	Y      estimate `json:"y"`
	N      int      `json:"n"`
	Phase  string   `json:"phase"`
	Label  string   `json:"label"`
	Status string   `json:"status"`
}

// tunedConnections is the concurrency the tune compared configurations at:
// that of its holdout, else the most common among its trials.
func tunedConnections(t *results.Tune) int {
	count := map[int]int{}
	best := 0
	for _, tr := range t.Trials {
		if tr.Phase == "holdout" {
			return tr.Connections
		}
		count[tr.Connections]++
		if count[tr.Connections] > count[best] {
			best = tr.Connections
		}
	}
	return best
}

// knobCharts has one chart for each knob that took more than one value
// among the measured trials at the tuned concurrency.
func knobCharts(t *results.Tune) []knobChart {
	conns := tunedConnections(t)
	values := map[string]map[string]bool{}
	var trials []results.Trial
	for _, tr := range t.Trials {
		if tr.Bench == nil || tr.Connections != conns || tr.Bench.Model == "open" {
			continue
		}
		trials = append(trials, tr)
		for k, v := range tr.Config {
			if values[k] == nil {
				values[k] = map[string]bool{}
			}
			values[k][v] = true
		}
	}
	var out []knobChart
	for _, k := range sortedKeys(values) {
		if len(values[k]) < 2 {
			continue
		}
		c := knobChart{Knob: k, Values: orderValues(sortedKeys(values[k])), Start: t.Start[k], Rec: t.Recommended[k]}
		index := map[string]int{}
		for i, v := range c.Values {
			index[v] = i
		}
		for _, tr := range trials {
			v, ok := tr.Config[k]
			if !ok {
				continue
			}
			c.Points = append(c.Points, knobPoint{X: index[v], Y: trialObjective(tr.Bench, t.Objective), N: tr.N, Phase: tr.Phase,
				Label: configLabel(tr.Config, t.Start), Status: tr.Status})
		}
		out = append(out, c)
	}
	return out
}

// orderValues sorts knob values numerically when they all are numbers or
// sizes (64M, 1G), else keeps them in name order.
func orderValues(vs []string) []string {
	nums := make(map[string]float64, len(vs))
	for _, v := range vs {
		n, ok := sizeValue(v)
		if !ok {
			return vs
		}
		nums[v] = n
	}
	sort.SliceStable(vs, func(i, j int) bool { return nums[vs[i]] < nums[vs[j]] })
	return vs
}

func sizeValue(v string) (float64, bool) {
	mult := 1.0
	s := strings.TrimSpace(v)
	if s == "" {
		return 0, false
	}
	switch s[len(s)-1] {
	case 'k', 'K':
		mult, s = 1<<10, s[:len(s)-1]
	case 'm', 'M':
		mult, s = 1<<20, s[:len(s)-1]
	case 'g', 'G':
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseFloat(s, 64)
	return n * mult, err == nil
}

// configCurve is throughput and p99 against concurrency for one
// configuration, from every trial that measured exactly it.
type configCurve struct {
	Label  string       `json:"label"`
	Points []curvePoint `json:"points"`
}

type curvePoint struct {
	Connections int      `json:"connections"`
	RPS         estimate `json:"rps"`
	P99Ms       estimate `json:"p99_ms"`
	Trials      []int    `json:"trials"`
}

// labeledConfig is a configuration of a tune with the label the report
// gives it.
type labeledConfig struct {
	label string
	cfg   map[string]string
}

// startAndRecommended are the tune's starting and recommended
// configurations, the recommendation left out when it is the start.
func startAndRecommended(t *results.Tune) []labeledConfig {
	out := []labeledConfig{{"start", t.Start}}
	if !maps.Equal(t.Start, t.Recommended) {
		out = append(out, labeledConfig{"recommended", t.Recommended})
	}
	return out
}

// configCurves groups the trials of the starting and the recommended
// configurations by concurrency: the mean over repeated trials with a 95%
// interval from their spread (one trial: its within-run interval).
func configCurves(t *results.Tune) []configCurve {
	var out []configCurve
	for _, which := range startAndRecommended(t) {
		byConns := map[int][]results.Trial{}
		for _, tr := range t.Trials {
			// Open-model steps (a capacity tune's) are on the
			// latency-against-rate chart, not against concurrency.
			if tr.Bench != nil && tr.Bench.Model != "open" && (tr.Status == "ok" || tr.Status == "violates") && maps.Equal(tr.Config, which.cfg) {
				byConns[tr.Connections] = append(byConns[tr.Connections], tr)
			}
		}
		c := configCurve{Label: which.label}
		var levels []int
		for n := range byConns {
			levels = append(levels, n)
		}
		sort.Ints(levels)
		for _, n := range levels {
			trs := byConns[n]
			p := curvePoint{Connections: n}
			if len(trs) == 1 {
				p.RPS = trialObjective(trs[0].Bench, "throughput")
				p.P99Ms = trialObjective(trs[0].Bench, "latency")
			} else {
				var rps, p99 []float64
				for _, tr := range trs {
					rps = append(rps, tr.Bench.ThroughputRPS)
					p99 = append(p99, tr.Bench.Latency.P99Ms)
				}
				p.RPS, p.P99Ms = meanCI(rps), meanCI(p99)
			}
			for _, tr := range trs {
				p.Trials = append(p.Trials, tr.N)
			}
			c.Points = append(c.Points, p)
		}
		if len(c.Points) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// warningKind names the kind of a trial's warning, so that the same kind
// across trials (each with its own figures) reads as one line: what it is,
// how many trials, which.
type warningKind struct {
	key, title string
	match      func(string) bool
}

var warningKinds = []warningKind{
	{"steal", "CPU steal above 10%: the hypervisor gave the CPU to a neighbour; these trials' throughput is unreliable (CPU per request is not)", func(w string) bool { return strings.HasPrefix(w, "CPU steal reached") }},
	{"pool", "the pool ran with every worker busy: at pm.max_children", func(w string) bool { return strings.Contains(w, "the pool is at pm.max_children") }},
	{"modphp-pool", "the pool ran with every worker busy: Apache's children (mod_php) at MaxRequestWorkers", func(w string) bool { return strings.Contains(w, "the pool is at MaxRequestWorkers") }},
	{"apache", "Apache ran with every worker busy: at MaxRequestWorkers", func(w string) bool { return strings.Contains(w, "Apache is at MaxRequestWorkers") }},
	{"fpm-refused", "the web server could not reach php-fpm (its listen queue full): requests failed", func(w string) bool {
		return strings.HasPrefix(w, "lighttpd could not connect to php-fpm") || strings.Contains(w, "php-fpm dropped connections") || strings.Contains(w, "with 502 or 503 itself")
	}},
	{"h2o-full", "h2o held its max-connections: further clients waited in the kernel's queue", func(w string) bool { return strings.HasPrefix(w, "h2o held its max-connections") }},
	{"compete", "the generator and the stack competed for the cores", func(w string) bool { return strings.Contains(w, "compete for the cores") }},
	{"swap", "swap in use", func(w string) bool { return strings.HasPrefix(w, "swap in use") }},
	{"page", "the page changed or reads like an error", func(w string) bool {
		return strings.Contains(w, "the page now answers") || strings.Contains(w, "title is now") || strings.Contains(w, "reads like an error") || strings.Contains(w, "the page is an error")
	}},
	{"unexpected", "responses did not match --expect", func(w string) bool {
		return strings.Contains(w, "unexpected_body") || strings.Contains(w, "did not match")
	}},
}

func kindOf(w string) (warningKind, bool) {
	for _, k := range warningKinds {
		if k.match(w) {
			return k, true
		}
	}
	return warningKind{}, false
}

// expected reports whether a trial's warning is what the trial was built
// to do: a pool at its size (pm.max_children, or MaxRequestWorkers with
// mod_php) when the pool is no larger than the
// workload's connections (a static pool of 50 at 50 connections is busy by
// design) is a fact, not a warning.
func expected(k warningKind, tr results.Trial) bool {
	n := int(knob.Config(tr.Config).PHPWorkers())
	return (k.key == "pool" || k.key == "modphp-pool") && n > 0 && n <= tr.Connections
}

// trialWarnings are the warnings of the trials' own runs (generator
// saturation, steal, the pool at its limit, the page...) grouped by kind,
// one line each with the count and the trials, worst figure first; facts
// are the findings the tune expects (a pool sized to the connections is
// at pm.max_children), listed apart so the warnings that matter show.
func trialWarnings(t *results.Tune) (warnings, facts []string) {
	var saturated []string
	type group struct {
		trials  []string
		example string
	}
	groups := map[string]*group{}
	factGroups := map[string]*group{}
	var order, factOrder []string
	other := map[string][]string{}
	var otherOrder []string
	for _, tr := range t.Trials {
		if tr.Bench == nil {
			continue
		}
		n := strconv.Itoa(tr.N)
		if tr.Bench.Generator.Saturated {
			saturated = append(saturated, n)
		}
		ws := append([]string(nil), tr.Bench.Warnings...)
		if o := tr.Bench.Observation; o != nil {
			ws = append(ws, o.Derived.Warnings...)
		}
		seenHere := map[string]bool{}
		for _, w := range ws {
			k, ok := kindOf(w)
			if !ok {
				if _, seen := other[w]; !seen {
					otherOrder = append(otherOrder, w)
				}
				other[w] = append(other[w], n)
				continue
			}
			if seenHere[k.key] {
				continue
			}
			seenHere[k.key] = true
			gs, ord := groups, &order
			if expected(k, tr) {
				gs, ord = factGroups, &factOrder
			}
			g := gs[k.key]
			if g == nil {
				g = &group{example: w}
				gs[k.key] = g
				*ord = append(*ord, k.key)
			}
			g.trials = append(g.trials, n)
		}
	}
	line := func(k string, g *group) string {
		kind := warningKind{title: k}
		for _, wk := range warningKinds {
			if wk.key == k {
				kind = wk
			}
		}
		what := "trial"
		if len(g.trials) > 1 {
			what = "trials"
		}
		return fmt.Sprintf("%s — %d %s (%s); e.g. %s", kind.title, len(g.trials), what, strings.Join(g.trials, ", "), g.example)
	}
	if len(saturated) > 0 {
		warnings = append(warnings, fmt.Sprintf("the load generator was saturated — %d trials (%s): their throughput may be the generator's, not the server's", len(saturated), strings.Join(saturated, ", ")))
	}
	for _, k := range order {
		warnings = append(warnings, line(k, groups[k]))
	}
	for _, w := range otherOrder {
		if len(other[w]) == 1 {
			warnings = append(warnings, "trial "+other[w][0]+": "+w)
		} else {
			warnings = append(warnings, "trials "+strings.Join(other[w], ", ")+": "+w)
		}
	}
	for _, k := range factOrder {
		facts = append(facts, line(k, factGroups[k])+" (expected: the pool is no larger than the workload's connections)")
	}
	return warnings, facts
}
