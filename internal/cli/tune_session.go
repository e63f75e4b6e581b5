package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/decide/tune"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/outdir"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/stacksession"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// The stack phptune tune runs on: a new run's, or the one a stopped run
// recorded (--resume), opened as a stack session.

// resume reads the stopped run f.resume from db: its stored options
// replace the plan's, and its stack is checked like a new one's, still
// before anything is created.
func (p *tunePlan) resume(ctx context.Context, db *store.DB, f *tuneFlags) error {
	run, err := db.Run(ctx, f.resume)
	if err != nil {
		return usageErr("See the run IDs with: phptune report --list", "--resume %s: %v", f.resume, err)
	}
	var stored tune.Options
	if err := json.Unmarshal(run.Options, &stored); err != nil {
		return fmt.Errorf("run %s: stored options unreadable: %w", f.resume, err)
	}
	db.Redact(run.Redact...)
	if stored.Workload, err = resumeWorkload(f, stored.Workload, db.RedactNames()); err != nil {
		return err
	}
	p.opt = stored
	t := stackTarget{lab: stored.Lab, app: stored.App, docroot: stored.DocRoot, workload: stored.Workload, user: stored.User}
	if stored.DocRoot != "" {
		t.app = "" // checkStack names it docroot
	}
	given := f.stack.siteData.db
	if stored.Site == nil && given.given() {
		return usageErr("Try: phptune tune --resume "+f.resume, "%s name a site lab's database: run %s is not a --site run", strings.Join(given.names(), ", "), f.resume)
	}
	if stored.Site != nil {
		// Found on the host again by its recorded name: its lab is made
		// anew, of the same site, with its database filled as before,
		// named again by --db and its fellows when the run needed them
		// (a password is never stored).
		t.site, t.data = stored.Site.Name, recordedData(*stored.Site)
		t.data.db = given
	}
	sp, err := planStack(ctx, t)
	if err != nil {
		return err
	}
	p.stackPlan = *sp
	if stored.Site != nil {
		return p.site.checkUnchanged(f.resume, *stored.Site)
	}
	return nil
}

// newRunID is a new run's ID: the time, to the second, that no run in db
// has.
func newRunID(ctx context.Context, db *store.DB) string {
	id := time.Now().UTC().Format("20060102-150405")
	if _, err := db.Run(ctx, id); err == nil {
		time.Sleep(time.Second)
		id = time.Now().UTC().Format("20060102-150405")
	}
	return id
}

// openOutDir makes the results directory now, before the lab: a
// directory planted under the name is refused before anything runs, and
// files go in through its descriptor. A resumed run writes on into the
// directory it was writing to.
func (p *tunePlan) openOutDir(resuming bool) (*outdir.Dir, string, error) {
	dir := p.outDir
	if dir == "" && resuming && p.opt.OutDir != "" {
		dir = p.opt.OutDir // where the interrupted session was writing
	}
	if dir == "" {
		dir = "phptune-tune-" + p.opt.ID
	}
	if abs, err := filepath.Abs(dir); err == nil && !resuming {
		p.opt.OutDir = abs
	}
	makeOut := createOutDir
	if resuming {
		makeOut = reopenOutDir
	}
	out, err := makeOut(dir)
	return out, dir, err
}

// openTuneSession opens the tune's stack session: the running lab of
// --lab (its configuration restored at the end) or a lab of its own from
// the start configuration, with the kernel's settings raised for
// --apply-sysctl. A new run's start and app are settled here; a resumed
// run keeps its stored ones. The run raised is returned for the result.
func openTuneSession(env *Env, f *tuneFlags, p *tunePlan, redactNames []string, say func(string, ...any)) (*stacksession.Session, *sysctl.Run, error) {
	opt, resuming := &p.opt, f.resume != ""
	st := storedStack(*opt)
	var need sysctl.Need
	var set []string
	if opt.Lab != "" {
		if !resuming {
			opt.Start = p.lab.Config.Clone()
			if _, err := useLabLiveStart(p.lab, opt, say); err != nil {
				return nil, nil, err
			}
		}
		if opt.App == "" {
			opt.App = p.lab.App
		}
		need = tuneNeed(*opt, opt.Start)
	} else {
		start := p.start
		if resuming {
			start = opt.Start
		}
		need, set = tuneNeed(*opt, start), knobAssignments(start)
		if !resuming {
			settleOwnStart(opt, start, p.site != nil)
		}
	}
	var kernelRun *sysctl.Run
	var raise func() (func(), error)
	if f.applySysctl {
		// A lab of its own starts under the raised settings; a running
		// lab's servers restart with every trial, so they listen under
		// them, and get their configuration back after the restore.
		raise = raiseKernel(env, need, "tune", &kernelRun)
	}
	sess, err := openSession(env, &st, sessionSpec{command: "tune", site: p.site, set: set, restore: true, raise: raise,
		workload: opt.Workload, redactNames: redactNames})
	if err == nil && !resuming && opt.Site != nil {
		// What of the site the lab showed is known once it is up.
		opt.Site.AppRoot = firstNonEmpty(sess.Lab.AppRoot, opt.Site.DocRoot)
	}
	return sess, kernelRun, err
}

// settleOwnStart records a new run's start on a lab of its own: for a
// site, the live configuration, production's "before", with Debian's
// default measured beside it as a baseline.
func settleOwnStart(opt *tune.Options, start knob.Config, site bool) {
	opt.Start = start
	if site {
		opt.UseLiveStart(start)
		opt.App = lab.SiteApp
	}
	if opt.App == "" {
		opt.App = "docroot"
	}
}

// storedStack are the stack flags a run's options name: the same stack
// for a new run and for a resumed one. A site is not among them: it comes
// to the session as it was found (tunePlan's site).
func storedStack(opt tune.Options) stackFlags {
	st := stackFlags{lab: opt.Lab, docroot: opt.DocRoot, user: opt.User, expect: opt.Expect, host: opt.Host}
	if opt.DocRoot == "" && opt.Site == nil {
		st.app = opt.App
	}
	st.caps.CPUs, st.caps.MemoryMax = opt.CPUs, opt.MemoryMaxB
	return st
}
