package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/decide/tune"
	"github.com/phptune/phptune/internal/live/recommend"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/outdir"
	"github.com/phptune/phptune/internal/model/redact"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/servers/phpfpm"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/stack/stacksession"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// phptune tune's run: flags checked (planTune), the results database and
// directory, the stack session (openTuneSession), the tuner on it, and
// the result written and printed.

func runTune(env *Env, f *tuneFlags, command string) error {
	ctx := env.Ctx
	plan, err := planTune(ctx, f, command)
	if err != nil {
		return err
	}
	db, err := openTuneResults(ctx, f)
	if err != nil {
		return err
	}
	defer db.Close()
	if f.resume != "" {
		if err := plan.resume(ctx, db, f); err != nil {
			return err
		}
	} else {
		plan.opt.ID = newRunID(ctx, db)
	}
	out, outDir, err := plan.openOutDir(f.resume != "")
	if err != nil {
		return err
	}
	defer out.CloseRemovingIfEmpty()
	say := func(format string, args ...any) { fmt.Fprintf(env.Stderr, "tune: "+format+"\n", args...) }
	say("run %s; %s; files go to %s", plan.opt.ID, plan.budgetMsg, outDir)
	if logs, ok := siteLogs(plan.site, plan.lab); ok && f.resume == "" && !f.workloadSet {
		if hint := siteLogHint(logs); hint != "" {
			say("%s", hint)
		}
	}
	sess, kernelRun, err := openTuneSession(env, f, plan, db.RedactNames(), say)
	if err != nil {
		return err
	}
	defer sess.Close()
	res, err := tuneOn(env, f, plan.opt, sess, kernelRun, db, out, say)
	if err != nil {
		return err
	}
	paths, err := writeTuneFiles(out, res, db.RedactNames())
	if err != nil {
		return err
	}
	printTune(env, res, outDir, paths)
	return nil
}

// openTuneResults opens the results database; a resumed run needs the
// one it was stored in.
func openTuneResults(ctx context.Context, f *tuneFlags) (*store.DB, error) {
	if f.resume != "" {
		if !store.Exists(resultsDBPath()) {
			return nil, usageErr("See the run IDs with: phptune report --list", "--resume %s: there is no results database at %s", f.resume, resultsDBPath())
		}
	}
	return openResults(ctx, f.redact)
}

// tuneOn runs the tune (or resumes it) on the session's stack, after the
// start page is checked and, with --profile, the start profiled. The
// result comes back completed and redacted, as stored.
func tuneOn(env *Env, f *tuneFlags, opt tune.Options, sess *stacksession.Session, kernelRun *sysctl.Run, db *store.DB, out *outdir.Dir, say func(string, ...any)) (*results.Tune, error) {
	ctx := env.Ctx
	stack := sess.Stack()
	if err := checkStartPage(ctx, env, stack, say); err != nil {
		return nil, err
	}
	opt.ResetBetween = sess.Workload.Writes
	if sess.Workload.Writes {
		say("workload %s writes: the database is reset before every trial", redact.Text(sess.Workload.Name, db.RedactNames()))
	}
	var findings []results.ProfileFinding
	if f.profile && f.resume == "" {
		var err error
		if findings, err = profileStart(ctx, sess.Lab, sess.Workload, &opt, out, say); err != nil {
			return nil, err
		}
	}
	t := newTuner(env, stack, db, kernelRun, opt.Conns)
	// What a sealed lab's code tries to reach outside, over the run.
	blocked := labstack.NewBlockedCounter(ctx, sess.Lab)
	var res *results.Tune
	var err error
	if f.resume != "" {
		say("resuming; finished trials are taken from the database")
		res, err = t.Resume(ctx, opt.ID)
	} else {
		res, err = t.Run(ctx, opt)
	}
	if err != nil {
		return nil, tuneError(err, opt, db.RedactNames())
	}
	res.Environment = t.Environment
	res.ProfileFindings = findings
	var blockedWarning string
	if res.Blocked, blockedWarning = blocked.Since(ctx); blockedWarning != "" {
		res.Warnings = append(res.Warnings, blockedWarning)
	}
	for _, w := range labstack.CacheWarnings(sess.Lab) {
		if !slices.Contains(res.Warnings, w) { // a resumed run has them already
			res.Warnings = append(res.Warnings, w)
		}
	}
	var ran []map[string]string
	for _, tr := range res.Trials {
		ran = append(ran, tr.Config)
	}
	res.Environment.PHPBuilds = buildsOf(ran)
	// The result as stored: nothing written from it holds a secret.
	return res, redact.Value(res, db.RedactNames())
}

// newTuner is the tuner of stack, storing into db, with the environment
// read now (its kernel limits with what --apply-sysctl raised: the
// recommendation's backlogs are added by the tuner).
func newTuner(env *Env, stack *labstack.Stack, db *store.DB, kernelRun *sysctl.Run, conns int) *tune.Tuner {
	phpVersion := "8.2"
	if b, err := phpfpm.Find(); err == nil {
		phpVersion = b.Version
	}
	usesDB := stack.Lab.MariaDBSocket != ""
	envInfo := environment(env.Ctx)
	completeKernelLimits(envInfo.KernelLimits, stack.Lab, kernelRun, nil)
	return &tune.Tuner{
		Stack:       stack,
		Store:       db,
		Environment: envInfo,
		Progress:    tuneProgress(env.Stderr),
		RenderFiles: func(start, rec knob.Config) map[string]string {
			return recommend.Files(start, rec, recommend.Target{PHPVersion: phpVersion, UsesDB: usesDB, Kernel: envInfo.KernelLimits, Conns: conns})
		},
	}
}

// tuneError says how a tune ended early: an interrupted one with how to
// resume it (and that a redacted workload must be given again).
func tuneError(err error, opt tune.Options, redactNames []string) error {
	var ie *tune.InterruptedError
	if errors.As(err, &ie) {
		if redact.Text(opt.Workload, redactNames) != opt.Workload {
			return fmt.Errorf("%w, --workload '...' (the workload's secret was not stored)", err)
		}
		return err
	}
	return fmt.Errorf("tune %s: %w", opt.ID, err)
}

// printTune prints the result, the PHP builds it ran, the files written
// and how to check the recommendation.
func printTune(env *Env, res *results.Tune, outDir string, paths []string) {
	report.TuneText(env.Stdout, res)
	report.BuildsText(env.Stdout, res.Environment.PHPBuilds)
	fmt.Fprintf(env.Stdout, "\nfiles in %s:\n", outDir)
	for _, p := range paths {
		fmt.Fprintf(env.Stdout, "  %s\n", p)
	}
	fmt.Fprintf(env.Stdout, "\ncheck it yourself: phptune lab up --knobs %s\n", filepath.Join(outDir, "recommended.knobs"))
	report.VerdictLine(env.Stdout, res)
}

// writeTuneFiles writes the recommendation's files, the diff and the
// reports into dir and returns their paths. names are the run's --redact
// names, for the reports' own redaction.
func writeTuneFiles(dir *outdir.Dir, res *results.Tune, redactNames []string) ([]string, error) {
	var paths []string
	names := make([]string, 0, len(res.Files))
	for n := range res.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.ContainsAny(n, `/\`) || n == "" || n[0] == '.' {
			continue // never write outside dir
		}
		if err := dir.WriteFile(n, []byte(res.Files[n])); err != nil {
			return nil, err
		}
		paths = append(paths, filepath.Join(dir.Path(), n))
	}
	if res.Diff != "" {
		if err := dir.WriteFile("recommended.diff", []byte(res.Diff)); err != nil {
			return nil, err
		}
		paths = append(paths, filepath.Join(dir.Path(), "recommended.diff"))
	}
	more, err := writeTuneReport(dir, res, redactNames)
	if err != nil {
		return paths, err
	}
	return append(paths, more...), nil
}

// writeTuneReport writes report.html, result.json and summary.txt.
func writeTuneReport(dir *outdir.Dir, res *results.Tune, names []string) ([]string, error) {
	paths, err := report.WriteAll(dir, report.Run{Tune: res, Secrets: lab.Passwords(), RedactNames: names})
	if err != nil {
		return nil, err
	}
	return []string{paths["html"], paths["json"], paths["text"]}, nil
}
