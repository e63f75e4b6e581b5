package lab

import (
	"context"
	"fmt"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/servers/unit"
)

// unitServer is NGINX Unit (server=unit): unitd runs as the lab's account
// and PHP runs in Unit's application processes (php.unit.so, Debian's
// embed SAPI), so the lab starts no php-fpm. Unit takes its configuration
// through its control socket, not from a file: the lab renders unit.json
// (root's, like every other configuration), starts unitd, and PUTs it.
type unitServer struct{ bin *unit.Binary }

// unitStateDir is unitd's own state directory (the lab account's).
const unitStateDir = "unit"

func (unitServer) component() string  { return "unit" }
func (unitServer) conf() string       { return "unit.json" }
func (unitServer) statusPath() string { return "" } // on the control socket: Lab.UnitControl

// unitControl is the control socket (the lab account's run directory).
func (y layout) unitControl() string { return y.p("run", "unit-control.sock") }

func (unitServer) env(l *Lab) []string {
	// Debian's embed conf.d (the extensions) and then the lab's php/,
	// as mod_php reads them.
	return []string{"LANG=C", "PHP_INI_SCAN_DIR=:" + layout{l.Dir}.p("php")}
}

func (unitServer) render(l *Lab, _, front string) string {
	return unit.Render(l.Config, unit.Site{
		Listen: strings.TrimPrefix(l.URL, "http://"), DocRoot: l.DocRoot,
		FrontController: front != "", Env: l.PoolEnv(), StatusScript: l.StatusScript(),
	})
}

func (u unitServer) args(l *Lab) []string {
	y := layout{l.Dir}
	group := strconv.Itoa(l.GID)
	if g, err := user.LookupGroupId(group); err == nil {
		group = g.Name
	}
	return unit.Args(u.bin, y.unitControl(), y.p("run", "unit.pid"), y.p("log", "unit.log"), y.p(unitStateDir), y.p("tmp"), l.User, group)
}

// testArgs: unitd has no configuration check of its own (Unit checks the
// JSON when it is applied); --version shows the binary runs as the lab's
// account with its modules.
func (unitServer) testArgs(*Lab) []string { return []string{"--version"} }

// configure applies the rendered configuration once unitd's control socket
// answers as the lab's account; unitd listens on the lab's port only then.
func (u unitServer) configure(ctx context.Context, l *Lab, pid int) error {
	y := layout{l.Dir}
	if err := l.waitDial(ctx, "unit (control socket)", "unix", y.unitControl(), l.PeerUID(), pid); err != nil {
		return err
	}
	c := unit.NewControl(y.unitControl(), l.PeerUID())
	defer c.Close()
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Apply(actx, u.render(l, "", frontOf(l))); err != nil {
		return fmt.Errorf("%w (the configuration is %s)", err, filepath.Join(l.Dir, "unit.json"))
	}
	return nil
}

// checkSite refuses, before anything starts, a lab directory whose control
// socket path the kernel cannot bind (unix socket paths end at 107 bytes).
func (unitServer) checkSite(dir, _ string) error {
	if p := (layout{dir}).unitControl(); len(p) >= 108 {
		return fmt.Errorf("unit's control socket %s is %d bytes, over the kernel's 107; use a shorter PHPTUNE_HOME or lab name", p, len(p))
	}
	return nil
}
