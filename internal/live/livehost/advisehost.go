package livehost

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/proc"
)

// SelectMasters keeps the masters advise reads: those of the host at
// root (on a copy, a master started from the copy's files) and, with
// fpmConfig, the one started with it. A root or fpmConfig no running
// master matches, and a relative root, are *InputError.
func SelectMasters(masters []Master, root, fpmConfig string) ([]Master, error) {
	if !filepath.IsAbs(root) {
		return nil, inputErr("Try: --root / (this host) or --root /abs/path/of/a/copy", "--root %s: give an absolute path", root)
	}
	root = filepath.Clean(root)
	var only []Master
	for _, m := range masters {
		if root != "/" && !strings.HasPrefix(m.Conf, root+"/") {
			continue
		}
		if fpmConfig != "" && m.Conf != fpmConfig {
			continue
		}
		only = append(only, m)
	}
	if len(only) == 0 && (root != "/" || fpmConfig != "") {
		var named []string
		if fpmConfig != "" {
			named = append(named, "--fpm-config "+fpmConfig)
		}
		if root != "/" {
			named = append(named, "--root "+root)
		}
		return nil, inputErr("Running masters: "+masterConfs(masters), "%s: no running php-fpm master was started with it", strings.Join(named, " and "))
	}
	return only, nil
}

// masterConfs lists the masters' configurations, "none" for none.
func masterConfs(ms []Master) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Conf)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// SamplePools reads the pools of masters once (Observe; only pool's when
// pool is set) and the host's memory.
func SamplePools(ctx context.Context, fs *proc.FS, masters []Master, prefix, pool string) ([]advise.Pool, advise.Host, error) {
	var pools []advise.Pool
	for _, m := range masters {
		ps, err := Observe(ctx, fs, m, prefix)
		if err != nil {
			return nil, advise.Host{}, fmt.Errorf("php-fpm master %d (%s): %w", m.PID, m.Conf, err)
		}
		pools = append(pools, keepPool(ps, pool)...)
	}
	host, err := HostMemory(fs, masters)
	return pools, host, err
}

// keepPool keeps the pool named pool (every pool when it is "").
func keepPool(pools []advise.Pool, pool string) []advise.Pool {
	if pool == "" {
		return pools
	}
	var only []advise.Pool
	for _, p := range pools {
		if p.Name == pool {
			only = append(only, p)
		}
	}
	return only
}

// AdviseMariaDB reads the host's MariaDB for advise: nil when none runs;
// what could not be read is in the result's Error.
func AdviseMariaDB(ctx context.Context, fs *proc.FS, root, socket string) *advise.MariaDB {
	servers, err := MariaDBServers(fs, root)
	servers = MariaDBUnder(servers, root, socket)
	if err != nil || (len(servers) == 0 && socket == "") {
		return nil
	}
	s, err := PickMariaDB(servers, socket)
	if err != nil {
		return &advise.MariaDB{Socket: socket, Error: err.Error()}
	}
	return ReadMariaDB(ctx, fs, s)
}

// ReadMasterOpcache reads a master's opcache through the first of its
// pools that allows it (dir: where the status script's private
// directory is made); the refusals of the others are kept in the error
// when none does.
func ReadMasterOpcache(ctx context.Context, m Master, prefix, dir string, measured []results.Decision) (advise.OpcacheAdvice, []advise.Finding) {
	h, err := ReadFPM(m.Conf, prefix)
	if err != nil {
		return advise.AdviseOpcache(m.Conf, nil, "", nil, err.Error(), measured)
	}
	names := h.PoolNames()
	var why []string
	for _, p := range h.Pools {
		o, err := ReadOpcache(ctx, m, p, dir)
		if err == nil {
			return advise.AdviseOpcache(m.Conf, names, p.Name, o, "", measured)
		}
		why = append(why, "through pool "+p.Name+": "+err.Error())
		if ctx.Err() != nil {
			break
		}
	}
	return advise.AdviseOpcache(m.Conf, names, "", nil, strings.Join(why, "; "), measured)
}

// AdviceDropIns renders knob assignments as apply's drop-ins for a pool
// of the master of conf (PHP's conf.d beside it, as Debian lays it out,
// unless iniDir is given); nil when they cannot be rendered (apply would
// say why).
func AdviceDropIns(conf, prefix, pool, iniDir string, assignments []string) *DropIns {
	h, err := ReadFPM(conf, prefix)
	if err != nil {
		return nil
	}
	cfg, err := knob.Defaults().Apply(assignments)
	if err != nil {
		return nil
	}
	if iniDir == "" {
		iniDir = filepath.Join(filepath.Dir(conf), "conf.d")
	}
	d, err := Compose(h, pool, cfg, iniDir)
	if err != nil {
		return nil
	}
	return d
}
