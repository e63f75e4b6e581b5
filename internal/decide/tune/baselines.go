package tune

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// Baseline names (--baselines).
const (
	BaselineCalculator = "calculator"
	BaselineTwoPerCore = "2xcores"
)

// KnownBaselines are the rules of thumb a tune can set beside its
// recommendation.
var KnownBaselines = []string{BaselineCalculator, BaselineTwoPerCore}

// BaselineDistro is the distro's default configuration (Debian's pool,
// php.ini and servers' defaults), measured beside a live start (see
// Options.UseLiveStart): what the site would get from the packages alone.
const BaselineDistro = "distro"

// StartLive says a tune's start is a live site's configuration
// (Options.StartFrom, results.Tune.StartFrom).
const StartLive = "live"

// baselineInputs are the figures the rules need, from the start
// configuration's drift trials.
type baselineInputs struct {
	start     knob.Config
	startFrom string // StartLive: the distro's defaults are a baseline
	cores     int
	memAvailB int64
	// workerB is the average worker's size for the calculator: RSS, as the
	// calculators' users read it from ps; PSS when RSS was not measured.
	workerB   int64
	workerRSS bool
	mem       search.Memory // PSS p95 per worker and the rest, for the prediction
	budgetB   int64
}

// baselineInputsFrom reads what the rules need from the drift trials: the
// average php-fpm worker's RSS over the samples after the first (as
// bench/tune.sh did), MemAvailable (memAvailB when given, else the largest
// the observer saw) and the memory model.
func baselineInputsFrom(o Options, drift []*results.Bench) baselineInputs {
	in := baselineInputs{start: o.Start, startFrom: o.StartFrom, cores: o.Cores, memAvailB: o.MemAvailableB, budgetB: o.Limits.MemoryBudgetB}
	var rss []float64
	var pss []int64
	var avail int64
	for _, b := range drift {
		in.mem.Observe(o.Start, b)
		if b == nil || b.Observation == nil {
			continue
		}
		samples := b.Observation.Samples
		if len(samples) > 1 {
			samples = samples[1:] // the first is before the load
		}
		for _, smp := range samples {
			avail = max(avail, smp.Machine.MemAvailableB)
			for _, g := range smp.Groups {
				if (strings.HasPrefix(g.Name, "php-fpm workers") || g.Name == "apache+php workers") && g.Processes > 0 && g.RSSB > 0 {
					rss = append(rss, float64(g.RSSB)/float64(g.Processes))
				}
			}
		}
		if p := b.Observation.Derived.WorkerPSSP50B; p > 0 {
			pss = append(pss, p)
		}
	}
	if in.memAvailB <= 0 {
		in.memAvailB = avail
	}
	switch {
	case len(rss) > 0:
		sum := 0.0
		for _, x := range rss {
			sum += x
		}
		in.workerB, in.workerRSS = int64(sum/float64(len(rss))), true
	case len(pss) > 0:
		in.workerB = slices.Max(pss)
	}
	return in
}

// planBaselines builds every known rule's configuration from in and says,
// for each, why the holdout will not measure it: not among wanted, the
// same as the start, or it does not fit the memory budget. The ones left
// (NotMeasured empty) are measured when the time budget allows.
func planBaselines(in baselineInputs, wanted []string) ([]results.Baseline, []knob.Config) {
	var out []results.Baseline
	var cfgs []knob.Config
	names := KnownBaselines
	if in.startFrom == StartLive {
		names = append([]string{BaselineDistro}, KnownBaselines...)
	}
	for _, name := range names {
		b := results.Baseline{Name: name}
		var cfg knob.Config
		var err error
		switch name {
		case BaselineCalculator:
			switch {
			case in.memAvailB <= 0:
				err = fmt.Errorf("MemAvailable was not measured")
			case in.workerB <= 0:
				worker := "php-fpm worker"
				switch in.start.Server() {
				case knob.ApachePreforkModPHP:
					worker = "Apache child (PHP worker with mod_php)"
				case knob.UnitPHP:
					worker = "Unit application process"
				}
				err = fmt.Errorf("no %s was measured in the drift trials", worker)
			default:
				size := "RSS"
				if !in.workerRSS {
					size = "PSS (RSS not measured)"
				}
				b.Rule = fmt.Sprintf("%s = 0.9 × MemAvailable %s / average worker %s %s, %s with 25%%/75%% spares",
					knob.WorkersKnob(in.start.Server()), human(in.memAvailB), size, human(in.workerB), dynamicName(in.start.Server()))
				cfg, err = search.Calculator(in.start, in.memAvailB, in.workerB)
			}
			if b.Rule == "" {
				b.Rule = knob.WorkersKnob(in.start.Server()) + " = 0.9 × MemAvailable / average worker RSS"
			}
		case BaselineTwoPerCore:
			b.Rule = fmt.Sprintf("a static pool of 2 × %d cores", in.cores)
			cfg, err = search.TwoPerCore(in.start, in.cores)
		case BaselineDistro:
			b.Rule = "the distro's defaults: Debian's pool, php.ini and " + in.start.Server() + " as the packages ship them"
			cfg = DistroConfig(in.start)
		}
		if err != nil {
			b.NotMeasured = "cannot be computed: " + err.Error()
			out, cfgs = append(out, b), append(cfgs, nil)
			continue
		}
		b.Config = cfg.Clone()
		for _, ch := range knob.Diff(in.start, cfg) {
			if cfg.Relevant(ch.Knob) {
				b.Settings = append(b.Settings, ch.Knob+"="+ch.To)
			}
		}
		if in.mem.Known() {
			b.PredictedMemB = in.mem.Predict(cfg)
		}
		switch {
		case !slices.Contains(wanted, name):
			b.NotMeasured = "not asked for (--baselines)"
		case len(b.Settings) == 0:
			b.NotMeasured = "the same as the start configuration: the holdout's ratio applies"
		case in.budgetB > 0 && b.PredictedMemB > in.budgetB:
			n := cfg.PHPWorkers()
			b.NotMeasured = fmt.Sprintf("does not fit the %s memory budget: %s workers × %s (PSS p95) + %s for the rest = %s",
				human(in.budgetB), thousands(n), human(in.mem.WorkerB), human(in.mem.OtherB), human(b.PredictedMemB))
		}
		out, cfgs = append(out, b), append(cfgs, cfg)
	}
	return out, cfgs
}

// dynamicName is what a dynamic pool is called on server.
func dynamicName(server string) string {
	switch server {
	case knob.ApachePreforkModPHP:
		return "prefork children"
	case knob.UnitPHP:
		return "Unit processes dynamic"
	}
	return "pm dynamic"
}

// human formats a byte count like 12.9 MiB or 1 GiB.
func human(b int64) string {
	switch {
	case b >= 1<<30:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(b)/(1<<30)), ".0") + " GiB"
	case b >= 1<<20:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(b)/(1<<20)), ".0") + " MiB"
	}
	return strconv.FormatInt(b>>10, 10) + " KiB"
}

// thousands formats 1646 as 1,646.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// DistroConfig is the distro's default configuration for the same server
// and PHP build as start: what the packages run before anyone tunes.
func DistroConfig(start knob.Config) knob.Config {
	cfg := knob.Defaults()
	for _, k := range []string{knob.ServerKnob, knob.BuildKnob} {
		if v, ok := start[k]; ok {
			cfg[k] = v
		}
	}
	return cfg
}

// CheckBaselines checks --baselines names (the distro baseline is added
// by UseLiveStart, not asked for).
func CheckBaselines(names []string) error {
	for _, n := range names {
		if !slices.Contains(KnownBaselines, n) && n != BaselineDistro {
			return fmt.Errorf("unknown baseline %q: choose from %s, or none", n, strings.Join(KnownBaselines, ", "))
		}
	}
	return nil
}
