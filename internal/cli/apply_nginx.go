package cli

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/liveapply"
	"github.com/phptune/phptune/internal/livehost"
	"github.com/phptune/phptune/internal/proc"
	"github.com/phptune/phptune/internal/sysctl"
)

// nginxFlags say which nginx of the host advise, apply and rollback read.
type nginxFlags struct {
	config, prefix string
}

func (f *nginxFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.config, "nginx-config", "", "nginx.conf of the running nginx master (default: its -c, or ROOT/etc/nginx/nginx.conf)")
	fl.StringVar(&f.prefix, "nginx-prefix", "", "nginx's -p prefix, when it runs with one (default: the master's)")
}

// liveNginx is the host's nginx: how to check and reload it, and its
// configuration as nginx -T dumped it.
type liveNginx struct {
	ng   livehost.Nginx
	conf *livehost.NginxConf
}

// resolve finds the running nginx master of the host rooted at root
// (see master) and reads its configuration through nginx -T. It returns
// nil without error when no such nginx runs and none was named.
func (f *nginxFlags) resolve(ctx context.Context, root string) (*liveNginx, error) {
	ng, err := f.master(root)
	if err != nil || ng == nil {
		return nil, err
	}
	conf, err := ng.Dump(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading nginx's configuration: %w", err)
	}
	return &liveNginx{ng: *ng, conf: conf}, nil
}

// master finds the running nginx master of the host rooted at root: the
// one of --nginx-config, else the one of ROOT/etc/nginx/nginx.conf (a
// master started without -c reads /etc/nginx/nginx.conf). Two masters of
// one configuration are refused, not guessed between. systemd reloads it
// only when the master runs in a systemd service (its cgroup names the
// unit). nil without error when no such nginx runs and none was named.
func (f *nginxFlags) master(root string) (*livehost.Nginx, error) {
	fs, err := proc.Default()
	if err != nil {
		return nil, err
	}
	masters, err := livehost.NginxMasters(fs)
	if err != nil {
		return nil, err
	}
	want := f.config
	if want == "" {
		want = filepath.Join(root, livehost.NginxDefaultConf)
	}
	var m *livehost.NginxMaster
	for i := range masters {
		if masters[i].Conf != want {
			continue
		}
		if m != nil {
			return nil, fmt.Errorf("two nginx masters run with %s (pids %d and %d): stop the one that should not run, then run phptune again", want, m.PID, masters[i].PID)
		}
		m = &masters[i]
	}
	if m == nil {
		if f.config != "" {
			confs := []string{}
			for _, x := range masters {
				confs = append(confs, x.Conf)
			}
			if len(confs) == 0 {
				confs = append(confs, "none")
			}
			return nil, usageErr("Running nginx masters: "+strings.Join(confs, ", "), "--nginx-config %s: no running nginx master (owned by root) was started with it", f.config)
		}
		return nil, nil
	}
	// The binary the verified master runs (its exe link, checked by
	// NginxMasters), else nginx from PATH.
	bin := m.Exe
	if !filepath.IsAbs(bin) || strings.HasSuffix(bin, " (deleted)") {
		if bin, err = exec.LookPath("nginx"); err != nil {
			bin = "/usr/sbin/nginx"
		}
	}
	ng := &livehost.Nginx{Binary: bin, Conf: m.Conf, Prefix: f.prefix}
	if ng.Prefix == "" {
		ng.Prefix = m.Prefix
	}
	if root != "/" {
		// A copy's check must not open the host's own error log.
		ng.ErrorLog = filepath.Join(root, "var", "log", "nginx", "error.log")
	} else if unit := livehost.SystemdUnit("/proc", m.PID); unit != "" && systemdRuns() {
		ng.Systemd = unit
	}
	return ng, nil
}

// nginxPart is what apply does with nginx: the drop-in (a change of the
// transaction, with nginx's step), the patch printed and kept beside
// the transaction, the knobs handled.
type nginxPart struct {
	live    *liveNginx
	changes *livehost.NginxChanges
	handled map[string]bool
}

// planNginx composes the recommendation's nginx knobs for the host's
// nginx and adds the drop-in and nginx's step to plan.
func planNginx(live *liveNginx, rec knob.Config, root string, plan *liveapply.Plan) (*nginxPart, error) {
	p := &nginxPart{live: live, handled: map[string]bool{}}
	if live == nil {
		return p, nil
	}
	ch, err := livehost.ComposeNginx(live.conf, rec, root, livehost.ReadRealConf)
	if err != nil {
		return nil, err
	}
	p.changes = ch
	if ch.DropIn != nil || ch.Patch != "" {
		if err := trustDump(live.conf); err != nil {
			return nil, err
		}
	}
	for _, k := range append(append([]string{}, ch.DropKnobs...), ch.PatchKnobs...) {
		name, _, _ := strings.Cut(k, "=")
		p.handled[name] = true
	}
	if ch.DropIn != nil {
		plan.Changes = append(plan.Changes, liveapply.Change{Path: ch.DropInPath, Content: ch.DropIn})
		plan.Steps = append(plan.Steps, live.ng.Step())
	}
	return p, nil
}

// trustDump checks that nginx -T's dump is the files on disk: every
// file reached by an include, every file's text as dumped. A file whose
// text holds a "# configuration file" line of its own would otherwise
// hide directives from the dump's reader.
func trustDump(c *livehost.NginxConf) error {
	if len(c.Unreached) > 0 {
		return fmt.Errorf("nginx -T shows files no include names (%s): a configuration file holds a forged \"# configuration file\" line; apply does not trust this dump", strings.Join(c.Unreached, ", "))
	}
	for _, path := range c.Files {
		_, b, err := livehost.ReadRealConf(path)
		if err != nil {
			return fmt.Errorf("nginx's %s: %v", path, err)
		}
		if string(b) != string(c.Text[path]) {
			return fmt.Errorf("nginx's %s is not as nginx -T printed it (changed since, or its text holds a \"# configuration file\" line): apply does not trust this dump", path)
		}
	}
	return nil
}

// resolveForApply is resolve for apply: an nginx whose configuration
// cannot be read (nginx -T fails) is reported, and apply goes on without
// it (its knobs are then printed, not applied); bad input is an error.
func (f *nginxFlags) resolveForApply(ctx context.Context, root string, w io.Writer) (*liveNginx, error) {
	ngx, err := f.resolve(ctx, root)
	if err != nil && !isUsage(err) {
		fmt.Fprintf(w, "nginx: %v; its knobs are printed below, not applied\n", err)
		return nil, nil
	}
	return ngx, err
}

// poolLogs are the access logs of the nginx servers that pass to the
// pool listening on listen (absolute; none when the apply turns them off),
// and whether any server of this nginx passes to it.
func (p *nginxPart) poolLogs(listen string) (logs []string, passes bool) {
	if p.live == nil {
		return nil, false
	}
	logs, passes = p.live.conf.PoolAccessLogs(listen, p.live.ng.Prefix)
	if p.changes != nil && strings.Contains(strings.Join(p.changes.DropKnobs, " "), "nginx.access_log=off") {
		logs = nil
	}
	return logs, passes
}

// print writes the drop-in's diff (printPlan prints plan's changes), the
// patch and the notes.
func (p *nginxPart) print(w io.Writer, root string) {
	if p.live == nil {
		return
	}
	reload := "SIGHUP to nginx's master of " + p.live.ng.Conf + " (found in /proc, owned by root)"
	if p.live.ng.Systemd != "" {
		reload = "systemctl reload " + p.live.ng.Systemd
	}
	ch := p.changes
	if ch.DropIn != nil {
		fmt.Fprintf(w, "nginx (%s): %s in %s; nginx -t -c %s; %s, new workers awaited\n", p.live.ng.Conf, strings.Join(ch.DropKnobs, " "), ch.DropInPath, p.live.ng.Conf, reload)
	}
	if ch.Patch != "" {
		fmt.Fprintf(w, "Not applied (%s): nginx takes these only in its main or events context or on a listen line, or your files already set them at http level; merge this patch yourself (cd %s && patch -p0), then nginx -t and reload:\n%s",
			strings.Join(ch.PatchKnobs, " "), root, ch.Patch)
	}
	for _, k := range ch.PatchKnobs {
		name, value, _ := strings.Cut(k, "=")
		if name != "nginx.listen_backlog" {
			continue
		}
		if v, err := sysctl.NewFS("/proc").Value(sysctl.Somaxconn); err == nil {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				if note := sysctl.CappedNote(name, value, n); note != "" {
					fmt.Fprintf(w, "Note: backlog=%s will be %s: raise it too (sysctl -w %s=%s, and a file in /etc/sysctl.d to keep it)\n", value, note, sysctl.Somaxconn, value)
				}
			}
		}
	}
	for _, n := range ch.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
}

// savePatch keeps the patch beside transaction j, for patch -p0.
func (p *nginxPart) savePatch(opt liveapply.Options, j *liveapply.Journal, root string, w io.Writer) {
	if p.changes == nil || p.changes.Patch == "" || j == nil {
		return
	}
	path, err := liveapply.SaveBeside(opt, j, "nginx.patch", []byte(p.changes.Patch))
	if err != nil {
		fmt.Fprintf(w, "The nginx patch could not be kept: %v\n", err)
		return
	}
	fmt.Fprintf(w, "nginx's patch, not applied, is in %s: cd %s && patch -p0 < %s; then nginx -t and reload nginx.\n", path, root, path)
}

// nginxSteps gives nginx's step to reload after undoing a transaction
// whose journal names "nginx": the running master's, or, when none is
// found, a step that says to reload it by hand.
func nginxSteps(names []string, nginx *liveNginx) []liveapply.Step {
	var ng *livehost.Nginx
	if nginx != nil {
		ng = &nginx.ng
	}
	return nginxStepsOf(names, func() (*livehost.Nginx, error) { return ng, nil })
}

// nginxStepsOf is nginx's step when the transaction's names include it,
// its master found only then (find): a rollback of php-fpm or MariaDB
// alone never needs nginx, nor its configuration to be readable.
func nginxStepsOf(names []string, find func() (*livehost.Nginx, error)) []liveapply.Step {
	for _, n := range names {
		if n != "nginx" {
			continue
		}
		ng, err := find()
		if err == nil && ng != nil {
			return []liveapply.Step{ng.Step()}
		}
		why := "no running nginx master was found"
		if err != nil {
			why = err.Error()
		}
		return []liveapply.Step{{Name: "nginx", Reload: func(context.Context) error {
			return fmt.Errorf("the transaction changed nginx, and %s: check it with nginx -t and reload it by hand (or name it with --nginx-config)", why)
		}}}
	}
	return nil
}
