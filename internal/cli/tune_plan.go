package cli

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/decide/capacity"
	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/decide/tune"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/stacksession"
)

// What phptune tune checks before anything starts: its flags, the stored
// run it resumes, and the stack it would run on.

var sloRE = regexp.MustCompile(`^\s*p99\s*<=?\s*([0-9.]+)\s*(ms|s)?\s*$`)

// parseSLO reads 'p99<300ms' (a bare number is milliseconds).
func parseSLO(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	m := sloRE.FindStringSubmatch(s)
	if m == nil {
		return 0, usageErr("Try: --slo 'p99<300ms'", "--slo %q: write the p99 latency limit like p99<300ms or p99<2s", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || v <= 0 {
		return 0, usageErr("Try: --slo 'p99<300ms'", "--slo %q: the limit must be a positive number", s)
	}
	if m[2] == "s" {
		v *= 1000
	}
	return v, nil
}

// checkCapacitySLO reads --slo for --objective capacity (default
// p99<500ms, as phptune capacity's), refusing it with the grammar, and an
// errors term given beside an explicit --max-errors.
func checkCapacitySLO(f *tuneFlags) (string, error) {
	s := f.slo
	if s == "" {
		s = "p99<500ms"
	}
	slo, err := capacity.ParseSLO(s)
	if err != nil {
		return "", usageErr("Try: --objective capacity --slo 'p99<500ms'; the grammar: "+sloHelp, "--slo %q: %s", s, strings.TrimPrefix(err.Error(), capacity.ErrSLO.Error()+": "))
	}
	if slo.Errors != nil && f.maxErrorsSet {
		return "", usageErr("Try: --slo '"+s+"' without --max-errors, or drop the errors term", "--max-errors and the --slo term %s both limit the errors; give one", slo.Errors)
	}
	return slo.String(), nil
}

// parseErrorRate reads "0.1%" or "0.001".
func parseErrorRate(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if pct {
		v /= 100
	}
	if err != nil || v < 0 || v >= 1 {
		return 0, usageErr("Try: --max-errors 0.1%", "--max-errors %q: give a rate between 0 and 100%%, like 0.1%% or 0", s)
	}
	return v, nil
}

// parseMemoryBudget reads a size, "none", or "" (80% of MemAvailable).
func parseMemoryBudget(s string) (int64, string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "0":
		return 0, "no memory budget", nil
	case "":
		avail := stacksession.MemAvailable()
		if avail <= 0 {
			return 0, "no memory budget (MemAvailable unreadable)", nil
		}
		b := avail / 10 * 8
		return b, fmt.Sprintf("memory budget %.1f GiB (80%% of MemAvailable; set --memory-budget)", float64(b)/(1<<30)), nil
	}
	b, err := knob.ParseSize(s)
	if err != nil || b < 16<<20 {
		return 0, "", usageErr("Try: --memory-budget 2G", "--memory-budget %q: give a size of at least 16M, like 512M or 2G, or none", s)
	}
	return b, "memory budget " + knob.FormatSize(b), nil
}

// tunePlan is everything checked before anything starts.
type tunePlan struct {
	opt       tune.Options
	start     knob.Config // for a lab of our own
	budgetMsg string
	outDir    string
	// stackPlan is the stack: the site of --site, found before its lab
	// exists, or the lab of --lab and the workload parsed on it.
	stackPlan
}

// planTune checks the whole command line (and, for --lab, that the lab
// exists and the workload suits it) before anything is created: no output
// directory, database row or lab, and no restart of a running lab, comes
// before it.
func planTune(ctx context.Context, f *tuneFlags, command string) (*tunePlan, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	p := &tunePlan{outDir: f.outDir}
	set, err := f.planStart(p)
	if err != nil {
		return nil, err
	}
	f.stack.workload = f.stack.workloadSpec()
	if err := f.checkRanges(); err != nil {
		return nil, err
	}
	if p.opt, p.budgetMsg, err = f.options(command); err != nil {
		return nil, err
	}
	if f.resume != "" {
		// A resumed tune writes on into its directory (reopenOutDir
		// checks it) and checks its stored stack once it is read.
		return p, nil
	}
	if err := checkOutDir(f.outDir); err != nil {
		return nil, err
	}
	// The stack last: --site reads the live host, --lab the lab's state
	// (and, for the comment workload, its database).
	sp, err := f.stack.plan(ctx)
	if err != nil {
		return nil, err
	}
	p.stackPlan = *sp
	if sp.fromLog != "" {
		// --workload-from-log vhost, now the site's access log.
		f.stack.workload = f.stack.workloadSpec()
		p.opt.Workload = f.stack.workload
	}
	if p.site != nil {
		// The live configuration, --set and --knobs on top; the run
		// keeps the site as it was found.
		if p.start, err = p.site.start(set); err != nil {
			return nil, err
		}
		p.opt.Site = p.site.record()
	}
	return p, nil
}

// validate refuses what goes with nothing else: --apply-sysctl without
// root, unknown --redact names, and --engine locust.
func (f *tuneFlags) validate() error {
	if err := checkApplySysctl(f.applySysctl); err != nil {
		return err
	}
	if err := checkRedactNames(f.redact); err != nil {
		return err
	}
	return f.checkEngine()
}

// planStart checks the stack flags: none with --resume (the run keeps its
// own), and for a new run the start configuration (--set, --knobs), with
// the assignments that go on top of --site's live configuration once the
// site is found.
func (f *tuneFlags) planStart(p *tunePlan) ([]string, error) {
	st := &f.stack
	if f.resume != "" {
		if st.lab != "" || st.app != "" || st.docroot != "" || st.site != "" || len(st.set) > 0 || st.knobsFile != "" {
			return nil, usageErr("Try: phptune tune --resume "+f.resume, "--resume continues a run with its stored settings; give no --lab, --app, --docroot, --site, --set or --knobs")
		}
		return nil, st.checkTraffic(true)
	}
	if err := st.check(false); err != nil {
		return nil, err
	}
	set, start, err := knobConfig(st.knobsFile, st.set)
	if err != nil {
		return nil, err
	}
	p.start = start
	return set, nil
}

// checkRanges refuses the tuning flags' values out of their range.
func (f *tuneFlags) checkRanges() error {
	switch {
	case f.objective != "throughput" && f.objective != "latency" && f.objective != tune.ObjectiveCapacity:
		return usageErr("Try: --objective throughput", "--objective %q: choose throughput, latency or capacity", f.objective)
	case f.strategy != "domain" && f.strategy != "grid":
		return usageErr("Try: --strategy domain", "--strategy %q: choose domain or grid", f.strategy)
	case f.conns < 1 || f.conns > 10000:
		return usageErr("Try: -c 50", "--connections %d: give 1 to 10000", f.conns)
	case f.trialDuration < time.Second || f.trialWarmup < 0:
		return usageErr("Try: --trial-duration 10s --trial-warmup 3s", "--trial-duration must be at least 1s and --trial-warmup not negative")
	case f.timeBudget < 0:
		return usageErr("Try: --time-budget 15m", "--time-budget must not be negative")
	case f.holdoutRounds < 2 || f.holdoutRounds > 20:
		return usageErr("Try: --holdout-rounds 4", "--holdout-rounds %d: give 2 to 20 (a ratio needs pairs)", f.holdoutRounds)
	case f.searchTrials < 0 || (f.searchTrials > 0 && f.strategy == "grid"):
		return usageErr("Try: --search-trials 14, with the domain strategy", "--search-trials %d: give a positive number of trials (0: as the time budget allows), and not with --strategy grid, which measures its whole grid", f.searchTrials)
	}
	return nil
}

// limits reads --slo (or the capacity SLO), --max-errors and
// --memory-budget, with what the budget is, for the first line.
func (f *tuneFlags) limits() (results.Limits, string, string, error) {
	var slo float64
	var capSLO string
	var err error
	if f.objective == tune.ObjectiveCapacity {
		// The capacity SLO bounds the open model's latencies; it is not a
		// closed-model p99 limit on the search's trials.
		if capSLO, err = checkCapacitySLO(f); err != nil {
			return results.Limits{}, "", "", err
		}
	} else if slo, err = parseSLO(f.slo); err != nil {
		return results.Limits{}, "", "", err
	}
	rate, err := parseErrorRate(f.maxErrors)
	if err != nil {
		return results.Limits{}, "", "", err
	}
	budget, msg, err := parseMemoryBudget(f.memoryBudget)
	if err != nil {
		return results.Limits{}, "", "", err
	}
	return results.Limits{MemoryBudgetB: budget, MaxErrorRate: rate, SLOP99Ms: slo}, capSLO, msg, nil
}

// options are the tune's options from the flags, with what the memory
// budget is, refused when the time budget cannot hold the plan.
func (f *tuneFlags) options(command string) (tune.Options, string, error) {
	limits, capSLO, budgetMsg, err := f.limits()
	if err != nil {
		return tune.Options{}, "", err
	}
	st := &f.stack
	opt := tune.Options{
		Command: command, App: st.app, Workload: st.workload, Objective: f.objective, SLO: capSLO,
		Lab: st.lab, DocRoot: st.docroot, User: st.user, Conns: f.conns,
		CPUs: st.caps.CPUs, MemoryMaxB: st.caps.MemoryMax, Expect: st.expect, Host: st.host,
		Limits: limits, TimeBudget: f.timeBudget, Duration: f.trialDuration, Warmup: f.trialWarmup,
		HoldoutRounds: f.holdoutRounds, Strategy: f.strategy, SearchTrials: f.searchTrials,
	}
	if f.trialWarmup == 0 {
		opt.Warmup = -1 // tune's "none"
	}
	var be *tune.BudgetError
	if _, err := opt.BudgetPlan(); errors.As(err, &be) {
		return opt, "", usageErr("Try: --time-budget "+be.Min.String(), "%v", err)
	}
	if err := f.addChallenges(&opt); err != nil {
		return opt, "", err
	}
	if err := f.addBaselines(&opt); err != nil {
		return opt, "", err
	}
	opt.MemAvailableB = stacksession.MemAvailable()
	return opt, budgetMsg, f.addCurve(&opt)
}

// addChallenges adds --challenges' changes to decide, each once.
func (f *tuneFlags) addChallenges(opt *tune.Options) error {
	for _, v := range f.challenges {
		specs, err := tune.SplitChallengeFlag(v)
		if err != nil {
			return usageErr("Give a known name ("+challengeNames(search.KnownChallenges())+"), grid, or KNOB=VALUE;KNOB=VALUE (see phptune knobs)", "--challenges: %v", err)
		}
		for _, sp := range specs {
			if !slices.Contains(opt.Challenges, sp) {
				opt.Challenges = append(opt.Challenges, sp)
			}
		}
	}
	return nil
}

// addBaselines adds --baselines' rules of thumb, each once.
func (f *tuneFlags) addBaselines(opt *tune.Options) error {
	b := strings.TrimSpace(f.baselines)
	if b == "none" || b == "" {
		return nil
	}
	for _, n := range strings.Split(b, ",") {
		n = strings.TrimSpace(n)
		if err := tune.CheckBaselines([]string{n}); err != nil {
			return usageErr("Try: --baselines calculator,2xcores, or --baselines none", "--baselines: %v", err)
		}
		if !slices.Contains(opt.Baselines, n) {
			opt.Baselines = append(opt.Baselines, n)
		}
	}
	return nil
}

// addCurve adds --curve's connection counts (none: no curve).
func (f *tuneFlags) addCurve(opt *tune.Options) error {
	switch f.curve {
	case "":
		return nil
	case "none":
		opt.NoCurve = true
		return nil
	}
	for _, v := range strings.Split(f.curve, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n <= 0 || n > 100000 {
			return usageErr("Give connection counts such as --curve 5,10,100, or --curve none.", "--curve: %q is not a number of connections", v)
		}
		if n != f.conns && !slices.Contains(opt.CurveConns, n) {
			opt.CurveConns = append(opt.CurveConns, n)
		}
	}
	if len(opt.CurveConns) == 0 {
		opt.NoCurve = true
	}
	return nil
}
