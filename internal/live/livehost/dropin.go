package livehost

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
)

// Drop-in names: after Debian's own files in each directory, so their
// values win (php-fpm keeps the last value of a key, and reopening a pool
// section in a later file continues that pool).
const (
	PoolDropInName = "zz-phptune.conf"
	IniDropInName  = "99-phptune.ini"
)

// DropIns are the files apply writes for php-fpm: the pool's drop-in in
// its include directory and PHP's in the SAPI's conf.d. An empty content
// means no such file is needed.
type DropIns struct {
	PoolPath string
	Pool     []byte
	IniPath  string
	Ini      []byte
	// Knobs are the knobs written, in registry order.
	Knobs []string
}

// Compose renders rec's php-fpm pool and php.ini settings as drop-ins for
// pool on host h (iniDir: the SAPI's conf.d). It writes the knobs rec
// sets away from the distro's defaults (rec.Overrides: what a tune's
// recommended.knobs holds), and with any process manager knob the whole
// process manager (pm, max_children and the spares pm uses) so php-fpm's
// rules hold whatever the pool's file said. It refuses what a drop-in
// cannot do on a live host: another server's configuration, several
// pools, a move of the pool's socket, a pool the host does not have.
func Compose(h *FPMHost, pool string, rec knob.Config, iniDir string) (*DropIns, error) {
	if !knob.RunsFPM(rec.Server()) {
		return nil, fmt.Errorf("the recommendation is for server=%s, which runs no php-fpm; apply writes php-fpm and PHP drop-ins only", rec.Server())
	}
	p, ok := h.Pool(pool)
	if !ok {
		return nil, fmt.Errorf("php-fpm's configuration %s has no pool %q (it has: %s); name one with --pool", h.Conf, pool, strings.Join(h.PoolNames(), ", "))
	}
	if n := rec.Pools(); n > 1 {
		return nil, fmt.Errorf("%s=%d: apply does not split a live pool into %d; write the pools from the recommendation's php-fpm-pool.conf and nginx's upstream by hand", knob.PoolsKnob, n, n)
	}
	if rec["listen"] == "tcp" {
		return nil, fmt.Errorf("listen=tcp: apply does not move pool %s's socket (%s), which the web server passes requests to; change both by hand from the recommendation", pool, p.Listen)
	}
	dir, err := poolDir(h, p)
	if err != nil {
		return nil, err
	}
	d := &DropIns{PoolPath: filepath.Join(dir, PoolDropInName), IniPath: filepath.Join(iniDir, IniDropInName)}
	d.Pool, d.Ini, d.Knobs = RenderFPM(pool, p.File, ByApply, rec)
	return d, nil
}

// poolDir is the include directory the pool's file came from, when a
// drop-in named PoolDropInName there is included by the same glob.
func poolDir(h *FPMHost, p Pool) (string, error) {
	for _, g := range slices.Backward(h.Includes) {
		if ok, _ := filepath.Match(g, p.File); !ok {
			continue
		}
		dir := filepath.Dir(g)
		if ok, _ := filepath.Match(g, filepath.Join(dir, PoolDropInName)); ok {
			return dir, nil
		}
		return "", fmt.Errorf("pool %s comes from %s through include %s, which would not read a drop-in named %s; add its settings to %s by hand", p.Name, p.File, g, PoolDropInName, p.File)
	}
	return "", fmt.Errorf("pool %s is defined in %s itself, not in an included directory: apply writes drop-ins and never edits your files; add the settings to it by hand", p.Name, p.File)
}

// Writer names who writes a drop-in and how it is undone, in its header.
type Writer struct{ Name, Undo string }

// ByApply is phptune apply's header.
var ByApply = Writer{Name: "phptune apply", Undo: "phptune rollback"}

// RenderFPM renders the php-fpm pool drop-in (reopening pool's section,
// whose own file is poolFile) and the php.ini drop-in of rec, as Compose
// writes them; nil when rec sets nothing of theirs. Knobs are the knobs
// written, in registry order. Fleet roles (phptune export ansible) write
// the same files without reading each host.
func RenderFPM(pool, poolFile string, by Writer, rec knob.Config) (poolDropIn, iniDropIn []byte, knobs []string) {
	changed := map[string]bool{}
	for _, o := range rec.Overrides() {
		name, _, _ := strings.Cut(o, "=")
		changed[name] = true
	}
	pm := false
	for name := range changed {
		pm = pm || name == "pm" || strings.HasPrefix(name, "pm.") && name != "pm.max_requests"
	}
	var pb, ib strings.Builder
	for _, k := range knob.All() {
		write := changed[k.Name] || pm && (k.Name == "pm" || k.Name == "pm.max_children" || strings.HasPrefix(k.Name, "pm.") && k.Name != "pm.max_requests")
		if !write || !rec.Relevant(k.Name) || k.Name == "listen" || k.Name == knob.PoolsKnob {
			continue
		}
		switch k.Component {
		case knob.PHPFPM:
			v := rec[k.Name]
			if k.Name == "pm.process_idle_timeout" {
				v += "s"
			}
			fmt.Fprintf(&pb, "%s = %s\n", k.Name, v)
		case knob.PHP:
			v := rec[k.Name]
			if k.Kind == knob.Bool {
				v = map[string]string{"on": "1", "off": "0"}[v]
			}
			fmt.Fprintf(&ib, "%s = %s\n", k.Name, v)
		default:
			continue
		}
		knobs = append(knobs, k.Name+"="+rec[k.Name])
	}
	if pb.Len() > 0 {
		poolDropIn = []byte(fmt.Sprintf("; Written by %s: these settings override pool %s's in %s.\n; Undo: %s (or remove this file and reload php-fpm).\n[%s]\n%s", by.Name, pool, poolFile, by.Undo, pool, pb.String()))
	}
	if ib.Len() > 0 {
		iniDropIn = []byte(fmt.Sprintf("; Written by %s: PHP settings for php-fpm, read after the distro's conf.d files.\n; Undo: %s (or remove this file and reload php-fpm).\n%s", by.Name, by.Undo, ib.String()))
	}
	return poolDropIn, iniDropIn, knobs
}
