package cli

import (
	"context"
	"slices"
	"time"

	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/decide/tune"
	"github.com/phptune/phptune/internal/model/outdir"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labprofile"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/watch/perf"
)

// profileStart is tune --profile: one round of phptune profile on the
// starting configuration, its files in outDir/profile, and its findings'
// challenges added to the search's (after the default ones, which an
// empty list would otherwise stand for).
func profileStart(ctx context.Context, l *lab.Lab, w workload.Workload, opt *tune.Options, outDir *outdir.Dir, say func(string, ...any)) ([]results.ProfileFinding, error) {
	say("profiling the starting configuration (one round: plain, perf, excimer)")
	// The lab runs the start already: its own lab came up with it, a
	// --lab's configuration is the start.
	conns, d, warmup := opt.Conns, opt.Duration, opt.Warmup
	if conns < 1 {
		conns = 50
	}
	if d < time.Second {
		d = 10 * time.Second
	}
	if warmup <= 0 {
		warmup = 3 * time.Second
	}
	res, err := labprofile.Run(ctx, l, w, labprofile.Options{Conns: conns, Duration: d, Warmup: warmup,
		Rounds: 1, PHPClock: lab.ProfilerCPU, Native: true, PHP: true, Perf: perf.DefaultOptions, Say: say})
	if err != nil {
		return nil, err
	}
	sub, err := outDir.Sub("profile")
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	if err := report.WriteProfile(sub, opt.App, w.Name, res); err != nil {
		return nil, err
	}
	if opt.Challenges == nil {
		for _, c := range search.ChallengesFor(l.Config.Server(), w.Writes) {
			opt.Challenges = append(opt.Challenges, c.Name)
		}
	}
	var out []results.ProfileFinding
	for _, f := range res.Findings {
		say("profile: %s", f.Evidence)
		var added []string
		for _, c := range f.Challenges {
			if _, err := tune.ParseChallenge(c); err != nil {
				say("profile: challenge %s left out: %v", c, err)
				continue
			}
			added = append(added, c)
			if !slices.Contains(opt.Challenges, c) {
				opt.Challenges = append(opt.Challenges, c)
			}
		}
		out = append(out, results.ProfileFinding{ID: f.ID, Share: f.Share, Evidence: f.Evidence, Challenges: added, AppIssue: f.AppIssue})
	}
	if len(out) == 0 {
		say("profile: no finding above its threshold; the search's challenges are unchanged")
	}
	return out, nil
}
