package livehost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/base/unidiff"
	"github.com/phptune/phptune/internal/live/liveapply"
	"github.com/phptune/phptune/internal/model/knob"
)

// ApplyInput is what apply was asked to put on a live host.
type ApplyInput struct {
	Live *LiveFPM
	Rec  knob.Config
	Root string
	// Settle is the wait after the reloads and the error rate's window
	// (0: neither, and no reload probe).
	Settle time.Duration
	// CheckURL, when set, must answer after the change as before (with
	// CheckHost as its Host header, when set).
	CheckURL, CheckHost string
	// DBSocket names MariaDB's socket; RestartDB allows systemctl restart.
	DBSocket  string
	RestartDB bool
	Nginx     NginxSpec
	// Warn receives what apply reports and goes on without (an nginx
	// whose configuration cannot be read).
	Warn func(string)
}

// ApplyPlan is the transaction apply runs and what its plan shows: the
// php-fpm and PHP drop-ins, the grace change to make first, MariaDB's
// step and settings, nginx's drop-in or patch.
type ApplyPlan struct {
	Plan     liveapply.Plan
	Drop     *DropIns
	Grace    *liveapply.Change
	DB       *MariaDBStep
	Settings []MariaDBSetting
	// Nginx is the running nginx read (nil: none), NginxChanges what the
	// recommendation does to it, NginxHandled the nginx knobs written or
	// patched.
	Nginx        *LiveNginx
	NginxChanges *NginxChanges
	NginxHandled map[string]bool
}

// PlanApply composes the transaction of in: the drop-ins, php-fpm's
// step (and the reload probe when Settle is above 0), MariaDB's, the URL
// check and nginx's, in that order. A recommendation a drop-in cannot
// carry or a host named wrong is an *InputError.
func PlanApply(ctx context.Context, in ApplyInput) (*ApplyPlan, error) {
	live := in.Live
	drop, err := Compose(live.Host, live.Pool.Name, in.Rec, live.IniDir)
	if err != nil {
		return nil, inputErr("See what the recommendation holds: phptune apply --dry-run", "%v", err)
	}
	if _, err := live.FPM.Master(); err != nil {
		return nil, fmt.Errorf("php-fpm with %s is not running (%v): apply changes a running master; start it first", live.FPM.Conf, err)
	}
	p := &ApplyPlan{Drop: drop, NginxHandled: map[string]bool{}}
	if err := p.addFPM(live, in.Settle); err != nil {
		return nil, err
	}
	if err := p.addMariaDB(ctx, in); err != nil {
		return nil, err
	}
	if in.CheckURL != "" {
		step, err := URLCheck(ctx, in.CheckURL, in.CheckHost)
		if err != nil {
			return nil, err
		}
		p.Plan.Steps = append(p.Plan.Steps, step)
	}
	if err := p.addNginx(ctx, in); err != nil {
		return nil, err
	}
	p.Plan.Settle = in.Settle
	return p, nil
}

// addFPM adds the pool's and PHP's drop-ins with php-fpm's step, and the
// grace change when the master's reloads are not graceful yet.
func (p *ApplyPlan) addFPM(live *LiveFPM, settle time.Duration) error {
	for _, c := range []struct {
		path string
		b    []byte
	}{{p.Drop.PoolPath, p.Drop.Pool}, {p.Drop.IniPath, p.Drop.Ini}} {
		if c.b != nil {
			p.Plan.Changes = append(p.Plan.Changes, liveapply.Change{Path: c.path, Content: c.b})
		}
	}
	if len(p.Plan.Changes) == 0 {
		return nil
	}
	grace, err := GraceChange(live.Host, live.Pool.Name)
	if err != nil {
		return inputErr("Set process_control_timeout in php-fpm.conf's [global] section by hand", "%v", err)
	}
	p.Grace = grace
	live.FPM.Probe = &ReloadProbe{}
	p.Plan.Steps = []liveapply.Step{live.FPM.Step()}
	if settle > 0 {
		p.Plan.Steps = append(p.Plan.Steps, live.FPM.Probe.Step())
	}
	return nil
}

// addMariaDB adds MariaDB's drop-in and step when the recommendation
// sets its variables.
func (p *ApplyPlan) addMariaDB(ctx context.Context, in ApplyInput) error {
	settings := MariaDBSettings(in.Rec)
	if len(settings) == 0 {
		return nil
	}
	st, content, err := PlanMariaDB(ctx, in.Root, in.DBSocket, in.RestartDB, settings)
	if err != nil {
		return err
	}
	p.DB, p.Settings = st, settings
	i := len(p.Plan.Changes)
	p.Plan.Changes = append(p.Plan.Changes, liveapply.Change{Path: st.DropIn, Content: content})
	p.Plan.Steps = append(p.Plan.Steps, st.Step())
	// The values shown in the plan were read before the lock: read
	// them again under it, after any apply cut short is undone, so
	// the drop-in records what the server really ran before.
	p.Plan.Prepare = func(ctx context.Context, plan *liveapply.Plan) error {
		before, _, err := st.ReadLive(ctx, st.Vars)
		if err != nil {
			return fmt.Errorf("reading MariaDB's live values again: %w", err)
		}
		st.Before = before
		plan.Changes[i].Content = ComposeMariaDB(settings, before)
		return nil
	}
	return nil
}

// addNginx reads the host's nginx and adds the drop-in of the
// recommendation's nginx knobs with nginx's step. An nginx whose
// configuration cannot be read (nginx -T fails) is reported through
// in.Warn and left out (its knobs are then printed, not applied).
func (p *ApplyPlan) addNginx(ctx context.Context, in ApplyInput) error {
	ngx, err := OpenNginx(ctx, in.Nginx)
	var ie *InputError
	if err != nil && !errors.As(err, &ie) {
		in.Warn(fmt.Sprintf("nginx: %v; its knobs are printed below, not applied", err))
		return nil
	}
	if err != nil || ngx == nil {
		return err
	}
	ch, err := ComposeNginx(ngx.Conf, in.Rec, in.Root, ReadRealConf)
	if err != nil {
		return inputErr("See what the recommendation holds: phptune apply --dry-run", "%v", err)
	}
	if ch.DropIn != nil || ch.Patch != "" {
		if err := ngx.Conf.VerifyDump(); err != nil {
			return inputErr("See what the recommendation holds: phptune apply --dry-run", "%v", err)
		}
	}
	p.Nginx, p.NginxChanges = ngx, ch
	for _, k := range append(append([]string{}, ch.DropKnobs...), ch.PatchKnobs...) {
		name, _, _ := strings.Cut(k, "=")
		p.NginxHandled[name] = true
	}
	if ch.DropIn != nil {
		p.Plan.Changes = append(p.Plan.Changes, liveapply.Change{Path: ch.DropInPath, Content: ch.DropIn})
		p.Plan.Steps = append(p.Plan.Steps, ngx.Nginx.Step())
	}
	return nil
}

// Applied are the knobs the transaction writes: php-fpm's and PHP's,
// nginx's drop-in's, MariaDB's.
func (p *ApplyPlan) Applied() []string {
	out := append([]string{}, p.Drop.Knobs...)
	if p.NginxChanges != nil {
		out = append(out, p.NginxChanges.DropKnobs...)
	}
	for _, s := range p.Settings {
		out = append(out, s.Knob)
	}
	return out
}

// PoolLogs are the access logs of the nginx servers that pass to the
// pool (absolute; none when the apply turns them off), and whether any
// server of the nginx read passes to it.
func (p *ApplyPlan) PoolLogs(listen string) (logs []string, passes bool) {
	if p.Nginx == nil {
		return nil, false
	}
	logs, passes = p.Nginx.Conf.PoolAccessLogs(listen, p.Nginx.Nginx.Prefix)
	if p.NginxChanges != nil && strings.Contains(strings.Join(p.NginxChanges.DropKnobs, " "), "nginx.access_log=off") {
		logs = nil
	}
	return logs, passes
}

// AddErrorRate adds the settle window's error-rate comparison to the
// plan (after every server's step): the 5xx rate in the access logs of
// the nginx servers that pass to the pool (never another server's) over
// the settle window after the reloads against as long before the apply,
// or, without a log to read, the pool's status page over the same
// lengths (measured now, before anything changes). A rate worse after
// fails the health check and rolls the change back with both numbers.
// What it reads, and a rate it cannot measure, go to warn; only an
// interruption is an error.
func (p *ApplyPlan) AddErrorRate(ctx context.Context, live *LiveFPM, settle time.Duration, warn func(string)) error {
	if settle <= 0 {
		return nil
	}
	logs, passes := p.PoolLogs(live.Pool.Listen)
	if !passes {
		warn(fmt.Sprintf("no running nginx passes to pool %s (%s): no web server's access log is the pool's, none is read", live.Pool.Name, live.Pool.Listen))
	}
	if len(logs) == 0 && live.Pool.StatusPath != "" {
		warn(fmt.Sprintf("no access log of pool %s to read: measuring its status page for %v before the change", live.Pool.Name, settle))
	}
	er, err := NewErrorRate(ctx, logs, &live.FPM, settle)
	if err != nil {
		if errors.Is(err, ctx.Err()) && ctx.Err() != nil {
			return fmt.Errorf("interrupted before anything changed: %w", err)
		}
		warn(fmt.Sprintf("the error rate will not be compared after the reload: %v", err))
		return nil
	}
	warn(fmt.Sprintf("error rate before the change: %s over %v (%s)", er.Before, settle, er.Before.Source))
	p.Plan.Steps = append(p.Plan.Steps, er.Step())
	return nil
}

// Diff is the unified diff of every file the plan writes against the
// file on disk now (a file not there yet diffs against nothing).
func (p *ApplyPlan) Diff() string {
	var b strings.Builder
	for _, c := range p.Plan.Changes {
		old, _ := os.ReadFile(c.Path)
		b.WriteString(unidiff.Diff(c.Path, c.Path, unidiff.Lines(old), unidiff.Lines(c.Content), 3))
	}
	return b.String()
}
