package livehost

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/servers/phpfpm"
)

// HostSpec names a live host and, on it, a php-fpm master and one of its
// pools, as apply, rollback and advise's host flags give them.
type HostSpec struct {
	// Root is the host's root: / on the host itself, or a directory
	// holding a copy of its etc/.
	Root string
	// FPMConfig is the master's php-fpm.conf (default
	// ROOT/etc/php/VERSION/fpm/php-fpm.conf), FPMPrefix its -p.
	FPMConfig, FPMPrefix string
	// IniDir is the conf.d php-fpm's PHP reads (default
	// ROOT/etc/php/VERSION/fpm/conf.d).
	IniDir string
	// Pool is the pool to change (default: the only pool, or www).
	Pool string
}

// LiveFPM is the php-fpm master a HostSpec names, read from disk and
// described for the transaction: how to check, reload and probe it.
type LiveFPM struct {
	Bin    *phpfpm.Binary
	Host   *FPMHost
	Pool   Pool
	FPM    FPM
	IniDir string
}

// OpenFPM reads the php-fpm configuration spec names with bin's layout
// (Debian's etc/php/VERSION/fpm), chooses its pool and describes its
// master. On the host itself, systemd reloads the master only when it
// is the main process of the service its cgroup names (MainService). A
// mistake in spec is an *InputError.
func OpenFPM(ctx context.Context, spec HostSpec, bin *phpfpm.Binary) (*LiveFPM, error) {
	if !filepath.IsAbs(spec.Root) {
		return nil, inputErr("Try: --root /srv/host-copy", "--root %q: give an absolute directory", spec.Root)
	}
	if st, err := os.Stat(spec.Root); err != nil || !st.IsDir() {
		return nil, inputErr("Try: --root / (this host) or the directory of a copy", "--root %s is not a directory", spec.Root)
	}
	conf := spec.FPMConfig
	if conf == "" {
		conf = filepath.Join(spec.Root, "etc", "php", bin.Version, "fpm", "php-fpm.conf")
	}
	iniDir := spec.IniDir
	if iniDir == "" {
		iniDir = filepath.Join(spec.Root, "etc", "php", bin.Version, "fpm", "conf.d")
	}
	host, err := ReadFPM(conf, spec.FPMPrefix)
	if err != nil {
		return nil, inputErr("Point at the master's configuration with --fpm-config FILE", "php-fpm configuration: %v", err)
	}
	pool, err := choosePool(host, conf, spec.Pool)
	if err != nil {
		return nil, err
	}
	l := &LiveFPM{Bin: bin, Host: host, Pool: pool, IniDir: iniDir}
	l.FPM = FPM{Binary: bin.Path, Conf: conf, Prefix: spec.FPMPrefix, Listen: pool.Listen,
		StatusPath: pool.StatusPath, StartArgs: []string{"-y", conf}}
	if spec.FPMPrefix != "" {
		l.FPM.StartArgs = append(l.FPM.StartArgs, "-p", spec.FPMPrefix)
	}
	if spec.Root != "/" {
		// A copy's master reads the copy's conf.d, not the compiled-in one.
		l.FPM.Env = []string{"PHP_INI_SCAN_DIR=" + iniDir}
	} else if pid, err := l.FPM.Master(); err == nil {
		// systemctl only for the master a service runs, never for
		// another master of the same version's unit.
		l.FPM.Systemd = MainService(ctx, spec.Root, pid)
	}
	return l, nil
}

// choosePool is the pool named (default: the configuration's only pool,
// or www) of the master of conf.
func choosePool(host *FPMHost, conf, name string) (Pool, error) {
	if name == "" {
		name = "www"
		if len(host.Pools) == 1 {
			name = host.Pools[0].Name
		}
	}
	pool, ok := host.Pool(name)
	if !ok {
		return Pool{}, inputErr("Name one with --pool", "--pool %s: %s has no such pool (it has: %s)", name, conf, strings.Join(host.PoolNames(), ", "))
	}
	return pool, nil
}
