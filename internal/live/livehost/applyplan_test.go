package livehost

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/liveapply"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/phpfpm"
)

// TestPlanApplyHostCopy: on Debian's php-fpm and nginx copied into a
// directory and started, OpenFPM finds the master and its pool,
// FindNginx the nginx of --nginx-config (and no systemd unit for a
// copy), PlanApply composes the pool's and nginx's drop-ins with their
// steps and the grace change; the transaction applies, the recovery
// steps undo it, and the host's files are as before. A pool or an nginx
// configuration the host does not have is the user's mistake.
func TestPlanApplyHostCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm and nginx")
	}
	h := hosttest.Debian(t)
	n := h.Nginx(t)
	ctx := context.Background()
	bin, err := phpfpm.Find()
	if err != nil {
		t.Skip(err)
	}
	spec := HostSpec{Root: h.Root, FPMConfig: h.Conf, IniDir: h.IniDir}
	var ie *InputError
	if _, err := OpenFPM(ctx, HostSpec{Root: h.Root, FPMConfig: h.Conf, Pool: "nope"}, bin); !errors.As(err, &ie) || !strings.Contains(err.Error(), "--pool nope") {
		t.Errorf("a pool the host lacks: %v", err)
	}
	if _, err := FindNginx(ctx, NginxSpec{Root: h.Root, Config: filepath.Join(h.Root, "none.conf")}); !errors.As(err, &ie) {
		t.Errorf("an nginx configuration no master runs: %v", err)
	}
	live, err := OpenFPM(ctx, spec, bin)
	if err != nil {
		t.Fatal(err)
	}
	if live.Pool.Name != "www" || live.FPM.Systemd != "" {
		t.Errorf("pool %q, systemd %q; want www and none for a copy", live.Pool.Name, live.FPM.Systemd)
	}
	rec, err := knob.Defaults().Apply([]string{"pm=static", "pm.max_children=6", "nginx.keepalive_timeout=15", "nginx.worker_connections=1024"})
	if err != nil {
		t.Fatal(err)
	}
	nspec := NginxSpec{Root: h.Root, Config: n.Conf}
	p, err := PlanApply(ctx, ApplyInput{Live: live, Rec: rec, Root: h.Root, Nginx: nspec, Warn: func(s string) { t.Error("warned:", s) }})
	if err != nil {
		t.Fatal(err)
	}
	var steps, paths []string
	for _, s := range p.Plan.Steps {
		steps = append(steps, s.Name)
	}
	for _, c := range p.Plan.Changes {
		paths = append(paths, c.Path)
	}
	if !slices.Equal(steps, []string{"php-fpm", "nginx"}) || len(paths) != 2 || p.Nginx == nil || p.Nginx.Nginx.Systemd != "" {
		t.Fatalf("steps %v, changes %v, nginx %+v", steps, paths, p.Nginx)
	}
	if p.Grace == nil || !p.NginxHandled["nginx.keepalive_timeout"] || !p.NginxHandled["nginx.worker_connections"] || p.NginxChanges.Patch == "" {
		t.Errorf("grace %v, handled %v, patch %q", p.Grace, p.NginxHandled, p.NginxChanges.Patch)
	}
	if got := strings.Join(p.Applied(), " "); !strings.Contains(got, "pm.max_children=6") || !strings.Contains(got, "nginx.keepalive_timeout=15") {
		t.Errorf("applied %q", got)
	}
	if d := p.Diff(); !strings.Contains(d, "+pm.max_children = 6") || !strings.Contains(d, "+keepalive_timeout 15;") {
		t.Errorf("diff:\n%s", d)
	}
	opt := liveapply.Options{Home: t.TempDir(), Root: h.Root, Log: t.Logf,
		StepsFor: Recovery{
			FPM:     func() liveapply.Step { return live.FPM.Step() },
			MariaDB: func() (*MariaDBStep, error) { return nil, errors.New("no MariaDB in this test") },
			Nginx:   func() (*Nginx, error) { return FindNginx(ctx, nspec) },
			Warn:    func(s string) { t.Error("warned:", s) },
		}.Steps}
	if _, err := liveapply.Apply(ctx, GracePlan(live.FPM, *p.Grace), opt); err != nil {
		t.Fatal(err)
	}
	if _, err := liveapply.Apply(ctx, p.Plan, opt); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p.NginxChanges.DropInPath); err != nil || !strings.Contains(string(b), "keepalive_timeout 15;") {
		t.Errorf("nginx's drop-in: %q, %v", b, err)
	}
	for range 2 { // the recommendation, then the grace
		if _, err := liveapply.Rollback(ctx, opt); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Unchanged(); err != nil {
		t.Error(err)
	}
}

// TestRecoveryFindsOnlyWhatTheJournalNames: a journal naming php-fpm
// alone never looks for MariaDB or nginx; an nginx named but not found
// gets a step that says to reload it by hand; MariaDB not found is
// warned of, its step left out.
func TestRecoveryFindsOnlyWhatTheJournalNames(t *testing.T) {
	var looked, warned []string
	r := Recovery{
		FPM: func() liveapply.Step { return liveapply.Step{Name: "php-fpm"} },
		MariaDB: func() (*MariaDBStep, error) {
			looked = append(looked, "mariadb")
			return nil, errors.New("not running")
		},
		Nginx: func() (*Nginx, error) {
			looked = append(looked, "nginx")
			return nil, nil
		},
		Warn: func(s string) { warned = append(warned, s) },
	}
	if steps := r.Steps([]string{"php-fpm"}); len(steps) != 1 || len(looked) != 0 {
		t.Errorf("php-fpm alone: %d steps, looked for %v", len(steps), looked)
	}
	steps := r.Steps([]string{"php-fpm", "mariadb", "nginx"})
	if len(steps) != 2 || steps[1].Name != "nginx" || len(warned) != 1 || !strings.Contains(warned[0], "MariaDB cannot be set back (not running)") {
		t.Fatalf("steps %v, warned %v", steps, warned)
	}
	if err := steps[1].Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "no running nginx master was found") {
		t.Errorf("nginx's step: %v", err)
	}
}
