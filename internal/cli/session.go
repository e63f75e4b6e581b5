package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/stack/stacksession"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// stackPlan is the stack checked before anything starts: the site found
// for --site, the running lab of --lab and the workload parsed on it.
type stackPlan struct {
	site     *siteLab
	lab      *lab.Lab
	workload *workload.Workload
	// fromLog is the access log --workload-from-log vhost stands for
	// ("" without it).
	fromLog string
}

// stackTarget is the stack a command runs on, as its stack flags name it
// or as a stored run recorded it (tune --resume).
type stackTarget struct {
	lab, app, docroot string
	// workload is the spec workload.Parse reads.
	workload string
	// site is the NAME|DIR of the site to find on this host; user and
	// data the account and the database of its lab.
	site string
	user string
	data siteDataFlags
	// fromVhost: --workload-from-log vhost, the site's own access log,
	// found with the site (vhostLogPath); allowPost its --allow-post.
	fromVhost, allowPost bool
}

// target is the stack the flags name.
func (st *stackFlags) target() stackTarget {
	return stackTarget{lab: st.lab, app: st.app, docroot: st.docroot, workload: st.workloadSpec(), site: st.site, user: st.user, data: st.siteData,
		fromVhost: st.fromLog == vhostLog, allowPost: st.allowPost}
}

// plan finds the stack the flags name and checks the workload can run on
// it, before anything is created: every refusal is a usage error.
// --workload-from-log vhost becomes the site's access log from here on.
func (st *stackFlags) plan(ctx context.Context) (*stackPlan, error) {
	p, err := planStack(ctx, st.target())
	if err == nil && p.fromLog != "" {
		st.fromLog = p.fromLog
	}
	return p, err
}

// planStack finds the stack t names, before anything is created: the
// site on this host (found once, here, for every command), the running
// lab, and the workload checked on it. Every refusal is a usage error.
func planStack(ctx context.Context, t stackTarget) (*stackPlan, error) {
	p := &stackPlan{}
	app := t.app
	if t.site != "" {
		var err error
		if p.site, err = planSiteLab(ctx, t.site, t.user, t.data); err != nil {
			return nil, err
		}
		app = lab.SiteApp
	}
	if t.fromVhost {
		var l *lab.Lab
		if t.lab != "" {
			if l, _ = lab.Open(t.lab); l == nil {
				// checkStack refuses the lab, with its fix.
				_, _, err := checkStack(ctx, t.lab, app, t.docroot, "")
				return nil, err
			}
		}
		path, err := vhostLogPath(p.site, l)
		if err != nil {
			return nil, err
		}
		p.fromLog, t.workload = path, workload.LogSpec(path, t.allowPost)
	}
	var err error
	p.lab, p.workload, err = checkStack(ctx, t.lab, app, t.docroot, t.workload)
	return p, err
}

// sessionSpec is what a command asks of its stack session beside its
// stack flags.
type sessionSpec struct {
	command string
	// site is --site's site, found by plan.
	site *siteLab
	// set goes on top of a lab of its own's start (--set, --knobs).
	set []string
	// restore: the command changes a running lab's configuration, which
	// is restored at Close.
	restore bool
	// raise, when set, raises the kernel's settings in the session's
	// order (raiseKernel).
	raise func() (func(), error)
	// workload is parsed on the lab ("": the command builds its own
	// requests).
	workload    string
	redactNames []string
	// generator, when set, chooses the stack's generator once its lab is
	// open (engineFlags.stackGenerator); nil: phptune's own.
	generator func(*labstack.Stack) (labstack.Generator, error)
}

// openSession opens command's stack session for its stack flags: the
// running lab of --lab, or a lab of its own (the site's sealed lab for
// --site), its workload parsed. It says what it brings up on stderr.
func openSession(env *Env, st *stackFlags, spec sessionSpec) (*stacksession.Session, error) {
	say := func(format string, a ...any) { fmt.Fprintf(env.Stderr, spec.command+": "+format+"\n", a...) }
	o := stacksession.Options{Command: spec.command, Lab: st.lab, RestoreConfig: spec.restore, Workload: spec.workload,
		Expect: st.expect, Host: st.host, RedactNames: spec.redactNames, Raise: spec.raise, Generator: spec.generator, Say: say}
	if st.lab == "" {
		own, err := ownLabOptions(env, st, spec.site, spec.set, spec.command)
		if err != nil {
			return nil, err
		}
		o.Own = own
	}
	return stacksession.Open(env.Ctx, o)
}

// openStack is the prologue of the commands that load a stack many times
// (compare, capacity): command's session opened for its stack flags, its
// stack under the session's generator, and the start page checked. On an
// error the session is closed already; otherwise the caller closes it.
func openStack(env *Env, st *stackFlags, spec sessionSpec, say func(string, ...any)) (*stacksession.Session, *labstack.Stack, error) {
	sess, err := openSession(env, st, spec)
	if err != nil {
		return nil, nil, err
	}
	stack := sess.Stack()
	if err := checkStartPage(env.Ctx, env, stack, say); err != nil {
		sess.Close()
		return nil, nil, err
	}
	return sess, stack, nil
}

// ownLabOptions are the options of command's lab of its own: site's
// sealed lab started from its live configuration, or an app's or
// docroot's, with set (--set, --knobs) on top and the stack flags'
// account and caps.
func ownLabOptions(env *Env, st *stackFlags, site *siteLab, set []string, command string) (lab.Options, error) {
	say := func(format string, a ...any) { fmt.Fprintf(env.Stderr, command+": "+format+"\n", a...) }
	name := stacksession.LabName(command)
	if site == nil {
		warnNeighbours(env)
		say("bringing up lab %s (%s)", name, firstNonEmpty(st.app, st.docroot))
		return lab.Options{Name: name, App: st.app, DocRoot: st.docroot, User: st.user, CPUs: st.caps.CPUs, MemoryMax: st.caps.MemoryMax, Set: set, OwnedBy: command}, nil
	}
	site.say(env.Stderr)
	warnNeighbours(env)
	say("bringing up lab %s (site %s, sealed)", name, termsafe.Text(site.site.Query))
	opt, err := site.options(env, name, command, st.user, set, st.caps.MemoryMax)
	if err != nil {
		return lab.Options{}, err
	}
	opt.CPUs = st.caps.CPUs
	opt.Progress = func(m string) { say("lab: %s", m) }
	return opt, nil
}

// raiseKernel is a session's Raise for --apply-sysctl: it raises what need
// asks for, keeps the run in *run (for the result's kernel limits) and
// returns what restores them.
func raiseKernel(env *Env, need sysctl.Need, command string, run **sysctl.Run) func() (func(), error) {
	return func() (func(), error) {
		kr, err := applySysctl(env, need, command)
		if err != nil {
			return nil, err
		}
		*run = kr
		return func() { restoreSysctl(env, kr, command) }, nil
	}
}

// checkStack checks the stack a command would run on before anything
// starts (stacksession.CheckStack): for a lab, it returns the lab and the
// parsed workload. Refusals are usage errors.
func checkStack(ctx context.Context, labName, app, docroot, workload string) (*lab.Lab, *workload.Workload, error) {
	l, w, err := stacksession.CheckStack(ctx, labName, app, docroot, workload)
	return l, w, checkRefusal(err)
}

// checkWorkload checks a workload for a lab running app before the lab
// exists (stacksession.CheckWorkload). Refusals are usage errors.
func checkWorkload(spec, app string) error {
	return checkRefusal(stacksession.CheckWorkload(spec, app))
}

// checkRefusal makes a stacksession refusal a usage error with its fix.
func checkRefusal(err error) error {
	var ce *stacksession.CheckError
	if errors.As(err, &ce) {
		return usageErr(ce.Fix, "%v", ce.Err)
	}
	return err
}
